//! Worker threads: every isolate of a process expands, on the real recordings
//! of `testdata/workers` (`testdata/workers/record.sh`: node 20 and 24 running
//! `testdata/programs/workers.js`, whose main thread and two worker threads
//! each run deep.js's hot chain `kernel -> combine -> weigh -> square`, one
//! code log per isolate and one jitdump for the process; deep.js alone in one
//! thread, recorded right after; and, for node 20, the same program with
//! `--no-logfile-per-isolate`, whose one log the three isolates wrote at once).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::gunzip;
use v8inline::internals::formats::jitdump::{self, ReadOptions};
use v8inline::internals::formats::v8log::CodeLog;
use v8inline::internals::v8::inline_map::{InlineMap, SourceOptions};

/// The node versions recorded in testdata/workers.
const WORKER_NODE_VERSIONS: [u32; 2] = [20, 24];

/// The inlined functions of deep.js's hot chain, outermost first.
const INLINED_CHAIN: [&str; 3] = ["combine", "weigh", "square"];

/// `testdata/workers/node<version>`, or a folder in it.
fn recording(version: u32, folder: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("testdata/workers/node{version}")).join(folder)
}

/// The files of `directory` whose names start with `prefix`, sorted.
fn files(directory: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    found.sort();
    found
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_v8inline")).args(args).output().unwrap()
}

/// Runs v8inline, expects success and no warning; returns standard output.
fn v8inline_quietly(args: &[&str]) -> String {
    let output = run(args);
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?}: {errors}");
    assert!(!errors.contains("warning"), "{args:?}: {errors}");
    String::from_utf8(output.stdout).unwrap()
}

/// `stack count` lines into (stack, count).
fn parse_folded(folded: &str) -> Vec<(&str, u64)> {
    folded
        .lines()
        .map(|line| {
            let (stack, count) = line.rsplit_once(' ').unwrap();
            (stack, count.parse().unwrap())
        })
        .collect()
}

/// How one thread's time in `kernel` splits over the functions inlined
/// into it.
#[derive(Debug, Clone, PartialEq)]
struct KernelShares {
    /// The time of the samples with a `kernel` frame (perf periods, ns).
    kernel_time: u64,
    /// Per inlined function of [`INLINED_CHAIN`], the share of that time
    /// whose stack has its frame.
    inlined: [f64; 3],
    /// The time of samples whose stack holds the whole chain
    /// `kernel;combine_[i];weigh_[i];square_[i]`, all three inlined.
    whole_chain_time: u64,
}

/// Per thread (the `--tid` root, `node-?/TID`), the [`KernelShares`] of a
/// folded profile made with `--tid --annotate-inline`; threads that never
/// ran `kernel` are left out.
fn kernel_shares_by_thread(folded: &str) -> BTreeMap<String, KernelShares> {
    let mut threads: BTreeMap<String, (u64, [u64; 3], u64)> = BTreeMap::new();
    for (stack, count) in parse_folded(folded) {
        let frames: Vec<&str> = stack.split(';').collect();
        let Some(kernel) = frames.iter().position(|frame| frame.contains("kernel /")) else { continue };
        let thread = threads.entry(frames[0].to_string()).or_default();
        thread.0 += count;
        for (function, time) in INLINED_CHAIN.iter().zip(&mut thread.1) {
            if frames.iter().any(|frame| frame.contains(&format!("{function} /"))) {
                *time += count;
            }
        }
        let chain = &frames[kernel + 1..];
        let whole_chain = chain.len() >= 3
            && INLINED_CHAIN
                .iter()
                .zip(chain)
                .all(|(function, frame)| frame.contains(&format!(":*{function} /")) && frame.ends_with("_[i]"));
        if whole_chain {
            thread.2 += count;
        }
    }
    threads
        .into_iter()
        .map(|(thread, (kernel_time, inlined_times, whole_chain_time))| {
            let inlined = inlined_times.map(|time| time as f64 / kernel_time as f64);
            (thread, KernelShares { kernel_time, inlined, whole_chain_time })
        })
        .collect()
}

/// Folds a recording's perf script found through discovery alone: no
/// `--log`, no `--jitdump`; `jit-PID.dump` of the sampled pid in
/// `--jitdump-dir` and every code log of that pid next to it.
fn fold_by_discovery(directory: &Path, extra: &[&str]) -> String {
    let directory_text = text(directory);
    let script = text(&directory.join("perf.script.gz"));
    let mut args = vec!["--jitdump-dir", &directory_text, "--no-disk-sources", "--tid", "--annotate-inline"];
    args.extend_from_slice(extra);
    args.push(&script);
    v8inline_quietly(&args)
}

/// Per thread, the functions inlined into `kernel` carry the same share of
/// its time as in deep.js run alone in one thread, found through discovery
/// alone.
///
/// "Within noise": `combine` is inlined at nearly every PC of `kernel`'s
/// optimized code, within 0.03 of the single-threaded share; the split
/// between `weigh` and `square` depends on which optimized code of `kernel`
/// ran (TurboFan's context-specialized or plain code, Maglev's), which
/// differs from run to run: four more single-threaded runs of deep.js under
/// node 24 gave `weigh` 0.413-0.434 and `square` 0.079-0.110 of `kernel`'s
/// time, the recorded one 0.363 and 0.041. Their shares must be within 0.10.
/// Before per-isolate logs were joined, discovery found no log here, and
/// with the three logs given only one thread of the node 20 recording
/// expanded (23,177 JIT frames of the others were in no code object).
#[test]
fn every_thread_expands_its_inlined_functions_as_a_single_threaded_run() {
    for version in WORKER_NODE_VERSIONS {
        let threads = kernel_shares_by_thread(&fold_by_discovery(&recording(version, ""), &[]));
        let single = kernel_shares_by_thread(&fold_by_discovery(&recording(version, "single"), &[]));
        let [(_, single)] = single.iter().collect::<Vec<_>>()[..] else {
            panic!("node {version}: one thread ran kernel in the single-threaded run: {single:?}")
        };
        assert_eq!(threads.len(), 3, "node {version}: the main thread and two workers ran kernel: {threads:?}");
        for (thread, shares) in &threads {
            let what = format!("node {version}, {thread}: {shares:?}, single-threaded {single:?}");
            // At least 600 ms in kernel: 600 samples at 997 Hz.
            assert!(shares.kernel_time > 600_000_000, "{what}");
            let tolerances = [0.03, 0.10, 0.10];
            for (index, function) in INLINED_CHAIN.iter().enumerate() {
                let difference = (shares.inlined[index] - single.inlined[index]).abs();
                assert!(difference <= tolerances[index], "{what}: {function} differs by {difference:.3}");
            }
            assert!(shares.whole_chain_time > 0, "{what}: no kernel;combine;weigh;square stack");
        }
    }
}

/// Discovery, the logs given one by one, and perf.data read directly give
/// every thread the same JavaScript stacks.
#[test]
fn discovered_and_given_logs_and_perf_data_fold_alike() {
    let directory = recording(20, "");
    let discovered = fold_by_discovery(&directory, &[]);
    let jitdump = text(&files(&directory, "jit-")[0]);
    let logs: Vec<String> = files(&directory, "isolate-0x").iter().map(|path| text(path)).collect();
    assert_eq!(logs.len(), 3);
    let script = text(&directory.join("perf.script.gz"));
    let mut args = vec!["--jitdump", &jitdump, "--no-disk-sources", "--tid", "--annotate-inline"];
    for log in &logs {
        args.extend(["--log", log.as_str()]);
    }
    args.push(&script);
    assert_eq!(v8inline_quietly(&args), discovered);

    // perf.data: the jitdump next to it, the logs next to the jitdump. Its
    // roots carry the pid (`node-16917/16926`, perf script's `node-?/16926`)
    // and native frames are named from this machine's binaries: compare the
    // JavaScript frames per thread.
    let perf_data = text(&directory.join("perf.data.gz"));
    let output = run(&["--perf-data", &perf_data, "--no-disk-sources", "--tid", "--annotate-inline"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let javascript_by_thread = |folded: &str| {
        let mut stacks: BTreeMap<String, u64> = BTreeMap::new();
        for (stack, count) in parse_folded(folded) {
            let mut frames = stack.split(';');
            let thread = frames.next().unwrap().rsplit_once('/').unwrap().1;
            let javascript: Vec<&str> = frames.filter(|frame| frame.starts_with("JS:")).collect();
            *stacks.entry(format!("{thread};{}", javascript.join(";"))).or_default() += count;
        }
        stacks
    };
    let from_perf_data = javascript_by_thread(&String::from_utf8(output.stdout).unwrap());
    assert!(from_perf_data.len() > 100);
    assert_eq!(from_perf_data, javascript_by_thread(&discovered));
}

/// The join gives each jitdump LOAD to the log of the isolate that made the
/// code, which the jitdump itself tells (each LOAD names its thread, and an
/// isolate makes its code on its own thread) though the join does not look
/// at it: per log, the LOADs joined are exactly the LOADs of one thread.
/// Each log's clock is aligned with the jitdump's within 20 µs for 95 % of
/// the code objects it is learned from.
#[test]
fn each_load_joins_the_log_of_its_own_isolate() {
    for version in WORKER_NODE_VERSIONS {
        let directory = recording(version, "");
        let jitdump = jitdump::read(&gunzip(&files(&directory, "jit-")[0]), &ReadOptions::default()).unwrap();
        let logs: Vec<CodeLog> = files(&directory, "isolate-0x")
            .iter()
            .map(|path| {
                let mut log = CodeLog::parse(&gunzip(path));
                log.path = path.clone();
                log
            })
            .collect();
        let map = InlineMap::new(logs, Some(&jitdump), SourceOptions::default());
        assert_eq!(map.logs().len(), 3, "node {version}");
        // (log, thread) -> LOADs joined.
        let mut joined: BTreeMap<(usize, u32), usize> = BTreeMap::new();
        let mut loads_by_thread: BTreeMap<u32, usize> = BTreeMap::new();
        for (code, load) in map.codes().iter().zip(&jitdump.loads) {
            *loads_by_thread.entry(load.tid).or_default() += 1;
            let object = code.log_object().unwrap_or_else(|| panic!("node {version}: LOAD {load:?} not joined"));
            *joined.entry((object.log.index(), load.tid)).or_default() += 1;
        }
        assert_eq!(map.unmatched_loads, 0, "node {version}");
        assert_eq!(joined.len(), 3, "node {version}: each log's LOADs are one thread's: {joined:?}");
        let threads: Vec<u32> = joined.keys().map(|&(_, thread)| thread).collect();
        for (&(log, thread), &count) in &joined {
            assert_eq!(count, loads_by_thread[&thread], "node {version}: log {log}, thread {thread}");
        }
        assert_eq!(threads.iter().collect::<std::collections::BTreeSet<_>>().len(), 3, "node {version}");
        let mut offsets = Vec::new();
        for (log, id) in map.log_ids().enumerate() {
            let clock = map.clock_alignment(id).unwrap();
            assert!(clock.pair_count >= 400, "node {version}, log {log}: {clock:?}");
            assert!(clock.spread_nanoseconds <= 20_000, "node {version}, log {log}: {clock:?}");
            offsets.push(clock.offset_nanoseconds);
        }
        // The workers start after the main isolate: their clocks start later.
        offsets.sort_unstable();
        assert!(offsets.windows(2).all(|pair| pair[1] - pair[0] > 1_000_000), "node {version}: {offsets:?}");
    }
}

/// `lookup` of an address in a worker's optimized `kernel` finds the
/// functions inlined there from that worker's log, and names the log.
#[test]
fn lookup_expands_worker_code_from_its_own_log() {
    let directory = recording(20, "");
    let jitdump = text(&files(&directory, "jit-")[0]);
    let logs: Vec<String> = files(&directory, "isolate-0x").iter().map(|path| text(path)).collect();
    let mut args = vec!["lookup", "--jitdump", &jitdump];
    for log in &logs {
        args.extend(["--log", log.as_str()]);
    }
    // Script lines from testdata/programs, where the recorded scripts come from.
    let substitution = format!(
        "/tmp/v8inline-testdata/workers/node20/workers={}",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/programs").display()
    );
    args.extend(["--substitute-path", &substitution]);
    // The hottest PC of worker thread 16926, at the time of a sample there.
    args.push("0x7f201008bc85@3737256733000");
    let isolate_log = "isolate-0x7f2030000f00-16917-codspeed-v8-16917.log.gz";
    assert_eq!(
        v8inline_quietly(&args),
        format!(
            "0x7f201008bc85: JS:*kernel /tmp/v8inline-testdata/workers/node20/workers/deep.js:32:16+0x2c5 (TurboFan, \
             code index 8078, log {isolate_log})\n\
             \x20 scale /tmp/v8inline-testdata/workers/node20/workers/lib.js:11:27 (inlined)\n\
             \x20 combine /tmp/v8inline-testdata/workers/node20/workers/deep.js:28:21 (inlined)\n\
             \x20 kernel /tmp/v8inline-testdata/workers/node20/workers/deep.js:35:28\n"
        )
    );
    // That code is the worker's: the jitdump's LOAD was written on its thread.
    let jitdump = jitdump::read(&gunzip(Path::new(&jitdump)), &ReadOptions::default()).unwrap();
    let load = jitdump.loads.iter().find(|load| load.code_index == 8078).unwrap();
    assert_eq!((load.pid, load.tid), (16917, 16926));
}

/// A log the three isolates wrote at once (`--no-logfile-per-isolate`): one
/// warning that says so, with the damaged lines counted and how to record
/// instead; every whole record is used; `--strict` refuses it.
#[test]
fn a_log_shared_by_isolates_is_warned_about_once_salvaged_and_refused_by_strict() {
    let directory = recording(20, "shared");
    let log = files(&directory, "codspeed-v8-").remove(0);
    let jitdump = files(&directory, "jit-").remove(0);
    let script = directory.join("perf.script.gz");
    let (log, jitdump, script) = (text(&log), text(&jitdump), text(&script));
    let warning = format!(
        "v8inline: warning: 1 input problem(s); the rest of the input was used:\n\
         v8inline:   1 code log(s) written by several isolates at once: damaged lines skipped, every whole record used\n\
         v8inline:     {log}: written by several isolates at once (6 clock restart(s), 20 spliced line(s)): 44 \
         damaged line(s) skipped; record with one log per isolate (V8's default: drop --no-logfile-per-isolate; V8 \
         then writes isolate-0x<address>-<pid>-<logfile> per isolate, v8inline record does so) and give them all, or \
         none to find them beside the jitdump\n"
    );
    let output = run(&["--log", &log, "--jitdump", &jitdump, "--no-disk-sources", "--stats", &script]);
    assert!(output.status.success());
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(errors.starts_with(&warning), "{errors}");
    assert_eq!(errors.matches("written by several isolates").count(), 2, "{errors}");
    assert!(errors.contains("v8inline:   passed through, address in no code object: 0\n"), "{errors}");
    assert!(!output.stdout.is_empty());

    // Every whole code-creation is used: the lines with a code-creation's
    // fields, counted by splitting at commas.
    let bytes = gunzip(Path::new(&log));
    let whole_creations = String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            fields[0] == "code-creation"
                && matches!(fields.len(), 7 | 9)
                && fields[2].parse::<i64>().is_ok()
                && fields[3].parse::<i64>().is_ok()
                && fields[4].starts_with("0x")
                && fields[5].parse::<u64>().is_ok()
        })
        .count();
    assert_eq!(CodeLog::parse(&bytes).code_objects.len(), whole_creations);
    assert_eq!(whole_creations, 3379);
    // The kernel code whose records survived expands; the functions inlined
    // into it are unnamed: the records that named them were overwritten.
    let lookup = run(&["lookup", "--no-disk-sources", "--log", &log, "--jitdump", &jitdump, "0x7f6e28039c45"]);
    assert_eq!(String::from_utf8_lossy(&lookup.stderr), warning);
    assert_eq!(
        String::from_utf8_lossy(&lookup.stdout),
        "0x7f6e28039c45: JS:*kernel /tmp/v8inline-testdata/workers/node20/shared/deep.js:32:16+0x2c5 (TurboFan, \
         code index 8081)\n\
         \x20 (unknown function) (inlined) (position unknown)\n\
         \x20 (unknown function) (inlined) (position unknown)\n\
         \x20 kernel /tmp/v8inline-testdata/workers/node20/shared/deep.js:32:16 (function start: no script source)\n"
    );

    let strict = run(&["--log", &log, "--jitdump", &jitdump, "--no-disk-sources", "--strict", &script]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(strict.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&strict.stderr),
        format!("{warning}v8inline: --strict: 1 input problem(s), listed above; no output written\n")
    );
}

/// One isolate's log dealt out into two logs, its code-creations (each with
/// the lines that follow it) in turn, is two logs with the same clock: on
/// the single-isolate recordings of node 18-26 the two align to the same
/// offset within 20 µs, and every LOAD joins the code-creation it joins in
/// the whole log, also where both logs created code at its address and size
/// and only the nearest time tells which log's is next.
#[test]
fn a_log_dealt_into_two_joins_as_the_whole_log() {
    let mut loads_at_shared_keys = 0;
    for version in common::NODE_VERSIONS {
        let jitdump = jitdump::read(&gunzip(&common::jitdump_path(version)), &ReadOptions::default()).unwrap();
        let bytes = gunzip(&common::log_path(version));
        let whole = InlineMap::new(vec![CodeLog::parse(&bytes)], Some(&jitdump), SourceOptions::default());
        let whole_lines: Vec<Option<u64>> =
            whole.code_ids().map(|id| whole.log_object(id).map(|object| object.log_line)).collect();
        // Each dealt log's text and, per line, its line in the whole log.
        let mut dealt: [(Vec<u8>, Vec<u64>); 2] = Default::default();
        let mut hand = 0;
        for (index, line) in bytes.split_inclusive(|&byte| byte == b'\n').enumerate() {
            if line.starts_with(b"code-creation,") {
                hand = 1 - hand;
            }
            dealt[hand].0.extend_from_slice(line);
            dealt[hand].1.push(index as u64 + 1);
        }
        let logs = dealt.iter().map(|(text, _)| CodeLog::parse(text)).collect();
        let map = InlineMap::new(logs, Some(&jitdump), SourceOptions::default());
        let mut clocks = map.log_ids().map(|log| map.clock_alignment(log).unwrap());
        let (first, second) = (clocks.next().unwrap(), clocks.next().unwrap());
        let what = format!("node {version}: {first:?} {second:?}");
        // The medians of two samples of one clock: within microseconds.
        assert!(first.offset_nanoseconds.abs_diff(second.offset_nanoseconds) <= 20_000, "{what}");
        for (id, code) in map.codes().iter().enumerate() {
            let line = code.log_object().map(|object| {
                let line = map.log(object.log).code_object(object.object).log_line;
                dealt[object.log.index()].1[line as usize - 1]
            });
            assert_eq!(line, whole_lines[id], "{what}: LOAD {id} at 0x{:x}", code.address);
            let created_in = |log: &CodeLog| {
                log.code_objects.iter().any(|object| (object.address, object.size) == (code.address, code.size))
            };
            loads_at_shared_keys += usize::from(map.logs().iter().all(created_in));
        }
    }
    // 76 LOADs at addresses both logs created code at, over the five recordings.
    assert_eq!(loads_at_shared_keys, 76);
}
