//! `v8inline record` finds the benchmarks a program runs, with no change to
//! its code, and writes one profile per benchmark: tinybench, mitata,
//! benchmark.js, `performance.measure` and vitest bench, each recorded
//! through the binary on the programs of testdata/benchsuite/harnesses
//! (their packages installed from npm here), and the real suite recorded
//! in testdata/benchsuite. Recording tests need perf and npm; they skip
//! with a message otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

/// The two tasks every harness program times, and the function each runs.
const TASKS: [(&str, &str); 2] = [("sum of squares", "sumOfSquares"), ("join words", "joinWords")];

/// The harness programs with their packages installed, once per test
/// process; `None` (said why) where perf or npm cannot be used.
fn harnesses() -> Option<&'static Path> {
    static DIRECTORY: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIRECTORY
        .get_or_init(|| {
            if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
                eprintln!("SKIPPED: perf cannot record here ({reason})");
                return None;
            }
            let directory = std::env::temp_dir().join(format!("v8inline-benchmarks-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&directory);
            std::fs::create_dir_all(&directory).unwrap();
            let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/benchsuite/harnesses");
            for entry in std::fs::read_dir(&source).unwrap() {
                let path = entry.unwrap().path();
                std::fs::copy(&path, directory.join(path.file_name().unwrap())).unwrap();
            }
            npm_install(&directory, &[]).then_some(directory)
        })
        .as_deref()
}

/// `npm install PACKAGES` (the package.json's without) in `directory`;
/// false, said why, when it fails.
fn npm_install(directory: &Path, packages: &[&str]) -> bool {
    let installed = Command::new("npm")
        .current_dir(directory)
        .args(["install", "--no-audit", "--no-fund", "--silent"])
        .args(packages)
        .output();
    match installed {
        Ok(output) if output.status.success() => true,
        Ok(output) => {
            eprintln!("SKIPPED: npm install failed: {}", String::from_utf8_lossy(&output.stderr));
            false
        }
        Err(error) => {
            eprintln!("SKIPPED: npm cannot run: {error}");
            false
        }
    }
}

/// CLOCK_MONOTONIC now, in nanoseconds: perf's `-k mono` clock.
fn monotonic_ns() -> u64 {
    let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    assert_eq!(unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut time) }, 0);
    time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
}

/// A recording of `command` in `directory` into `output`, and when it ran.
struct Recorded {
    output_dir: PathBuf,
    stderr: String,
    started_ns: u64,
    ended_ns: u64,
}

fn record(directory: &Path, output: &str, command: &[&str]) -> Recorded {
    record_with(directory, output, &[], command)
}

/// [`record`] with record's own `flags` too.
fn record_with(directory: &Path, output: &str, flags: &[&str], command: &[&str]) -> Recorded {
    let output_dir = directory.join(output);
    let _ = std::fs::remove_dir_all(&output_dir);
    let started_ns = monotonic_ns();
    let run: Output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(directory)
        .args(["record", "--output-dir", output])
        .args(flags)
        .arg("--")
        .args(command)
        .output()
        .unwrap();
    let ended_ns = monotonic_ns();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    Recorded { output_dir, stderr, started_ns, ended_ns }
}

impl Recorded {
    fn benchmarks(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.output_dir.join("benchmarks.json"))
            .unwrap_or_else(|error| panic!("no benchmarks.json ({error}):\n{}", self.stderr));
        let json: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["version"], 1);
        json["benchmarks"].as_array().unwrap().clone()
    }

    /// The whole run's samples, as record reports them.
    fn samples(&self) -> u64 {
        let line = self.stderr.lines().find(|line| line.contains(" JIT frames expanded")).unwrap();
        line.trim_start_matches("v8inline: ").split(' ').next().unwrap().parse().unwrap()
    }

    fn folded(&self, benchmark: &Value) -> String {
        let directory = benchmark["directory"].as_str().unwrap();
        std::fs::read_to_string(self.output_dir.join(directory).join("profile.folded")).unwrap()
    }

    /// Every flame graph record wrote, the whole run's and each
    /// benchmark's, parsed by a strict XML parser.
    fn check_every_svg_is_xml(&self) -> usize {
        let mut svgs = vec![self.output_dir.join("flamegraph.svg")];
        if let Ok(directories) = std::fs::read_dir(self.output_dir.join("benchmarks")) {
            svgs.extend(directories.map(|entry| entry.unwrap().path().join("flamegraph.svg")));
        }
        for svg in &svgs {
            let frames = svg_frames(svg);
            assert!(!frames.is_empty(), "{}: no frame", svg.display());
        }
        svgs.len()
    }
}

/// One frame of a flame graph SVG: its tooltip, its label (`fg:label`,
/// `fg:short`), the text it shows and where it is drawn.
#[derive(Debug)]
struct SvgFrame {
    title: String,
    label: Option<String>,
    short: Option<String>,
    text: String,
    y: f64,
}

/// The frames of the SVG at `path`, read by roxmltree, which refuses what
/// XML does not allow (a NUL or other control character, an undefined
/// entity), as Chromium and Python's parser do.
fn svg_frames(path: &Path) -> Vec<SvgFrame> {
    let text = std::fs::read_to_string(path).unwrap();
    // inferno's SVG names its DTD (`<!DOCTYPE svg PUBLIC ...>`).
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..roxmltree::ParsingOptions::default() };
    let document = roxmltree::Document::parse_with_options(&text, options)
        .unwrap_or_else(|error| panic!("{}: not well-formed XML: {error}", path.display()));
    let frames = document
        .descendants()
        .find(|node| node.has_tag_name("svg") && node.attribute("id") == Some("frames"))
        .unwrap_or_else(|| panic!("{}: no frames", path.display()));
    fn child<'a, 'input>(node: roxmltree::Node<'a, 'input>, name: &str) -> Option<roxmltree::Node<'a, 'input>> {
        node.children().find(|child| child.has_tag_name(name))
    }
    let label_namespace = |node: roxmltree::Node, name: &str| {
        node.attributes().find(|attribute| attribute.name() == name).map(|attribute| attribute.value().to_string())
    };
    frames
        .children()
        .filter(|node| node.has_tag_name("g"))
        .map(|frame| {
            let text = child(frame, "text").unwrap();
            SvgFrame {
                title: child(frame, "title").unwrap().text().unwrap_or_default().to_string(),
                label: label_namespace(text, "label"),
                short: label_namespace(text, "short"),
                text: text.text().unwrap_or_default().to_string(),
                y: child(frame, "rect").unwrap().attribute("y").unwrap().parse().unwrap(),
            }
        })
        .collect()
}

/// The frames in the first 1,000 px of the graph whose whole label shows
/// (as testdata/compare/check-flamegraph.sh counts them in Chromium).
fn whole_labels(frames: &[SvgFrame]) -> Vec<&str> {
    frames
        .iter()
        .filter(|frame| frame.y < 1000.0 && !frame.text.is_empty())
        .filter(|frame| {
            let name = frame.title.rsplit_once(" (").map_or(frame.title.as_str(), |(name, _)| name);
            let name = name.trim_end_matches("_[i]").trim_end_matches("_[j]").trim_end_matches("_[k]");
            match &frame.label {
                Some(label) => frame.text == *label || Some(&frame.text) == frame.short.as_ref(),
                None => frame.text == name,
            }
        })
        .map(|frame| frame.text.as_str())
        .collect()
}

/// The folded `stack count` lines of `folded`, as frames and count.
fn folded_stacks(folded: &str) -> Vec<(Vec<&str>, u64)> {
    folded
        .lines()
        .map(|line| {
            let (stack, count) = line.rsplit_once(' ').unwrap();
            (stack.split(';').collect(), count.parse().unwrap())
        })
        .collect()
}

/// A benchmark's stacks start at the benchmark (named as the harness
/// names it), its task function under it: the frame under the root that
/// holds most of the samples is JavaScript of the user's own `files`, and
/// the runtime's startup is folded into the root. Returns that frame.
fn check_starts_at_benchmark(folded: &str, name: &str, files: &[&str]) -> String {
    let stacks = folded_stacks(folded);
    let mut under_root: std::collections::BTreeMap<&str, u64> = Default::default();
    for (frames, count) in &stacks {
        assert_eq!(frames[0], name, "{name}: a stack starts elsewhere: {frames:?}");
        assert!(!frames.iter().any(|frame| frame.contains('\0') || frame.starts_with("__libc_start")), "{frames:?}");
        if let Some(task) = frames.get(1) {
            *under_root.entry(task).or_default() += count;
        }
    }
    let total: u64 = stacks.iter().map(|(_, count)| count).sum();
    let (task, _) = under_root.iter().max_by_key(|(_, weight)| **weight).unwrap();
    let is_users = |frame: &str| {
        frame.starts_with("JS:") && !frame.contains("node_modules") && files.iter().any(|file| frame.contains(file))
    };
    assert!(is_users(task), "{name}: {task} under the root");
    // The task's code in any tier (`JS:~`, `JS:^`...) holds most samples.
    let users: u64 = under_root.iter().filter(|(frame, _)| is_users(frame)).map(|(_, weight)| weight).sum();
    assert!(users * 2 > total, "{name}: the user's code holds {users} of {total}: {under_root:?}");
    task.to_string()
}

/// What every harness's recording must show: the benchmarks named as the
/// harness named them, in the order they ran; each one's samples under its
/// own task's function and not the other's; its windows inside the run and
/// in time order; their samples adding up to at most the run's; its flame
/// graph; the harness's own timing when it gives one; one report line each.
fn check_benchmarks(recorded: &Recorded, harness: &str, timed: bool) {
    check_benchmarks_of(recorded, harness, timed, &["work.cjs", ".mjs", ".cjs", ".js"]);
}

/// [`check_benchmarks`], the task functions in one of `files`.
fn check_benchmarks_of(recorded: &Recorded, harness: &str, timed: bool, files: &[&str]) {
    assert_eq!(recorded.check_every_svg_is_xml(), 3, "the run's graph and each benchmark's");
    let benchmarks = recorded.benchmarks();
    let names: Vec<&str> = benchmarks.iter().map(|benchmark| benchmark["name"].as_str().unwrap()).collect();
    assert_eq!(names, TASKS.map(|(name, _)| name), "{}", recorded.stderr);
    let mut samples = 0;
    let mut previous_end = 0;
    for (benchmark, (name, function)) in benchmarks.iter().zip(TASKS) {
        assert_eq!(benchmark["harness"], harness);
        let folded = recorded.folded(benchmark);
        let task = check_starts_at_benchmark(&folded, name, files);
        // The task function the harness calls, not the script's top level
        // that started the harness (benchmark.js runs from there).
        assert!(!task.contains(":1:1_"), "{name}: {task}");
        let other = TASKS.iter().map(|(_, function)| *function).find(|other| *other != function).unwrap();
        assert!(folded.contains(&format!("{function} ")), "{name}: no {function} in\n{folded}");
        assert!(!folded.contains(&format!("{other} ")), "{name}: {other} in\n{folded}");
        let benchmark_samples = benchmark["samples"].as_u64().unwrap();
        assert!(benchmark_samples > 0, "{name}: no samples");
        samples += benchmark_samples;
        let counted: u64 = folded.lines().map(|line| line.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum();
        assert!(counted > 0);
        for window in benchmark["windows"].as_array().unwrap() {
            let (start, end) = (window["start_ns"].as_u64().unwrap(), window["end_ns"].as_u64().unwrap());
            assert!(recorded.started_ns < start && start < end && end < recorded.ended_ns, "{name}: {window}");
            assert!(start >= previous_end, "{name}: windows out of order or overlapping");
            previous_end = end;
        }
        assert_eq!(benchmark["pid"], benchmark["tid"], "the main thread");
        let directory = recorded.output_dir.join(benchmark["directory"].as_str().unwrap());
        assert!(std::fs::read_to_string(directory.join("flamegraph.svg")).unwrap().starts_with("<?xml"));
        // The other outputs of record, each of the benchmark's samples only.
        let cpuprofile: Value =
            serde_json::from_str(&std::fs::read_to_string(directory.join("profile.cpuprofile")).unwrap()).unwrap();
        let functions: Vec<&str> = cpuprofile["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|node| node["callFrame"]["functionName"].as_str().unwrap())
            .collect();
        assert!(functions.contains(&function) && !functions.contains(&other), "{name}: {functions:?}");
        // Its samples, and `(idle)` where its thread was off the CPU.
        assert!(cpuprofile["samples"].as_array().unwrap().len() as u64 >= benchmark["samples"].as_u64().unwrap());
        let firefox: Value =
            serde_json::from_slice(&common::gunzip(&directory.join("profile.firefox.json.gz"))).unwrap();
        assert_eq!(firefox["threads"].as_array().unwrap().len(), 1, "{name}: the benchmark's thread");
        let times = &benchmark["time_per_iteration"];
        if timed {
            let (mean, min, max) = (times["mean"].as_f64().unwrap(), times["min"].as_f64(), times["max"].as_f64());
            assert!(mean > 0.0 && times["samples"].as_u64().unwrap() > 0, "{name}: {times}");
            assert!(min.unwrap() <= mean && mean <= max.unwrap(), "{name}: {times}");
            assert!(times["stddev"].as_f64().unwrap() >= 0.0);
            check_timings(benchmark, name);
        } else {
            assert!(times.is_null(), "{name}: {times}");
        }
        let line = format!("v8inline: benchmark {name} ({harness}): {benchmark_samples} samples");
        assert!(recorded.stderr.contains(&line), "no `{line}` in\n{}", recorded.stderr);
    }
    assert!(samples <= recorded.samples(), "{samples} benchmark samples of {} in all", recorded.samples());
}

/// A benchmark's `timings` in benchmarks.json, where the harness kept
/// them: as many as the harness counted, each a whole ns, their least and
/// greatest the harness's min and max; `p75` and `p99` in order where given.
/// Returns what each timing measured (`None`: none kept).
fn check_timings(benchmark: &Value, name: &str) -> Option<String> {
    let times = &benchmark["time_per_iteration"];
    let (min, max) = (times["min"].as_f64().unwrap(), times["max"].as_f64().unwrap());
    let median = times["median"].as_f64().unwrap_or(min);
    let mut ordered = vec![min, median];
    ordered.extend(["p75", "p99"].iter().filter_map(|quantile| times[quantile].as_f64()));
    ordered.push(max);
    // Rounding of the harness's own figures: within a nanosecond.
    assert!(ordered.windows(2).all(|pair| pair[0] <= pair[1] + 1.0), "{name}: {times}");
    let timings = benchmark.get("timings")?;
    let count = timings["count"].as_u64().unwrap();
    assert_eq!(count, times["samples"].as_u64().unwrap(), "{name}: {timings}");
    let values: Vec<f64> = match (timings["ns"].as_array(), timings["quantiles_ns"].as_array()) {
        (Some(each), None) => {
            assert_eq!(each.len() as u64, count, "{name}");
            each.iter().map(|value| value.as_f64().unwrap()).collect()
        }
        (None, Some(quantiles)) => {
            assert!(count > 1000 && quantiles.len() == 101, "{name}: {count} timings, {} quantiles", quantiles.len());
            quantiles.iter().map(|value| value.as_f64().unwrap()).collect()
        }
        other => panic!("{name}: timings without values: {other:?}"),
    };
    assert!(values.iter().all(|value| value.fract() == 0.0 && *value >= 0.0), "{name}: not whole ns");
    let least = values.iter().copied().fold(f64::INFINITY, f64::min);
    let greatest = values.iter().copied().fold(0.0, f64::max);
    assert!((least - min).abs() <= 1.0 && (greatest - max).abs() <= 1.0, "{name}: {least}..{greatest} for {times}");
    Some(timings["of"].as_str().unwrap().to_string())
}

/// What each benchmark's timings measured (`None` where none were kept).
fn timings_kept(recorded: &Recorded) -> Vec<Option<String>> {
    recorded
        .benchmarks()
        .iter()
        .map(|benchmark| benchmark.get("timings").map(|timings| timings["of"].to_string()))
        .collect()
}

/// recording.json: the project root (the directory of the package.json, in
/// no git repository), the command, the runtime.
fn check_recording_file(recorded: &Recorded, directory: &Path, command: &[&str], runtime_prefix: &str) {
    let text = std::fs::read_to_string(recorded.output_dir.join("recording.json")).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["project_root"], directory.display().to_string());
    assert_eq!(json["command"], serde_json::json!(command));
    assert!(json["runtime"].as_str().unwrap().starts_with(runtime_prefix), "{text}");
}

#[test]
fn tinybench_tasks_are_profiled_one_by_one() {
    let Some(directory) = harnesses() else { return };
    let command = ["node", "tinybench.mjs"];
    // Every output of the run that goes to a file is each benchmark's too,
    // as the run's options shape it.
    let recorded = record_with(directory, "out-tinybench", &["--pprof", "run.pb.gz", "--js-only"], &command);
    check_benchmarks(&recorded, "tinybench", true);
    for (benchmark, (name, function)) in recorded.benchmarks().iter().zip(TASKS) {
        let own = recorded.output_dir.join(benchmark["directory"].as_str().unwrap());
        let pprof = String::from_utf8_lossy(&common::gunzip(&own.join("run.pb.gz"))).into_owned();
        let other = TASKS.iter().map(|(_, other)| *other).find(|other| *other != function).unwrap();
        assert!(pprof.contains(function) && !pprof.contains(other), "{name}: its pprof profile");
        let cpuprofile: Value =
            serde_json::from_str(&std::fs::read_to_string(own.join("profile.cpuprofile")).unwrap()).unwrap();
        let native: Vec<&str> = cpuprofile["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|node| node["callFrame"]["functionName"].as_str().unwrap())
            .filter(|function| function.starts_with("Builtins_") || function.starts_with("node::"))
            .collect();
        assert!(native.is_empty(), "{name}: --js-only, yet {native:?}");
    }
    // One window each: the measured loop, not its warm-up.
    for benchmark in recorded.benchmarks() {
        assert_eq!(benchmark["windows"].as_array().unwrap().len(), 1);
    }
    // tinybench 6 keeps each iteration's time only where asked.
    assert_eq!(timings_kept(&recorded), [None, Some("\"iteration\"".to_string())]);
    check_recording_file(&recorded, directory, &command, "node ");
}

#[test]
fn performance_measure_windows_are_profiled_by_name_on_node_18_to_26() {
    let Some(directory) = harnesses() else { return };
    // Node 18's Performance.prototype.measure is read-only; its
    // performance.now() is moved to CLOCK_MONOTONIC as the others' are.
    let mut nodes: Vec<String> =
        [18, 26].into_iter().filter_map(common::node_binary).map(|node| node.display().to_string()).collect();
    nodes.push("node".to_string());
    for node in &nodes {
        check_measures(directory, node);
    }
}

fn check_measures(directory: &Path, node: &str) {
    let recorded = record(directory, "out-measure", &[node, "measure.cjs"]);
    // 15 rounds of each, each measure a window: two benchmarks.
    let windows: Vec<usize> =
        recorded.benchmarks().iter().map(|benchmark| benchmark["windows"].as_array().unwrap().len()).collect();
    assert_eq!(windows, [15, 15], "{node}");
    // Their windows interleave: check_benchmarks's order holds per benchmark.
    let benchmarks = recorded.benchmarks();
    for (benchmark, (name, function)) in benchmarks.iter().zip(TASKS) {
        assert_eq!(benchmark["name"], name);
        assert_eq!(benchmark["harness"], "performance.measure");
        assert!(benchmark["time_per_iteration"].is_null());
        let folded = recorded.folded(benchmark);
        assert!(folded.contains(&format!("{function} ")), "{name}: no {function}");
        let other = if function == "sumOfSquares" { "joinWords" } else { "sumOfSquares" };
        assert!(!folded.contains(&format!("{other} ")), "{name}: {other} in\n{folded}");
        for window in benchmark["windows"].as_array().unwrap() {
            let (start, end) = (window["start_ns"].as_u64().unwrap(), window["end_ns"].as_u64().unwrap());
            assert!(recorded.started_ns < start && start < end && end < recorded.ended_ns);
        }
    }
    let total: u64 = benchmarks.iter().map(|benchmark| benchmark["samples"].as_u64().unwrap()).sum();
    assert!(0 < total && total <= recorded.samples());
}

#[test]
fn benchmark_js_benchmarks_are_profiled_one_by_one() {
    let Some(directory) = harnesses() else { return };
    let recorded = record(directory, "out-benchmarkjs", &["node", "benchmarkjs.cjs"]);
    check_benchmarks(&recorded, "benchmark.js", true);
    // Each cycle's time per iteration.
    assert_eq!(timings_kept(&recorded), [Some("\"cycle\"".to_string()), Some("\"cycle\"".to_string())]);
}

#[test]
fn mitata_benchmarks_are_profiled_one_by_one_on_nodes_with_module_hooks() {
    let Some(directory) = harnesses() else { return };
    // module.registerHooks: node 22.15 and later.
    let Some(node) = [26, 24, 22].into_iter().find_map(common::node_binary) else {
        eprintln!("SKIPPED: no node 22, 24 or 26 (mitata is observed through module.registerHooks)");
        return;
    };
    let node = node.display().to_string();
    let recorded = record(directory, "out-mitata", &[&node, "mitata.mjs"]);
    check_benchmarks(&recorded, "mitata", true);
    // Each batch's time per iteration.
    assert_eq!(timings_kept(&recorded), [Some("\"batch\"".to_string()), Some("\"batch\"".to_string())]);
}

#[test]
fn vitest_bench_runs_tinybench_in_its_workers_and_each_task_is_profiled() {
    let Some(harnesses) = harnesses() else { return };
    let directory = harnesses.join("vitest");
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::copy(harnesses.join("work.cjs"), directory.join("work.cjs")).unwrap();
    std::fs::write(directory.join("package.json"), r#"{ "name": "vitest-bench", "private": true, "type": "module" }"#)
        .unwrap();
    std::fs::write(
        directory.join("work.bench.js"),
        "import { bench, describe } from 'vitest';\nimport work from './work.cjs';\n\
         describe('work', () => {\n  bench('sum of squares', () => { work.sumOfSquares(); }, { time: 300 });\n  \
         bench('join words', () => { work.joinWords(); }, { time: 300 });\n});\n",
    )
    .unwrap();
    if !npm_install(&directory, &["vitest@3"]) {
        return;
    }
    let recorded = record_with(&directory, "out", &["--stats"], &["npx", "vitest", "bench", "--run"]);
    // In vitest's worker process, not the command's.
    check_benchmarks(&recorded, "tinybench", true);
    // vitest's main process runs only vitest's code, mostly unoptimized:
    // not the user's, so a line under --stats, not a warning (issue 41).
    let runners_own = recorded
        .stderr
        .lines()
        .filter(|line| line.starts_with("v8inline: not the user's, so no warning: "))
        .filter(|line| {
            ["vitest's own process", "@vitest's own process", "tinypool's own process"]
                .iter()
                .any(|own| line.contains(own))
        })
        .count();
    assert!(runners_own >= 1, "{}", recorded.stderr);
}

#[test]
fn the_real_suites_benchmark_graphs_start_at_their_tasks_and_show_their_code() {
    // testdata/benchsuite (tinybench timing the yaml library) recorded as
    // its users run it: `npm run bench`.
    let Some(harnesses) = harnesses() else { return };
    let directory = harnesses.join("benchsuite");
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/benchsuite");
    std::fs::create_dir_all(directory.join("inputs")).unwrap();
    for file in ["package.json", "bench.mjs", "inputs/resource_map.yaml", "inputs/regen_apis_config.yaml"] {
        std::fs::copy(suite.join(file), directory.join(file)).unwrap();
    }
    if !npm_install(&directory, &[]) {
        return;
    }
    let recorded = record(&directory, "out", &["npm", "run", "bench"]);
    assert_eq!(recorded.check_every_svg_is_xml(), 3, "the run's graph and each benchmark's");
    // The whole run's graph is as before: its roots are the processes.
    let whole = std::fs::read_to_string(recorded.output_dir.join("profile.folded")).unwrap();
    assert!(whole.lines().all(|line| !line.starts_with("parse ")), "a benchmark root in the run's graph");
    assert!(whole.contains("__libc_start_call_main"));
    let tasks =
        [("parse resource_map.yaml", "parseResourceMap"), ("parse regen_apis_config.yaml", "parseRegenApisConfig")];
    for (benchmark, (name, function)) in recorded.benchmarks().iter().zip(tasks) {
        assert_eq!(benchmark["name"], name);
        let task = check_starts_at_benchmark(&recorded.folded(benchmark), name, &["bench.mjs"]);
        assert!(task.contains(&format!("{function} ")), "{name}: {task}");
        let svg = recorded.output_dir.join(benchmark["directory"].as_str().unwrap()).join("flamegraph.svg");
        let frames = svg_frames(&svg);
        // The root's tooltip lists what it stands for: the startup, the
        // event loop and tinybench.
        let root = frames.iter().find(|frame| frame.title.starts_with(&format!("{name} ("))).unwrap();
        assert_eq!(root.label.as_deref(), Some(name));
        assert!(root.title.contains("folded into this root"), "{}", root.title);
        for folded in ["__libc_start_call_main", "RunMicrotasks", "/node_modules/tinybench/"] {
            assert!(root.title.contains(folded), "{name}: no {folded} in its root's tooltip:\n{}", root.title);
        }
        let labels = whole_labels(&frames);
        assert!(labels.len() >= 25, "{name}: {} whole labels in the first 1,000 px: {labels:?}", labels.len());
        eprintln!("{name}: {} whole labels in the first 1,000 px, e.g. {:?}", labels.len(), &labels[..8]);
        // benchmarks.json keeps what the root stands for, for compare.
        assert_eq!(benchmark["root"]["task_found"], true, "{name}");
        let kept: Vec<&str> = benchmark["root"]["folded_frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|frame| frame.as_str().unwrap())
            .collect();
        assert!(root.title.ends_with(&kept.join("\n")), "{name}: {kept:?} not the tooltip's:\n{}", root.title);
    }
    // compare's differential graph of each benchmark has the same tooltip
    // on its root, from benchmarks.json.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(&directory)
        .args(["compare", "out", "out", "--flamegraph", "differential.svg"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    for (benchmark, (name, _)) in recorded.benchmarks().iter().zip(tasks) {
        let slug =
            Path::new(benchmark["directory"].as_str().unwrap()).file_name().unwrap().to_str().unwrap().to_string();
        let own =
            svg_frames(&recorded.output_dir.join(benchmark["directory"].as_str().unwrap()).join("flamegraph.svg"));
        let differential = svg_frames(&directory.join(format!("differential-{slug}.svg")));
        let root_of = |frames: &[SvgFrame]| {
            let title = &frames.iter().find(|frame| frame.label.as_deref() == Some(name)).unwrap().title;
            title[title.find("benchmark ").unwrap()..].to_string()
        };
        assert_eq!(root_of(&differential), root_of(&own), "{name}");
    }
}

/// The committed recordings of testdata/benchsuite.
fn committed_recordings() -> Vec<PathBuf> {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/benchsuite");
    let mut recordings = vec![suite.join("base-1"), suite.join("base-2"), suite.join("head")];
    let mut noise: Vec<PathBuf> =
        std::fs::read_dir(suite.join("noise")).unwrap().map(|entry| entry.unwrap().path()).collect();
    noise.sort();
    recordings.extend(noise);
    recordings
}

/// The share of `folded`'s samples whose innermost frame is `isEmpty`
/// of yaml's lexer, inlined.
fn inlined_is_empty_share(folded: &str) -> f64 {
    let (mut inlined, mut total) = (0u64, 0u64);
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let count: u64 = count.parse().unwrap();
        total += count;
        let leaf = stack.rsplit(';').next().unwrap();
        if leaf.starts_with("JS:*isEmpty ") && leaf.contains("/yaml/dist/parse/lexer.js:") && leaf.ends_with("_[i]") {
            inlined += count;
        }
    }
    inlined as f64 / total as f64
}

#[test]
fn each_benchmark_of_the_real_suite_lies_under_its_own_task() {
    let recordings = committed_recordings();
    assert_eq!(recordings.len(), 23, "base-1, base-2, head and ten pairs");
    let tasks =
        [("parse resource_map.yaml", "parseResourceMap"), ("parse regen_apis_config.yaml", "parseRegenApisConfig")];
    for recording in &recordings {
        let text = std::fs::read_to_string(recording.join("benchmarks.json")).unwrap();
        let json: Value = serde_json::from_str(&text).unwrap();
        let benchmarks = json["benchmarks"].as_array().unwrap();
        assert_eq!(benchmarks.len(), 2, "{}", recording.display());
        for (benchmark, (name, function)) in benchmarks.iter().zip(tasks) {
            assert_eq!(benchmark["name"], name);
            assert_eq!(benchmark["harness"], "tinybench");
            let directory = recording.join(benchmark["directory"].as_str().unwrap());
            let folded = String::from_utf8(common::gunzip(&directory.join("profile.folded.gz"))).unwrap();
            let counted: u64 =
                folded.lines().map(|line| line.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum();
            // Each sample counts its period: 1,003,009 ns at 997 Hz.
            assert_eq!(counted, benchmark["samples"].as_u64().unwrap() * 1_003_009, "{}", directory.display());
            let other = tasks.iter().map(|(_, other)| *other).find(|other| *other != function).unwrap();
            let under_own = folded.lines().filter(|line| line.contains(&format!("{function} "))).count();
            assert!(under_own > 0, "{}: nothing under {function}", directory.display());
            assert!(!folded.contains(&format!("{other} ")), "{}: {other} inside", directory.display());
            // record marks inlined frames in every folded file it writes.
            assert!(folded.contains("_[i];") || folded.contains("_[i] "), "{}", directory.display());
            // The slowed function: about a fifth of the samples at head,
            // next to nothing at base.
            let share = inlined_is_empty_share(&folded);
            if recording.ends_with("head") {
                assert!(share > 0.10, "{}: isEmpty inlined {share}", directory.display());
            } else {
                assert!(share < 0.02, "{}: isEmpty inlined {share}", directory.display());
            }
        }
        let recording_file: Value =
            serde_json::from_str(&std::fs::read_to_string(recording.join("recording.json")).unwrap()).unwrap();
        assert_eq!(recording_file["command"], serde_json::json!(["npm", "run", "bench"]));
        let root =
            if recording.ends_with("head") { "/tmp/v8inline-benchsuite/head" } else { "/tmp/v8inline-benchsuite/base" };
        assert_eq!(recording_file["project_root"], root);
    }
}

#[test]
fn a_recording_replaced_with_force_keeps_no_benchmark_of_the_old_one() {
    let Some(directory) = harnesses() else { return };
    let first = record(directory, "out-replaced", &["node", "tinybench.mjs"]);
    assert_eq!(first.benchmarks().len(), 2);
    let output_dir = directory.join("out-replaced");
    assert!(output_dir.join("benchmarks/sum-of-squares/profile.folded").is_file());
    // A program that runs no benchmark, recorded over it.
    let replaced = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(directory)
        .args(["record", "--output-dir", "out-replaced", "--force", "--", "node", "-e"])
        .arg("require('./work.cjs').sumOfSquares()")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&replaced.stderr);
    assert!(replaced.status.success(), "{stderr}");
    assert!(!stderr.contains("v8inline: benchmark "), "{stderr}");
    assert!(!output_dir.join("benchmarks.json").exists());
    assert!(!output_dir.join("benchmarks").exists());
    assert!(output_dir.join("recording.json").is_file());
}

#[test]
fn benchmarks_on_two_threads_at_once_each_get_their_own_threads_samples() {
    let Some(directory) = harnesses() else { return };
    let recorded = record(directory, "out-worker", &["node", "worker.mjs"]);
    let benchmarks = recorded.benchmarks();
    let names: Vec<&str> = benchmarks.iter().map(|benchmark| benchmark["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{}", recorded.stderr);
    let by_name = |name: &str| benchmarks.iter().find(|benchmark| benchmark["name"] == name).unwrap();
    let (main, worker) = (by_name("join words"), by_name("sum of squares"));
    assert_eq!(main["pid"], worker["pid"]);
    assert_eq!(main["tid"], main["pid"]);
    assert_ne!(worker["tid"], worker["pid"], "the worker's OS thread");
    for (benchmark, function, other) in [(main, "joinWords", "sumOfSquares"), (worker, "sumOfSquares", "joinWords")] {
        let folded = recorded.folded(benchmark);
        assert!(folded.contains(&format!("{function} ")), "{}: no {function}", benchmark["name"]);
        assert!(!folded.contains(&format!("{other} ")), "{}: {other} in\n{folded}", benchmark["name"]);
        assert!(benchmark["samples"].as_u64().unwrap() > 0);
    }
}
