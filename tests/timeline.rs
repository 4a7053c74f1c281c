//! The timeline outputs from the CLI on the real recordings (node 18-26 perf
//! scripts, the perf.data recording, V8's `--prof` ticks, the real app):
//! `--cpuprofile` round-trips to the folded output's self counts, its times
//! add up to the recording, its tree is well formed and holds the inlined
//! functions as nodes; `--firefox-profile` holds every sampled thread with
//! its samples, the inlined functions in their category.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{NODE_VERSIONS, gunzip, jitdump_path, log_path, recording_dir, tempdir};
use serde_json::Value;
use v8inline::internals::collapse::naming::tidy_generic;
use v8inline::internals::model::frames::Function;
use v8inline::internals::model::stack_profile::StackProfile;
use v8inline::internals::output::cpuprofile::{CallFrame, CpuProfile, CpuProfileNode, script_url};

/// A recording and the arguments that fold it.
struct Recording {
    /// A name for messages and file names.
    name: String,
    /// The input arguments.
    args: Vec<String>,
    /// Its perf script (for the times and threads it holds), if it is one.
    perf_script: Option<PathBuf>,
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

/// The node VERSION perf recording.
fn node_recording(version: u32) -> Recording {
    let perf_script = recording_dir(version).join("perf.script.gz");
    Recording {
        name: format!("node{version}"),
        args: vec![
            "--log".to_string(),
            path_text(&log_path(version)),
            "--jitdump".to_string(),
            path_text(&jitdump_path(version)),
            "--no-disk-sources".to_string(),
            path_text(&perf_script),
        ],
        perf_script: Some(perf_script),
    }
}

/// The one file in `directory` whose name starts with `prefix`.
fn file_starting_with(directory: &Path, prefix: &str) -> PathBuf {
    std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", directory.display()))
}

/// The real app (acorn, marked) under perf.
fn realapp_recording() -> Recording {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/realapp");
    let perf_script = directory.join("perf.script.gz");
    Recording {
        name: "realapp".to_string(),
        args: vec![
            "--log".to_string(),
            path_text(&file_starting_with(&directory, "codspeed-v8-")),
            "--jitdump".to_string(),
            path_text(&file_starting_with(&directory, "jit-")),
            "--no-disk-sources".to_string(),
            path_text(&perf_script),
        ],
        perf_script: Some(perf_script),
    }
}

/// The perf.data recording, read directly.
fn perf_data_recording() -> Recording {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/perf-data");
    Recording {
        name: "perf-data".to_string(),
        args: vec![
            "--log".to_string(),
            path_text(&file_starting_with(&directory, "codspeed-v8-")),
            "--jitdump".to_string(),
            path_text(&file_starting_with(&directory, "jit-")),
            "--no-disk-sources".to_string(),
            "--perf-data".to_string(),
            path_text(&directory.join("perf.data.gz")),
        ],
        perf_script: None,
    }
}

/// V8's own ticks of node 24 (`--prof`).
fn ticks_recording() -> Recording {
    let log = file_starting_with(&recording_dir(24).join("prof"), "prof-");
    Recording {
        name: "ticks24".to_string(),
        args: vec!["--no-disk-sources".to_string(), "--ticks".to_string(), path_text(&log)],
        perf_script: None,
    }
}

fn all_recordings() -> Vec<Recording> {
    let mut recordings: Vec<Recording> = NODE_VERSIONS.into_iter().map(node_recording).collect();
    recordings.extend([realapp_recording(), perf_data_recording(), ticks_recording()]);
    recordings
}

/// What a run wrote.
struct Run {
    /// The folded stacks (with `--tid` roots).
    folded: String,
    /// Standard error.
    errors: String,
    /// The `.cpuprofile`.
    cpuprofile: CpuProfile,
    /// Its text, to check what the type does not show.
    cpuprofile_text: String,
}

/// Runs `v8inline` with `args`; returns (exit code, stdout, stderr).
fn v8inline(args: &[String]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).args(args).output().unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Folds `recording` with `--tid` roots and writes its `.cpuprofile` with `extra` arguments.
fn run(recording: &Recording, extra: &[&str]) -> Run {
    // Tests run at once and fold the same recordings: each run its own file.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run_number = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path =
        tempdir().join(format!("{}-{}-{run_number}.cpuprofile", recording.name, extra.join("").replace('-', "")));
    let mut args = recording.args.clone();
    args.extend(["--tid".to_string(), "--cpuprofile".to_string(), path_text(&path)]);
    args.extend(extra.iter().map(|arg| arg.to_string()));
    let (code, folded, errors) = v8inline(&args);
    assert_eq!(code, Some(0), "{args:?}: {errors}");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    Run { folded, errors, cpuprofile: serde_json::from_str(&text).unwrap(), cpuprofile_text: text }
}

/// The thread id the note on standard error names: `... (tid 13537): ...`.
fn noted_tid(errors: &str) -> u32 {
    let note = errors.lines().find(|line| line.contains(".cpuprofile: thread ")).unwrap_or_else(|| panic!("{errors}"));
    let start = note.find("tid ").unwrap() + 4;
    note[start..].split(|character: char| !character.is_ascii_digit()).next().unwrap().parse().unwrap()
}

/// A function as every output can name it: its name, its script's URL and
/// first line (node 18's jitdump names carry no column). Code that is no
/// JavaScript function is named as folded stacks tidy names (inferno cuts
/// `(` argument lists: a RegExp's pattern too).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct FunctionKey {
    name: String,
    url: Option<String>,
    line: Option<u32>,
}

/// The V8 log tags of code that is no JavaScript function, which folded
/// names keep (`RegExp:^\s+`) and a `.cpuprofile` drops, as V8 names its
/// nodes by the code's name.
const CODE_TAGS: [&str; 6] = ["RegExp:", "Builtin:", "Stub:", "BytecodeHandler:", "Handler:", "Callback:"];

impl FunctionKey {
    fn new(name: &str, file: Option<&str>, line: Option<u32>) -> FunctionKey {
        let name = match file {
            Some(_) => name.to_string(),
            None => {
                let mut name = CODE_TAGS.iter().find_map(|tag| name.strip_prefix(tag)).unwrap_or(name).to_string();
                tidy_generic(&mut name);
                name
            }
        };
        FunctionKey { name, url: file.map(script_url), line }
    }

    /// A function of folded stacks.
    fn of_function(function: &Function) -> FunctionKey {
        FunctionKey::new(&function.name, function.file.as_deref(), function.start.map(|start| start.line))
    }

    /// A node of a `.cpuprofile`.
    fn of_call_frame(frame: &CallFrame) -> FunctionKey {
        let anonymous = frame.function_name.is_empty() && !frame.url.is_empty();
        let name = if anonymous { "(anonymous)" } else { &frame.function_name };
        let line = u32::try_from(frame.line_number).ok().map(|line| line + 1);
        let mut key = FunctionKey::new(name, None, line);
        if !frame.url.is_empty() {
            key = FunctionKey { name: name.to_string(), url: Some(frame.url.clone()), line };
        }
        key
    }

    /// A frame label of the Firefox profile: `square /app/deep.js:16:16`
    /// for JavaScript, else the name.
    fn of_label(label: &str) -> FunctionKey {
        if let Some((name, location)) = label.rsplit_once(' ') {
            let parts: Vec<&str> = location.rsplitn(3, ':').collect();
            if let [column, line, file] = parts[..]
                && column.parse::<u32>().is_ok()
                && let Ok(line) = line.parse::<u32>()
            {
                return FunctionKey::new(name, Some(file), Some(line));
            }
        }
        FunctionKey::new(label, None, None)
    }

    fn named(name: &str) -> FunctionKey {
        FunctionKey { name: name.to_string(), url: None, line: None }
    }
}

fn greatest_common_divisor(left: u64, right: u64) -> u64 {
    if right == 0 { left } else { greatest_common_divisor(right, left % right) }
}

/// The samples of one thread per leaf function, from folded stacks with
/// `--tid` roots (`comm-PID/TID`): counts are periods, all the same in a
/// recording, so their greatest common divisor is one sample. A stack of
/// unnamed frames only is V8's `(program)`.
fn folded_self_samples(folded: &str, tid: u32) -> BTreeMap<FunctionKey, u64> {
    let (profile, errors) = StackProfile::from_folded(folded);
    assert_eq!(errors, vec![]);
    let period = profile.stacks.iter().fold(0, |divisor, stack| greatest_common_divisor(divisor, stack.count));
    let mut samples = BTreeMap::new();
    for stack in &profile.stacks {
        let frames: Vec<&Function> = profile.frames(stack).map(|frame| profile.function(frame.function)).collect();
        let (root, below_root) = frames.split_last().unwrap();
        if !root.name.ends_with(&format!("/{tid}")) {
            continue;
        }
        let key = if below_root.iter().all(|function| function.name == "[unknown]") {
            FunctionKey::named("(program)")
        } else {
            FunctionKey::of_function(below_root[0])
        };
        assert_eq!(stack.count % period, 0);
        *samples.entry(key).or_default() += stack.count / period;
    }
    samples
}

/// The samples of a `.cpuprofile` per leaf function, without `(idle)`.
fn cpuprofile_self_samples(profile: &CpuProfile) -> BTreeMap<FunctionKey, u64> {
    let mut samples = BTreeMap::new();
    for node in profile.nodes.iter().filter(|node| node.hit_count > 0 && node.call_frame.function_name != "(idle)") {
        *samples.entry(FunctionKey::of_call_frame(&node.call_frame)).or_default() += node.hit_count;
    }
    samples
}

/// Each node's parent.
fn parents(profile: &CpuProfile) -> HashMap<u32, u32> {
    profile.nodes.iter().flat_map(|node| node.children.iter().map(move |&child| (child, node.id))).collect()
}

fn node_by_id(profile: &CpuProfile) -> HashMap<u32, &CpuProfileNode> {
    profile.nodes.iter().map(|node| (node.id, node)).collect()
}

/// Fails with the keys whose counts differ, not the whole maps.
fn assert_same_counts<Key: Ord + std::fmt::Debug>(
    actual: &BTreeMap<Key, u64>,
    expected: &BTreeMap<Key, u64>,
    what: &str,
) {
    let keys: BTreeSet<&Key> = actual.keys().chain(expected.keys()).collect();
    let differences: Vec<String> = keys
        .into_iter()
        .filter(|key| actual.get(key) != expected.get(key))
        .map(|key| format!("{key:?}: {:?} instead of {:?}", actual.get(key), expected.get(key)))
        .collect();
    assert!(
        differences.is_empty(),
        "{what}: {} differences:\n{}",
        differences.len(),
        differences[..differences.len().min(20)].join("\n")
    );
}

#[test]
fn cpuprofile_self_counts_round_trip_to_the_folded_output() {
    for recording in all_recordings() {
        let one_thread = run(&recording, &["--threads", "1"]);
        let run = run(&recording, &[]);
        let tid = noted_tid(&run.errors);
        let folded = folded_self_samples(&run.folded, tid);
        let cpuprofile = cpuprofile_self_samples(&run.cpuprofile);
        assert!(folded.values().sum::<u64>() > 100, "{}: {folded:?}", recording.name);
        assert_same_counts(&cpuprofile, &folded, &format!("{}: self samples per function", recording.name));
        // Read on one thread and expanded on another (the default here), or
        // all on one: the same outputs.
        assert!(one_thread.folded == run.folded, "{}: folded differently on one thread", recording.name);
        assert!(
            one_thread.cpuprofile_text == run.cpuprofile_text,
            "{}: another .cpuprofile on one thread",
            recording.name
        );
    }
}

/// Per thread id, the times (ns) of its samples in a perf script.
fn perf_script_times(path: &Path) -> BTreeMap<u32, Vec<u64>> {
    let text = String::from_utf8_lossy(&gunzip(path)).into_owned();
    let mut times: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for line in text.lines().filter(|line| !line.is_empty() && !line.starts_with(char::is_whitespace)) {
        // `comm tid seconds.micros: period event:`
        let fields: Vec<&str> = line.split_whitespace().collect();
        let tid: u32 = fields[1].rsplit('/').next().unwrap().parse().unwrap();
        let (seconds, micros) = fields[2].trim_end_matches(':').split_once('.').unwrap();
        let nanoseconds = seconds.parse::<u64>().unwrap() * 1_000_000_000 + micros.parse::<u64>().unwrap() * 1000;
        times.entry(tid).or_default().push(nanoseconds);
    }
    times
}

#[test]
fn cpuprofile_times_add_up_to_the_recording() {
    let mut recordings: Vec<Recording> = NODE_VERSIONS.into_iter().map(node_recording).collect();
    recordings.push(realapp_recording());
    for recording in recordings {
        let run = run(&recording, &[]);
        let profile = &run.cpuprofile;
        let times = perf_script_times(recording.perf_script.as_deref().unwrap());
        let first = times.values().flatten().min().unwrap();
        let last = times.values().flatten().max().unwrap();
        // cpu-clock at 997 Hz: one sample per 1,003,009 ns of CPU time.
        let interval_micros = 1003;
        assert_eq!(profile.start_time, first / 1000, "{}", recording.name);
        assert_eq!(profile.end_time, last / 1000, "{}", recording.name);
        assert_eq!(profile.samples.len(), profile.time_deltas.len(), "{}", recording.name);
        let elapsed: u64 = profile.time_deltas.iter().sum();
        let duration = profile.end_time - profile.start_time;
        assert!(
            duration.abs_diff(elapsed) <= interval_micros,
            "{}: the deltas add up to {elapsed} µs, the recording lasts {duration} µs",
            recording.name
        );
        // Every sample of the thread is there at its own time; `(idle)`
        // samples fill its gaps, an interval after the sample before.
        let tid = noted_tid(&run.errors);
        let idle_ids: BTreeSet<u32> =
            profile.nodes.iter().filter(|node| node.call_frame.function_name == "(idle)").map(|node| node.id).collect();
        let mut time = profile.start_time;
        let mut sampled = Vec::new();
        for (id, delta) in profile.samples.iter().zip(&profile.time_deltas) {
            time += delta;
            if !idle_ids.contains(id) {
                sampled.push(time);
            }
        }
        let expected: Vec<u64> = times[&tid].iter().map(|nanoseconds| nanoseconds / 1000).collect();
        assert_eq!(sampled, expected, "{}: the thread's sample times", recording.name);
    }
}

#[test]
fn cpuprofile_tree_is_well_formed() {
    for recording in all_recordings() {
        let run = run(&recording, &[]);
        let profile = &run.cpuprofile;
        let nodes = node_by_id(profile);
        assert_eq!(nodes.len(), profile.nodes.len(), "{}: ids are unique", recording.name);
        let root = &profile.nodes[0];
        assert_eq!((root.id, root.call_frame.function_name.as_str(), root.hit_count), (1, "(root)", 0));
        let parents = parents(profile);
        let mut children_seen = 0;
        for node in &profile.nodes {
            for child in &node.children {
                assert!(nodes.contains_key(child), "{}: node {} has a missing child {child}", recording.name, node.id);
                children_seen += 1;
            }
        }
        assert_eq!(
            children_seen,
            profile.nodes.len() - 1,
            "{}: every node but the root is a child once",
            recording.name
        );
        assert_eq!(parents.len(), profile.nodes.len() - 1, "{}", recording.name);
        // Depth first: each node comes after its parent.
        let position: HashMap<u32, usize> =
            profile.nodes.iter().enumerate().map(|(index, node)| (node.id, index)).collect();
        assert!(parents.iter().all(|(child, parent)| position[parent] < position[child]), "{}", recording.name);
        // Hit counts are the samples; position ticks count leaf samples per line.
        let mut hits: HashMap<u32, u64> = HashMap::new();
        for id in &profile.samples {
            assert!(nodes.contains_key(id), "{}: sample of a missing node {id}", recording.name);
            *hits.entry(*id).or_default() += 1;
        }
        for node in &profile.nodes {
            assert_eq!(
                hits.get(&node.id).copied().unwrap_or(0),
                node.hit_count,
                "{}: node {}",
                recording.name,
                node.id
            );
            let ticks: u64 = node.position_ticks.iter().map(|tick| tick.ticks).sum();
            assert!(ticks <= node.hit_count, "{}: node {}", recording.name, node.id);
            assert!(node.position_ticks.iter().all(|tick| tick.line >= 1 && tick.ticks > 0));
        }
        // The text is node's: its fields in node's order, on one line,
        // without empty children or position ticks.
        let text = &run.cpuprofile_text;
        assert!(
            text.starts_with(r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":["#),
            "{}: {}",
            recording.name,
            &text[..200]
        );
        let start = profile.start_time;
        let tail = format!(r#"}}],"startTime":{start},"endTime":{},"samples":["#, profile.end_time);
        assert!(text.contains(&tail) && text.ends_with("]}") && !text.contains('\n'), "{}", recording.name);
        assert_eq!(text.matches(r#"{"id":"#).count(), profile.nodes.len());
        assert_eq!(text.matches(r#"},"hitCount":"#).count(), profile.nodes.len());
        assert!(!text.contains(r#""children":[]"#) && !text.contains(r#""positionTicks":[]"#), "{}", recording.name);
    }
}

/// The function names from the root to a node.
fn chain(profile: &CpuProfile, id: u32) -> Vec<String> {
    let nodes = node_by_id(profile);
    let parents = parents(profile);
    let mut chain = Vec::new();
    let mut current = Some(id);
    while let Some(id) = current {
        chain.push(nodes[&id].call_frame.function_name.clone());
        current = parents.get(&id).copied();
    }
    chain.reverse();
    chain
}

#[test]
fn inlined_functions_are_nodes_of_their_own() {
    for version in NODE_VERSIONS {
        let recording = node_recording(version);
        for extra in [&[][..], &["--js-only"][..]] {
            let run = run(&recording, extra);
            let profile = &run.cpuprofile;
            let deep = format!("file:///tmp/v8inline-testdata/node{version}/deep.js");
            // square, weigh and combine as node writes them: 0-based start.
            for (function, line, column) in
                [("square", 15, 15), ("weigh", 19, 14), ("combine", 25, 16), ("kernel", 31, 15)]
            {
                let frames: Vec<&CallFrame> = profile
                    .nodes
                    .iter()
                    .map(|node| &node.call_frame)
                    .filter(|frame| frame.function_name == function)
                    .collect();
                assert!(!frames.is_empty(), "node {version} {extra:?}: no {function} node");
                for frame in frames {
                    assert_eq!(
                        (frame.url.as_str(), frame.line_number, frame.column_number),
                        (deep.as_str(), line, column),
                        "node {version} {extra:?}: {function}"
                    );
                }
            }
            // The chain kernel -> combine -> weigh -> square, each a node
            // whose parent is its caller, and samples in square itself.
            let squares: Vec<&CpuProfileNode> = profile
                .nodes
                .iter()
                .filter(|node| node.call_frame.function_name == "square" && node.hit_count > 0)
                .collect();
            let in_chain: u64 = squares
                .iter()
                .filter(|node| {
                    chain(profile, node.id).ends_with(&["kernel", "combine", "weigh", "square"].map(String::from))
                })
                .map(|node| node.hit_count)
                .sum();
            assert!(in_chain > 0, "node {version} {extra:?}: no sample in kernel -> combine -> weigh -> square");
            // Leaf samples in square by line: its body is lines 16-18.
            let lines: BTreeSet<u32> =
                squares.iter().flat_map(|node| node.position_ticks.iter().map(|tick| tick.line)).collect();
            assert!(
                !lines.is_empty() && lines.iter().all(|line| (16..=18).contains(line)),
                "node {version}: {lines:?}"
            );
        }
    }
}

#[test]
fn js_only_keeps_v8s_view() {
    let recording = node_recording(24);
    let full = run(&recording, &[]);
    let javascript = run(&recording, &["--js-only"]);
    let profile = &javascript.cpuprofile;
    let special = ["(root)", "(program)", "(idle)", "(garbage collector)"];
    for node in &profile.nodes {
        let frame = &node.call_frame;
        assert!(
            special.contains(&frame.function_name.as_str())
                || frame.url.starts_with("file://")
                || frame.url.starts_with("node:"),
            "a frame that is not JavaScript: {frame:?}"
        );
        // V8's own nodes hang from the root and have no children.
        if special[1..].contains(&frame.function_name.as_str()) {
            assert!(node.children.is_empty(), "{frame:?}");
        }
    }
    // The same samples at the same times; native time went to JavaScript callers.
    assert_eq!(profile.samples.len(), full.cpuprofile.samples.len());
    assert_eq!(profile.time_deltas, full.cpuprofile.time_deltas);
    let hits = |profile: &CpuProfile, name: &str| -> u64 {
        profile.nodes.iter().filter(|node| node.call_frame.function_name == name).map(|node| node.hit_count).sum()
    };
    for function in ["square", "weigh", "combine", "kernel"] {
        assert!(hits(profile, function) >= hits(&full.cpuprofile, function), "{function}");
    }
    assert!(hits(profile, "(garbage collector)") > 0);
    // In the full profile the collector's native frames stay above it.
    let collector =
        full.cpuprofile.nodes.iter().find(|node| node.call_frame.function_name == "(garbage collector)").unwrap();
    assert_eq!(parents(&full.cpuprofile)[&collector.id], 1);
    assert!(!collector.children.is_empty());
}

#[test]
fn cpuprofile_thread_is_selected_and_named() {
    let recording = node_recording(24);
    let default = run(&recording, &[]);
    assert!(
        default.errors.contains(
            ".cpuprofile: thread MainThread (tid 13537): 810 of 1022 samples, 4 other threads (another with --cpuprofile-tid TID)"
        ),
        "{}",
        default.errors
    );
    let worker = run(&recording, &["--cpuprofile-tid", "13542"]);
    assert!(
        worker.errors.contains(".cpuprofile: thread V8Worker (tid 13542): 76 of 1022 samples, 4 other threads\n"),
        "{}",
        worker.errors
    );
    let idle: u64 = worker
        .cpuprofile
        .nodes
        .iter()
        .filter(|node| node.call_frame.function_name == "(idle)")
        .map(|node| node.hit_count)
        .sum();
    assert_eq!(worker.cpuprofile.samples.len() as u64 - idle, 76);
    // perf.data carries pids: a process and a thread of it.
    let perf_data = run(&perf_data_recording(), &["--cpuprofile-pid", "25489"]);
    assert!(
        perf_data.errors.contains(".cpuprofile: thread MainThread (pid 25489, tid 25489): 224 of 253 samples"),
        "{}",
        perf_data.errors
    );

    // A thread that was not sampled: usage error, nothing written.
    let output = tempdir().join("unsampled.cpuprofile");
    let folded = tempdir().join("unsampled.folded");
    let mut args = recording.args.clone();
    args.extend(
        ["-o", &path_text(&folded), "--cpuprofile", &path_text(&output), "--cpuprofile-tid", "7"].map(String::from),
    );
    let (code, _, errors) = v8inline(&args);
    assert_eq!(code, Some(2));
    assert_eq!(
        errors.lines().last().unwrap(),
        format!(
            "v8inline: --cpuprofile {}: no samples of tid 7; sampled: MainThread (tid 13537): 810 samples; V8Worker (tid 13542): 76 samples; V8Worker (tid 13543): 48 samples; V8Worker (tid 13540): 47 samples; V8Worker (tid 13541): 41 samples",
            output.display()
        )
    );
    assert!(!output.exists() && !folded.exists());
    // The flags that shape a .cpuprofile need one.
    for flag in [&["--js-only"][..], &["--cpuprofile-tid", "1"][..], &["--cpuprofile-pid", "1"][..]] {
        let mut args = recording.args.clone();
        args.extend(flag.iter().map(|arg| arg.to_string()));
        let (code, _, errors) = v8inline(&args);
        assert_eq!(code, Some(2), "{flag:?}: {errors}");
        assert!(errors.contains("--cpuprofile <FILE>"), "{flag:?}: {errors}");
    }
}

/// A frame of a Firefox Profiler profile, decoded.
struct FirefoxFrame {
    label: String,
    category: String,
}

/// A Firefox Profiler profile's thread, decoded.
struct FirefoxThread {
    name: String,
    tid: String,
    is_main: bool,
    /// The frames of each sample, root first.
    samples: Vec<Vec<FirefoxFrame>>,
    /// The time of each sample, ms.
    times: Vec<f64>,
}

/// Decodes the threads of a processed profile (the format's tables:
/// samples -> stackTable (prefix, frame) -> frameTable (func, category) ->
/// funcTable (name) -> stringArray).
fn firefox_threads(profile: &Value) -> Vec<FirefoxThread> {
    let categories: Vec<String> = profile["meta"]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|category| category["name"].as_str().unwrap().to_string())
        .collect();
    let numbers = |value: &Value| -> Vec<Option<usize>> {
        value.as_array().unwrap().iter().map(|number| number.as_u64().map(|number| number as usize)).collect()
    };
    let mut threads = Vec::new();
    for thread in profile["threads"].as_array().unwrap() {
        let strings: Vec<&str> =
            thread["stringArray"].as_array().unwrap().iter().map(|text| text.as_str().unwrap()).collect();
        let stack_prefix = numbers(&thread["stackTable"]["prefix"]);
        let stack_frame = numbers(&thread["stackTable"]["frame"]);
        let frame_func = numbers(&thread["frameTable"]["func"]);
        let frame_category = numbers(&thread["frameTable"]["category"]);
        let func_name = numbers(&thread["funcTable"]["name"]);
        let mut samples = Vec::new();
        for stack in numbers(&thread["samples"]["stack"]) {
            let mut frames = Vec::new();
            let mut current = stack;
            while let Some(index) = current {
                let frame = stack_frame[index].unwrap();
                let label = strings[func_name[frame_func[frame].unwrap()].unwrap()].to_string();
                frames.push(FirefoxFrame { label, category: categories[frame_category[frame].unwrap()].clone() });
                current = stack_prefix[index];
            }
            frames.reverse();
            samples.push(frames);
        }
        let mut time = 0.0;
        let times = thread["samples"]["timeDeltas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|delta| {
                time += delta.as_f64().unwrap();
                time
            })
            .collect();
        threads.push(FirefoxThread {
            name: thread["name"].as_str().unwrap().to_string(),
            tid: thread["tid"].as_str().unwrap().to_string(),
            is_main: thread["isMainThread"].as_bool().unwrap(),
            samples,
            times,
        });
    }
    threads
}

/// Writes the Firefox profile of a recording to `file_name`; returns it decoded.
fn firefox_profile(recording: &Recording, file_name: &str) -> Value {
    let path = tempdir().join(file_name);
    let mut args = recording.args.clone();
    args.extend(["-o", "/dev/null", "--firefox-profile", &path_text(&path)].map(String::from));
    let (code, _, errors) = v8inline(&args);
    assert_eq!(code, Some(0), "{errors}");
    let bytes = if file_name.ends_with(".gz") { gunzip(&path) } else { std::fs::read(&path).unwrap() };
    std::fs::remove_file(&path).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn firefox_profile_holds_every_thread_with_its_samples() {
    for version in NODE_VERSIONS {
        let recording = node_recording(version);
        let profile = firefox_profile(&recording, &format!("node{version}.json.gz"));
        let threads = firefox_threads(&profile);
        let times = perf_script_times(recording.perf_script.as_deref().unwrap());
        // One thread per sampled tid, each with its samples at their times.
        let tids: BTreeSet<String> = threads.iter().map(|thread| thread.tid.clone()).collect();
        assert_eq!(tids, times.keys().map(u32::to_string).collect(), "node {version}");
        assert_eq!(tids.len(), threads.len(), "node {version}");
        let first = times.values().flatten().min().unwrap();
        for thread in &threads {
            let expected: Vec<u64> =
                times[&thread.tid.parse::<u32>().unwrap()].iter().map(|time| (time - first) / 1000).collect();
            let actual: Vec<u64> = thread.times.iter().map(|time| (time * 1000.0).round() as u64).collect();
            assert_eq!(actual, expected, "node {version}: {} sample times (µs)", thread.tid);
        }
        // The busiest thread is the one the .cpuprofile holds, with the same
        // leaf functions (labels: `square /path/deep.js:16:16`).
        let run = run(&recording, &[]);
        let tid = noted_tid(&run.errors).to_string();
        let main = threads.iter().find(|thread| thread.tid == tid).unwrap();
        let mut leaves: BTreeMap<FunctionKey, u64> = BTreeMap::new();
        for sample in &main.samples {
            *leaves.entry(FunctionKey::of_label(&sample.last().unwrap().label)).or_default() += 1;
        }
        let mut expected: BTreeMap<FunctionKey, u64> = BTreeMap::new();
        for (key, samples) in folded_self_samples(&run.folded, noted_tid(&run.errors)) {
            // The Firefox profile keeps unnamed frames by their name.
            let key = if key.name == "(program)" { FunctionKey::named("[unknown]") } else { key };
            *expected.entry(key).or_default() += samples;
        }
        assert_same_counts(&leaves, &expected, &format!("node {version}: leaf functions of thread {tid}"));
        // Categories: the inlined functions in theirs, kernel in its tier's,
        // the collector's frames in GC.
        let deep = format!("/tmp/v8inline-testdata/node{version}/deep.js");
        let mut categories: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for frame in main.samples.iter().flatten() {
            categories.entry(frame.label.clone()).or_default().insert(frame.category.clone());
        }
        for (function, start) in [("square", "16:16"), ("weigh", "20:15"), ("combine", "26:17")] {
            let label = format!("{function} {deep}:{start}");
            let seen = categories.get(&label).unwrap_or_else(|| panic!("node {version}: no frame {label}"));
            assert!(seen.contains("JavaScript: inlined"), "node {version}: {label} in {seen:?}");
        }
        // kernel runs in optimized code of its own (and, on some versions,
        // inlined into the script's top level).
        let kernel = &categories[&format!("kernel {deep}:32:16")];
        assert!(
            kernel.iter().all(|category| category.starts_with("JavaScript: "))
                && kernel
                    .iter()
                    .any(|category| ["JavaScript: TurboFan", "JavaScript: Maglev"].contains(&category.as_str())),
            "node {version}: kernel in {kernel:?}"
        );
        let collector = &categories["v8::internal::Heap::CollectGarbage"];
        assert_eq!(collector, &BTreeSet::from(["GC".to_string()]), "node {version}");
        assert!(
            categories.iter().any(|(label, seen)| label.starts_with("asm_exc_page_fault") && seen.contains("Kernel"))
        );
    }
}

#[test]
fn firefox_profile_names_processes_and_main_threads() {
    // perf.data knows pids: the main thread is the one whose tid is the pid.
    let profile = firefox_profile(&perf_data_recording(), "perf-data.json");
    let threads = firefox_threads(&profile);
    let main: Vec<(&str, &str)> = threads
        .iter()
        .filter(|thread| thread.is_main)
        .map(|thread| (thread.name.as_str(), thread.tid.as_str()))
        .collect();
    assert_eq!(main, [("node", "25489")]);
    // node 20 leaves its threads the process's name, `node`: they are named
    // from the routine their stacks start in, as node 24 names them.
    let others: Vec<(&str, &str)> = threads
        .iter()
        .filter(|thread| !thread.is_main)
        .map(|thread| (thread.name.as_str(), thread.tid.as_str()))
        .collect();
    assert_eq!(others, [("V8Worker", "25493"), ("V8Worker", "25494"), ("V8Worker", "25495"), ("V8Worker", "25496")]);
    let counts: BTreeMap<&str, usize> =
        threads.iter().map(|thread| (thread.tid.as_str(), thread.samples.len())).collect();
    assert_eq!(counts.values().sum::<usize>(), 253);
    assert_eq!(counts["25489"], 224);
    for thread in profile["threads"].as_array().unwrap() {
        assert_eq!((thread["pid"].as_str(), thread["processName"].as_str()), (Some("25489"), Some("node")));
    }
    let categories: Vec<&str> = profile["meta"]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|category| category["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        categories,
        [
            "Other",
            "JavaScript: interpreter",
            "JavaScript: Sparkplug",
            "JavaScript: Maglev",
            "JavaScript: TurboFan",
            "JavaScript: inlined",
            "JIT",
            "Native",
            "Kernel",
            "GC"
        ]
    );
    // V8's ticks: one thread of the log's process, the interval V8 sampled at.
    let ticks = firefox_profile(&ticks_recording(), "ticks.json.gz");
    let threads = firefox_threads(&ticks);
    assert_eq!(threads.len(), 1);
    assert!(threads[0].samples.len() > 100);
    assert!(threads[0].times.windows(2).all(|pair| pair[0] <= pair[1]));
}
