//! `v8inline record` splits Deno runs per benchmark, with no change to the
//! programs: `deno bench` (Deno.bench, with and without `-A`), and
//! tinybench and mitata under `deno run -A`, recorded through the binary on
//! the programs of testdata/deno-bench (their packages installed from npm
//! here) under Deno 2.9. Each test skips with a message where deno, perf or
//! npm cannot be used.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The two benchmarks every program times, and the function each runs.
const TASKS: [(&str, &str); 2] = [("sum of squares", "sumOfSquares"), ("join words", "joinWords")];

/// Deno's binary: the npm package's (`npm install --prefix /opt/deno deno`,
/// as `.ci/run` installs it), or deno on PATH; `None`, said why, without.
fn deno() -> Option<&'static Path> {
    static DENO: OnceLock<Option<PathBuf>> = OnceLock::new();
    DENO.get_or_init(|| {
        let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|directory| directory.join("deno"))
            .collect::<Vec<_>>();
        let platform_packages = std::fs::read_dir("/opt/deno/node_modules/@deno")
            .into_iter()
            .flatten()
            .map(|entry| entry.unwrap().path().join("deno"));
        let found = platform_packages.chain(on_path).filter(|path| path.is_file()).find(|path| {
            Command::new(path)
                .arg("--version")
                .output()
                .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).starts_with("deno 2."))
        });
        if found.is_none() {
            eprintln!("SKIPPED: no deno 2 (`npm install --prefix /opt/deno deno` installs it, as .ci/run does)");
        }
        found
    })
    .as_deref()
}

/// The programs with their packages installed, once per test process;
/// `None` (said why) where perf or npm cannot be used.
fn programs() -> Option<&'static Path> {
    static DIRECTORY: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIRECTORY
        .get_or_init(|| {
            if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
                eprintln!("SKIPPED: perf cannot record here ({reason})");
                return None;
            }
            let directory = std::env::temp_dir().join(format!("v8inline-deno-benchmarks-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&directory);
            std::fs::create_dir_all(&directory).unwrap();
            let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/deno-bench");
            for entry in std::fs::read_dir(&source).unwrap() {
                let path = entry.unwrap().path();
                std::fs::copy(&path, directory.join(path.file_name().unwrap())).unwrap();
            }
            let installed = Command::new("npm")
                .current_dir(&directory)
                .args(["install", "--no-audit", "--no-fund", "--silent"])
                .output();
            match installed {
                Ok(output) if output.status.success() => Some(directory),
                Ok(output) => {
                    eprintln!("SKIPPED: npm install failed: {}", String::from_utf8_lossy(&output.stderr));
                    None
                }
                Err(error) => {
                    eprintln!("SKIPPED: npm cannot run: {error}");
                    None
                }
            }
        })
        .as_deref()
}

/// CLOCK_MONOTONIC now, in nanoseconds: perf's `-k mono` clock.
fn monotonic_ns() -> u64 {
    let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    assert_eq!(unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut time) }, 0);
    time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
}

/// A recording of a deno command, and when it ran.
struct Recorded {
    output_dir: PathBuf,
    stderr: String,
    started_ns: u64,
    ended_ns: u64,
}

/// `v8inline record --output-dir OUTPUT -- deno ARGUMENTS` in `directory`.
fn record(directory: &Path, deno: &Path, output: &str, arguments: &[&str]) -> Recorded {
    let output_dir = directory.join(output);
    let _ = std::fs::remove_dir_all(&output_dir);
    let started_ns = monotonic_ns();
    let run = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(directory)
        .env("DENO_NO_UPDATE_CHECK", "1")
        .env("NO_COLOR", "1")
        .env_remove("DENO_V8_FLAGS")
        .args(["record", "--frequency", "997", "--output-dir", output, "--"])
        .arg(deno)
        .args(arguments)
        .output()
        .unwrap();
    let ended_ns = monotonic_ns();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "deno {arguments:?}: {stderr}");
    Recorded { output_dir, stderr, started_ns, ended_ns }
}

/// A JSON file, read strictly.
fn json_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The times (CLOCK_MONOTONIC ns) of the whole run's `.cpuprofile` samples
/// whose stack holds `function`.
fn sample_times_under(cpuprofile: &Value, function: &str) -> Vec<u64> {
    let nodes = cpuprofile["nodes"].as_array().unwrap();
    let mut parents = std::collections::HashMap::new();
    let mut names = std::collections::HashMap::new();
    for node in nodes {
        let id = node["id"].as_u64().unwrap();
        names.insert(id, node["callFrame"]["functionName"].as_str().unwrap());
        for child in node["children"].as_array().into_iter().flatten() {
            parents.insert(child.as_u64().unwrap(), id);
        }
    }
    let under = |mut id: u64| loop {
        if names[&id] == function {
            return true;
        }
        match parents.get(&id) {
            Some(&parent) => id = parent,
            None => return false,
        }
    };
    let mut time_us = cpuprofile["startTime"].as_i64().unwrap();
    let samples = cpuprofile["samples"].as_array().unwrap();
    let deltas = cpuprofile["timeDeltas"].as_array().unwrap();
    let mut times = Vec::new();
    for (sample, delta) in samples.iter().zip(deltas) {
        time_us += delta.as_i64().unwrap();
        if under(sample.as_u64().unwrap()) {
            times.push(time_us as u64 * 1000);
        }
    }
    times
}

/// What a Deno recording must show: the benchmarks named as the harness
/// named them, in the order they ran, on the thread they ran on; each one's
/// samples under its own function and not the other's; its windows inside
/// the run, in time order; its files, each parsed strictly; the harness's
/// own timing where it gives one; one report line each. Where the window
/// holds the harness's warm-up too (`whole_run_inside`), every sample of
/// the run under a benchmark's function lies inside that benchmark's
/// windows: the windows are on perf's clock.
fn check_benchmarks(recorded: &Recorded, harness: &str, on_main_thread: bool, whole_run_inside: bool) {
    let benchmarks_file = json_file(&recorded.output_dir.join("benchmarks.json"));
    assert_eq!(benchmarks_file["version"], 1);
    let benchmarks = benchmarks_file["benchmarks"].as_array().unwrap();
    let names: Vec<&str> = benchmarks.iter().map(|benchmark| benchmark["name"].as_str().unwrap()).collect();
    assert_eq!(names, TASKS.map(|(name, _)| name), "{}", recorded.stderr);
    let whole_run = json_file(&recorded.output_dir.join("profile.cpuprofile"));
    let mut previous_end = 0;
    for (benchmark, (name, function)) in benchmarks.iter().zip(TASKS) {
        assert_eq!(benchmark["harness"], harness, "{name}");
        let (pid, tid) = (benchmark["pid"].as_u64().unwrap(), benchmark["tid"].as_u64().unwrap());
        assert_eq!(pid == tid, on_main_thread, "{name}: pid {pid}, tid {tid}");
        let directory = recorded.output_dir.join(benchmark["directory"].as_str().unwrap());
        let folded = std::fs::read_to_string(directory.join("profile.folded")).unwrap();
        let other = TASKS.iter().map(|(_, function)| *function).find(|other| *other != function).unwrap();
        assert!(folded.contains(&format!("{function} ")), "{name}: no {function} in\n{folded}");
        assert!(!folded.contains(&format!("{other} ")), "{name}: {other} in\n{folded}");
        let counted: u64 = folded.lines().map(|line| line.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum();
        let samples = benchmark["samples"].as_u64().unwrap();
        assert!(samples > 0 && counted > 0, "{name}: no samples");
        let windows: Vec<(u64, u64)> = benchmark["windows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|window| (window["start_ns"].as_u64().unwrap(), window["end_ns"].as_u64().unwrap()))
            .collect();
        for &(start, end) in &windows {
            assert!(recorded.started_ns < start && start < end && end < recorded.ended_ns, "{name}: {start}..{end}");
            assert!(start >= previous_end, "{name}: windows out of order or overlapping");
            previous_end = end;
        }
        if whole_run_inside {
            let times = sample_times_under(&whole_run, function);
            assert!(!times.is_empty(), "{name}: no sample under {function} in the whole run");
            // The .cpuprofile keeps microseconds.
            let outside: Vec<&u64> = times
                .iter()
                .filter(|&&time| !windows.iter().any(|&(start, end)| start / 1000 * 1000 <= time && time <= end))
                .collect();
            assert!(outside.is_empty(), "{name}: samples under {function} outside {windows:?}: {outside:?}");
        }
        // Every file of the benchmark, parsed.
        let svg = std::fs::read_to_string(directory.join("flamegraph.svg")).unwrap();
        assert!(svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"), "{name}: flamegraph.svg");
        let cpuprofile = json_file(&directory.join("profile.cpuprofile"));
        let functions: Vec<&str> = cpuprofile["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|node| node["callFrame"]["functionName"].as_str().unwrap())
            .collect();
        assert!(functions.contains(&function) && !functions.contains(&other), "{name}: {functions:?}");
        let firefox: Value =
            serde_json::from_slice(&common::gunzip(&directory.join("profile.firefox.json.gz"))).unwrap();
        assert_eq!(firefox["threads"].as_array().unwrap().len(), 1, "{name}: the benchmark's thread");
        let times = &benchmark["time_per_iteration"];
        let line = format!("v8inline: benchmark {name} ({harness}): {samples} samples");
        if harness == "Deno.bench" {
            // Deno hands its timing to its Rust reporter only.
            assert!(times.is_null(), "{name}: {times}");
        } else {
            let (mean, min, max) = (times["mean"].as_f64().unwrap(), times["min"].as_f64(), times["max"].as_f64());
            assert!(mean > 0.0 && times["samples"].as_u64().unwrap() > 0, "{name}: {times}");
            assert!(min.unwrap() <= mean && mean <= max.unwrap(), "{name}: {times}");
        }
        assert!(recorded.stderr.contains(&line), "no `{line}` in\n{}", recorded.stderr);
    }
    let recording = json_file(&recorded.output_dir.join("recording.json"));
    assert!(recording["runtime"].as_str().unwrap().starts_with("deno 2."), "{recording}");
}

#[test]
fn deno_bench_without_permissions_is_split_per_bench() {
    let (Some(deno), Some(directory)) = (deno(), programs()) else { return };
    // No -A: the thread is not readable in Deno; record finds it.
    let recorded = record(directory, deno, "out-bench", &["bench"]);
    check_benchmarks(&recorded, "Deno.bench", false, true);
    assert!(!recorded.stderr.contains("left out"), "{}", recorded.stderr);
}

#[test]
fn deno_bench_with_all_permissions_is_split_per_bench() {
    let (Some(deno), Some(directory)) = (deno(), programs()) else { return };
    let recorded = record(directory, deno, "out-bench-all", &["bench", "-A", "work_bench.js"]);
    check_benchmarks(&recorded, "Deno.bench", false, true);
}

#[test]
fn tinybench_under_deno_run_is_split_per_task() {
    let (Some(deno), Some(directory)) = (deno(), programs()) else { return };
    let recorded = record(directory, deno, "out-tinybench", &["run", "-A", "tinybench.mjs"]);
    // tinybench's warm-up is outside its windows.
    check_benchmarks(&recorded, "tinybench", true, false);
}

#[test]
fn mitata_by_an_npm_specifier_under_deno_run_is_split_per_benchmark() {
    let (Some(deno), Some(directory)) = (deno(), programs()) else { return };
    let recorded = record(directory, deno, "out-mitata", &["run", "-A", "mitata.mjs"]);
    check_benchmarks(&recorded, "mitata", true, true);
}
