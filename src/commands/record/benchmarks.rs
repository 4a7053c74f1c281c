//! One profile per benchmark from one run: the windows the preload
//! (`preload.cjs`, "Benchmarks") wrote down, grouped into benchmarks; the
//! directory of each (`DIR/benchmarks/<slug>/`) and what to write there,
//! which the pipeline's one writer writes (`crate::pipeline::outputs`);
//! `DIR/benchmarks.json` and `DIR/recording.json`, as compare reads them
//! (the contract is in docs/benchmarks.md).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::collapse::CollapseSummary;
use crate::collapse::task_root::TaskRoot;
use crate::files::replace_file;
use crate::model::benchmarks::{Benchmark, HarnessTimings, TimePerIteration, Window};
use crate::output::cpuprofile::ThreadSelection;
use crate::pipeline::outputs::{BenchmarkOutputs, OutputRequest};

/// The file the preload writes the windows to, in the recording's private
/// directory; preload.cjs spells the same name.
const WINDOWS_FILE: &str = "windows";
/// What `record` writes about the recording, always.
pub const RECORDING_FILE: &str = "recording.json";
/// The benchmarks found, when there were some.
pub const BENCHMARKS_FILE: &str = "benchmarks.json";
/// The directory of the benchmarks' own outputs.
pub const BENCHMARKS_DIRECTORY: &str = "benchmarks";

/// One line of the windows file.
#[derive(Deserialize)]
struct WindowLine {
    harness: String,
    name: String,
    pid: u32,
    tid: u32,
    start_ns: u64,
    end_ns: u64,
    time_per_iteration: Option<TimesLine>,
    /// Read apart ([`HarnessTimings`]): timings not as the preload writes
    /// them are dropped, not the window, which splits the samples.
    #[serde(default)]
    timings: Option<serde_json::Value>,
}

/// The harness's timing as the preload wrote it: any field may be null.
#[derive(Deserialize)]
struct TimesLine {
    mean: Option<f64>,
    stddev: Option<f64>,
    median: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    #[serde(default)]
    p75: Option<f64>,
    #[serde(default)]
    p99: Option<f64>,
    samples: Option<u64>,
}

/// The windows the preload wrote into the recording's private `directory`,
/// as benchmarks: one per harness, name, process and thread (a name
/// measured again adds windows; its last timing counts), in the order
/// first seen. Lines that do not parse (a process killed while writing)
/// are counted in `unreadable`.
pub(crate) fn read_benchmarks(directory: &Path) -> (Vec<Benchmark>, usize) {
    let text = std::fs::read_to_string(directory.join(WINDOWS_FILE)).unwrap_or_default();
    let mut benchmarks: Vec<Benchmark> = Vec::new();
    let mut index: HashMap<(String, String, u32, u32), usize> = HashMap::new();
    let mut unreadable = 0;
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let Ok(window) = serde_json::from_str::<WindowLine>(line) else {
            unreadable += 1;
            continue;
        };
        if window.end_ns < window.start_ns {
            unreadable += 1;
            continue;
        }
        let key = (window.harness.clone(), window.name.clone(), window.pid, window.tid);
        let at = *index.entry(key).or_insert_with(|| {
            benchmarks.push(Benchmark {
                name: window.name.clone(),
                harness: window.harness.clone(),
                pid: window.pid,
                tid: window.tid,
                windows: Vec::new(),
                time_per_iteration: None,
                timings: None,
            });
            benchmarks.len() - 1
        });
        let benchmark = &mut benchmarks[at];
        benchmark.windows.push(Window { start_ns: window.start_ns, end_ns: window.end_ns });
        if let Some(times) = window.time_per_iteration
            && let Some(mean) = times.mean
        {
            benchmark.time_per_iteration = Some(TimePerIteration {
                mean,
                stddev: times.stddev,
                median: times.median,
                min: times.min,
                max: times.max,
                p75: times.p75,
                p99: times.p99,
                samples: times.samples,
            });
        }
        // The last timings count, as the last timing does.
        let timings = window.timings.and_then(|timings| serde_json::from_value::<HarnessTimings>(timings).ok());
        if let Some(timings) = timings.filter(|timings| !timings.values().is_empty()) {
            benchmark.timings = Some(timings);
        }
    }
    for benchmark in &mut benchmarks {
        benchmark.windows.sort_by_key(|window| window.start_ns);
    }
    (benchmarks, unreadable)
}

/// A directory name for `name`: its letters and digits lowercased, every
/// other run of characters one `-`; `benchmark` when nothing is left;
/// `-2`, `-3`... after a name already `taken`.
pub(crate) fn slug(name: &str, taken: &mut std::collections::HashSet<String>) -> String {
    let mut slug = String::new();
    for character in name.chars().flat_map(char::to_lowercase) {
        if character.is_ascii_alphanumeric() {
            slug.push(character);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
        if slug.len() >= 60 {
            break;
        }
    }
    let base = match slug.trim_end_matches('-') {
        "" => "benchmark".to_string(),
        trimmed => trimmed.to_string(),
    };
    let mut candidate = base.clone();
    let mut number = 2;
    while !taken.insert(candidate.clone()) {
        candidate = format!("{base}-{number}");
        number += 1;
    }
    candidate
}

/// A benchmark's entry in benchmarks.json.
#[derive(Serialize)]
struct BenchmarkEntry<'a> {
    name: &'a str,
    directory: String,
    harness: &'a str,
    pid: u32,
    tid: u32,
    samples: u64,
    windows: &'a [Window],
    time_per_iteration: Option<TimePerIteration>,
    /// Each timing the harness took, when it kept them.
    #[serde(skip_serializing_if = "Option::is_none")]
    timings: Option<&'a HarnessTimings>,
    /// What its root stands for, for the tooltip of `compare`'s graphs.
    #[serde(skip_serializing_if = "Option::is_none")]
    root: Option<RootEntry<'a>>,
}

/// benchmarks.json's `root` of a benchmark ([`TaskRoot`] without its name,
/// which is the benchmark's).
#[derive(Serialize)]
struct RootEntry<'a> {
    folded_frames: &'a [String],
    task_found: bool,
}

#[derive(Serialize)]
struct BenchmarksFile<'a> {
    version: u32,
    benchmarks: Vec<BenchmarkEntry<'a>>,
}

/// What record found of one benchmark, for its report line.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkSummary {
    /// The name as the harness gave it.
    pub name: String,
    /// The harness.
    pub harness: String,
    /// Its directory, relative to the recording's.
    pub directory: String,
    /// Profile samples inside its windows.
    pub samples: u64,
    /// The harness's timing.
    pub time_per_iteration: Option<TimePerIteration>,
}

impl BenchmarkSummary {
    /// `NAME (HARNESS): N samples, MEAN ± STDDEV per iteration (K timings)`.
    pub fn describe(&self) -> String {
        let timing = match &self.time_per_iteration {
            Some(times) => {
                let spread = times.stddev.map_or_else(String::new, |stddev| format!(" ± {}", duration(stddev)));
                let count = times.samples.map_or_else(String::new, |count| format!(" ({count} timings)"));
                format!(", {}{spread} per iteration{count}", duration(times.mean))
            }
            None => String::new(),
        };
        let plural = if self.samples == 1 { "" } else { "s" };
        format!("benchmark {} ({}): {} sample{plural}{timing}", self.name, self.harness, self.samples)
    }
}

/// `nanoseconds` in the unit that reads best: ns, µs, ms or s.
fn duration(nanoseconds: f64) -> String {
    let (value, unit) = match nanoseconds.abs() {
        n if n < 1e3 => (nanoseconds, "ns"),
        n if n < 1e6 => (nanoseconds / 1e3, "µs"),
        n if n < 1e9 => (nanoseconds / 1e6, "ms"),
        _ => (nanoseconds / 1e9, "s"),
    };
    let decimals = if value.abs() >= 100.0 {
        0
    } else if value.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// Each benchmark's directory (`benchmarks/<slug>`, relative to the
/// recording's), made in `output_dir`, and what to write there: the
/// recording's `outputs` of the benchmark's samples alone, under the same
/// file names ([`OutputRequest::for_benchmark`]), titled `TITLE: benchmark
/// NAME`. In the order of `benchmarks`.
pub(crate) fn benchmark_outputs(
    output_dir: &Path,
    benchmarks: &[Benchmark],
    outputs: &[OutputRequest],
    title: &str,
) -> Result<(Vec<String>, Vec<BenchmarkOutputs>), (PathBuf, std::io::Error)> {
    let mut taken = std::collections::HashSet::new();
    let mut directories = Vec::with_capacity(benchmarks.len());
    let mut asked = Vec::with_capacity(benchmarks.len());
    for benchmark in benchmarks {
        let directory = format!("{BENCHMARKS_DIRECTORY}/{}", slug(&benchmark.name, &mut taken));
        let path = output_dir.join(&directory);
        std::fs::create_dir_all(&path).map_err(|error| (path.clone(), error))?;
        let thread = ThreadSelection { pid: Some(benchmark.pid), tid: Some(benchmark.tid) };
        asked.push(BenchmarkOutputs {
            title: format!("{title}: benchmark {}", benchmark.name),
            outputs: outputs.iter().filter_map(|output| output.for_benchmark(&path, thread)).collect(),
        });
        directories.push(directory);
    }
    Ok((directories, asked))
}

/// Removes the benchmarks' `directories` [`benchmark_outputs`] made, and
/// `benchmarks/` then, where nothing was written into them: a run refused
/// by `--strict` leaves no empty folders behind.
pub(crate) fn remove_empty_directories(output_dir: &Path, directories: &[String]) {
    for directory in directories {
        // remove_dir fails on a directory that holds something: kept.
        let _ = std::fs::remove_dir(output_dir.join(directory));
    }
    if !directories.is_empty() {
        let _ = std::fs::remove_dir(output_dir.join(BENCHMARKS_DIRECTORY));
    }
}

/// Writes `output_dir/benchmarks.json`: each benchmark with its directory
/// and the samples its outputs hold (`summaries`, in the order of
/// `benchmarks`); returns what to report of each.
pub(crate) fn write_benchmarks_file(
    output_dir: &Path,
    benchmarks: &[Benchmark],
    directories: &[String],
    summaries: &[CollapseSummary],
    roots: &[TaskRoot],
) -> Result<Vec<BenchmarkSummary>, (PathBuf, std::io::Error)> {
    let mut entries = Vec::with_capacity(benchmarks.len());
    let mut reported = Vec::with_capacity(benchmarks.len());
    for (index, (benchmark, directory)) in benchmarks.iter().zip(directories).enumerate() {
        let samples = summaries.get(index).map_or(0, |summary| summary.samples_kept);
        reported.push(BenchmarkSummary {
            name: benchmark.name.clone(),
            harness: benchmark.harness.clone(),
            directory: directory.clone(),
            samples,
            time_per_iteration: benchmark.time_per_iteration,
        });
        entries.push(BenchmarkEntry {
            name: &benchmark.name,
            directory: directory.clone(),
            harness: &benchmark.harness,
            pid: benchmark.pid,
            tid: benchmark.tid,
            samples,
            windows: &benchmark.windows,
            time_per_iteration: benchmark.time_per_iteration,
            timings: benchmark.timings.as_ref(),
            root: roots
                .get(index)
                .map(|root| RootEntry { folded_frames: &root.folded_frames, task_found: root.task_found }),
        });
    }
    let file = BenchmarksFile { version: 1, benchmarks: entries };
    let path = output_dir.join(BENCHMARKS_FILE);
    replace_file(&path, |output| {
        serde_json::to_writer_pretty(&mut *output, &file).map_err(std::io::Error::other)?;
        output.write_all(b"\n")
    })
    .map_err(|error| (path, error))?;
    Ok(reported)
}

/// recording.json: where the project is, what ran, on which runtime.
#[derive(Serialize)]
struct RecordingFile<'a> {
    version: u32,
    project_root: String,
    command: Vec<String>,
    runtime: Option<&'a str>,
}

/// Writes `output_dir/recording.json`.
pub(crate) fn write_recording_file(
    output_dir: &Path,
    project_root: &Path,
    command: &[std::ffi::OsString],
    runtime: Option<&str>,
) -> Result<(), (PathBuf, std::io::Error)> {
    let file = RecordingFile {
        version: 1,
        project_root: project_root.to_string_lossy().into_owned(),
        command: command.iter().map(|argument| argument.to_string_lossy().into_owned()).collect(),
        runtime,
    };
    let path = output_dir.join(RECORDING_FILE);
    replace_file(&path, |output| {
        serde_json::to_writer_pretty(&mut *output, &file).map_err(std::io::Error::other)?;
        output.write_all(b"\n")
    })
    .map_err(|error| (path, error))
}

/// The project's root for `working_directory`: the git toplevel (a `.git`
/// directory, or the `.git` file of a worktree), else the directory of the
/// nearest package.json upward, else the working directory itself.
pub(crate) fn project_root(working_directory: &Path) -> PathBuf {
    let has = |directory: &Path, name: &str| directory.join(name).exists();
    working_directory
        .ancestors()
        .find(|directory| has(directory, ".git"))
        .or_else(|| working_directory.ancestors().find(|directory| has(directory, "package.json")))
        .unwrap_or(working_directory)
        .to_owned()
}

/// `node 26.1.0` or `deno 2.1.4`: the runtime `binary` says it is
/// (`--version`), or `None` when it does not run.
pub(crate) fn runtime_version(runtime: super::Runtime, binary: &Path) -> Option<String> {
    let output = std::process::Command::new(binary)
        .arg("--version")
        .env_remove("NODE_OPTIONS")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    // node: `v26.1.0`; deno: `deno 2.1.4 (stable, release, ...)`.
    let version =
        text.split_whitespace().find(|word| word.trim_start_matches('v').starts_with(|c: char| c.is_ascii_digit()))?;
    Some(format!("{} {}", runtime.name(), version.trim_start_matches('v')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::benchmarks::TimingUnit;

    /// A run refused by `--strict` wrote nothing into the benchmarks'
    /// folders: they go, and `benchmarks/` with them; a folder that holds
    /// a file stays, with `benchmarks/`.
    #[test]
    fn empty_benchmark_directories_are_removed_and_others_kept() {
        let output = tempfile::tempdir().unwrap();
        let directories = vec![format!("{BENCHMARKS_DIRECTORY}/a"), format!("{BENCHMARKS_DIRECTORY}/b")];
        for directory in &directories {
            std::fs::create_dir_all(output.path().join(directory)).unwrap();
        }
        remove_empty_directories(output.path(), &directories);
        assert!(!output.path().join(BENCHMARKS_DIRECTORY).exists());
        for directory in &directories {
            std::fs::create_dir_all(output.path().join(directory)).unwrap();
        }
        std::fs::write(output.path().join(&directories[1]).join("profile.folded"), "a 1\n").unwrap();
        remove_empty_directories(output.path(), &directories);
        assert!(!output.path().join(&directories[0]).exists());
        assert!(output.path().join(&directories[1]).join("profile.folded").exists());
    }

    #[test]
    fn slugs_are_lowercase_words_joined_by_dashes_and_unique() {
        let mut taken = std::collections::HashSet::new();
        assert_eq!(slug("parse small.js", &mut taken), "parse-small-js");
        assert_eq!(slug("Parse Small.JS", &mut taken), "parse-small-js-2");
        assert_eq!(slug("  ../../etc  ", &mut taken), "etc");
        assert_eq!(slug("→", &mut taken), "benchmark");
        assert_eq!(slug("", &mut taken), "benchmark-2");
    }

    #[test]
    fn windows_of_one_name_and_thread_form_one_benchmark() {
        let directory = tempfile::tempdir().unwrap();
        std::fs::write(
            directory.path().join(WINDOWS_FILE),
            concat!(
                r#"{"harness":"performance.measure","name":"m","pid":1,"tid":1,"start_ns":30,"end_ns":40,"time_per_iteration":null}"#,
                "\n",
                r#"{"harness":"tinybench","name":"a","pid":1,"tid":1,"start_ns":1,"end_ns":9,"time_per_iteration":{"mean":5.5,"stddev":null,"median":5,"min":1,"max":9,"samples":3}}"#,
                "\n",
                r#"{"harness":"performance.measure","name":"m","pid":1,"tid":1,"start_ns":10,"end_ns":20,"time_per_iteration":null}"#,
                "\n",
                r#"{"harness":"performance.measure","name":"m","pid":2,"tid":2,"start_ns":10,"end_ns":20,"time_per_iteration":null}"#,
                "\n{\"harness\":\"tinyb",
            ),
        )
        .unwrap();
        let (benchmarks, unreadable) = read_benchmarks(directory.path());
        assert_eq!(unreadable, 1);
        let described: Vec<(&str, u32, Vec<u64>)> = benchmarks
            .iter()
            .map(|benchmark| {
                (
                    benchmark.name.as_str(),
                    benchmark.pid,
                    benchmark.windows.iter().map(|window| window.start_ns).collect(),
                )
            })
            .collect();
        assert_eq!(described, [("m", 1, vec![10, 30]), ("a", 1, vec![1]), ("m", 2, vec![10])]);
        assert_eq!(benchmarks[1].time_per_iteration.unwrap().median, Some(5.0));
    }

    /// Each timing the harness took is kept with its window; timings not as
    /// the preload writes them are dropped, and the window kept.
    #[test]
    fn timings_are_kept_and_garbled_ones_lose_only_themselves() {
        let directory = tempfile::tempdir().unwrap();
        std::fs::write(
            directory.path().join(WINDOWS_FILE),
            concat!(
                r#"{"harness":"mitata","name":"a","pid":1,"tid":1,"start_ns":1,"end_ns":9,"time_per_iteration":null,"timings":{"of":"batch","count":2,"ns":[5,7]}}"#,
                "
",
                r#"{"harness":"mitata","name":"b","pid":1,"tid":1,"start_ns":10,"end_ns":19,"time_per_iteration":null,"timings":{"of":"sideways","count":"x"}}"#,
                "
",
            ),
        )
        .unwrap();
        let (benchmarks, unreadable) = read_benchmarks(directory.path());
        assert_eq!((benchmarks.len(), unreadable), (2, 0));
        let kept = benchmarks[0].timings.as_ref().unwrap();
        assert_eq!((kept.of, kept.count, kept.values()), (TimingUnit::Batch, 2, &[5.0, 7.0][..]));
        assert_eq!(benchmarks[1].timings, None);
        assert_eq!(benchmarks[1].windows, [Window { start_ns: 10, end_ns: 19 }]);
    }

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(duration(950.0), "950 ns");
        assert_eq!(duration(12_345.6), "12.3 µs");
        assert_eq!(duration(1_500_000.0), "1.50 ms");
    }
}
