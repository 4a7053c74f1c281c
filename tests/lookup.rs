//! The inline map and `v8inline lookup` on the real recordings of every node
//! version, checked against V8's own jitdump DEBUG_INFO lines.

mod common;

use std::process::Command;

use common::{NODE_VERSIONS, assert_matches_expected, jitdump_path, log_path, recording_dir};
use v8inline::internals::expansion::PositionOrigin;
use v8inline::internals::files::read_file;
use v8inline::internals::formats::jitdump::{self, JitDump, ReadOptions};
use v8inline::internals::formats::v8log::{CodeLog, Tier};
use v8inline::internals::v8::inline_map::{InlineMap, SourceOptions};
use v8inline::internals::v8::inline_stack::{FrameFunction, PositionRule};

fn load(version: u32, debug_info: bool) -> (InlineMap, JitDump) {
    let jitdump = jitdump::read(&read_file(&jitdump_path(version)).unwrap(), &ReadOptions { debug_info }).unwrap();
    let log = CodeLog::parse(&read_file(&log_path(version)).unwrap());
    let sources = {
        let mut source_options = SourceOptions::default();
        source_options.read_from_disk = false;
        source_options
    };
    (InlineMap::new(vec![log], Some(&jitdump), sources), jitdump)
}

/// The jitdump's DEBUG_INFO is V8's own answer for the innermost line at each
/// code offset (TurboFan computes it in the inlined function's script; Maglev
/// against the outer script, so only same-script positions count there).
/// v8inline's innermost frame must give the same line for every entry.
#[test]
fn innermost_lines_match_v8_debug_info_on_every_node_version() {
    for version in NODE_VERSIONS {
        let (map, jitdump) = load(version, true);
        let mut checked = 0;
        let mut inlined_checked = 0;
        let mut mismatches = Vec::new();
        for debug_info in &jitdump.debug_infos {
            // The LOAD this DEBUG_INFO precedes.
            let Some(load) = jitdump
                .loads
                .iter()
                .find(|load| load.code_address == debug_info.code_address && load.timestamp >= debug_info.timestamp)
            else {
                continue;
            };
            let Some(found) = map.find(load.code_address, Some(load.timestamp)) else { continue };
            let Some(object) = map.log_object(found.code) else { continue };
            let Some(tier) = object.tier.map(|marker| marker.tier) else { continue };
            if !tier.is_optimizing() {
                continue;
            }
            let outer_script = map.log_of(found.code).unwrap().source_info(object).map(|info| info.script_id);
            // Several entries at one address: the last one is what applies.
            for (index, entry) in debug_info.entries.iter().enumerate() {
                if debug_info.entries.get(index + 1).is_some_and(|next| next.address == entry.address) {
                    continue;
                }
                let Some(offset) = entry.code_offset(debug_info.code_address) else { continue };
                let mut frames = Vec::new();
                map.inline_frames(found.code, offset, PositionRule::AtOrBefore, &mut frames);
                let innermost = frames[0];
                if innermost.script_offset < 0 {
                    continue;
                }
                let innermost_script = match innermost.function {
                    FrameFunction::Outer => outer_script,
                    FrameFunction::Inlined(function) => map.log_of(found.code).unwrap().function(function).script_id,
                };
                if tier == Tier::Maglev && innermost_script != outer_script {
                    continue;
                }
                let described = map.describe(found.code, &innermost);
                assert_eq!(described.position_origin, PositionOrigin::Script);
                checked += 1;
                inlined_checked += usize::from(frames.len() > 1);
                if described.position.map(|position| position.line as i32) != Some(entry.line) {
                    mismatches
                        .push(format!("{} +0x{offset:x}: ours {:?}, V8 {}", load.name, described.position, entry.line));
                }
            }
        }
        assert!(
            mismatches.is_empty(),
            "node {version}: {} of {checked} differ: {:?}",
            mismatches.len(),
            &mismatches[..mismatches.len().min(5)]
        );
        assert!(checked > 300, "node {version}: only {checked} entries checked");
        assert!(inlined_checked > 100, "node {version}: only {inlined_checked} entries inside inlined code");
        eprintln!("node {version}: {checked} DEBUG_INFO lines agree ({inlined_checked} inside inlined code)");
    }
}

/// Every jitdump LOAD joins the code-creation of the same object: same
/// name, tier and size, k-th with k-th at a reused address.
#[test]
fn every_load_joins_its_code_creation() {
    for version in NODE_VERSIONS {
        let (map, jitdump) = load(version, false);
        assert_eq!(map.unmatched_loads, 0, "node {version}");
        assert_eq!(map.codes().len(), jitdump.loads.len());
        let mut reused_addresses = 0;
        let mut seen = rustc_hash::FxHashSet::default();
        for (id, code) in map.code_ids().zip(map.codes()) {
            let object = map.log_object(id).unwrap();
            assert_eq!((object.address, object.size), (code.address, code.size));
            // The jitdump name is TAG:MARKER then the log name (node 18 drops the column).
            let marker = object.tier.map(|tier| tier.text()).unwrap_or_default();
            let log = map.log_of(id).unwrap();
            let prefix = format!("{}:{}", log.object_tag(object), marker);
            if object.function.is_some() {
                let code_name = map.name_of(code);
                assert!(code_name.starts_with(&prefix), "node {version}: {code_name} vs {prefix}");
                let log_name_start = log.object_name(object).split(':').next().unwrap();
                assert!(
                    code_name[prefix.len()..].starts_with(log_name_start),
                    "node {version}: {} vs {}",
                    code_name,
                    log.object_name(object)
                );
            }
            if !seen.insert(code.address) {
                reused_addresses += 1;
            }
        }
        assert!(reused_addresses > 0, "node {version}: the recording must reuse a code address");
    }
}

fn run_lookup(args: &[String]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).arg("lookup").args(args).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Golden inline stacks from the CLI: for each optimized `kernel` code object,
/// the address of its deepest inline stack, and one address past all code.
#[test]
fn lookup_prints_golden_inline_stacks() {
    for version in NODE_VERSIONS {
        let (map, _) = load(version, false);
        let mut queries = Vec::new();
        for (id, code) in map.code_ids().zip(map.codes()) {
            let Some(object) = map.log_object(id) else { continue };
            let optimized = object.tier.is_some_and(|tier| tier.tier.is_optimizing());
            let name = map.log_of(id).unwrap().object_name(object);
            if !optimized || !name.starts_with("kernel ") {
                continue;
            }
            let info = map.log_of(id).unwrap().source_tables(object).unwrap();
            let mut deepest = (0, 0);
            for entry in info.positions {
                let mut frames = Vec::new();
                map.inline_frames(id, u64::from(entry.code_offset), PositionRule::AtOrBefore, &mut frames);
                if frames.len() > deepest.0 {
                    deepest = (frames.len(), entry.code_offset);
                }
            }
            queries.push(format!("0x{:x}@{}", code.address + u64::from(deepest.1), code.load_time().unwrap()));
        }
        assert!(!queries.is_empty(), "node {version}: no optimized kernel");
        queries.push("0x10".to_string());
        let mut args = vec![
            "--log".to_string(),
            log_path(version).display().to_string(),
            "--jitdump".to_string(),
            jitdump_path(version).display().to_string(),
            "--no-disk-sources".to_string(),
        ];
        args.extend(queries);
        let output = run_lookup(&args);
        // The deepest stack runs square <- weigh <- combine <- kernel, in deep.js.
        assert!(output.contains("  square /tmp/v8inline-testdata/"), "node {version}:\n{output}");
        assert!(output.contains("deep.js") && output.contains("(inlined)"));
        assert!(output.ends_with("0x10: unknown: no JIT code object covers this address\n"));
        assert_matches_expected(&output, &recording_dir(version).join("expected/lookup.txt"));
    }
}

/// Inlining across scripts: `mix` from lib.js inlined into deep.js code
/// names lib.js with a line inside `mix`.
#[test]
fn cross_script_inlined_frames_name_their_own_script() {
    for version in NODE_VERSIONS {
        let (map, _) = load(version, false);
        let mut found = false;
        'codes: for code in map.code_ids() {
            let Some(object) = map.log_object(code) else { continue };
            let Some(info) = map.log_of(code).unwrap().source_tables(object) else { continue };
            if !map.log_of(code).unwrap().object_name(object).contains("deep.js") {
                continue;
            }
            for entry in info.positions {
                let mut frames = Vec::new();
                map.inline_frames(code, u64::from(entry.code_offset), PositionRule::AtOrBefore, &mut frames);
                let described = map.describe(code, &frames[0]);
                if described.inlined && described.function_name == "mix" {
                    assert!(described.script_name.ends_with("/lib.js"), "{described:?}");
                    let line = described.position.unwrap().line;
                    // mix spans lines 3-8 of lib.js.
                    assert!((3..=8).contains(&line), "node {version}: {described:?}");
                    let outer = map.describe(code, frames.last().unwrap());
                    assert!(outer.script_name.ends_with("/deep.js"), "{outer:?}");
                    found = true;
                    break 'codes;
                }
            }
        }
        assert!(found, "node {version}: no inlined mix found");
    }
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("v8inline-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `--no-log-source-code` logs: the script is read from disk (through
/// `--substitute-path`), else the function's own start is given.
#[test]
fn scripts_come_from_disk_when_the_log_has_no_source() {
    let version = 20;
    let log = String::from_utf8(read_file(&log_path(version)).unwrap()).unwrap();
    let without_sources: String =
        log.lines().filter(|line| !line.starts_with("script-source,")).map(|line| format!("{line}\n")).collect();
    assert!(without_sources.len() < log.len());
    let dir = temp_dir("no-sources");
    let stripped_log = dir.join("codspeed-v8-1.log");
    std::fs::write(&stripped_log, without_sources).unwrap();
    let expected = std::fs::read_to_string(recording_dir(version).join("expected/lookup.txt")).unwrap();
    let addresses: Vec<String> = expected
        .lines()
        .filter(|line| !line.starts_with(' '))
        .map(|line| line.split(':').next().unwrap().to_string())
        .collect();
    let programs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/programs");
    let mut args = vec![
        "--log".to_string(),
        stripped_log.display().to_string(),
        "--jitdump".to_string(),
        jitdump_path(version).display().to_string(),
        "--substitute-path".to_string(),
        format!("/tmp/v8inline-testdata/node{version}={}", programs.display()),
    ];
    // The golden addresses carry their times; the same lookups from disk.
    let queries: Vec<String> = addresses.iter().map(|address| address.to_string()).collect();
    let timed = run_lookup(&[args.clone(), golden_queries(version)].concat());
    assert_eq!(timed, expected);
    args.push("--no-disk-sources".to_string());
    let fallback = run_lookup(&[args, queries].concat());
    assert!(
        fallback.contains(
            "  square /tmp/v8inline-testdata/node20/deep.js:16:16 (inlined) (function start: no script source)"
        ),
        "{fallback}"
    );
}

/// The `ADDRESS@NS` queries behind a recording's golden lookup output.
fn golden_queries(version: u32) -> Vec<String> {
    let (map, _) = load(version, false);
    let expected = std::fs::read_to_string(recording_dir(version).join("expected/lookup.txt")).unwrap();
    expected
        .lines()
        .filter(|line| !line.starts_with(' '))
        .map(|line| {
            let address = u64::from_str_radix(line.split(':').next().unwrap().trim_start_matches("0x"), 16).unwrap();
            let code_index: Option<u64> =
                line.split("code index ").nth(1).map(|rest| rest.trim_end_matches(')').parse().unwrap());
            match code_index.and_then(|index| map.codes().iter().find(|code| code.code_index() == Some(index))) {
                Some(code) => format!("0x{address:x}@{}", code.load_time().unwrap()),
                None => format!("0x{address:x}"),
            }
        })
        .collect()
}

/// Bad input names the file and the line or byte offset; the rest is used.
#[test]
fn bad_inputs_are_reported_with_their_place() {
    let binary = env!("CARGO_BIN_EXE_v8inline");
    let missing = Command::new(binary).args(["lookup", "--log", "/nonexistent/x.log", "0x1"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/x.log: "), "{missing:?}");

    let dir = temp_dir("bad-inputs");
    let garbage_dump = dir.join("jit-7.dump");
    std::fs::write(&garbage_dump, b"not a jitdump at all, too long to be short").unwrap();
    let garbage = Command::new(binary)
        .args(["lookup", "--jitdump", &garbage_dump.display().to_string(), "0x1"])
        .output()
        .unwrap();
    assert_eq!(garbage.status.code(), Some(1));
    let message = String::from_utf8_lossy(&garbage.stderr);
    assert!(message.contains("jit-7.dump: ") && message.contains("byte offset 0"), "{message}");

    // A garbled line in a real log: reported with its line number, skipped.
    let log = String::from_utf8(read_file(&log_path(20)).unwrap()).unwrap();
    let mut lines: Vec<&str> = log.lines().collect();
    lines.insert(3, "code-creation,JS,not-a-number,1,0x10,20,f /a.js:1:1,0x30,*");
    lines.insert(4, "code-source-info,0x999,1,0,1,C0O0,,");
    let garbled_log = dir.join("codspeed-v8-1.log");
    std::fs::write(&garbled_log, lines.join("\n")).unwrap();
    let expected = std::fs::read_to_string(recording_dir(20).join("expected/lookup.txt")).unwrap();
    let mut args = vec![
        "lookup".to_string(),
        "--log".to_string(),
        garbled_log.display().to_string(),
        "--jitdump".to_string(),
        jitdump_path(20).display().to_string(),
        "--no-disk-sources".to_string(),
    ];
    args.extend(golden_queries(20));
    let output = Command::new(binary).args(&args).output().unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("codspeed-v8-1.log:4: code-creation: field 3: expected a code kind"), "{stderr}");
    assert!(
        stderr.contains("codspeed-v8-1.log:5: code-source-info for 0x999 with no code-creation before it"),
        "{stderr}"
    );
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
}

/// Plain (not gzipped) logs and jitdumps are memory-mapped and read in
/// place, the logs' tables and script sources left in the file and read
/// back when needed: the golden lookups and folded stacks come out the same
/// as from the `.gz` files.
#[test]
fn plain_files_read_in_place_give_the_golden_outputs() {
    for version in NODE_VERSIONS {
        let directory = temp_dir(&format!("plain-files-{version}"));
        let plain = |path: std::path::PathBuf| {
            let name = path.file_name().unwrap().to_string_lossy().trim_end_matches(".gz").to_string();
            let plain_path = directory.join(name);
            std::fs::write(&plain_path, common::gunzip(&path)).unwrap();
            plain_path.display().to_string()
        };
        let (log, jitdump) = (plain(log_path(version)), plain(jitdump_path(version)));
        let mut args = vec!["--log".to_string(), log.clone(), "--jitdump".to_string(), jitdump.clone()];
        args.push("--no-disk-sources".to_string());
        args.extend(golden_queries(version));
        let expected = std::fs::read_to_string(recording_dir(version).join("expected/lookup.txt")).unwrap();
        assert_eq!(run_lookup(&args), expected, "node {version}");
        let script = recording_dir(version).join("perf.script.gz").display().to_string();
        let folded = common::v8inline(&["--log", &log, "--jitdump", &jitdump, &script]);
        let expected = std::fs::read_to_string(recording_dir(version).join("expected/perf.folded")).unwrap();
        assert!(folded == expected, "node {version}: folded stacks of the plain files differ");
        std::fs::remove_dir_all(&directory).unwrap();
    }
}

/// A plain log's tables are read back through a second descriptor of its
/// file. Out of descriptors, the log copies them out while it is read
/// instead: with the limit at 4 (standard input, output and error, and the
/// log), the golden lookups come out the same.
#[test]
fn a_log_read_without_a_spare_file_descriptor_gives_the_golden_lookups() {
    use std::os::unix::process::CommandExt;
    let directory = temp_dir("no-spare-descriptor");
    let log = directory.join("codspeed-v8-13233.log");
    std::fs::write(&log, common::gunzip(&log_path(20))).unwrap();
    let mut args = vec!["lookup".to_string(), "--threads".into(), "1".into(), "--no-disk-sources".into()];
    args.extend(["--log".to_string(), log.display().to_string(), "--jitdump".into()]);
    args.push(jitdump_path(20).display().to_string());
    args.extend(golden_queries(20));
    let mut command = Command::new(env!("CARGO_BIN_EXE_v8inline"));
    command.args(&args);
    // SAFETY: setrlimit is async-signal-safe, as code between fork and exec
    // must be.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 4, rlim_max: 4 };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let expected = std::fs::read_to_string(recording_dir(20).join("expected/lookup.txt")).unwrap();
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
    std::fs::remove_dir_all(&directory).unwrap();
}

/// `lookup` with its arguments, on `threads` threads: exit code, standard
/// output and standard error.
fn lookup_on_threads(threads: usize, args: &[String]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .args(["lookup", "--threads", &threads.to_string()])
        .args(args)
        .output()
        .unwrap();
    (output.status.code(), String::from_utf8(output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap())
}

/// With two threads the jitdump is read while the code logs are: the
/// answers, warnings (in their order) and errors are those of reading one
/// after the other, for logs given, found next to the jitdump or alone, a
/// jitdump cut short, a garbled log and files that cannot be read.
#[test]
fn reading_side_by_side_gives_what_reading_one_after_the_other_gives() {
    let directory = temp_dir("side-by-side");
    let cut_jitdump = directory.join(jitdump_path(20).file_name().unwrap());
    let whole = std::fs::read(jitdump_path(20)).unwrap();
    std::fs::write(&cut_jitdump, &whole[..whole.len() / 2]).unwrap();
    let garbled_log = directory.join("codspeed-v8-13233.log");
    let log = common::gunzip(&log_path(20));
    let mut garbled = b"code-creation,JS,not-a-number,1,0x10,20,f /a.js:1:1,0x30,*\n".to_vec();
    garbled.extend_from_slice(&log);
    std::fs::write(&garbled_log, garbled).unwrap();
    let text = |path: &std::path::Path| path.display().to_string();
    let mut cases: Vec<Vec<String>> = Vec::new();
    for version in NODE_VERSIONS {
        let queries = golden_queries(version);
        let mut given =
            vec!["--log".into(), text(&log_path(version)), "--jitdump".into(), text(&jitdump_path(version))];
        given.extend(queries.iter().cloned());
        cases.push(given);
        // The log found next to the jitdump, as V8 and CodSpeed leave them.
        let mut found = vec!["--jitdump".into(), text(&jitdump_path(version))];
        found.extend(queries.iter().cloned());
        cases.push(found);
        // A log alone: nothing to read beside it.
        let mut alone = vec!["--log".into(), text(&log_path(version))];
        alone.extend(queries);
        cases.push(alone);
    }
    let queries = golden_queries(20);
    let with = |log: String, jitdump: String| {
        let mut args = vec!["--log".into(), log, "--jitdump".into(), jitdump];
        args.extend(queries.iter().cloned());
        args
    };
    cases.push(with(text(&log_path(20)), text(&cut_jitdump)));
    cases.push(with(text(&garbled_log), text(&jitdump_path(20))));
    cases.push(with(text(&garbled_log), text(&cut_jitdump)));
    cases.push(with("/nonexistent/codspeed-v8-13233.log".into(), text(&jitdump_path(20))));
    cases.push(with(text(&log_path(20)), "/nonexistent/jit-13233.dump".into()));
    cases.push(with("/nonexistent/a.log".into(), "/nonexistent/jit-13233.dump".into()));
    let mut outcomes = std::collections::BTreeSet::new();
    for args in &cases {
        let one_after_the_other = lookup_on_threads(1, args);
        assert_eq!(lookup_on_threads(2, args), one_after_the_other, "lookup {}", args.join(" "));
        outcomes.insert((one_after_the_other.0, one_after_the_other.2.contains("warning")));
    }
    // The cases answer, warn and fail.
    assert!(outcomes.contains(&(Some(0), false)) && outcomes.contains(&(Some(0), true)), "{outcomes:?}");
    assert!(outcomes.iter().any(|outcome| outcome.0 == Some(1)), "{outcomes:?}");
    std::fs::remove_dir_all(&directory).unwrap();
}
