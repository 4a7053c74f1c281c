//! testdata/esmapp: prettier's ES modules recorded on node 26 and Deno, whose
//! TurboFan code inlines functions of `plugins/estree.mjs` into code of
//! `index.mjs` and the reverse. V8 (14.6 and 15.0) then writes DEBUG_INFO
//! records whose declared `total_size` is wrong (see testdata/esmapp/README.md).
//!
//! Checked here: the jitdump reader against an independent walk of the bytes
//! written in this file, the command line on the recordings (the one-line
//! note, `--strict`, cross-module inlined frames, no JIT frame left without its
//! code object), and the self time per function against V8's own profiler,
//! within what two V8 profiles of the same program differ by.
//!
//! The same app on node 18, 22 and 24, started by an npm script under
//! `v8inline record` (section 4): npm and the app as separate processes of
//! one perf.data, the app's picked by its pid, its inlining across module
//! files, and its self time against V8's profiler.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{gunzip, stderr, temp_dir};
use v8inline::internals::formats::jitdump::{self, ReadOptions};

/// The two recordings: `testdata/esmapp/<runtime>/`.
const RUNTIMES: [&str; 2] = ["node26", "deno"];

/// Where the app's scripts were (and are named in every log, jitdump and
/// cpuprofile): the recordings were made in this fixed directory.
const APP_URL: &str = "file:///tmp/v8inline-esmapp/";

/// The one file of `testdata/esmapp/<runtime>/` whose name starts with `prefix`.
fn esmapp_file(runtime: &str, prefix: &str) -> PathBuf {
    common::file_starting(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/esmapp").join(runtime), prefix)
}

/// The code log, jitdump and perf script of a recording, as arguments.
struct Recording {
    log: String,
    jitdump: String,
    script: String,
}

fn recording(runtime: &str) -> Recording {
    let text = |prefix: &str| esmapp_file(runtime, prefix).display().to_string();
    Recording { log: text("codspeed-v8-"), jitdump: text("jit-"), script: text("perf.script") }
}

/// Runs the binary with `args`; `$CODSPEED_V8_LOG` is removed so that code
/// logs are found (or not) only where the arguments say.
fn v8inline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_v8inline")).args(args).env_remove("CODSPEED_V8_LOG").output().unwrap()
}

/// Standard output of a run that must succeed.
fn folded_of(args: &[&str]) -> String {
    let output = v8inline(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

// ---------------------------------------------------------------------------
// 1. The jitdump reader against an independent walk.
// ---------------------------------------------------------------------------

/// The jitdump record ids: CODE_LOAD 0, CODE_MOVE 1, DEBUG_INFO 2,
/// CODE_CLOSE 3, UNWINDING_INFO 4.
const CODE_LOAD: u32 = 0;
const DEBUG_INFO: u32 = 2;
const LAST_KNOWN_ID: u32 = 4;
/// `id u32, total_size u32, timestamp u64`.
const PREFIX: usize = 16;
const SECOND_NS: u64 = 1_000_000_000;

fn u32_at(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
}

fn u64_at(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().unwrap())
}

/// The NUL-terminated bytes at `at` and the offset just past the NUL.
fn c_string_at(data: &[u8], at: usize) -> (&[u8], usize) {
    let length = data[at..].iter().position(|&byte| byte == 0).unwrap_or_else(|| panic!("no NUL after {at}"));
    (&data[at..at + length], at + length + 1)
}

/// Whether a record that may follow one written at `timestamp` starts at
/// `at`: a known id, a size holding at least the prefix (and within the
/// file), a timestamp at or after `timestamp` and within a second of it.
fn plausible_record_at(data: &[u8], at: usize, timestamp: u64) -> bool {
    if at + PREFIX > data.len() {
        return false;
    }
    let (id, size, next_timestamp) = (u32_at(data, at), u32_at(data, at + 4) as usize, u64_at(data, at + 8));
    id <= LAST_KNOWN_ID
        && size >= PREFIX
        && at + size <= data.len()
        && next_timestamp >= timestamp
        && next_timestamp - timestamp <= SECOND_NS
}

#[derive(Debug)]
struct WalkedLoad {
    offset: u64,
    code_address: u64,
    code_index: u64,
    name: String,
}

#[derive(Debug)]
struct WalkedDebugInfo {
    timestamp: u64,
    code_address: u64,
    nr_entry: u64,
}

/// A DEBUG_INFO whose declared end is no record: where its entries and zero
/// padding end instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WalkedMisSized {
    offset: u64,
    declared: u32,
    entries: u32,
    written: u32,
    code_address: u64,
}

#[derive(Debug)]
struct Walk {
    loads: Vec<WalkedLoad>,
    debug_infos: Vec<WalkedDebugInfo>,
    mis_sized: Vec<WalkedMisSized>,
}

impl Walk {
    /// The name of the CODE_LOAD a mis-sized DEBUG_INFO describes: the
    /// next one in the file at its code address.
    fn code_name(&self, mis_sized: &WalkedMisSized) -> &str {
        let load = self
            .loads
            .iter()
            .find(|load| load.offset > mis_sized.offset && load.code_address == mis_sized.code_address)
            .unwrap_or_else(|| panic!("no CODE_LOAD after {mis_sized:?}"));
        &load.name
    }
}

/// Walks a little-endian jitdump record by record, by each record's
/// `total_size`, except a DEBUG_INFO whose declared end is neither the end
/// of the file nor a plausible record: that one is walked by its entries
/// (after the 16-byte prefix and `code_addr u64, nr_entry u64`, each entry
/// is `addr u64, line u32, column u32` and a NUL-terminated name), then 0
/// to 7 zero bytes of padding, the first count after which a plausible
/// record starts. Panics unless the walk ends exactly at the end of the file.
fn walk(data: &[u8]) -> Walk {
    assert_eq!(&data[..4], b"DTiJ", "a little-endian jitdump");
    let header_size = u32_at(data, 8) as usize;
    let mut walk = Walk { loads: Vec::new(), debug_infos: Vec::new(), mis_sized: Vec::new() };
    let mut offset = header_size;
    while offset < data.len() {
        assert!(offset + PREFIX <= data.len(), "{} bytes left at {offset}", data.len() - offset);
        let (id, size, timestamp) = (u32_at(data, offset), u32_at(data, offset + 4), u64_at(data, offset + 8));
        assert!(
            id <= LAST_KNOWN_ID && size as usize >= PREFIX && offset + size as usize <= data.len(),
            "implausible record at {offset}: id {id}, total_size {size}"
        );
        let mut next = offset + size as usize;
        if id == CODE_LOAD {
            // pid u32, tid u32, vma u64, code_addr u64, code_size u64,
            // code_index u64, name.
            let (name, _) = c_string_at(data, offset + 56);
            walk.loads.push(WalkedLoad {
                offset: offset as u64,
                code_address: u64_at(data, offset + 32),
                code_index: u64_at(data, offset + 48),
                name: String::from_utf8_lossy(name).into_owned(),
            });
        } else if id == DEBUG_INFO {
            let code_address = u64_at(data, offset + 16);
            let nr_entry = u64_at(data, offset + 24);
            walk.debug_infos.push(WalkedDebugInfo { timestamp, code_address, nr_entry });
            if next != data.len() && !plausible_record_at(data, next, timestamp) {
                let mut entries_end = offset + PREFIX + 16;
                for _ in 0..nr_entry {
                    entries_end = c_string_at(data, entries_end + 16).1;
                }
                let padding = (0..=7)
                    .find(|&padding| {
                        data.get(entries_end..entries_end + padding).is_some_and(|bytes| bytes.iter().all(|&b| b == 0))
                            && plausible_record_at(data, entries_end + padding, timestamp)
                    })
                    .unwrap_or_else(|| panic!("DEBUG_INFO at {offset}: no plausible record after its entries"));
                next = entries_end + padding;
                walk.mis_sized.push(WalkedMisSized {
                    offset: offset as u64,
                    declared: size,
                    entries: (entries_end - offset) as u32,
                    written: (next - offset) as u32,
                    code_address,
                });
            }
        }
        offset = next;
    }
    assert_eq!(offset, data.len(), "the walk ends at the end of the file");
    walk
}

/// The reader frames V8's mis-sized DEBUG_INFO records exactly where an
/// independent walk does: same CODE_LOADs (offsets, indexes, names), same
/// DEBUG_INFOs, the mis-sized ones listed with the walk's offsets, declared,
/// entry and written sizes, and no warning. Streaming reads agree.
#[test]
fn reader_frames_mis_sized_debug_infos_as_an_independent_walk() {
    for runtime in RUNTIMES {
        let path = esmapp_file(runtime, "jit-");
        let data = gunzip(&path);
        let walk = walk(&data);
        eprintln!(
            "{runtime}: {} bytes, {} CODE_LOAD, {} DEBUG_INFO, mis-sized (offset, declared, written): {:?}",
            data.len(),
            walk.loads.len(),
            walk.debug_infos.len(),
            walk.mis_sized.iter().map(|record| (record.offset, record.declared, record.written)).collect::<Vec<_>>()
        );
        // The recordings exist for these records.
        assert!(!walk.mis_sized.is_empty(), "{runtime}: the walk found no mis-sized DEBUG_INFO");

        let dump = jitdump::read(&data, &ReadOptions::default()).unwrap();
        assert!(dump.warnings.is_empty(), "{runtime}: {:?}", dump.warnings);
        let load_offsets: Vec<u64> = dump.loads.iter().map(|load| load.record_offset).collect();
        let walked_offsets: Vec<u64> = walk.loads.iter().map(|load| load.offset).collect();
        assert_eq!(load_offsets.len(), walked_offsets.len(), "{runtime}: CODE_LOAD count");
        assert_eq!(load_offsets, walked_offsets, "{runtime}: CODE_LOAD offsets");
        for (load, walked) in dump.loads.iter().zip(&walk.loads) {
            assert_eq!(
                (load.code_index, load.code_address, &*load.name),
                (walked.code_index, walked.code_address, walked.name.as_str()),
                "{runtime}: CODE_LOAD at {}",
                walked.offset
            );
        }
        let read_mis_sized: Vec<(u64, u32, u32, u32)> = dump
            .mis_sized_debug_infos
            .iter()
            .map(|record| (record.record_offset, record.declared_size, record.entries_size, record.written_size))
            .collect();
        let walked_mis_sized: Vec<(u64, u32, u32, u32)> = walk
            .mis_sized
            .iter()
            .map(|record| (record.offset, record.declared, record.entries, record.written))
            .collect();
        assert_eq!(read_mis_sized, walked_mis_sized, "{runtime}: mis-sized DEBUG_INFO records");

        // Decoding the DEBUG_INFOs too: every one, with all its entries.
        let with_debug_info = jitdump::read(&data, &ReadOptions { debug_info: true }).unwrap();
        assert!(with_debug_info.warnings.is_empty(), "{runtime}: {:?}", with_debug_info.warnings);
        assert_eq!(with_debug_info.mis_sized_debug_infos, dump.mis_sized_debug_infos);
        assert_eq!(with_debug_info.loads, dump.loads);
        let read_debug_infos: Vec<(u64, u64, u64)> = with_debug_info
            .debug_infos
            .iter()
            .map(|info| (info.timestamp, info.code_address, info.entries.len() as u64))
            .collect();
        let walked_debug_infos: Vec<(u64, u64, u64)> =
            walk.debug_infos.iter().map(|info| (info.timestamp, info.code_address, info.nr_entry)).collect();
        assert_eq!(read_debug_infos, walked_debug_infos, "{runtime}: DEBUG_INFO records");
        let resynced: Vec<u32> =
            with_debug_info.debug_infos.iter().map(|info| info.resyncs).filter(|&n| n > 0).collect();
        assert!(resynced.is_empty(), "{runtime}: DEBUG_INFO entries resynchronized: {resynced:?}");

        // The streaming reader decides in windows; it must frame the same.
        let streamed = jitdump::read_stream(&data[..], &ReadOptions::default()).unwrap().unwrap();
        assert_eq!(streamed, dump, "{runtime}: read_stream");
        let windowed = jitdump::read_with_progress(&data, &ReadOptions::default(), |_| {}).unwrap();
        assert_eq!(windowed, dump, "{runtime}: read_with_progress");
    }
}

// ---------------------------------------------------------------------------
// 2. The command line on the recordings.
// ---------------------------------------------------------------------------

/// The count on a `--stats` line `v8inline:   LABEL: N`.
fn stats_count(stats: &str, label: &str) -> u64 {
    let line = stats
        .lines()
        .find(|line| line.trim_start_matches("v8inline:").trim_start().starts_with(&format!("{label}:")))
        .unwrap_or_else(|| panic!("no `{label}` line in the stats:\n{stats}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// `stack count` lines into (frames, count).
fn parse_folded(folded: &str) -> Vec<(Vec<&str>, u64)> {
    folded
        .lines()
        .map(|line| {
            let (stack, count) = line.rsplit_once(' ').unwrap();
            (stack.split(';').collect(), count.parse().unwrap())
        })
        .collect()
}

/// Where a frame of the app's scripts is: its script's URL, line and column
/// (node 18's frames have no column), the `--annotate-inline` mark
/// stripped; `None` for a frame outside the app (node's, Deno's).
fn app_location(frame: &str) -> Option<(&str, u32, Option<u32>)> {
    let frame = frame.strip_suffix("_[i]").unwrap_or(frame);
    let at = frame.find(&format!(" {APP_URL}"))? + 1;
    let location = &frame[at..];
    // The app's paths have no colon: what follows the path is the position.
    let path_end = APP_URL.len() + location[APP_URL.len()..].find(':').unwrap_or_else(|| panic!("{frame}"));
    let numbers: Vec<u32> = location[path_end + 1..]
        .split(':')
        .map(|number| number.parse().unwrap_or_else(|_| panic!("{frame}: no line:column")))
        .collect();
    match numbers[..] {
        [line] => Some((&location[..path_end], line, None)),
        [line, column] => Some((&location[..path_end], line, Some(column))),
        _ => panic!("{frame}: more than line:column"),
    }
}

/// The app script a frame is in (`index.mjs`, `plugins/estree.mjs`): its
/// URL within prettier's package.
fn prettier_script(frame: &str) -> Option<&str> {
    app_location(frame)?.0.strip_prefix(APP_URL)?.strip_prefix("node_modules/prettier/")
}

/// `--strict` accepts a jitdump with V8's mis-sized records and says so once,
/// as a note; every JIT frame finds its code object (before the reader framed
/// these records, 40,645 of node 26's did not), and the folded stacks show
/// functions of one module inlined into code of the other, in code objects
/// whose DEBUG_INFO V8 mis-sized.
#[test]
fn strict_run_notes_mis_sized_records_and_expands_across_modules() {
    for runtime in RUNTIMES {
        let Recording { log, jitdump, script } = recording(runtime);
        let walk = walk(&gunzip(Path::new(&jitdump)));
        let note = format!(
            "v8inline: note: {jitdump}: {} debug-info record(s) mis-sized by V8 (cross-script inlining), read by their entries",
            walk.mis_sized.len()
        );

        let output = v8inline(&["--log", &log, "--jitdump", &jitdump, &script, "--strict"]);
        let messages = stderr(&output);
        assert!(output.status.success(), "{runtime}: --strict refused the run:\n{messages}");
        assert_eq!(messages.lines().filter(|line| *line == note).count(), 1, "{runtime}: the note, once:\n{messages}");
        assert_eq!(messages.matches("mis-sized").count(), 1, "{runtime}: one note in all:\n{messages}");
        assert!(!messages.contains("cut short"), "{runtime}:\n{messages}");
        assert!(!messages.contains("warning"), "{runtime}:\n{messages}");
        assert!(!output.stdout.is_empty(), "{runtime}: no folded stacks");

        let output =
            v8inline(&["--log", &log, "--jitdump", &jitdump, &script, "--strict", "--stats", "--annotate-inline"]);
        let stats = stderr(&output);
        assert!(output.status.success(), "{runtime}:\n{stats}");
        eprintln!("{runtime}:\n{stats}");
        for unresolved in [
            "passed through, address in no code object",
            "passed through, no jitdump for the process",
            "passed through, code index not in the jitdump",
        ] {
            assert_eq!(stats_count(&stats, unresolved), 0, "{runtime}: {unresolved}");
        }
        assert!(stats_count(&stats, "JIT frames") > 0, "{runtime}: {stats}");
        assert!(stats_count(&stats, "expanded into inlined functions") > 0, "{runtime}: {stats}");

        // Adjacent frames caller;callee of the two modules, the callee inlined.
        let folded = String::from_utf8(output.stdout).unwrap();
        let mis_sized_code: BTreeSet<&str> = walk.mis_sized.iter().map(|record| walk.code_name(record)).collect();
        let mut across = 0;
        let mut across_in_mis_sized_code = 0;
        let mut example = None;
        for (frames, count) in parse_folded(&folded) {
            for (position, pair) in frames.windows(2).enumerate() {
                let (caller, callee) = (pair[0], pair[1]);
                let scripts = (prettier_script(caller), prettier_script(callee));
                let crosses = matches!(
                    scripts,
                    (Some("plugins/estree.mjs"), Some("index.mjs")) | (Some("index.mjs"), Some("plugins/estree.mjs"))
                );
                if !(crosses && callee.ends_with("_[i]")) {
                    continue;
                }
                across += count;
                example.get_or_insert_with(|| format!("{caller};{callee}"));
                // The code object the callee was inlined into: the nearest
                // frame on the caller side that is not itself inlined.
                let host = frames[..=position].iter().rev().find(|frame| !frame.ends_with("_[i]")).unwrap();
                if mis_sized_code.contains(host) {
                    across_in_mis_sized_code += count;
                }
            }
        }
        eprintln!(
            "{runtime}: cross-module inlined frames in {across} (in code V8 mis-sized: {across_in_mis_sized_code}); e.g. {example:?}; mis-sized code: {mis_sized_code:?}"
        );
        assert!(across > 0, "{runtime}: no estree.mjs/index.mjs frame followed by an inlined one of the other");
        assert!(across_in_mis_sized_code > 0, "{runtime}: no cross-module inlining in the mis-sized code objects");
    }
}

// ---------------------------------------------------------------------------
// 3. Self time against V8's own profiler.
// ---------------------------------------------------------------------------

/// A JavaScript function: its name and its script's URL.
type Function = (String, String);

/// Self samples per app function of a V8 `--cpu-prof` profile: each node's
/// `hitCount`, by its call frame's function name and URL.
fn v8_self_counts(path: &Path) -> BTreeMap<Function, u64> {
    let profile: serde_json::Value = serde_json::from_slice(&gunzip(path)).unwrap();
    let mut counts: BTreeMap<Function, u64> = BTreeMap::new();
    for node in profile["nodes"].as_array().unwrap() {
        let frame = &node["callFrame"];
        let url = frame["url"].as_str().unwrap();
        if !url.starts_with(APP_URL) {
            continue;
        }
        let function = frame["functionName"].as_str().unwrap().to_string();
        *counts.entry((function, url.to_string())).or_default() += node["hitCount"].as_u64().unwrap();
    }
    counts
}

fn is_js_frame(frame: &str) -> bool {
    ["JS:", "LazyCompile:", "Function:", "Eval:", "Script:"].iter().any(|tag| frame.starts_with(tag))
}

/// The app function of a JavaScript frame `TAG:MARKERS name URL:line:column`
/// (markers: `o` for on-stack replacement, then `~ ^ + * '`), or `None` for
/// a script outside the app (node's, Deno's).
fn app_function(frame: &str) -> Option<Function> {
    let (url, _line, _column) = app_location(frame)?;
    let name = marked_name(frame)?;
    Some((name.trim_start_matches(TIER_MARKERS).to_string(), url.to_string()))
}

/// The tier markers V8 puts before a code object's name: `o` for on-stack
/// replacement, then `~` (Ignition), `^` (Sparkplug), `+` (Maglev), `*`
/// (TurboFan), `'` (context-specialized).
const TIER_MARKERS: [char; 5] = ['~', '^', '+', '*', '\''];

/// The name of a frame of the app's scripts after its tag, with its tier
/// markers (`*'callPluginPrintFunction` of `JS:o*'callPluginPrintFunction
/// URL:L:C`, the on-stack replacement `o` dropped).
fn marked_name(frame: &str) -> Option<&str> {
    let head = &frame[..frame.find(&format!(" {APP_URL}"))?];
    let (_tag, name) = head.split_once(':')?;
    Some(name.strip_prefix('o').filter(|rest| rest.starts_with(TIER_MARKERS)).unwrap_or(name))
}

/// Self counts per app function of folded stacks: each stack counts for its
/// innermost JavaScript frame (the native, builtin and kernel frames it
/// called are skipped, as V8's profiler charges them to the JavaScript
/// function), when that is a function of the app's scripts.
fn folded_self_counts(folded: &str) -> BTreeMap<Function, u64> {
    let mut counts: BTreeMap<Function, u64> = BTreeMap::new();
    for (frames, count) in parse_folded(folded) {
        let Some(innermost) = frames.iter().rev().find(|frame| is_js_frame(frame)) else { continue };
        if let Some(function) = app_function(innermost) {
            *counts.entry(function).or_default() += count;
        }
    }
    counts
}

/// Total-variation distance between the shares of two counts: half the L1
/// distance, 0 for the same shares, 1 for disjoint ones.
fn total_variation(a: &BTreeMap<Function, u64>, b: &BTreeMap<Function, u64>) -> f64 {
    let (total_a, total_b) = (a.values().sum::<u64>() as f64, b.values().sum::<u64>() as f64);
    assert!(total_a > 0.0 && total_b > 0.0, "no samples in an app function");
    let share = |counts: &BTreeMap<Function, u64>, total: f64, function: &Function| {
        counts.get(function).copied().unwrap_or(0) as f64 / total
    };
    let functions: BTreeSet<&Function> = a.keys().chain(b.keys()).collect();
    functions.iter().map(|function| (share(a, total_a, function) - share(b, total_b, function)).abs()).sum::<f64>()
        / 2.0
}

/// How far a profile is from V8's two: the mean of its distances to each.
struct Fidelity {
    to_a: f64,
    to_b: f64,
}

impl Fidelity {
    fn of(counts: &BTreeMap<Function, u64>, a: &BTreeMap<Function, u64>, b: &BTreeMap<Function, u64>) -> Fidelity {
        Fidelity { to_a: total_variation(counts, a), to_b: total_variation(counts, b) }
    }

    fn mean(&self) -> f64 {
        (self.to_a + self.to_b) / 2.0
    }
}

/// v8inline's profile is within `within` times the V8-vs-V8 `floor`, and the
/// profile without expansion is not (else the rule would tell nothing).
fn assert_within_floor(runtime: &str, ours: &Fidelity, baseline: &Fidelity, floor: f64, within: f64) {
    assert!(
        ours.mean() <= within * floor,
        "{runtime}: v8inline {:.3} is not within {within} x the floor {floor:.3}",
        ours.mean()
    );
    assert!(
        baseline.mean() > within * floor,
        "{runtime}: without expansion {:.3} is within {within} x the floor {floor:.3}: the rule tells nothing",
        baseline.mean()
    );
}

/// The rule: a profile is within the V8-vs-V8 floor when the mean of its
/// distances to V8's two profiles is at most this many times the distance
/// between those two.
///
/// Self-time share per app function (function name, script URL),
/// total-variation distance, measured on the committed recordings:
///
/// | | floor (A vs B) | ours vs A / B (mean) | no expansion | reader trusting sizes |
/// |---|---|---|---|---|
/// | node 26 | 0.167 | 0.195 / 0.193 (1.16 x) | 0.406 / 0.399 (2.41 x) | 0.532 / 0.528 (3.17 x) |
/// | Deno | 0.178 | 0.256 / 0.224 (1.35 x) | 0.434 / 0.418 (2.39 x) | 0.554 / 0.558 (3.12 x) |
///
/// The floor is large because prettier spreads its time over some 600
/// functions, most with a handful of samples. Sampling noise alone puts a
/// third profile further from each V8 profile than they are from each
/// other: ours has fewer samples (about 1,900 on Deno whose innermost
/// JavaScript frame is an app function, perf sampling at 997 Hz, against
/// 2,900 to 3,200 in each V8 profile at 500 us; node 26 was measured so on
/// an earlier recording of the same app), which
/// alone makes the expected distance about sqrt((1/n_ours + 1/n_v8) /
/// (1/n_a + 1/n_b)) = 1.13 to 1.18 times the floor. The two samplers also
/// differ by design: V8 charges garbage collection to `(garbage
/// collector)`, perf to the JavaScript that allocated, and the perf run is
/// a third process whose optimizer made its own choices. 1.5 leaves room
/// for that (Deno is at 1.35), while both the profile without expansion
/// (each JIT frame its code object's outer function: 2.4 times on both) and
/// what a reader trusting V8's sizes sees (the jitdump cut at the first
/// mis-sized record, 63,085 JIT frames of node 26 and 49,312 of Deno in no
/// code object: 3.2 and 3.1 times) are far outside it.
const WITHIN_FLOOR: f64 = 1.5;

/// Self-time shares per app function of the expanded profile are within the
/// V8-vs-V8 floor ([`WITHIN_FLOOR`]) of V8's own `--cpu-prof` profiles of the
/// same program, on node 26 and Deno; the same profile without expansion, and
/// with the jitdump cut where a reader trusting V8's sizes stops, are not.
#[test]
fn self_shares_within_the_v8_floor() {
    for runtime in RUNTIMES {
        let Recording { log, jitdump, script } = recording(runtime);
        let v8_a = v8_self_counts(&esmapp_file(runtime, "cpuprofile-a"));
        let v8_b = v8_self_counts(&esmapp_file(runtime, "cpuprofile-b"));
        let floor = total_variation(&v8_a, &v8_b);
        assert!(floor > 0.0, "{runtime}: two V8 profiles of separate runs cannot agree exactly");

        let ours = Fidelity::of(
            &folded_self_counts(&folded_of(&["--log", &log, "--jitdump", &jitdump, &script, "--strict"])),
            &v8_a,
            &v8_b,
        );

        // No expansion: the jitdump alone, in a directory without its code
        // log, names each JIT frame by its code object (the outer function).
        // The perf script itself has no names for JIT frames (no perf map).
        let directory = temp_dir("esmapp", &format!("{runtime}-fidelity"));
        let lone_jitdump = directory.join(Path::new(&jitdump).file_name().unwrap());
        std::fs::copy(&jitdump, &lone_jitdump).unwrap();
        let lone_jitdump = lone_jitdump.display().to_string();
        let output = v8inline(&["--jitdump", &lone_jitdump, &script, "--stats"]);
        let messages = stderr(&output);
        assert!(output.status.success(), "{runtime}: {messages}");
        assert!(messages.contains("no code log found for pid"), "{runtime}: the log was found:\n{messages}");
        assert_eq!(stats_count(&messages, "expanded into inlined functions"), 0, "{runtime}:\n{messages}");
        assert_eq!(stats_count(&messages, "passed through, address in no code object"), 0, "{runtime}");
        let baseline = Fidelity::of(&folded_self_counts(&String::from_utf8(output.stdout).unwrap()), &v8_a, &v8_b);

        // What a reader that trusts V8's declared sizes gets: the records up
        // to the first mis-sized DEBUG_INFO.
        let data = gunzip(Path::new(&jitdump));
        let first_mis_sized = walk(&data).mis_sized[0].offset as usize;
        let cut_jitdump = PathBuf::from(lone_jitdump.trim_end_matches(".gz"));
        std::fs::write(&cut_jitdump, &data[..first_mis_sized]).unwrap();
        let cut_jitdump = cut_jitdump.display().to_string();
        let output = v8inline(&["--log", &log, "--jitdump", &cut_jitdump, &script, "--stats"]);
        let messages = stderr(&output);
        assert!(output.status.success(), "{runtime}: {messages}");
        let lost = stats_count(&messages, "passed through, address in no code object");
        let cut = Fidelity::of(&folded_self_counts(&String::from_utf8(output.stdout).unwrap()), &v8_a, &v8_b);

        eprintln!(
            "{runtime}: self-share total-variation distance, rule: mean <= {WITHIN_FLOOR} x floor = {:.3}\n  \
             floor (V8 A vs V8 B) {floor:.3}\n  \
             v8inline          vs A {:.3}, vs B {:.3}, mean {:.3} ({:.2} x floor)\n  \
             no expansion      vs A {:.3}, vs B {:.3}, mean {:.3} ({:.2} x floor)\n  \
             trusting sizes    vs A {:.3}, vs B {:.3}, mean {:.3} ({:.2} x floor; {lost} JIT frames in no code object)",
            WITHIN_FLOOR * floor,
            ours.to_a,
            ours.to_b,
            ours.mean(),
            ours.mean() / floor,
            baseline.to_a,
            baseline.to_b,
            baseline.mean(),
            baseline.mean() / floor,
            cut.to_a,
            cut.to_b,
            cut.mean(),
            cut.mean() / floor,
        );
        assert_within_floor(runtime, &ours, &baseline, floor, WITHIN_FLOOR);
        assert!(lost > 0, "{runtime}: the cut jitdump lost no code object");
        assert!(
            cut.mean() > WITHIN_FLOOR * floor,
            "{runtime}: the cut jitdump {:.3} is within {WITHIN_FLOOR} x the floor {floor:.3}",
            cut.mean()
        );
    }
}

// ---------------------------------------------------------------------------
// 4. The same app started by an npm script on node 18, 22 and 24.
// ---------------------------------------------------------------------------

/// `testdata/esmapp/<runtime>/` recorded by `record.sh <runtime>`: `npm run
/// bench` (`node app.mjs MILLIS`) under `v8inline record`, npm and the app on
/// that node. perf.data has both processes' samples; the code log and
/// jitdump are the app's only.
const NPM_RUNTIMES: [&str; 3] = ["node18", "node22", "node24"];

/// The files of an npm-script recording, as arguments, and the pids that
/// `record` reported (`record.txt`).
struct NpmRecording {
    log: String,
    jitdump: String,
    perf_data: String,
    /// The app's process: the pid in the jitdump's name (`jit-PID.dump`).
    app_pid: u32,
    /// `record`'s report: `recorded 2 processes: pid P (node /usr/bin/npm
    /// run bench, N samples), pid Q (node app.mjs MILLIS, M samples)`.
    report: String,
}

/// The recording of `runtime`, or `None` (with a message) when its folder
/// is absent.
fn npm_recording(runtime: &str) -> Option<NpmRecording> {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/esmapp").join(runtime);
    if !directory.is_dir() {
        eprintln!("SKIPPED: {} is absent (testdata/esmapp/record.sh {runtime} records it)", directory.display());
        return None;
    }
    let text = |prefix: &str| common::file_starting(&directory, prefix).display().to_string();
    let jitdump = text("jit-");
    let app_pid = Path::new(&jitdump)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .strip_prefix("jit-")
        .and_then(|name| name.strip_suffix(".dump.gz"))
        .unwrap()
        .parse()
        .unwrap();
    // V8's per-isolate name: isolate-0x<address>-PID-codspeed-v8-PID.log.
    let log = text("isolate-");
    assert!(log.ends_with(&format!("-{app_pid}-codspeed-v8-{app_pid}.log.gz")), "{log}: not the app's log");
    let report = std::fs::read_to_string(directory.join("record.txt")).unwrap();
    Some(NpmRecording { log, jitdump, perf_data: text("perf.data"), app_pid, report })
}

/// The pid of a root frame written by `--pid` (`comm-PID`) and its comm.
fn root_process(stack: &[&str]) -> (u32, String) {
    let (comm, pid) = stack[0].rsplit_once('-').unwrap_or_else(|| panic!("{}: no -PID", stack[0]));
    (pid.parse().unwrap_or_else(|_| panic!("{}: no -PID", stack[0])), comm.to_string())
}

/// The folded stacks of one process, from output folded with `--pid`.
fn stacks_of_pid(folded: &str, pid: u32) -> String {
    folded
        .lines()
        .filter(|line| line.split(';').next().unwrap().ends_with(&format!("-{pid}")))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// Every node of V8's profiles: function name, URL, line and column (1-based).
fn v8_profile_functions(paths: &[PathBuf]) -> BTreeSet<(String, String, u32, u32)> {
    let mut functions = BTreeSet::new();
    for path in paths {
        let profile: serde_json::Value = serde_json::from_slice(&gunzip(path)).unwrap();
        for node in profile["nodes"].as_array().unwrap() {
            let frame = &node["callFrame"];
            let number = |key: &str| u32::try_from(frame[key].as_i64().unwrap() + 1).unwrap();
            functions.insert((
                frame["functionName"].as_str().unwrap().to_string(),
                frame["url"].as_str().unwrap().to_string(),
                number("lineNumber"),
                number("columnNumber"),
            ));
        }
    }
    functions
}

/// perf.data of `npm run bench` holds two node processes, folded as separate
/// roots by `--pid --one-root-per-process`: npm's (one root, `npm_run_bench-PID`, though it was
/// sampled as `node`, `npm` and `npm run bench` as npm set its title) and
/// the app's (the jitdump's pid), the two pids `record`
/// reported. The app's process has the most time; frames of the app's
/// scripts are in its stacks only.
#[test]
fn npm_script_recordings_fold_npm_and_the_app_as_separate_roots() {
    for runtime in NPM_RUNTIMES {
        let Some(NpmRecording { log, jitdump, perf_data, app_pid, report }) = npm_recording(runtime) else { continue };
        // record's report names npm's process, then the app's.
        let recorded = report.lines().find_map(|line| line.strip_prefix("v8inline: recorded 2 processes: ")).unwrap();
        let (npm_part, app_part) = recorded.split_once("), ").unwrap();
        let pid_of =
            |part: &str| -> u32 { part.strip_prefix("pid ").unwrap().split(' ').next().unwrap().parse().unwrap() };
        assert!(npm_part.contains(" run bench, "), "{runtime}: {recorded}");
        assert!(app_part.contains("(node app.mjs "), "{runtime}: {recorded}");
        let npm_pid = pid_of(npm_part);
        assert_eq!(pid_of(app_part), app_pid, "{runtime}: the jitdump is not of the process that ran app.mjs");

        let (perf_data, log, jitdump) = (perf_data.as_str(), log.as_str(), jitdump.as_str());
        let folded = folded_of(&[
            "--perf-data",
            perf_data,
            "--log",
            log,
            "--jitdump",
            jitdump,
            "--no-disk-sources",
            "--pid",
            "--one-root-per-process",
        ]);
        let mut by_pid: BTreeMap<u32, (u64, BTreeSet<String>)> = BTreeMap::new();
        let mut app_frames_by_pid: BTreeMap<u32, u64> = BTreeMap::new();
        for (frames, count) in parse_folded(&folded) {
            let (pid, comm) = root_process(&frames);
            let entry = by_pid.entry(pid).or_default();
            entry.0 += count;
            entry.1.insert(comm);
            if frames.iter().any(|frame| app_location(frame).is_some()) {
                *app_frames_by_pid.entry(pid).or_default() += count;
            }
        }
        eprintln!("{runtime}: npm {npm_pid}, app {app_pid}; per pid (time, comms): {by_pid:?}");
        let (npm_time, npm_comms) = by_pid.get(&npm_pid).unwrap_or_else(|| panic!("{runtime}: no root of npm's pid"));
        let (app_time, app_comms) = &by_pid[&app_pid];
        assert_ne!(npm_pid, app_pid);
        assert_eq!(npm_comms.iter().collect::<Vec<_>>(), ["npm_run_bench"], "{runtime}: npm's roots");
        assert!(!app_comms.iter().any(|comm| comm.starts_with("npm")), "{runtime}: the app's comms {app_comms:?}");
        assert!(*npm_time > 0);
        // The app ran for 3 s, npm for its start and exit: the app's process
        // has the most time of all.
        let (busiest, _) = by_pid.iter().max_by_key(|(_, (time, _))| *time).unwrap();
        assert_eq!(*busiest, app_pid, "{runtime}: {by_pid:?}");
        assert!(app_time > npm_time);
        // The app's scripts ran in the app's process: its stacks hold them.
        assert!(app_frames_by_pid.contains_key(&app_pid), "{runtime}: {app_frames_by_pid:?}");
    }
}

/// npm's JIT frames are not named from the app's code log and jitdump: given
/// one process's files (`--jitdump` and `--log` of the app), the samples of
/// another pid in the same perf.data (npm's) are not that process's.
///
/// Failed on node 18 before the perf.data reader told V8's code pages by
/// the jitdump their process mapped (`ModuleKind::JitDumpCode`): a lone
/// loaded process took the samples of every pid (for a jitdump written
/// under another pid namespace than perf's), so 123 of npm's stacks showed
/// prettier's functions (`LazyCompile:~readToken_numberSign
/// .../plugins/babel.mjs:7` under npm's `uv_run`), where npm's V8 code lay
/// at addresses of the app's code objects. node 22 and 24 passed by chance.
#[test]
fn npm_frames_are_not_named_from_the_apps_jitdump() {
    for runtime in NPM_RUNTIMES {
        let Some(NpmRecording { log, jitdump, perf_data, app_pid, .. }) = npm_recording(runtime) else { continue };
        let folded =
            folded_of(&["--perf-data", &perf_data, "--log", &log, "--jitdump", &jitdump, "--no-disk-sources", "--pid"]);
        let elsewhere: Vec<(Vec<&str>, u64)> = parse_folded(&folded)
            .into_iter()
            .filter(|(frames, _)| root_process(frames).0 != app_pid)
            .filter(|(frames, _)| frames.iter().any(|frame| app_location(frame).is_some()))
            .collect();
        assert!(
            elsewhere.is_empty(),
            "{runtime}: {} stacks of other pids show the app's functions, e.g. {:?}",
            elsewhere.len(),
            elsewhere.first()
        );
    }
}

/// The app's JavaScript expands across prettier's module files in both
/// directions (functions of `index.mjs` inlined into code of
/// `plugins/estree.mjs`, and the reverse), in the app's process picked from
/// the perf.data of both; the inlined functions are ones V8's own profiler
/// knows by the same name, script, line (and column, where node writes it:
/// not node 18), in all but a thousandth of their samples (V8's profiles
/// name only what their samples hit), and the code they were inlined into
/// is optimized (TurboFan `*`, or on node 24 also Maglev `+`), never
/// interpreted or Sparkplug.
#[test]
fn npm_script_recordings_expand_across_prettier_modules() {
    for runtime in NPM_RUNTIMES {
        let Some(NpmRecording { log, jitdump, perf_data, app_pid, .. }) = npm_recording(runtime) else { continue };
        let directory = Path::new(&jitdump).parent().unwrap().to_path_buf();
        let v8_functions =
            v8_profile_functions(&[esmapp_file(runtime, "cpuprofile-a"), esmapp_file(runtime, "cpuprofile-b")]);
        let output = v8inline(&[
            "--perf-data",
            &perf_data,
            "--log",
            &log,
            "--jitdump",
            &jitdump,
            "--no-disk-sources",
            "--pid",
            "--annotate-inline",
            "--stats",
        ]);
        let stats = stderr(&output);
        assert!(output.status.success(), "{runtime}:\n{stats}");
        assert!(stats_count(&stats, "expanded into inlined functions") > 0, "{runtime}:\n{stats}");
        let folded = stacks_of_pid(std::str::from_utf8(&output.stdout).unwrap(), app_pid);

        let mut across: BTreeMap<(&str, &str), u64> = BTreeMap::new();
        let mut hosts: BTreeMap<String, u64> = BTreeMap::new();
        let mut example = None;
        let (mut known, mut unknown) = (0, BTreeMap::new());
        let parsed = parse_folded(&folded);
        for (frames, count) in &parsed {
            for (position, pair) in frames.windows(2).enumerate() {
                let (caller, callee) = (pair[0], pair[1]);
                let (Some(from), Some(to)) = (prettier_script(caller), prettier_script(callee)) else { continue };
                if from == to || !callee.ends_with("_[i]") {
                    continue;
                }
                *across.entry((from, to)).or_default() += count;
                example.get_or_insert_with(|| format!("{caller};{callee}"));
                // The inlined function is one V8's profiler names alike.
                let (url, line, column) = app_location(callee).unwrap();
                let name = marked_name(callee).unwrap().trim_start_matches(TIER_MARKERS);
                if v8_functions.iter().any(|(v8_name, v8_url, v8_line, v8_column)| {
                    (v8_name.as_str(), v8_url.as_str(), *v8_line) == (name, url, line)
                        && column.is_none_or(|column| column == *v8_column)
                }) {
                    known += count;
                } else {
                    unknown.entry(callee).and_modify(|time| *time += count).or_insert(*count);
                }
                // The code object it was inlined into: the nearest frame on
                // the caller side that is not itself inlined.
                let host = frames[..=position].iter().rev().find(|frame| !frame.ends_with("_[i]")).unwrap();
                let tier = marked_name(host)
                    .unwrap_or_else(|| panic!("{runtime}: {host} hosts an inlined app function"))
                    .chars()
                    .next()
                    .unwrap_or(' ');
                *hosts.entry(tier.to_string()).or_default() += count;
            }
        }
        eprintln!(
            "{runtime} ({}): cross-module inlined frames by (caller, callee) script: {across:?}; host tiers: {hosts:?}; e.g. {example:?}; \
             in functions of V8's profiles: {known} of {}; not: {unknown:?}",
            directory.display(),
            across.values().sum::<u64>()
        );
        for direction in [("plugins/estree.mjs", "index.mjs"), ("index.mjs", "plugins/estree.mjs")] {
            assert!(across.contains_key(&direction), "{runtime}: no {direction:?} inlining: {across:?}");
        }
        assert!(
            hosts.keys().all(|tier| tier == "*" || tier == "+"),
            "{runtime}: inlined into code that is not optimized: {hosts:?}"
        );
        // Measured: all but one sample's frame (node 18: 25,403.2 of
        // 25,404.2 ms summed over the pairs; node 22: all; node 24: 8,241.7
        // of 8,242.7), the exception `get root` (index.mjs:16966), a getter
        // no sample of V8's two profiles landed in.
        let total: u64 = across.values().sum();
        assert!(known * 1000 >= total * 999, "{runtime}: {known} of {total} in V8's functions; not: {unknown:?}");
    }
}

/// Self-time shares per app function of the app's process, picked from the
/// perf.data of `npm run bench`, are within the V8-vs-V8 floor
/// ([`NPM_WITHIN_FLOOR`]) of V8's own `--cpu-prof` profiles of `node app.mjs
/// MILLIS` on the same node; without expansion they are not.
#[test]
fn npm_script_self_shares_within_the_v8_floor() {
    for runtime in NPM_RUNTIMES {
        let Some(NpmRecording { log, jitdump, perf_data, app_pid, .. }) = npm_recording(runtime) else { continue };
        let v8_a = v8_self_counts(&esmapp_file(runtime, "cpuprofile-a"));
        let v8_b = v8_self_counts(&esmapp_file(runtime, "cpuprofile-b"));
        let floor = total_variation(&v8_a, &v8_b);
        assert!(floor > 0.0, "{runtime}: two V8 profiles of separate runs cannot agree exactly");

        let folded =
            folded_of(&["--perf-data", &perf_data, "--log", &log, "--jitdump", &jitdump, "--no-disk-sources", "--pid"]);
        let ours_counts = folded_self_counts(&stacks_of_pid(&folded, app_pid));
        let ours = Fidelity::of(&ours_counts, &v8_a, &v8_b);

        // No expansion: the jitdump alone, in a directory without its code
        // log, names each JIT frame by its code object (the outer function).
        let directory = temp_dir("esmapp", &format!("{runtime}-npm-fidelity"));
        let lone_jitdump = directory.join(Path::new(&jitdump).file_name().unwrap());
        std::fs::copy(&jitdump, &lone_jitdump).unwrap();
        let lone_jitdump = lone_jitdump.display().to_string();
        let output =
            v8inline(&["--perf-data", &perf_data, "--jitdump", &lone_jitdump, "--no-disk-sources", "--pid", "--stats"]);
        let messages = stderr(&output);
        assert!(output.status.success(), "{runtime}: {messages}");
        assert!(messages.contains("no code log found for pid"), "{runtime}: the log was found:\n{messages}");
        assert_eq!(stats_count(&messages, "expanded into inlined functions"), 0, "{runtime}:\n{messages}");
        let unexpanded = folded_self_counts(&stacks_of_pid(&String::from_utf8(output.stdout).unwrap(), app_pid));
        let baseline = Fidelity::of(&unexpanded, &v8_a, &v8_b);

        let samples = |counts: &BTreeMap<Function, u64>| counts.values().sum::<u64>();
        eprintln!(
            "{runtime}: self-share total-variation distance, rule: mean <= {NPM_WITHIN_FLOOR} x floor = {:.3}\n  \
             V8 A / B: {} / {} samples in app functions ({} / {} functions); v8inline: {:.0} ms in {} functions\n  \
             floor (V8 A vs V8 B) {floor:.3}\n  \
             v8inline          vs A {:.3}, vs B {:.3}, mean {:.3} ({:.2} x floor)\n  \
             no expansion      vs A {:.3}, vs B {:.3}, mean {:.3} ({:.2} x floor)",
            NPM_WITHIN_FLOOR * floor,
            samples(&v8_a),
            samples(&v8_b),
            v8_a.len(),
            v8_b.len(),
            samples(&ours_counts) as f64 / 1e6,
            ours_counts.len(),
            ours.to_a,
            ours.to_b,
            ours.mean(),
            ours.mean() / floor,
            baseline.to_a,
            baseline.to_b,
            baseline.mean(),
            baseline.mean() / floor,
        );
        assert_within_floor(runtime, &ours, &baseline, floor, NPM_WITHIN_FLOOR);
    }
}

/// [`WITHIN_FLOOR`] for the npm-script recordings of node 18, 22 and 24,
/// measured on them (self-time share per app function, total-variation
/// distance; the app's pid picked from the perf.data of npm and the app):
///
/// | | floor (A vs B) | ours vs A / B (mean) | no expansion |
/// |---|---|---|---|
/// | node 18 | 0.132 | 0.223 / 0.222 (1.68 x) | 0.272 / 0.273 (2.07 x) |
/// | node 22 | 0.157 | 0.237 / 0.235 (1.50 x) | 0.299 / 0.289 (1.87 x) |
/// | node 24 | 0.141 | 0.239 / 0.246 (1.72 x) | 0.274 / 0.286 (1.98 x) |
///
/// Further from V8's profiles than on node 26 (1.16 x), and expansion moves
/// less (node 26: 0.40 to 0.19): the perf run is a process slowed by its
/// logging on a loaded 2-core machine (node 22 formatted 41 rounds in 8 s,
/// its V8 runs 36 and 32), with about 3,000 to 3,600 ms of samples in app
/// functions against 4,400 to 6,500 samples in each V8 profile (sampling
/// noise alone makes about 1.2 x the floor), and more of its time in code
/// not yet optimized, where there is nothing to expand. 1.8 is the largest
/// measured (1.72) with a small margin, and below every profile without
/// expansion (1.87 at the least).
const NPM_WITHIN_FLOOR: f64 = 1.8;
