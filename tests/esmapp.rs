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

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{gunzip, stderr, temp_dir};
use v8inline::formats::jitdump::{self, ReadOptions};

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

/// The app script a frame is in (`index.mjs`, `plugins/estree.mjs`), its
/// URL without `:line:column`, and the `--annotate-inline` mark stripped.
fn prettier_script(frame: &str) -> Option<&str> {
    let frame = frame.strip_suffix("_[i]").unwrap_or(frame);
    let (_, location) = frame.split_once(" file:///tmp/v8inline-esmapp/node_modules/prettier/")?;
    let (location, _column) = location.rsplit_once(':')?;
    let (script, _line) = location.rsplit_once(':')?;
    Some(script)
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
    let at = frame.find(&format!(" {APP_URL}"))?;
    let (head, location) = (&frame[..at], &frame[at + 1..]);
    let (location, column) = location.rsplit_once(':').unwrap();
    let (url, line) = location.rsplit_once(':').unwrap();
    assert!(line.parse::<u32>().is_ok() && column.parse::<u32>().is_ok(), "{frame}");
    let (_tag, name) = head.split_once(':').unwrap();
    let markers = ['~', '^', '+', '*', '\''];
    let name = name.strip_prefix('o').filter(|rest| rest.starts_with(markers)).unwrap_or(name);
    Some((name.trim_start_matches(markers).to_string(), url.to_string()))
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
        assert!(
            ours.mean() <= WITHIN_FLOOR * floor,
            "{runtime}: v8inline {:.3} is not within {WITHIN_FLOOR} x the floor {floor:.3}",
            ours.mean()
        );
        assert!(
            baseline.mean() > WITHIN_FLOOR * floor,
            "{runtime}: without expansion {:.3} is within {WITHIN_FLOOR} x the floor {floor:.3}: the rule tells nothing",
            baseline.mean()
        );
        assert!(lost > 0, "{runtime}: the cut jitdump lost no code object");
        assert!(
            cut.mean() > WITHIN_FLOOR * floor,
            "{runtime}: the cut jitdump {:.3} is within {WITHIN_FLOOR} x the floor {floor:.3}",
            cut.mean()
        );
    }
}
