//! `v8inline debuginfo` through real clients, on the esmapp node 26
//! recording (testdata/esmapp/node26: prettier's ES modules, TurboFan and
//! Maglev code inlining functions of other modules) after `perf inject -j`:
//! binutils addr2line and llvm-symbolizer print the stacks `v8inline
//! lookup` prints, llvm-dwarfdump verifies the DWARF, perf reads it through
//! its build-id cache, samply's symbol server answers the inlined
//! functions, and addr2line alone rebuilds v8inline's self shares.
//!
//! Each client missing is a skip with a message. Run with `--nocapture` to
//! see the figures.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{file_starting, gunzip, run, stderr, temp_dir};
use object::{Object as _, ObjectSection as _};
use v8inline::internals::commands::debuginfo::file_name;
use v8inline::internals::formats::jitdump;
use v8inline::internals::formats::v8log::Tier;
use v8inline::internals::v8::code_logs::{CodeLogOptions, CodeLogs};
use v8inline::internals::v8::inline_map::{CodeId, InlineMap};
use v8inline::internals::v8::inline_tree::code_inlining;

/// Where testdata/esmapp/record.sh recorded: perf.data names the jitdump
/// there, and perf inject writes the jitted files next to it.
const RECORDED_AT: &str = "/tmp/v8inline-esmapp";

fn esmapp() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/esmapp/node26")
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Whether `program args` runs and succeeds.
fn works(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// The output of a command that must succeed.
fn output_of(command: &mut Command) -> String {
    let output = command.output().unwrap_or_else(|error| panic!("{command:?}: {error}"));
    assert!(output.status.success(), "{command:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What of a jitted file must survive debuginfo.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept {
    text_address: u64,
    text: Vec<u8>,
    build_id: Vec<u8>,
}

fn kept(elf: &[u8]) -> Kept {
    let file = object::File::parse(elf).unwrap();
    let section = file.section_by_name(".text").unwrap();
    Kept {
        text_address: section.address(),
        text: section.data().unwrap().to_vec(),
        build_id: file.build_id().unwrap().unwrap().to_vec(),
    }
}

/// The esmapp recording after `perf inject -j` and `v8inline debuginfo`.
struct Injected {
    /// The directory standing for RECORDED_AT: the jitdump, the jitted files.
    directory: PathBuf,
    buildid_dir: PathBuf,
    perf_jit_data: PathBuf,
    jitdump: PathBuf,
    log: PathBuf,
    /// Each jitted file as perf inject wrote it.
    before: HashMap<PathBuf, Kept>,
    /// The jitted files of JavaScript functions, which debuginfo rewrote.
    rewritten: Vec<PathBuf>,
    map: CodeLogs,
}

impl Injected {
    fn map(&self) -> &InlineMap {
        &self.map.maps()[0]
    }

    fn jitted(&self, code: CodeId) -> PathBuf {
        let index = self.map().code(code).code_index().unwrap();
        let pid = self.map().pid.unwrap();
        self.directory.join(format!("jitted-{pid}-{index}.so"))
    }

    fn perf(&self) -> Command {
        let mut command = Command::new("perf");
        command.arg("--buildid-dir").arg(&self.buildid_dir);
        command
    }
}

/// `haystack` with each `from` replaced by `to`, of the same length.
fn replace_all(haystack: &[u8], from: &[u8], to: &[u8]) -> (Vec<u8>, usize) {
    assert_eq!(from.len(), to.len());
    let mut result = haystack.to_vec();
    let mut count = 0;
    let mut start = 0;
    while let Some(found) = result[start..].windows(from.len()).position(|window| window == from) {
        let at = start + found;
        result[at..at + to.len()].copy_from_slice(to);
        count += 1;
        start = at + to.len();
    }
    (result, count)
}

/// Runs perf inject and debuginfo on the esmapp recording. perf inject
/// writes the jitted files next to the jitdump perf.data names; that path
/// is rewritten to one of the same length that is this test's own, so that
/// runs side by side do not share files.
fn inject() -> Option<Injected> {
    if !works("perf", &["--version"]) {
        eprintln!("skipped: perf is not installed");
        return None;
    }
    let directory = PathBuf::from(format!("/tmp/v8i-dbg-{:07}", std::process::id() % 10_000_000));
    assert_eq!(directory.as_os_str().len(), RECORDED_AT.len());
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let recorded_jitdump = file_starting(&esmapp(), "jit-");
    let jitdump = directory.join(recorded_jitdump.file_stem().unwrap());
    std::fs::write(&jitdump, jitdump::repair(&gunzip(&recorded_jitdump)).unwrap().bytes).unwrap();
    let from = format!("{RECORDED_AT}/");
    let to = format!("{}/", directory.display());
    let (perf_data, replaced) = replace_all(&gunzip(&esmapp().join("perf.data.gz")), from.as_bytes(), to.as_bytes());
    assert_eq!(replaced, 1, "perf.data names the jitdump once");
    std::fs::write(directory.join("perf.data"), perf_data).unwrap();
    let buildid_dir = directory.join("buildid");
    let perf_jit_data = directory.join("perf.jit.data");
    output_of(
        Command::new("perf")
            .arg("--buildid-dir")
            .arg(&buildid_dir)
            .args(["inject", "-j", "-i"])
            .arg(directory.join("perf.data"))
            .arg("-o")
            .arg(&perf_jit_data),
    );
    let jitted: Vec<PathBuf> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with("jitted-"))
        .collect();
    let before = jitted.iter().map(|path| (path.clone(), kept(&std::fs::read(path).unwrap()))).collect();

    let log = file_starting(&esmapp(), "codspeed-v8-");
    let started = std::time::Instant::now();
    let output =
        run(&["debuginfo", "--log", text(&log), "--jitdump", text(&jitdump), "--buildid-dir", text(&buildid_dir)]);
    let elapsed = started.elapsed();
    assert!(output.status.success(), "{}", stderr(&output));
    eprintln!("debuginfo over {} jitted files in {elapsed:.2?}:\n{}", jitted.len(), stderr(&output));

    let options = {
        let mut code_log_options = CodeLogOptions::default();
        code_log_options.logs = vec![log.clone()];
        code_log_options.jitdumps = vec![jitdump.clone()];
        code_log_options
    };
    let map = CodeLogs::load(options).unwrap();
    let mut injected =
        Injected { directory, buildid_dir, perf_jit_data, jitdump, log, before, rewritten: Vec::new(), map };
    let rewritten: Vec<PathBuf> = injected
        .map()
        .code_ids()
        .filter(|&code| injected.map().log_object(code).is_some_and(|object| object.function.is_some()))
        .map(|code| injected.jitted(code))
        .filter(|path| path.exists())
        .collect();
    assert!(stderr(&output).contains(&format!("gave {} jitted file(s) DWARF", rewritten.len())), "{}", stderr(&output));
    injected.rewritten = rewritten;
    Some(injected)
}

/// One frame of an inline stack, innermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Frame {
    function: String,
    /// The file, as tools name it (`file://` URLs as paths).
    file: Option<String>,
    /// 0: unknown.
    line: u32,
    /// 0: unknown or not printed.
    column: u32,
}

/// The stacks `v8inline lookup` prints at addresses of code objects, each
/// at the time its code object was loaded (addresses are reused).
fn lookup_stacks(injected: &Injected, addresses: &[(CodeId, u64)]) -> Vec<Vec<Frame>> {
    let mut stacks = Vec::with_capacity(addresses.len());
    for chunk in addresses.chunks(4000) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_v8inline"));
        command.args(["lookup", "--log", text(&injected.log), "--jitdump", text(&injected.jitdump)]);
        let map = injected.map();
        command
            .args(chunk.iter().map(|&(code, address)| format!("{address:#x}@{}", map.code(code).load_time().unwrap())));
        let printed = output_of(&mut command);
        for line in printed.lines() {
            match line.strip_prefix("  ") {
                None => stacks.push(Vec::new()),
                Some(frame) => stacks.last_mut().unwrap().push(lookup_frame(frame)),
            }
        }
    }
    assert_eq!(stacks.len(), addresses.len());
    stacks
}

/// A frame line of lookup: `function script:line:col` with `(inlined)`
/// and notes ([`v8inline::internals::commands::lookup::frame_line`]).
fn lookup_frame(line: &str) -> Frame {
    let line = line.strip_suffix(" (function start: no script source)").unwrap_or(line);
    if let Some(unknown) = line.strip_suffix(" (position unknown)") {
        let unknown = unknown.strip_suffix(" (inlined)").unwrap_or(unknown);
        return Frame { function: unknown.to_string(), file: None, line: 0, column: 0 };
    }
    let line = line.strip_suffix(" (inlined)").unwrap_or(line);
    let (function, place) = line.rsplit_once(' ').unwrap_or(("", line));
    let mut parts = place.rsplitn(3, ':');
    let (column, number, script) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    Frame {
        function: function.to_string(),
        file: Some(file_name(script).into_owned()),
        line: number.parse().unwrap(),
        column: column.parse().unwrap(),
    }
}

/// `file:line[:column]` as the tools print it (`??:0` for none; binutils
/// may add ` (discriminator N)`).
fn tool_frame(function: &str, place: &str) -> Frame {
    let place = place.split(" (discriminator").next().unwrap();
    let number = |text: &str| text.parse::<u32>().ok();
    // `file:line:column`, `file:line` (elfutils leaves a 0 column out) or `??:0`.
    let parts: Vec<&str> = place.rsplitn(3, ':').collect();
    let (file, line, column) = match parts[..] {
        [column, line, file] if number(column).is_some() && number(line).is_some() => {
            (file.to_string(), number(line).unwrap(), number(column).unwrap())
        }
        [line, ..] if number(line).is_some() => {
            (place[..place.len() - line.len() - 1].to_string(), number(line).unwrap(), 0)
        }
        _ => (place.to_string(), 0, 0),
    };
    Frame { function: function.to_string(), file: (file != "??" && line != 0).then_some(file), line, column }
}

/// An addr2line: binutils' or elfutils' (`eu-addr2line`, libdw: what
/// hotspot's perfparser reads DWARF with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Addr2line {
    Binutils,
    Elfutils,
}

impl Addr2line {
    fn program(self) -> &'static str {
        match self {
            Addr2line::Binutils => "addr2line",
            Addr2line::Elfutils => "eu-addr2line",
        }
    }
}

/// binutils `addr2line -f -i -a -e FILE ADDRESS...`: one stack per address.
fn addr2line_stacks(file: &Path, addresses: &[u64]) -> Vec<Vec<Frame>> {
    addr2line_stacks_of(Addr2line::Binutils, file, addresses)
}

/// `PROGRAM -f -i -a -e FILE ADDRESS...`: one stack per address.
fn addr2line_stacks_of(program: Addr2line, file: &Path, addresses: &[u64]) -> Vec<Vec<Frame>> {
    let mut stacks: Vec<Vec<Frame>> = Vec::new();
    for chunk in addresses.chunks(2000) {
        let mut command = Command::new(program.program());
        command.args(["-f", "-i", "-a", "-e"]).arg(file);
        command.args(chunk.iter().map(|address| format!("{address:#x}")));
        let printed = output_of(&mut command);
        let mut lines = printed.lines();
        while let Some(line) = lines.next() {
            if line.starts_with("0x") && line.len() == 18 {
                stacks.push(Vec::new());
                continue;
            }
            let place = lines.next().unwrap();
            // elfutils: `inner inlined at FILE:LINE:COLUMN in OUTER`; a
            // file name that is no absolute path (`node:path`) it puts after
            // the unit's directory, printed `(null)` when there is none.
            let function = line.split(" inlined at ").next().unwrap();
            let place = place.strip_prefix("(null)").unwrap_or(place);
            stacks.last_mut().unwrap().push(tool_frame(function, place));
        }
    }
    stacks
}

/// `llvm-symbolizer --inlining` fed `FILE ADDRESS` lines: one stack each.
fn llvm_symbolizer_stacks(queries: &[(PathBuf, u64)]) -> Vec<Vec<Frame>> {
    let mut child =
        Command::new("llvm-symbolizer").arg("--inlining").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let input: String = queries.iter().map(|(file, address)| format!("{} {address:#x}\n", file.display())).collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut printed = String::new();
    child.stdout.take().unwrap().read_to_string(&mut printed).unwrap();
    writer.join().unwrap().unwrap();
    assert!(child.wait().unwrap().success());
    let mut stacks = vec![Vec::new()];
    let mut lines = printed.lines();
    while let Some(line) = lines.next() {
        if line.is_empty() {
            stacks.push(Vec::new());
            continue;
        }
        let place = lines.next().unwrap();
        stacks.last_mut().unwrap().push(tool_frame(line, place));
    }
    stacks.pop_if(|last| last.is_empty());
    stacks
}

/// Whether a tool's frame is lookup's: the same function (the outermost
/// may be named by the ELF symbol, the code object's name, as
/// llvm-symbolizer does), and where lookup knows the position, the same
/// file, line and column (when the tool prints columns).
fn same_frame(tool: &Frame, lookup: &Frame, outermost: bool, code_name: &str) -> bool {
    let function = tool.function == lookup.function || (outermost && tool.function == code_name);
    let place = match &lookup.file {
        None => tool.line == 0,
        Some(_) => {
            // debuginfo writes line-table columns past 65,535 as 0 (unknown).
            let column = tool.column == 0 || tool.column == lookup.column;
            tool.file == lookup.file && tool.line == lookup.line && column
        }
    };
    function && place
}

/// Addresses in a code object: the first and last byte of each piece
/// between changes of its inline stack (at most 64 pieces, spread).
fn addresses_in(map: &InlineMap, code: CodeId) -> Vec<u64> {
    let jit_code = map.code(code);
    let inlining = code_inlining(map, code, jit_code.size);
    let step = inlining.positions.len().div_ceil(64).max(1);
    inlining
        .positions
        .iter()
        .step_by(step)
        .flat_map(|piece| [piece.span.start, piece.span.end - 1])
        .map(|offset| jit_code.address + offset)
        .collect()
}

/// The optimized (Maglev and TurboFan) code objects with a jitted file.
fn optimized_codes(injected: &Injected) -> Vec<CodeId> {
    let map = injected.map();
    map.code_ids()
        .filter(|&code| {
            let tier = map.log_object(code).and_then(|object| object.tier).map(|tier| tier.tier);
            matches!(tier, Some(Tier::TurboFan | Tier::Maglev)) && injected.jitted(code).exists()
        })
        .collect()
}

/// Deliverable 1: addr2line and llvm-symbolizer print lookup's stacks.
fn check_addr2line_and_llvm_symbolizer(injected: &Injected) {
    let map = injected.map();
    let codes = optimized_codes(injected);
    let mut queries: Vec<(CodeId, u64)> = Vec::new();
    for &code in &codes {
        queries.extend(addresses_in(map, code).into_iter().map(|address| (code, address)));
    }
    let expected = lookup_stacks(injected, &queries);
    // File addresses: the code's offset from its .text section's address.
    let file_address = |code: CodeId, address: u64| {
        let path = injected.jitted(code);
        injected.before[&path].text_address + (address - map.code(code).address)
    };
    let inlined = expected.iter().filter(|stack| stack.len() > 1).count();
    let deepest = expected.iter().map(Vec::len).max().unwrap_or(0);
    assert!(inlined > 100, "the recording is about inlining: {inlined} addresses in inlined code");

    let mut by_code: BTreeMap<CodeId, Vec<usize>> = BTreeMap::new();
    for (index, &(code, _)) in queries.iter().enumerate() {
        by_code.entry(code).or_default().push(index);
    }
    let mut checked = Vec::new();
    let mut elfutils_disagreements = Vec::new();
    for program in [Addr2line::Binutils, Addr2line::Elfutils] {
        if !works(program.program(), &["--version"]) {
            eprintln!("skipped: {} is not installed", program.program());
            continue;
        }
        for (&code, indices) in &by_code {
            let file_addresses: Vec<u64> = indices.iter().map(|&index| file_address(code, queries[index].1)).collect();
            let stacks = addr2line_stacks_of(program, &injected.jitted(code), &file_addresses);
            assert_eq!(stacks.len(), indices.len());
            for (stack, &index) in stacks.iter().zip(indices) {
                if program == Addr2line::Elfutils && !agrees(stack, &expected[index], map.code_name(code)) {
                    elfutils_disagreements.push((queries[index].1, stack.clone(), expected[index].clone()));
                    continue;
                }
                compare(stack, &expected[index], program.program(), map.code_name(code), queries[index].1);
            }
        }
        checked.push(match (program, elfutils_disagreements.len()) {
            (Addr2line::Elfutils, differing) if differing > 0 => format!("eu-addr2line (all but {differing})"),
            _ => program.program().to_string(),
        });
    }
    // eu-addr2line (elfutils 0.188) prints, at a few addresses, the chain
    // of a sibling call of the same function at the same call line; libdw's
    // dwarf_getscopes and dwarf_getscopes_die, which its source calls, give
    // the right chain there (docs/debuginfo.md).
    if !elfutils_disagreements.is_empty() {
        eprintln!("eu-addr2line differs from lookup at {} addresses, e.g.:", elfutils_disagreements.len());
        for (address, tool, lookup) in elfutils_disagreements.iter().take(2) {
            eprintln!("  {address:#x}: {tool:?}\n    lookup: {lookup:?}");
        }
    }
    assert!(elfutils_disagreements.len() * 1000 <= queries.len(), "{} disagreements", elfutils_disagreements.len());
    if works("llvm-symbolizer", &["--version"]) {
        let files: Vec<(PathBuf, u64)> =
            queries.iter().map(|&(code, address)| (injected.jitted(code), file_address(code, address))).collect();
        let stacks = llvm_symbolizer_stacks(&files);
        assert_eq!(stacks.len(), queries.len());
        for ((stack, expected), &(code, address)) in stacks.iter().zip(&expected).zip(&queries) {
            compare(stack, expected, "llvm-symbolizer", map.code_name(code), address);
        }
        checked.push("llvm-symbolizer".to_string());
    } else {
        eprintln!("skipped: llvm-symbolizer is not installed");
    }
    eprintln!(
        "{} printed lookup's stack at {} addresses of {} optimized code objects ({inlined} in inlined code, up to {deepest} frames)",
        checked.join(", "),
        queries.len(),
        codes.len()
    );
}

/// Whether a tool's stack is lookup's, frame by frame.
fn agrees(tool: &[Frame], lookup: &[Frame], code_name: &str) -> bool {
    let outermost = lookup.len().saturating_sub(1);
    tool.len() == lookup.len()
        && tool
            .iter()
            .zip(lookup)
            .enumerate()
            .all(|(index, (tool, lookup))| same_frame(tool, lookup, index == outermost, code_name))
}

fn compare(tool: &[Frame], lookup: &[Frame], tool_name: &str, code_name: &str, address: u64) {
    let agree = agrees(tool, lookup, code_name);
    assert!(agree, "{tool_name} at {address:#x} ({code_name}):\n{tool:#?}\nlookup:\n{lookup:#?}");
}

/// Deliverable 2 and what perf needs: llvm-dwarfdump finds no error, each
/// file keeps its build id and `.text`, and perf's build-id cache holds the
/// new file.
fn check_files_and_build_id_cache(injected: &Injected) {
    for (path, before) in &injected.before {
        assert_eq!(&kept(&std::fs::read(path).unwrap()), before, "{}", path.display());
    }
    let cached = |path: &Path| {
        let build_id = data_encoding::HEXLOWER.encode(&injected.before[path].build_id);
        let link = injected.buildid_dir.join(".build-id").join(&build_id[..2]).join(&build_id[2..]);
        if link.is_dir() { link.join("elf") } else { link }
    };
    for path in &injected.rewritten {
        assert!(std::fs::read(cached(path)).unwrap() == std::fs::read(path).unwrap(), "{}", path.display());
    }
    eprintln!(
        "{} jitted files keep their build id and .text; the {} rewritten are in perf's build-id cache",
        injected.before.len(),
        injected.rewritten.len()
    );
    // An entry that is neither the file nor a copy of it (issue 37: another
    // file with the same build id) is named and left alone.
    let stale = &injected.rewritten[0];
    let copy = cached(stale).with_extension("copy");
    std::fs::write(&copy, b"stale").unwrap();
    std::fs::rename(&copy, cached(stale)).unwrap();
    let args = [
        "debuginfo",
        "--log",
        text(&injected.log),
        "--jitdump",
        text(&injected.jitdump),
        "--buildid-dir",
        text(&injected.buildid_dir),
    ];
    let output = run(&args);
    let said = stderr(&output);
    assert!(
        said.contains(&format!("the {} jitted file(s) already had their DWARF", injected.rewritten.len())),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "{}: perf's build-id cache entry {} has its build id but is another file: left alone",
            stale.display(),
            cached(stale).canonicalize().unwrap().display()
        )),
        "{said}"
    );
    assert_eq!(std::fs::read(cached(stale)).unwrap(), b"stale");
    // A copy of the file (a cache on another file system) already holding
    // its DWARF: nothing to do, nothing said.
    std::fs::write(&copy, std::fs::read(stale).unwrap()).unwrap();
    std::fs::rename(&copy, cached(stale)).unwrap();
    let said = stderr(&run(&args));
    assert!(!said.contains("cache"), "{said}");
    assert!(std::fs::read(cached(stale)).unwrap() == std::fs::read(stale).unwrap());

    if !works("llvm-dwarfdump", &["--version"]) {
        eprintln!("skipped: llvm-dwarfdump is not installed");
        return;
    }
    for chunk in injected.rewritten.chunks(500) {
        let output = Command::new("llvm-dwarfdump").arg("--verify").args(chunk).output().unwrap();
        let printed = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success() && !printed.contains("error:"), "{printed}");
        assert_eq!(printed.matches("No errors.").count(), chunk.len(), "{printed}");
    }
    eprintln!("llvm-dwarfdump --verify: no error in the {} rewritten files", injected.rewritten.len());
}

/// An HTTP/1.1 POST to 127.0.0.1; the response body.
fn post(port: u16, path: &str, body: &str) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    if !head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        return body.to_string();
    }
    // Chunked: SIZE\r\nDATA\r\n ... 0\r\n\r\n.
    let mut decoded = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        decoded.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    decoded
}

/// Deliverable 3: samply's symbol server (what the Firefox Profiler asks)
/// answers the inlined functions at JIT addresses inside inlined code.
fn check_samply(injected: &Injected) {
    if !works("samply", &["--version"]) {
        eprintln!("skipped: samply is not installed (cargo install samply)");
        return;
    }
    let profile = injected.directory.join("samply.json");
    output_of(Command::new("samply").args(["import", "--save-only", "-o"]).arg(&profile).arg(&injected.perf_jit_data));
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&profile).unwrap()).unwrap();
    let libs = saved["libs"].as_array().unwrap();
    // A free port, then samply on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new("samply")
        .args(["load", "--no-open", "--port", &port.to_string()])
        .arg(&profile)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut printed = String::new();
    let mut stdout = server.stdout.take().unwrap();
    let mut buffer = [0; 4096];
    // The token is in the URL samply prints once it listens.
    let token = loop {
        let read = stdout.read(&mut buffer).unwrap();
        assert!(read > 0, "samply load stopped: {printed}");
        printed.push_str(&String::from_utf8_lossy(&buffer[..read]));
        let marker = format!("127.0.0.1%3A{port}%2F");
        if let Some(start) = printed.find(&marker) {
            let rest = &printed[start + marker.len()..];
            if let Some(end) = rest.find("%2F") {
                break rest[..end].to_string();
            }
        }
    };
    let map = injected.map();
    let mut asked = 0;
    let mut inlines_answered = 0;
    let mut demangled = 0;
    for code in optimized_codes(injected) {
        let path = injected.jitted(code);
        let name = path.file_name().unwrap().to_str().unwrap();
        let Some(lib) = libs.iter().find(|lib| lib["name"] == name) else { continue };
        let addresses: Vec<u64> = addresses_in(map, code);
        let queries: Vec<(CodeId, u64)> = addresses.iter().map(|&address| (code, address)).collect();
        let expected = lookup_stacks(injected, &queries);
        let inlined: Vec<(u64, &Vec<Frame>)> =
            addresses.iter().copied().zip(&expected).filter(|(_, stack)| stack.len() > 1).collect();
        if inlined.is_empty() {
            continue;
        }
        // Module offsets count from where the library is mapped, which
        // perf inject maps from its .text: they are code offsets.
        let frames: Vec<String> =
            inlined.iter().map(|(address, _)| format!("[0,{}]", address - map.code(code).address)).collect();
        let body = format!(
            r#"{{"memoryMap":[["{name}","{}"]],"stacks":[[{}]]}}"#,
            lib["breakpadId"].as_str().unwrap(),
            frames.join(",")
        );
        let answer: serde_json::Value =
            serde_json::from_str(&post(port, &format!("/{token}/symbolicate/v5"), &body)).unwrap();
        let answered = answer["results"][0]["stacks"][0].as_array().unwrap();
        for ((address, stack), frame) in inlined.iter().zip(answered) {
            // samply: the outer function, its inlined calls innermost first.
            let mut functions: Vec<&str> = frame["inlines"]
                .as_array()
                .map(|inlines| inlines.iter().map(|inline| inline["function"].as_str().unwrap()).collect())
                .unwrap_or_default();
            functions.push(frame["function"].as_str().unwrap_or(""));
            let lines: Vec<u64> = frame["inlines"]
                .as_array()
                .map(|inlines| inlines.iter().map(|inline| inline["line"].as_u64().unwrap_or(0)).collect())
                .unwrap_or_default();
            let expected_functions: Vec<&str> = stack.iter().map(|frame| frame.function.as_str()).collect();
            let expected_lines: Vec<u64> = stack[..stack.len() - 1].iter().map(|frame| frame.line.into()).collect();
            assert_eq!(functions.len(), expected_functions.len(), "samply at {address:#x}: {frame}");
            for (function, expected) in functions.iter().zip(&expected_functions) {
                // samply demangles every name as a C++ symbol when it
                // parses as one: a minified `_` shows as nothing.
                if function != expected && expected.starts_with('_') {
                    demangled += 1;
                    continue;
                }
                assert_eq!(function, expected, "samply at {address:#x}: {frame}");
            }
            assert_eq!(lines, expected_lines, "samply at {address:#x}: {frame}");
            inlines_answered += 1;
        }
        asked += 1;
    }
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(inlines_answered > 100, "{inlines_answered}");
    eprintln!(
        "samply's symbol server answered lookup's inlined functions and lines at {inlines_answered} addresses of {asked} jitted libraries ({demangled} names starting with _ demangled by samply)"
    );
}

/// A sample whose leaf ran in a rewritten jitted file, as perf script
/// shows it.
struct JitSample {
    file: PathBuf,
    /// The address in the file.
    file_address: u64,
    /// Its weight (cpu-clock: nanoseconds).
    period: u64,
    /// perf's `srcline` for it (`basename:line`), when it printed one.
    srcline: Option<String>,
}

/// `[PERIOD] IP SYMBOL+0xOFFSET (DSO)`: the period, the dso and the
/// offset, for a line of `perf script -G` that is a sample.
fn perf_sample_line(line: &str, with_period: bool) -> Option<(u64, PathBuf, u64)> {
    let mut rest = line.trim_start();
    let mut period = 0;
    if with_period {
        let (number, after) = rest.split_once(' ')?;
        period = number.parse().ok()?;
        rest = after.trim_start();
    }
    let (ip, _) = rest.split_once(' ')?;
    if !ip.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let (before, dso) = rest.strip_suffix(')')?.rsplit_once(" (")?;
    let offset = before.rsplit_once("+0x").and_then(|(_, hex)| u64::from_str_radix(hex, 16).ok())?;
    Some((period, PathBuf::from(dso), offset))
}

/// The samples of perf.jit.data whose leaf is in a rewritten file (`perf
/// script -G`: the leaf only), with perf's srcline, asked for those files
/// only (`--dsos`: perf runs addr2line on every file it prints one for).
fn jit_samples(injected: &Injected) -> Vec<JitSample> {
    let rewritten: std::collections::HashSet<&PathBuf> = injected.rewritten.iter().collect();
    let printed = output_of(
        injected.perf().args(["script", "-F", "period,ip,sym,symoff,dso", "-G", "-i"]).arg(&injected.perf_jit_data),
    );
    let mut samples: Vec<JitSample> = printed
        .lines()
        .filter_map(|line| perf_sample_line(line, true))
        .filter(|(_, file, _)| rewritten.contains(file))
        .map(|(period, file, offset)| {
            let file_address = injected.before[&file].text_address + offset;
            JitSample { file, file_address, period, srcline: None }
        })
        .collect();
    let mut names: Vec<String> =
        samples.iter().map(|sample| sample.file.file_name().unwrap().to_string_lossy().into_owned()).collect();
    names.sort();
    names.dedup();
    let printed = output_of(
        injected
            .perf()
            .args(["script", "-F", "ip,sym,symoff,dso,srcline", "-G", "--dsos", &names.join(","), "-i"])
            .arg(&injected.perf_jit_data),
    );
    let mut next = 0;
    for line in printed.lines() {
        match perf_sample_line(line, false) {
            Some((_, file, offset)) => {
                let sample = &samples[next];
                assert_eq!((&file, offset + injected.before[&file].text_address), (&sample.file, sample.file_address));
                next += 1;
            }
            None if next > 0 => samples[next - 1].srcline = Some(line.trim().to_string()),
            None => {}
        }
    }
    assert_eq!(next, samples.len(), "perf script --dsos printed the same samples");
    samples
}

/// The innermost frame addr2line gives each sample.
fn addr2line_leaves(samples: &[JitSample]) -> Vec<Frame> {
    let mut by_file: BTreeMap<&Path, Vec<usize>> = BTreeMap::new();
    for (index, sample) in samples.iter().enumerate() {
        by_file.entry(&sample.file).or_default().push(index);
    }
    let mut leaves = vec![None; samples.len()];
    for (file, indices) in by_file {
        let addresses: Vec<u64> = indices.iter().map(|&index| samples[index].file_address).collect();
        for (stack, index) in addr2line_stacks(file, &addresses).into_iter().zip(indices) {
            leaves[index] = stack.into_iter().next();
        }
    }
    leaves.into_iter().map(Option::unwrap).collect()
}

/// Deliverable 4: perf shows the inlined JavaScript frames wherever it
/// shows a C program's; and it reads the new DWARF through its build-id
/// cache (its srclines are the innermost positions).
fn check_perf(injected: &Injected, samples: &[JitSample], leaves: &[Frame]) {
    let mut agreeing = 0;
    for (sample, leaf) in samples.iter().zip(leaves) {
        let (Some(srcline), Some(file)) = (&sample.srcline, &leaf.file) else { continue };
        let basename = Path::new(file).file_name().unwrap().to_string_lossy();
        assert_eq!(
            srcline,
            &format!("{basename}:{}", leaf.line),
            "perf's srcline at {:#x} in {}",
            sample.file_address,
            sample.file.display()
        );
        agreeing += 1;
    }
    assert!(agreeing > samples.len() / 2, "{agreeing} of {} samples have perf's srcline", samples.len());
    eprintln!("perf script's srcline is the innermost position of the new DWARF for {agreeing} JIT samples");

    if !works("gcc", &["--version"]) {
        eprintln!("skipped: perf --inline against the C control: gcc is not installed");
        return;
    }
    let control = injected.directory.join("control");
    std::fs::create_dir_all(&control).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/debuginfo/inline_control.c");
    output_of(Command::new("gcc").args(["-O2", "-g", "-o"]).arg(control.join("inline_control")).arg(&source));
    let perf_data = control.join("perf.data");
    let recorded = injected
        .perf()
        .args(["record", "-q", "-g", "-e", "cpu-clock", "-o"])
        .arg(&perf_data)
        .arg("--")
        .arg(control.join("inline_control"))
        .arg("1000000")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !recorded {
        eprintln!("skipped: perf --inline against the C control: perf record -e cpu-clock fails here");
        return;
    }
    let inline_frames = |perf_data: &Path, names: &[&str]| -> (usize, usize) {
        let script = output_of(injected.perf().args(["script", "--inline", "-i"]).arg(perf_data));
        let report =
            output_of(injected.perf().args(["report", "--inline", "--stdio", "-g", "caller", "-i"]).arg(perf_data));
        let count = |text: &str| text.lines().filter(|line| names.iter().any(|name| line.contains(name))).count();
        (count(&script), count(&report))
    };
    let c = inline_frames(&perf_data, &["leaf", "middle"]);
    let version = output_of(Command::new("perf").arg("--version"));
    eprintln!(
        "{}: inlined frames of the C control in perf script --inline / perf report --inline: {} / {}",
        version.trim(),
        c.0,
        c.1
    );
    if c == (0, 0) {
        eprintln!(
            "skipped: this perf shows no inlined frames even for the C control (built without libbfd or libllvm)"
        );
        return;
    }
    let map = injected.map();
    let inlined_names: Vec<String> = optimized_codes(injected)
        .into_iter()
        .flat_map(|code| {
            let calls = code_inlining(map, code, map.code(code).size).calls;
            calls.into_iter().map(move |call| {
                let function = v8inline::internals::v8::inline_stack::FrameFunction::Inlined(call.function);
                let frame = v8inline::internals::v8::inline_stack::InlineFrame { function, script_offset: -1 };
                map.describe(code, &frame).function_name.to_string()
            })
        })
        .filter(|name| name.len() > 3)
        .collect();
    let names: Vec<&str> = inlined_names.iter().map(String::as_str).collect();
    let javascript = inline_frames(&injected.perf_jit_data, &names);
    eprintln!(
        "inlined JavaScript frames in perf script --inline / perf report --inline: {} / {}",
        javascript.0, javascript.1
    );
    assert!(c.0 == 0 || javascript.0 > 0, "perf script shows C's inlined frames, not JavaScript's");
    assert!(c.1 == 0 || javascript.1 > 0, "perf report shows C's inlined frames, not JavaScript's");
}

/// The key of a function in self shares: its name and file.
type FunctionKey = (String, String);

/// The leaf function of a v8inline folded stack when it is JavaScript:
/// `TAG:MARKERname script:line:col`, named as lookup names it.
fn folded_leaf(stack: &str) -> Option<FunctionKey> {
    let leaf = stack.rsplit(';').next()?;
    let (tag, rest) = leaf.split_once(':')?;
    if !["JS", "Eval", "Script", "LazyCompile", "Function"].contains(&tag) {
        return None;
    }
    // The tier marker, after `o` for on-stack replacement.
    let markers = ['~', '^', '+', '*', '\''];
    let rest = rest.strip_prefix('o').filter(|rest| rest.starts_with(markers)).unwrap_or(rest);
    let rest = rest.trim_start_matches(markers);
    let (name, place) = rest.rsplit_once(' ').unwrap_or(("", rest));
    let mut parts = place.rsplitn(3, ':');
    let (_, _, script) = (parts.next()?, parts.next()?, parts.next()?);
    let name = match (name, script.is_empty()) {
        ("", false) => "(top level)",
        ("" | "[unknown function]", _) => "(unknown function)",
        (name, _) => name,
    };
    Some((name.to_string(), file_name(script).into_owned()))
}

/// Deliverable 5: addr2line alone rebuilds the self shares of v8inline's
/// folded output of the same recording.
fn check_fidelity(injected: &Injected, samples: &[JitSample], leaves: &[Frame]) {
    let mut from_addr2line: HashMap<FunctionKey, f64> = HashMap::new();
    for (leaf, sample) in leaves.iter().zip(samples) {
        let key = (leaf.function.clone(), leaf.file.clone().unwrap_or_default());
        *from_addr2line.entry(key).or_default() += sample.period as f64;
    }
    let folded = output_of(Command::new(env!("CARGO_BIN_EXE_v8inline")).args([
        "--log",
        text(&injected.log),
        "--jitdump",
        text(&injected.jitdump),
        text(&esmapp().join("perf.script.gz")),
    ]));
    let mut from_v8inline: HashMap<FunctionKey, f64> = HashMap::new();
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        if let Some(key) = folded_leaf(stack) {
            *from_v8inline.entry(key).or_default() += count.parse::<f64>().unwrap();
        }
    }
    let total = |shares: &HashMap<FunctionKey, f64>| shares.values().sum::<f64>();
    let (addr2line_total, v8inline_total) = (total(&from_addr2line), total(&from_v8inline));
    let mut keys: Vec<&FunctionKey> = from_addr2line.keys().chain(from_v8inline.keys()).collect();
    keys.sort();
    keys.dedup();
    let distance: f64 = keys
        .iter()
        .map(|key| {
            let a = from_addr2line.get(*key).copied().unwrap_or(0.0) / addr2line_total;
            let v = from_v8inline.get(*key).copied().unwrap_or(0.0) / v8inline_total;
            (a - v).abs()
        })
        .sum::<f64>()
        / 2.0;
    if std::env::var_os("V8INLINE_SHOW_SHARES").is_some() {
        let mut differences: Vec<(f64, &FunctionKey)> = keys
            .iter()
            .map(|key| {
                let a = from_addr2line.get(*key).copied().unwrap_or(0.0) / addr2line_total;
                let v = from_v8inline.get(*key).copied().unwrap_or(0.0) / v8inline_total;
                (a - v, *key)
            })
            .collect();
        differences.sort_by(|a, b| b.0.abs().total_cmp(&a.0.abs()));
        for (difference, key) in differences.iter().take(15) {
            eprintln!("  {difference:+.4} {key:?}");
        }
    }
    eprintln!(
        "self shares of {} JavaScript functions: addr2line -i on {} JIT samples vs v8inline's folded output of the same recording: total variation distance {distance:.4}",
        keys.len(),
        samples.len()
    );
    assert!(distance <= 0.02, "TVD {distance}");
}

/// The clients on one injected recording: setting it up (perf inject on
/// 6,697 code loads) is the slow part.
#[test]
fn real_clients_read_the_inlined_frames() {
    let Some(injected) = inject() else { return };
    check_addr2line_and_llvm_symbolizer(&injected);
    check_files_and_build_id_cache(&injected);
    check_samply(&injected);
    if works("addr2line", &["--version"]) {
        let samples = jit_samples(&injected);
        let leaves = addr2line_leaves(&samples);
        check_perf(&injected, &samples, &leaves);
        check_fidelity(&injected, &samples, &leaves);
    } else {
        eprintln!("skipped: perf srcline and the self shares need binutils addr2line");
    }
    let _ = std::fs::remove_dir_all(&injected.directory);
}

/// A damaged jitted file, log or jitdump is a warning or an error naming
/// it, never a panic; `--strict` fails for files it could not rewrite.
#[test]
fn damaged_inputs_are_named_not_a_panic() {
    let directory = temp_dir("debuginfo", "damaged");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/debuginfo/jitted-17052-6378.so");
    let good = std::fs::read(&fixture).unwrap();
    std::fs::write(directory.join("jitted-17052-6378.so"), &good).unwrap();
    // Other code objects' files, cut and garbled.
    std::fs::write(directory.join("jitted-17052-6025.so"), &good[..good.len() / 3]).unwrap();
    std::fs::write(directory.join("jitted-17052-5580.so"), b"\x7fELF garbage").unwrap();
    let jitdump = directory.join("jit-17052.dump");
    std::fs::write(&jitdump, jitdump::repair(&gunzip(&file_starting(&esmapp(), "jit-"))).unwrap().bytes).unwrap();
    let log = file_starting(&esmapp(), "codspeed-v8-");
    let args = ["debuginfo", "--log", text(&log), "--jitdump", text(&jitdump), "--buildid-dir", text(&directory)];
    let output = run(&args);
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    for name in ["jitted-17052-6025.so", "jitted-17052-5580.so"] {
        assert!(
            said.contains(&format!("v8inline: warning: {}: not an ELF file", directory.join(name).display())),
            "{said}"
        );
    }
    assert!(said.contains("gave 1 jitted file(s) DWARF"), "{said}");
    // --strict decides before writing: the good file is not rewritten either.
    std::fs::write(directory.join("jitted-17052-6378.so"), &good).unwrap();
    let strict = run(&[&args[..], &["--strict"]].concat());
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    assert!(
        stderr(&strict).ends_with("v8inline: --strict: 0 input problem(s) and 2 jitted file(s) that cannot be rewritten as they are, listed above; no file written\n"),
        "{}",
        stderr(&strict)
    );
    assert!(std::fs::read(directory.join("jitted-17052-6378.so")).unwrap() == good);

    // A jitdump cut in the middle and a log cut short: the readers' warnings.
    let bytes = std::fs::read(&jitdump).unwrap();
    std::fs::write(&jitdump, &bytes[..bytes.len() / 2]).unwrap();
    let cut_log = directory.join("codspeed-v8-17052.log");
    let log_text = gunzip(&log);
    std::fs::write(&cut_log, &log_text[..log_text.len() / 2]).unwrap();
    let output =
        run(&["debuginfo", "--log", text(&cut_log), "--jitdump", text(&jitdump), "--buildid-dir", text(&directory)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("cut short"), "{}", stderr(&output));
    // No jitted file at all, and no jitdump.
    let empty = temp_dir("debuginfo", "empty");
    let output = run(&["debuginfo", "--log", text(&log), "--jitdump", text(&jitdump), text(&empty)]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(&format!("{}: no jitted-17052-*.so: run `perf inject -j", empty.display())),
        "{}",
        stderr(&output)
    );
    let output = run(&["debuginfo", "--log", text(&log)]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

/// `record --inject` on node 26 (the jitdump in the output directory) and
/// node 20 (in the working directory, no --perf-prof-path): perf.jit.data
/// and jitted files whose DWARF gives addr2line deep.js's inlined chain.
/// HOME is the test's own, so perf's build-id cache is too.
#[test]
fn record_inject_leaves_perf_jit_data_with_inlined_frames() {
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("skipped: perf cannot record here ({reason})");
        return;
    }
    if !works("addr2line", &["--version"]) {
        eprintln!("skipped: binutils addr2line is not installed");
        return;
    }
    let versions: Vec<(u32, PathBuf)> =
        [26, 20].into_iter().filter_map(|version| Some((version, common::node_binary(version)?))).collect();
    assert!(!versions.is_empty(), "no node 26 or 20 installed");
    for (version, node) in versions {
        let directory = temp_dir("debuginfo", &format!("record-inject-{version}"));
        let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/programs");
        for program in ["deep.js", "lib.js"] {
            std::fs::copy(programs.join(program), directory.join(program)).unwrap();
        }
        std::fs::create_dir_all(directory.join("home")).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
            .current_dir(&*directory)
            .env("HOME", directory.join("home"))
            .args(["record", "--inject", "--frequency", "499", "--output-dir", "out", "--"])
            .arg(&node)
            .args(["deep.js", "600"])
            .output()
            .unwrap();
        let said = stderr(&output);
        assert!(output.status.success(), "node {version}: {said}");
        let out = directory.join("out");
        assert!(
            said.contains(&format!("perf report --inline -i {}", out.join("perf.jit.data").display())),
            "node {version}: {said}"
        );
        assert!(out.join("perf.jit.data").is_file());
        // Where perf inject wrote the jitted files: next to the jitdump node wrote.
        let jitted_dir = if version >= 22 { out.clone() } else { directory.to_path_buf() };
        assert!(said.contains(&format!("v8inline: {}: gave ", jitted_dir.display())), "node {version}: {said}");
        assert_eq!(!said.contains("where the runtime wrote its jitdump"), version >= 22, "node {version}: {said}");
        // The repaired copy put back for perf inject is gone.
        let jitdumps_left = std::fs::read_dir(&*directory)
            .unwrap()
            .filter(|entry| entry.as_ref().unwrap().file_name().to_string_lossy().ends_with(".dump"))
            .count();
        assert_eq!(jitdumps_left, 0, "node {version}");
        // kernel's TurboFan code: somewhere in it, a chain of deep.js's
        // functions inlined into one another.
        let kernel = std::fs::read_dir(&jitted_dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with("jitted-"))
            .find(|path| {
                let bytes = std::fs::read(path).unwrap();
                let file = object::File::parse(&*bytes).unwrap();
                use object::ObjectSymbol as _;
                let is_kernel = file.symbols().any(|symbol| {
                    symbol.name().is_ok_and(|name| name.starts_with("JS:*") && name.contains("kernel /"))
                });
                is_kernel && file.section_by_name(".debug_ranges").is_some()
            })
            .unwrap_or_else(|| panic!("node {version}: no optimized kernel with inlined calls"));
        let size = kept(&std::fs::read(&kernel).unwrap());
        let addresses: Vec<u64> =
            (0..size.text.len() as u64).step_by(8).map(|offset| size.text_address + offset).collect();
        let deepest = addr2line_stacks(&kernel, &addresses).into_iter().max_by_key(Vec::len).unwrap();
        let functions: Vec<&str> = deepest.iter().map(|frame| frame.function.as_str()).collect();
        assert!(functions.len() >= 3 && functions.last() == Some(&"kernel"), "node {version}: {functions:?}");
        eprintln!(
            "node {version}: record --inject: addr2line's deepest stack in kernel's code: {}",
            functions.join(" <- ")
        );
    }
}

/// The esmapp jitdump (repaired), its code log and perf inject's file of
/// code object 6378 (testdata/debuginfo) in `directory`: what one
/// debuginfo run takes, in a few milliseconds.
struct OneFile {
    jitdump: PathBuf,
    log: PathBuf,
    /// The jitted file as perf inject wrote it.
    original: Vec<u8>,
}

const JITTED_NAME: &str = "jitted-17052-6378.so";

fn one_file(jitdump_directory: &Path) -> OneFile {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/debuginfo").join(JITTED_NAME);
    let jitdump = jitdump_directory.join("jit-17052.dump");
    std::fs::write(&jitdump, jitdump::repair(&gunzip(&file_starting(&esmapp(), "jit-"))).unwrap().bytes).unwrap();
    OneFile { jitdump, log: file_starting(&esmapp(), "codspeed-v8-"), original: std::fs::read(fixture).unwrap() }
}

impl OneFile {
    /// `v8inline debuginfo` on the jitted files of `directory`.
    fn debuginfo(&self, directory: &Path, buildid_dir: &Path, extra: &[&str]) -> std::process::Output {
        let args = [
            "debuginfo",
            "--log",
            text(&self.log),
            "--jitdump",
            text(&self.jitdump),
            "--buildid-dir",
            text(buildid_dir),
        ];
        run(&[&args[..], &[text(directory)], extra].concat())
    }
}

/// The `.build-id/xx/yyyy` link of perf's cache for `elf`, to a directory
/// holding `elf` (perf 5 and later): the path of that `elf`.
fn cache_entry_path(buildid_dir: &Path, elf: &[u8]) -> PathBuf {
    let build_id = data_encoding::HEXLOWER.encode(&kept(elf).build_id);
    let holder = buildid_dir.join("jitted").join(&build_id);
    std::fs::create_dir_all(&holder).unwrap();
    let links = buildid_dir.join(".build-id").join(&build_id[..2]);
    std::fs::create_dir_all(&links).unwrap();
    std::os::unix::fs::symlink(format!("../../jitted/{build_id}"), links.join(&build_id[2..])).unwrap();
    holder.join("elf")
}

/// Issue 37: a symbolic link (or a hard link) named as a jitted file gave
/// the file outside the directory JavaScript DWARF. A symbolic link is now
/// skipped and named; a hard link's other name keeps its bytes (the file
/// in the directory is replaced, not written in place).
#[test]
fn links_to_files_outside_are_never_written_through() {
    let directory = temp_dir("debuginfo", "symlink");
    let setup = one_file(&directory);
    let outside = directory.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let library = outside.join("lib.so");
    std::fs::write(&library, &setup.original).unwrap();
    let jitted = directory.join(JITTED_NAME);
    std::os::unix::fs::symlink(&library, &jitted).unwrap();
    let output = setup.debuginfo(&directory, &directory.join("cache"), &[]);
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!(
            "v8inline: warning: {}: no regular file (a symbolic link?): skipped, not written through\n",
            jitted.display()
        )),
        "{said}"
    );
    assert!(said.contains("no jitted file of a JavaScript function given DWARF"), "{said}");
    assert!(std::fs::read(&library).unwrap() == setup.original, "the file outside keeps its bytes");
    assert!(std::fs::symlink_metadata(&jitted).unwrap().file_type().is_symlink());
    // --strict: the link is a problem, found before anything is written.
    let strict = setup.debuginfo(&directory, &directory.join("cache"), &["--strict"]);
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    assert!(stderr(&strict).ends_with("v8inline: --strict: 0 input problem(s) and 1 jitted file(s) that cannot be rewritten as they are, listed above; no file written\n"), "{}", stderr(&strict));

    // A hard link: the directory's name gets the DWARF, the other keeps its bytes.
    std::fs::remove_file(&jitted).unwrap();
    std::fs::hard_link(&library, &jitted).unwrap();
    let output = setup.debuginfo(&directory, &directory.join("cache"), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("gave 1 jitted file(s) DWARF"), "{}", stderr(&output));
    assert!(std::fs::read(&library).unwrap() == setup.original);
    assert!(std::fs::read(&jitted).unwrap().len() > setup.original.len());
}

/// Issue 37: a jitted file whose build-id note carries another file's
/// build id (libz's) made debuginfo replace the cache's copy of libz. Only
/// an entry that is the file itself (perf's hard link: same device and
/// inode) or a copy of it is rewritten; any other is named and left alone.
#[test]
fn a_build_id_cache_entry_of_another_file_is_left_alone() {
    let directory = temp_dir("debuginfo", "foreign-cache");
    let setup = one_file(&directory);
    let jitted = directory.join(JITTED_NAME);
    std::fs::write(&jitted, &setup.original).unwrap();
    let cache = directory.join("cache");
    let entry = cache_entry_path(&cache, &setup.original);
    let libz = b"\x7fELF libz's bytes, whose build id the jitted file carries".to_vec();
    std::fs::write(&entry, &libz).unwrap();
    let output = setup.debuginfo(&directory, &cache, &[]);
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let real_entry = entry.canonicalize().unwrap();
    assert!(
        said.contains(&format!(
            "v8inline: warning: {}: perf's build-id cache entry {} has its build id but is another file: left alone\n",
            jitted.display(),
            real_entry.display()
        )),
        "{said}"
    );
    assert!(said.contains("gave 1 jitted file(s) DWARF"), "{said}");
    assert_eq!(std::fs::read(&entry).unwrap(), libz);
    let rewritten = std::fs::read(&jitted).unwrap();
    assert_eq!(kept(&rewritten), kept(&setup.original));

    // perf's hard link: the entry becomes the new file (same inode again).
    use std::os::unix::fs::MetadataExt as _;
    std::fs::write(&jitted, &setup.original).unwrap();
    std::fs::remove_file(&entry).unwrap();
    std::fs::hard_link(&jitted, &entry).unwrap();
    let output = setup.debuginfo(&directory, &cache, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stderr(&output).contains("left alone"), "{}", stderr(&output));
    assert_eq!(std::fs::metadata(&entry).unwrap().ino(), std::fs::metadata(&jitted).unwrap().ino());
    assert!(std::fs::read(&entry).unwrap() == rewritten);

    // A copy of the file as perf inject wrote it (a cache on another file
    // system): replaced by the rewritten file.
    std::fs::remove_file(&entry).unwrap();
    std::fs::write(&entry, &setup.original).unwrap();
    let output = setup.debuginfo(&directory, &cache, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("1 copies in perf's build-id cache rewritten"), "{}", stderr(&output));
    assert!(std::fs::read(&entry).unwrap() == rewritten);
}

/// Issue 37: `--strict` with one damaged code-log line rewrote every file
/// and then said "no output written". It now decides first: exit 1, and
/// each file keeps its bytes and its modification time.
#[test]
fn strict_with_a_damaged_log_line_changes_no_file() {
    let directory = temp_dir("debuginfo", "strict-damaged-line");
    let setup = one_file(&directory);
    let jitted = directory.join(JITTED_NAME);
    std::fs::write(&jitted, &setup.original).unwrap();
    let before = std::fs::metadata(&jitted).unwrap().modified().unwrap();
    let mut log = gunzip(&setup.log);
    let second_line = log.iter().position(|&byte| byte == b'\n').unwrap() + 1;
    log.splice(second_line..second_line, b"code-creation,JS,not a number\n".iter().copied());
    let damaged_log = directory.join("codspeed-v8-17052.log");
    std::fs::write(&damaged_log, log).unwrap();
    let args = [
        "debuginfo",
        "--log",
        text(&damaged_log),
        "--jitdump",
        text(&setup.jitdump),
        "--buildid-dir",
        text(&directory),
        "--strict",
    ];
    let output = run(&args);
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.ends_with("v8inline: --strict: 1 input problem(s) and 0 jitted file(s) that cannot be rewritten as they are, listed above; no file written\n"), "{said}");
    assert!(!said.contains("gave"), "{said}");
    assert!(std::fs::read(&jitted).unwrap() == setup.original);
    assert_eq!(std::fs::metadata(&jitted).unwrap().modified().unwrap(), before);
    // Without --strict the damaged line is a warning and the file is rewritten.
    let output = run(&args[..args.len() - 1]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("gave 1 jitted file(s) DWARF"), "{}", stderr(&output));
}

/// A small tmpfs at `directory` (CI runs as root); `None`, with a message,
/// where mounting is not permitted.
fn small_tmpfs(directory: &Path, size: &str) -> Option<Tmpfs> {
    std::fs::create_dir_all(directory).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(directory)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs at {} (not root?)", directory.display());
        return None;
    }
    Some(Tmpfs(directory.to_owned()))
}

/// A mounted tmpfs, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the file system of `directory` with a file `filler` until it is full.
fn fill(filler: &Path) {
    let mut file = std::fs::File::create(filler).unwrap();
    let block = vec![0x55u8; 4096];
    while file.write_all(&block).and_then(|()| file.sync_all()).is_ok() {}
}

/// Issue 37: a full disk during debuginfo left files without their
/// section headers, and exit 0. Each file is now replaced whole: on a full
/// tmpfs the file and its cache entry (perf's hard link) stay as they
/// were, the run fails naming the file, and a run with room finishes.
#[test]
fn a_full_disk_leaves_every_file_whole_and_a_rerun_finishes() {
    let directory = temp_dir("debuginfo", "full-disk");
    let setup = one_file(&directory);
    let Some(tmpfs) = small_tmpfs(&directory.join("small"), "64k") else { return };
    let jitted = tmpfs.0.join(JITTED_NAME);
    std::fs::write(&jitted, &setup.original).unwrap();
    let cache = tmpfs.0.join("cache");
    let entry = cache_entry_path(&cache, &setup.original);
    std::fs::hard_link(&jitted, &entry).unwrap();
    let filler = tmpfs.0.join("filler");
    fill(&filler);

    let output = setup.debuginfo(&tmpfs.0, &cache, &[]);
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!("v8inline: error: {}: No space left on device (os error 28)", jitted.display()))
            && said.contains(": not rewritten, left as it was\n"),
        "{said}"
    );
    assert!(said.ends_with("v8inline: 1 jitted file(s) or cache entries not rewritten (listed above), each left whole as it was: run again once there is room\n"), "{said}");
    assert!(std::fs::read(&jitted).unwrap() == setup.original);
    assert!(std::fs::read(&entry).unwrap() == setup.original);
    let leftovers: Vec<_> = std::fs::read_dir(&tmpfs.0)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("v8inline-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    std::fs::remove_file(&filler).unwrap();
    let output = setup.debuginfo(&tmpfs.0, &cache, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("gave 1 jitted file(s) DWARF"), "{}", stderr(&output));
    let rewritten = std::fs::read(&jitted).unwrap();
    assert_eq!(kept(&rewritten), kept(&setup.original));
    assert!(rewritten.len() > setup.original.len());
    use std::os::unix::fs::MetadataExt as _;
    assert_eq!(std::fs::metadata(&entry).unwrap().ino(), std::fs::metadata(&jitted).unwrap().ino());
    drop(tmpfs);
}
