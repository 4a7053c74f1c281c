//! `v8inline compare BASE HEAD`: two recordings (directories `record`
//! wrote), folded stacks or JSON reports compared. With benchmarks on both
//! sides (`benchmarks.json`), benchmark by benchmark: time per iteration,
//! then the functions whose self share moved beyond noise; else the whole
//! profile. Written as text, a markdown PR comment or GitHub annotations,
//! with differential flame graphs when asked.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::collapse::task_root::{TaskRoot, root_frame_name};
use crate::error::Error;
use crate::files::read_file;
use crate::output::annotations::SourceRoot;
use crate::output::compare::across::{BenchmarkRun, DuetRound};
use crate::output::compare::differential::{FoldedSide, differential_svg};
use crate::output::compare::noise::{Timing, Verdict};
use crate::output::compare::profile::SideProfile;
use crate::output::compare::runs::{DEFAULT_THRESHOLD, RoundCost, RunsChange, Schedule};
use crate::output::compare::{
    CompareError, KeyOptions, SuiteComparison, UnmatchedBenchmark, compare_benchmark_runs, html, is_json_report, render,
};
use crate::output::flamegraph::{FlameGraphStyle, FrameNote};

/// How the comparison is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComparisonFormat {
    /// Aligned text.
    Text,
    /// A pull request comment in markdown.
    Markdown,
    /// GitHub Actions warnings on the functions whose self time grew
    /// beyond noise.
    Github,
}

/// What to compare and how.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompareOptions {
    /// The recording (directory), folded stacks or JSON report before.
    pub base: PathBuf,
    /// The one after.
    pub head: PathBuf,
    /// The output's form.
    pub format: ComparisonFormat,
    /// Functions per benchmark (text, markdown) or annotations in all.
    pub top: usize,
    /// Annotations and locations are relative to this directory; `None`:
    /// the git toplevel of the working directory, else the working
    /// directory.
    pub source_root: Option<PathBuf>,
    /// Base's project root, overriding its recording.json (for folded
    /// stacks recorded elsewhere).
    pub base_root: Option<PathBuf>,
    /// Head's project root.
    pub head_root: Option<PathBuf>,
    /// Keep native frames apart instead of charging them to their
    /// JavaScript caller.
    pub separate_native: bool,
    /// Annotate only functions whose self share also grew by at least this
    /// share (0.005 is half a point).
    pub least_growth: f64,
    /// Over several runs per side: the least relative change of time per
    /// iteration that counts (0.05 is 5 %), for benchmarks and, by the
    /// own-time rule, for functions.
    pub threshold: f64,
    /// Also render differential flame graphs (folded stacks only).
    pub flame_graph: bool,
    /// How they are drawn.
    pub flame_graph_style: FlameGraphStyle,
    /// How long a round of runs took (`bench` knows): an undecided
    /// benchmark's forecast of the rounds that would decide it is then
    /// also said in minutes.
    pub seconds_per_round: Option<f64>,
    /// Further `bench` output directories (say, one per CI job) whose
    /// `base/` and `head/` runs join those of `base` and `head`: one
    /// verdict over all of them, a duet round paired within its output.
    pub merged_outputs: Vec<PathBuf>,
    /// Also render the comparison as a self-contained page
    /// ([`Comparison::html`]), to be written at this path: its links are
    /// relative to its directory.
    pub html: Option<PathBuf>,
    /// Where the caller writes the differential flame graph
    /// ([`Comparison::svg`], and each benchmark's at
    /// [`benchmark_svg_path`]): the page shows and links them.
    pub flame_graph_path: Option<PathBuf>,
    /// More files for the page to link (`bench`'s bench.json); each run's
    /// recording and each benchmark's files are linked anyway.
    pub html_files: Vec<PathBuf>,
}

impl CompareOptions {
    /// Compares `base` with `head` as text, 20 functions per table, no
    /// flame graph.
    pub fn new(base: PathBuf, head: PathBuf) -> CompareOptions {
        CompareOptions {
            base,
            head,
            format: ComparisonFormat::Text,
            top: 20,
            source_root: None,
            base_root: None,
            head_root: None,
            separate_native: false,
            least_growth: 0.0,
            threshold: DEFAULT_THRESHOLD,
            flame_graph: false,
            flame_graph_style: FlameGraphStyle::default(),
            seconds_per_round: None,
            merged_outputs: Vec::new(),
            html: None,
            flame_graph_path: None,
            html_files: Vec::new(),
        }
    }

    /// Compares the sides of several `bench` outputs as one: `OUT/base`
    /// against `OUT/head` of each, their runs judged together (see
    /// [`CompareOptions::merged_outputs`]). `None` without an output.
    pub fn merging(outputs: &[PathBuf]) -> Option<CompareOptions> {
        let (first, more) = outputs.split_first()?;
        let mut options = CompareOptions::new(first.join(BenchSide::Base.name()), first.join(BenchSide::Head.name()));
        options.merged_outputs = more.to_vec();
        Some(options)
    }
}

/// A side directory's list of runs, as `bench` writes it.
pub const RUNS_FILE: &str = "runs.json";

/// A side of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BenchSide {
    /// Before.
    Base,
    /// After.
    Head,
}

impl BenchSide {
    /// `base`, `head`: also its directory's name.
    pub fn name(self) -> &'static str {
        match self {
            BenchSide::Base => "base",
            BenchSide::Head => "head",
        }
    }
}

/// A comparison, rendered.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Comparison {
    /// The report or the annotations.
    pub text: String,
    /// Whether a benchmark (or without benchmarks, the profile) regressed
    /// beyond noise.
    pub regressed: bool,
    /// Whether a benchmark's verdict is undecided: over several runs, its
    /// change's interval holds both a change beyond the threshold and none.
    pub undecided: bool,
    /// Each benchmark's verdict, in head's order (`v8inline bench` adds
    /// rounds while one is undecided).
    pub benchmarks: Vec<BenchmarkOutcome>,
    /// The differential flame graph of the whole run, when asked for.
    pub svg: Option<Vec<u8>>,
    /// One per benchmark: its slug (`OUT-<slug>.svg`) and the graph.
    pub benchmark_svgs: Vec<BenchmarkSvg>,
    /// The page, when [`CompareOptions::html`] asked for it.
    pub html: Option<String>,
}

/// A benchmark's verdict.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BenchmarkOutcome {
    /// Its name, as the harness names it.
    pub name: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Over several runs per side: its change, interval and minimum
    /// detectable change.
    pub runs: Option<RunsChange>,
}

/// A benchmark's differential flame graph.
#[derive(Debug, Clone)]
pub struct BenchmarkSvg {
    /// The benchmark's name.
    pub name: String,
    /// Its file name part: the last component of its directory in
    /// benchmarks.json (`parse-small-js`).
    pub slug: String,
    /// The SVG.
    pub svg: Vec<u8>,
}

/// Why two profiles could not be compared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompareCommandError {
    /// A file that cannot be read.
    #[error(transparent)]
    Read(#[from] Error),
    /// A file that is neither folded stacks nor a JSON report.
    #[error(transparent)]
    Input(#[from] CompareError),
    /// A recording's JSON file that is not what `record` writes.
    #[error("{}: {message}", path.display())]
    Recording {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A differential flame graph of JSON reports.
    #[error("a differential flame graph needs two folded files, not JSON reports")]
    FlameGraphOfReports,
}

/// `recording.json`, as `record` writes it.
#[derive(Debug, Deserialize)]
struct RecordingFile {
    project_root: Option<PathBuf>,
    /// `node 26.12.1` (absent in recordings made before it).
    #[serde(default)]
    runtime: Option<String>,
}

/// `benchmarks.json`, as `record` writes it.
#[derive(Debug, Deserialize)]
struct BenchmarksFile {
    benchmarks: Vec<BenchmarkEntry>,
}

#[derive(Debug, Deserialize)]
struct BenchmarkEntry {
    name: String,
    /// Absent in results kept for their timings alone (testdata/bench52):
    /// the recording's own directory, which holds no profile then.
    #[serde(default)]
    directory: PathBuf,
    #[serde(default)]
    samples: Option<u64>,
    #[serde(default)]
    time_per_iteration: Option<TimePerIteration>,
    /// What its root stands for (absent in recordings made before it).
    #[serde(default)]
    root: Option<RootEntry>,
}

/// benchmarks.json's `root` of a benchmark.
#[derive(Debug, Deserialize)]
struct RootEntry {
    folded_frames: Vec<String>,
    task_found: bool,
}

#[derive(Debug, Deserialize)]
struct TimePerIteration {
    mean: f64,
    stddev: f64,
    samples: f64,
    #[serde(default)]
    median: Option<f64>,
    #[serde(default)]
    min: Option<f64>,
}

/// `runs.json` of a side directory, as `v8inline bench` writes it: the
/// recordings of one side, one per run.
#[derive(Debug, Deserialize)]
struct RunsFile {
    #[serde(default)]
    schedule: Schedule,
    runs: Vec<RunEntry>,
}

#[derive(Debug, Deserialize)]
struct RunEntry {
    /// The run's recording directory, relative to the side directory.
    directory: PathBuf,
    /// The round it ran in.
    #[serde(default)]
    round: Option<u32>,
}

/// One side as read: a recording, or a side directory's runs.
struct Side {
    /// What names it in titles and errors.
    path: PathBuf,
    /// Its recordings, one per run (one for a recording or a file).
    runs: Vec<Recording>,
}

impl Side {
    /// The first run's project root: where its locations are relative to.
    fn project_root(&self) -> Option<&Path> {
        self.runs.first().and_then(|run| run.project_root.as_deref())
    }

    /// Whether every run has benchmarks.
    fn has_benchmarks(&self) -> bool {
        self.runs.iter().all(|run| !run.benchmarks.is_empty())
    }

    /// The whole profiles of every run, one after the other (for the
    /// differential flame graph: counts of folded lines add up).
    fn whole_text(&self) -> Result<String, CompareCommandError> {
        let mut text = String::new();
        for run in &self.runs {
            text.push_str(&run.whole_text()?);
            if !text.ends_with('\n') {
                text.push('\n');
            }
        }
        Ok(text)
    }
}

/// One recording as read: its whole profile and its benchmarks.
struct Recording {
    /// The recording's directory (`None` for a file).
    directory: Option<PathBuf>,
    /// The whole run's folded stacks or JSON report file.
    text_path: PathBuf,
    project_root: Option<PathBuf>,
    benchmarks: Vec<SideBenchmark>,
    /// The round it ran in beside the other side's run (a duet).
    duet_round: Option<DuetRound>,
    /// The runtime recording.json names (`node 26.12.1`).
    runtime: Option<String>,
}

impl Recording {
    /// The whole run's folded stacks or JSON report. A recording kept for
    /// its benchmarks alone (CI artifacts, testdata) may leave out the
    /// whole run's profile: their profiles together stand for it.
    fn whole_text(&self) -> Result<String, CompareCommandError> {
        if !self.text_path.exists() && !self.benchmarks.is_empty() {
            let mut text = String::new();
            for benchmark in &self.benchmarks {
                text.push_str(&String::from_utf8_lossy(&read_file(&benchmark.folded_path)?));
                if !text.ends_with('\n') {
                    text.push('\n');
                }
            }
            return Ok(text);
        }
        Ok(String::from_utf8_lossy(&read_file(&self.text_path)?).into_owned())
    }
}

struct SideBenchmark {
    name: String,
    /// What its root frame stands for: the tooltip of its differential
    /// graph's root.
    root: Option<TaskRoot>,
    /// Its directory in benchmarks.json: its file names come from it.
    directory: PathBuf,
    folded_path: PathBuf,
    samples: Option<u64>,
    timing: Option<Timing>,
}

/// Reads a JSON file of a recording.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, CompareCommandError> {
    let bytes = read_file(path)?;
    serde_json::from_slice(&bytes)
        .map_err(|error| CompareCommandError::Recording { path: path.to_owned(), message: error.to_string() })
}

/// The profile file of a recording directory: `profile.folded`, or its
/// gzipped copy.
fn folded_in(directory: &Path) -> PathBuf {
    let plain = directory.join(crate::commands::record::FOLDED_FILE);
    let gzipped = directory.join(format!("{}.gz", crate::commands::record::FOLDED_FILE));
    if !plain.exists() && gzipped.exists() { gzipped } else { plain }
}

/// Reads a side: a side directory (`runs.json`, one recording per run), a
/// recording directory, or one file; then the same side of each further
/// `bench` output, its runs added as those of output 1, 2...
fn read_merged_side(
    path: &Path,
    side: BenchSide,
    merged_outputs: &[PathBuf],
    root: Option<&Path>,
) -> Result<Side, CompareCommandError> {
    let mut merged = read_side(path, 0, root)?;
    for (output, directory) in (1u32..).zip(merged_outputs) {
        let more = directory.join(side.name());
        if !more.join(RUNS_FILE).exists() {
            return Err(CompareCommandError::Recording {
                path: more,
                message: "not a side directory of `v8inline bench` (no runs.json)".to_string(),
            });
        }
        merged.runs.extend(read_side(&more, output, root)?.runs);
    }
    Ok(merged)
}

/// Reads a side: a side directory (`runs.json`, one recording per run), a
/// recording directory, or one file. `output` numbers the merged `bench`
/// output it is from: a duet round pairs within it.
fn read_side(path: &Path, output: u32, root: Option<&Path>) -> Result<Side, CompareCommandError> {
    let runs_path = path.join(RUNS_FILE);
    if path.is_dir() && runs_path.exists() {
        let runs_file: RunsFile = read_json(&runs_path)?;
        if runs_file.runs.is_empty() {
            return Err(CompareCommandError::Recording { path: runs_path, message: "no runs".to_string() });
        }
        let runs = runs_file
            .runs
            .iter()
            .map(|run| {
                let mut recording = read_recording(&path.join(&run.directory), root)?;
                recording.duet_round =
                    run.round.filter(|_| runs_file.schedule == Schedule::Duet).map(|round| DuetRound { output, round });
                Ok(recording)
            })
            .collect::<Result<Vec<Recording>, CompareCommandError>>()?;
        return Ok(Side { path: path.to_owned(), runs });
    }
    Ok(Side { path: path.to_owned(), runs: vec![read_recording(path, root)?] })
}

/// Reads one recording: a directory `record` wrote, or one file.
fn read_recording(path: &Path, root: Option<&Path>) -> Result<Recording, CompareCommandError> {
    if !path.is_dir() {
        // Read now, so that a missing file is named at once.
        read_file(path)?;
        return Ok(Recording {
            directory: None,
            text_path: path.to_owned(),
            project_root: root.map(Path::to_path_buf),
            benchmarks: Vec::new(),
            duet_round: None,
            runtime: None,
        });
    }
    let recording_path = path.join("recording.json");
    let (recorded_root, runtime) = if recording_path.exists() {
        let file = read_json::<RecordingFile>(&recording_path)?;
        (file.project_root, file.runtime)
    } else {
        (None, None)
    };
    let benchmarks_path = path.join("benchmarks.json");
    let benchmarks = if benchmarks_path.exists() {
        read_json::<BenchmarksFile>(&benchmarks_path)?
            .benchmarks
            .into_iter()
            .map(|entry| SideBenchmark {
                root: entry.root.map(|root| TaskRoot {
                    name: root_frame_name(&entry.name),
                    folded_frames: root.folded_frames,
                    task_found: root.task_found,
                }),
                folded_path: folded_in(&path.join(&entry.directory)),
                directory: entry.directory,
                name: entry.name,
                samples: entry.samples,
                timing: entry.time_per_iteration.map(|time| Timing {
                    mean: time.mean,
                    stddev: time.stddev,
                    samples: time.samples,
                    median: time.median,
                    min: time.min,
                    cpu_per_iteration: None,
                }),
            })
            .collect()
    } else {
        Vec::new()
    };
    let text_path = folded_in(path);
    if !text_path.exists() && benchmarks.is_empty() {
        // Named as a missing file.
        read_file(&text_path)?;
    }
    Ok(Recording {
        directory: Some(path.to_owned()),
        text_path,
        project_root: root.map(Path::to_path_buf).or(recorded_root),
        benchmarks,
        duet_round: None,
        runtime,
    })
}

/// One run of a result as `history add` reads it (a recording directory,
/// or one run of a side directory).
pub(crate) struct ResultRun {
    /// The run's recording directory.
    pub(crate) directory: PathBuf,
    /// The runtime recording.json names (`node 26.12.1`).
    pub(crate) runtime: Option<String>,
    /// Its benchmarks, in benchmarks.json's order.
    pub(crate) benchmarks: Vec<ResultBenchmark>,
}

/// A benchmark of one run, read as `compare` reads it.
pub(crate) struct ResultBenchmark {
    /// Its name, as the harness names it.
    pub(crate) name: String,
    /// The samples in its windows (benchmarks.json).
    pub(crate) samples: Option<u64>,
    /// Its timing, with the profile's CPU time per iteration as `compare`
    /// computes it when the profile was kept.
    pub(crate) timing: Option<Timing>,
    /// Its profile, when kept.
    pub(crate) profile: Option<SideProfile>,
}

/// Reads a result for `history add`: a side directory's runs or one
/// recording, each benchmark's timing and (when kept) profile, functions
/// keyed relative to each run's project root.
pub(crate) fn read_result(path: &Path) -> Result<Vec<ResultRun>, CompareCommandError> {
    let side = read_side(path, 0, None)?;
    side.runs
        .iter()
        .map(|recording| {
            let keys = KeyOptions {
                project_root: recording.project_root.as_deref().map(SourceRoot::new),
                separate_native: false,
            };
            let benchmarks = recording
                .benchmarks
                .iter()
                .map(|benchmark| {
                    if !benchmark.folded_path.exists() {
                        return Ok(ResultBenchmark {
                            name: benchmark.name.clone(),
                            samples: benchmark.samples,
                            timing: benchmark.timing,
                            profile: None,
                        });
                    }
                    let run = read_benchmark_run(recording, benchmark, &keys)?;
                    Ok(ResultBenchmark {
                        name: benchmark.name.clone(),
                        samples: benchmark.samples,
                        timing: run.timing,
                        profile: Some(run.profile),
                    })
                })
                .collect::<Result<Vec<ResultBenchmark>, CompareCommandError>>()?;
            let directory = recording.text_path.parent().map(Path::to_path_buf).unwrap_or_default();
            Ok(ResultRun { directory, runtime: recording.runtime.clone(), benchmarks })
        })
        .collect()
}

/// A benchmark's timing with the profile's CPU time per iteration: the
/// weight of its samples (cpu-clock periods, ns) over the iterations the
/// harness timed. Only when `benchmarks.json` counts the samples in the
/// benchmark's windows: then its profile holds those windows alone, not
/// the whole run.
fn with_cpu_per_iteration(benchmark: &SideBenchmark, profile: &SideProfile) -> Option<Timing> {
    let mut timing = benchmark.timing?;
    if benchmark.samples.is_some_and(|samples| samples > 0) && timing.samples >= 1.0 && profile.total_weight > 0 {
        timing.cpu_per_iteration = Some(profile.total_weight as f64 / timing.samples);
    }
    Some(timing)
}

/// The git toplevel of `directory` (the working directory when `None`).
fn git_toplevel(directory: Option<&Path>) -> Option<PathBuf> {
    let mut command = std::process::Command::new("git");
    if let Some(directory) = directory {
        command.arg("-C").arg(directory);
    }
    let output = command.args(["rev-parse", "--show-toplevel"]).stderr(std::process::Stdio::null()).output().ok()?;
    let text = String::from_utf8(output.stdout).ok().filter(|_| output.status.success())?;
    let toplevel = PathBuf::from(text.trim_end());
    (!toplevel.as_os_str().is_empty()).then_some(toplevel)
}

/// Where locations and annotations' `file=` are relative to: `--source-root`
/// when given; else the git toplevel of head's project root (the repository
/// head's code is in), else head's project root (recording.json), else the
/// git toplevel of the working directory. Each script takes the first of
/// these it is under; one under none stays relative to its own project root.
fn location_root(explicit: Option<&Path>, head_project_root: Option<&Path>) -> SourceRoot {
    if let Some(explicit) = explicit {
        return SourceRoot::new(explicit);
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(project_root) = head_project_root {
        roots.extend(git_toplevel(Some(project_root)));
        roots.push(project_root.to_path_buf());
    }
    roots.extend(git_toplevel(None));
    let mut roots = roots.into_iter();
    let Some(first) = roots.next() else {
        // Nothing to be relative to: scripts stay relative to their project
        // root (a root no script is under).
        return SourceRoot::new(Path::new("/nonexistent-v8inline-source-root"));
    };
    roots.fold(SourceRoot::new(&first), |root, fallback| root.or_else(&fallback))
}

/// A benchmark's file name part: the last component of its directory in
/// benchmarks.json (`benchmarks/parse-small-js` → `parse-small-js`), or for
/// a recording of one benchmark at its root (`.`), [`slug`] of its name.
fn file_part(benchmark: &SideBenchmark) -> String {
    match benchmark.directory.file_name().and_then(|name| name.to_str()) {
        Some(name) if !name.is_empty() && name != "." => name.to_string(),
        _ => slug(&benchmark.name),
    }
}

/// A benchmark's name as a file name part: letters and digits kept
/// (lowercased), every other run of characters one `-`.
pub fn slug(name: &str) -> String {
    let mut slug = String::new();
    for character in name.chars() {
        if character.is_alphanumeric() {
            slug.extend(character.to_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() { "benchmark".to_string() } else { slug }
}

/// Where a benchmark's differential flame graph goes: `OUT-<slug>.svg`
/// beside `OUT.svg`.
pub fn benchmark_svg_path(svg_path: &Path, slug: &str) -> PathBuf {
    let stem = svg_path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    let extension = svg_path.extension().map(|extension| extension.to_string_lossy().into_owned());
    let name = match extension {
        Some(extension) => format!("{stem}-{slug}.{extension}"),
        None => format!("{stem}-{slug}"),
    };
    svg_path.with_file_name(name)
}

/// Each benchmark's name in the order of a side's runs.
fn benchmark_names(side: &Side) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for run in &side.runs {
        for benchmark in &run.benchmarks {
            if !names.contains(&benchmark.name.as_str()) {
                names.push(&benchmark.name);
            }
        }
    }
    names
}

/// The benchmark named `name` in each run of `side` that has it.
fn runs_of<'side>(side: &'side Side, name: &str) -> Vec<(&'side Recording, &'side SideBenchmark)> {
    side.runs
        .iter()
        .filter_map(|run| Some((run, run.benchmarks.iter().find(|benchmark| benchmark.name == name)?)))
        .collect()
}

/// One benchmark's profile and timing in one run.
fn read_benchmark_run(
    recording: &Recording,
    benchmark: &SideBenchmark,
    keys: &KeyOptions,
) -> Result<BenchmarkRun, CompareCommandError> {
    let text = String::from_utf8_lossy(&read_file(&benchmark.folded_path)?).into_owned();
    let mut profile = SideProfile::parse(&text, &benchmark.folded_path, keys)?;
    // The harness-side count of samples, when record gave it, fixes one
    // sample's weight.
    if let Some(samples) = benchmark.samples.filter(|samples| *samples > 0) {
        profile.sample_weight = (profile.total_weight / samples).max(1);
    }
    let timing = with_cpu_per_iteration(benchmark, &profile);
    Ok(BenchmarkRun { profile, timing, duet_round: recording.duet_round })
}

/// Reads both sides and renders their comparison.
pub fn compare_files(options: &CompareOptions) -> Result<Comparison, CompareCommandError> {
    let base = read_merged_side(&options.base, BenchSide::Base, &options.merged_outputs, options.base_root.as_deref())?;
    let head = read_merged_side(&options.head, BenchSide::Head, &options.merged_outputs, options.head_root.as_deref())?;
    let key_options = |recording: &Recording| KeyOptions {
        project_root: recording.project_root.as_deref().map(SourceRoot::new),
        separate_native: options.separate_native,
    };
    let with_benchmarks = base.has_benchmarks() && head.has_benchmarks();
    let mut compared = SuiteComparison {
        benchmarks: Vec::new(),
        unmatched: Vec::new(),
        whole: None,
        base_runs: base.runs.len(),
        head_runs: head.runs.len(),
        round_cost: RoundCost {
            seconds: options.seconds_per_round,
            parallel_outputs: 1 + options.merged_outputs.len(),
        },
    };
    let mut drawn: Vec<(String, String, Vec<&SideBenchmark>, Vec<&SideBenchmark>)> = Vec::new();
    if with_benchmarks {
        let (base_names, head_names) = (benchmark_names(&base), benchmark_names(&head));
        for name in &head_names {
            let (base_runs, head_runs) = (runs_of(&base, name), runs_of(&head, name));
            if base_runs.is_empty() {
                compared.unmatched.push(UnmatchedBenchmark { name: name.to_string(), in_head: true });
                continue;
            }
            let read = |runs: &[(&Recording, &SideBenchmark)]| {
                runs.iter()
                    .map(|(recording, benchmark)| read_benchmark_run(recording, benchmark, &key_options(recording)))
                    .collect::<Result<Vec<BenchmarkRun>, CompareCommandError>>()
            };
            compared.benchmarks.push(compare_benchmark_runs(
                name,
                &read(&base_runs)?,
                &read(&head_runs)?,
                options.threshold,
            ));
            let part = file_part(head_runs[0].1);
            let base_benchmarks = base_runs.into_iter().map(|(_, benchmark)| benchmark).collect();
            let head_benchmarks = head_runs.into_iter().map(|(_, benchmark)| benchmark).collect();
            drawn.push((name.to_string(), part, base_benchmarks, head_benchmarks));
        }
        for name in base_names.iter().filter(|name| !head_names.contains(name)) {
            compared.unmatched.push(UnmatchedBenchmark { name: name.to_string(), in_head: false });
        }
    } else {
        let read = |side: &Side| {
            side.runs
                .iter()
                .map(|run| {
                    let text = run.whole_text()?;
                    let profile = SideProfile::parse(&text, &run.text_path, &key_options(run))?;
                    Ok(BenchmarkRun { profile, timing: None, duet_round: run.duet_round })
                })
                .collect::<Result<Vec<BenchmarkRun>, CompareCommandError>>()
        };
        compared.whole = Some(compare_benchmark_runs("", &read(&base)?, &read(&head)?, options.threshold).profile);
    }
    let source_root = location_root(options.source_root.as_deref(), head.project_root());
    let text = match options.format {
        ComparisonFormat::Text => render::text(&compared, &source_root, options.top),
        ComparisonFormat::Markdown => render::markdown(&compared, &source_root, options.top),
        ComparisonFormat::Github => render::annotations(&compared, &source_root, options.least_growth, options.top)
            .iter()
            .map(|annotation| annotation.command() + "\n")
            .collect(),
    };
    let mut text = text;
    if let Some(page_path) = options.html.as_deref().filter(|_| options.format == ComparisonFormat::Markdown) {
        // Where a verdict is read, a word on where to see it plotted.
        let name = page_path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let line = format!(
            "\nEach benchmark's runs plotted, with the functions that moved and the flame graphs: `{}`.\n",
            name.replace('`', "'")
        );
        if text.len() + line.len() <= render::MARKDOWN_LIMIT {
            text.push_str(&line);
        }
    }
    let mut svg = None;
    let mut benchmark_svgs = Vec::new();
    if options.flame_graph {
        let (base_text, head_text) = (base.whole_text()?, head.whole_text()?);
        if is_json_report(&base_text) || is_json_report(&head_text) {
            return Err(CompareCommandError::FlameGraphOfReports);
        }
        let base_root = base.project_root().and_then(Path::to_str);
        let head_root = head.project_root().and_then(Path::to_str);
        let draw = |base_text: &str, head_text: &str, title: String, root: Option<&TaskRoot>| {
            let note = root.map(|root| FrameNote { frame: root.name.clone(), note: root.describe() });
            differential_svg(
                FoldedSide { folded: base_text, project_root: base_root },
                FoldedSide { folded: head_text, project_root: head_root },
                &title,
                options.flame_graph_style,
                note.as_ref(),
            )
            // Rendering into memory cannot fail.
            .unwrap_or_default()
        };
        let title = format!("v8inline: {} → {}", base.path.display(), head.path.display());
        svg = Some(draw(&base_text, &head_text, title.clone(), None));
        let folded = |benchmarks: &[&SideBenchmark]| -> Result<String, CompareCommandError> {
            let mut text = String::new();
            for benchmark in benchmarks {
                text.push_str(&String::from_utf8_lossy(&read_file(&benchmark.folded_path)?));
                if !text.ends_with('\n') {
                    text.push('\n');
                }
            }
            Ok(text)
        };
        let mut slugs = std::collections::BTreeSet::new();
        for (name, part, base_benchmarks, head_benchmarks) in &drawn {
            // Parts that are alike (two recordings' `.`) get `-2`, `-3`...
            let mut unique = part.clone();
            let mut suffix = 1;
            while !slugs.insert(unique.clone()) {
                suffix += 1;
                unique = format!("{part}-{suffix}");
            }
            // The root's tooltip as head's first run recorded it.
            let root = head_benchmarks.first().and_then(|benchmark| benchmark.root.as_ref());
            let graph = draw(&folded(base_benchmarks)?, &folded(head_benchmarks)?, format!("{title}: {name}"), root);
            benchmark_svgs.push(BenchmarkSvg { name: name.clone(), slug: unique, svg: graph });
        }
    }
    let outcomes = compared
        .benchmarks
        .iter()
        .map(|benchmark| BenchmarkOutcome {
            name: benchmark.name.clone(),
            verdict: benchmark.verdict(),
            // The statistic's change, with the verdict over runs (its
            // CPU guard's too, where it has one).
            runs: benchmark.runs.as_ref().map(|runs| RunsChange { verdict: runs.verdict(), ..runs.change }),
        })
        .collect();
    let html = options.html.as_deref().map(|page_path| {
        let files = page_files(options, page_path, [&base, &head], &benchmark_svgs);
        html::page(&compared, &source_root, options.top, &files)
    });
    Ok(Comparison {
        text,
        regressed: compared.regressed(),
        undecided: compared.undecided(),
        benchmarks: outcomes,
        svg,
        benchmark_svgs,
        html,
    })
}

/// The regular files directly in `directory`, by name (not the temporary
/// files of a write under way).
fn files_in(directory: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(directory) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .map(|entry| entry.path())
        .collect();
    files.sort();
    files
}

/// What the page at `page_path` links to: the flame graphs the caller
/// writes, `html_files`, each side's runs.json, each run's files, and each
/// benchmark's files in each run; relative to the page's directory.
fn page_files(options: &CompareOptions, page_path: &Path, sides: [&Side; 2], svgs: &[BenchmarkSvg]) -> html::PageFiles {
    let directory = match page_path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let link = |path: &Path| html::relative_link(&directory, path);
    let mut files = html::PageFiles {
        compared: format!("{} → {}", sides[0].path.display(), sides[1].path.display()),
        ..Default::default()
    };
    if let Some(svg_path) = options.flame_graph_path.as_deref().filter(|_| options.flame_graph) {
        files.flame_graph = Some(link(svg_path));
        files.benchmark_flame_graphs =
            svgs.iter().map(|svg| (svg.name.clone(), link(&benchmark_svg_path(svg_path, &svg.slug)))).collect();
    }
    files.files.extend(options.html_files.iter().map(|path| link(path)));
    for side in sides {
        let runs_path = side.path.join("runs.json");
        if runs_path.is_file() {
            files.files.push(link(&runs_path));
        }
        for run in &side.runs {
            match &run.directory {
                Some(run_directory) => files.files.extend(files_in(run_directory).iter().map(|path| link(path))),
                None => files.files.push(link(&run.text_path)),
            }
            for benchmark in &run.benchmarks {
                let benchmark_directory = benchmark.folded_path.parent().map(Path::to_path_buf).unwrap_or_default();
                let own = if Some(&benchmark_directory) == run.directory.as_ref() {
                    vec![benchmark.folded_path.clone()]
                } else {
                    files_in(&benchmark_directory)
                };
                let links = own.iter().map(|path| link(path));
                match files.benchmark_files.iter_mut().find(|(name, _)| *name == benchmark.name) {
                    Some((_, existing)) => existing.extend(links),
                    None => files.benchmark_files.push((benchmark.name.clone(), links.collect())),
                }
            }
        }
    }
    files
}
