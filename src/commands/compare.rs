//! `v8inline compare BASE HEAD`: two recordings (directories `record`
//! wrote), folded stacks or JSON reports compared. With benchmarks on both
//! sides (`benchmarks.json`), benchmark by benchmark: time per iteration,
//! then the functions whose self share moved beyond noise; else the whole
//! profile. Written as text, a markdown PR comment or GitHub annotations,
//! with differential flame graphs when asked.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::Error;
use crate::files::read_file;
use crate::output::annotations::SourceRoot;
use crate::output::compare::differential::{FoldedSide, differential_svg};
use crate::output::compare::noise::Timing;
use crate::output::compare::profile::SideProfile;
use crate::output::compare::{
    CompareError, KeyOptions, SuiteComparison, UnmatchedBenchmark, compare_benchmark, compare_profiles, is_json_report,
    render,
};
use crate::output::flamegraph::FlameGraphStyle;

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
    /// Also render differential flame graphs (folded stacks only).
    pub flame_graph: bool,
    /// How they are drawn.
    pub flame_graph_style: FlameGraphStyle,
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
            flame_graph: false,
            flame_graph_style: FlameGraphStyle::default(),
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
    /// The differential flame graph of the whole run, when asked for.
    pub svg: Option<Vec<u8>>,
    /// One per benchmark: its slug (`OUT-<slug>.svg`) and the graph.
    pub benchmark_svgs: Vec<BenchmarkSvg>,
}

/// A benchmark's differential flame graph.
#[derive(Debug, Clone)]
pub struct BenchmarkSvg {
    /// The benchmark's name made a file name part: `parse-small-js`.
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
}

/// `benchmarks.json`, as `record` writes it.
#[derive(Debug, Deserialize)]
struct BenchmarksFile {
    benchmarks: Vec<BenchmarkEntry>,
}

#[derive(Debug, Deserialize)]
struct BenchmarkEntry {
    name: String,
    directory: PathBuf,
    #[serde(default)]
    samples: Option<u64>,
    #[serde(default)]
    time_per_iteration: Option<TimePerIteration>,
}

#[derive(Debug, Deserialize)]
struct TimePerIteration {
    mean: f64,
    stddev: f64,
    samples: f64,
    #[serde(default)]
    median: Option<f64>,
}

/// One side as read: its whole profile and its benchmarks.
struct Side {
    /// What names it in titles and errors.
    path: PathBuf,
    /// The whole run's folded stacks or JSON report, and its file.
    text: String,
    text_path: PathBuf,
    project_root: Option<PathBuf>,
    benchmarks: Vec<SideBenchmark>,
}

struct SideBenchmark {
    name: String,
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

fn read_side(path: &Path, root: Option<&Path>) -> Result<Side, CompareCommandError> {
    if !path.is_dir() {
        let text = String::from_utf8_lossy(&read_file(path)?).into_owned();
        return Ok(Side {
            path: path.to_owned(),
            text,
            text_path: path.to_owned(),
            project_root: root.map(Path::to_path_buf),
            benchmarks: Vec::new(),
        });
    }
    let recording_path = path.join("recording.json");
    let recorded_root =
        if recording_path.exists() { read_json::<RecordingFile>(&recording_path)?.project_root } else { None };
    let benchmarks_path = path.join("benchmarks.json");
    let benchmarks = if benchmarks_path.exists() {
        read_json::<BenchmarksFile>(&benchmarks_path)?
            .benchmarks
            .into_iter()
            .map(|entry| SideBenchmark {
                folded_path: folded_in(&path.join(&entry.directory)),
                name: entry.name,
                samples: entry.samples,
                timing: entry.time_per_iteration.map(|time| Timing {
                    mean: time.mean,
                    stddev: time.stddev,
                    samples: time.samples,
                    median: time.median,
                    cpu_per_iteration: None,
                }),
            })
            .collect()
    } else {
        Vec::new()
    };
    let text_path = folded_in(path);
    // A recording kept for its benchmarks alone (CI artifacts, testdata)
    // may leave out the whole run's profile: their profiles together stand
    // for it (the whole-run flame graph, and the profile comparison when the
    // other side has no benchmarks).
    let text = if !text_path.exists() && !benchmarks.is_empty() {
        let mut text = String::new();
        for benchmark in &benchmarks {
            text.push_str(&String::from_utf8_lossy(&read_file(&benchmark.folded_path)?));
            if !text.ends_with('\n') {
                text.push('\n');
            }
        }
        text
    } else {
        String::from_utf8_lossy(&read_file(&text_path)?).into_owned()
    };
    Ok(Side {
        path: path.to_owned(),
        text,
        text_path,
        project_root: root.map(Path::to_path_buf).or(recorded_root),
        benchmarks,
    })
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

/// The git toplevel of the working directory, else the working directory.
fn default_source_root() -> PathBuf {
    let toplevel = std::process::Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|text| PathBuf::from(text.trim_end()));
    toplevel.filter(|path| !path.as_os_str().is_empty()).unwrap_or_else(|| PathBuf::from("."))
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

/// Reads both sides and renders their comparison.
pub fn compare_files(options: &CompareOptions) -> Result<Comparison, CompareCommandError> {
    let base = read_side(&options.base, options.base_root.as_deref())?;
    let head = read_side(&options.head, options.head_root.as_deref())?;
    let key_options = |side: &Side| KeyOptions {
        project_root: side.project_root.as_deref().map(SourceRoot::new),
        separate_native: options.separate_native,
    };
    let (base_keys, head_keys) = (key_options(&base), key_options(&head));
    let with_benchmarks = !base.benchmarks.is_empty() && !head.benchmarks.is_empty();
    let mut compared = SuiteComparison { benchmarks: Vec::new(), unmatched: Vec::new(), whole: None };
    let mut benchmark_texts: Vec<(String, String, String)> = Vec::new();
    if with_benchmarks {
        for head_benchmark in &head.benchmarks {
            let Some(base_benchmark) = base.benchmarks.iter().find(|benchmark| benchmark.name == head_benchmark.name)
            else {
                compared.unmatched.push(UnmatchedBenchmark { name: head_benchmark.name.clone(), in_head: true });
                continue;
            };
            let read =
                |benchmark: &SideBenchmark, keys: &KeyOptions| -> Result<(String, SideProfile), CompareCommandError> {
                    let text = String::from_utf8_lossy(&read_file(&benchmark.folded_path)?).into_owned();
                    let mut profile = SideProfile::parse(&text, &benchmark.folded_path, keys)?;
                    // The harness-side count of samples, when record gave it,
                    // fixes one sample's weight.
                    if let Some(samples) = benchmark.samples.filter(|samples| *samples > 0) {
                        profile.sample_weight = (profile.total_weight / samples).max(1);
                    }
                    Ok((text, profile))
                };
            let (base_text, base_profile) = read(base_benchmark, &base_keys)?;
            let (head_text, head_profile) = read(head_benchmark, &head_keys)?;
            compared.benchmarks.push(compare_benchmark(
                &head_benchmark.name,
                with_cpu_per_iteration(base_benchmark, &base_profile),
                with_cpu_per_iteration(head_benchmark, &head_profile),
                compare_profiles(&base_profile, &head_profile),
            ));
            benchmark_texts.push((head_benchmark.name.clone(), base_text, head_text));
        }
        for base_benchmark in &base.benchmarks {
            if !head.benchmarks.iter().any(|benchmark| benchmark.name == base_benchmark.name) {
                compared.unmatched.push(UnmatchedBenchmark { name: base_benchmark.name.clone(), in_head: false });
            }
        }
    } else {
        let base_profile = SideProfile::parse(&base.text, &base.text_path, &base_keys)?;
        let head_profile = SideProfile::parse(&head.text, &head.text_path, &head_keys)?;
        compared.whole = Some(compare_profiles(&base_profile, &head_profile));
    }
    let source_root = SourceRoot::new(&options.source_root.clone().unwrap_or_else(default_source_root));
    let text = match options.format {
        ComparisonFormat::Text => render::text(&compared, &source_root, options.top),
        ComparisonFormat::Markdown => render::markdown(&compared, &source_root, options.top),
        ComparisonFormat::Github => render::annotations(&compared, &source_root, options.least_growth, options.top)
            .iter()
            .map(|annotation| annotation.command() + "\n")
            .collect(),
    };
    let mut svg = None;
    let mut benchmark_svgs = Vec::new();
    if options.flame_graph {
        if is_json_report(&base.text) || is_json_report(&head.text) {
            return Err(CompareCommandError::FlameGraphOfReports);
        }
        let base_root = base.project_root.as_deref().and_then(Path::to_str);
        let head_root = head.project_root.as_deref().and_then(Path::to_str);
        let draw = |base_text: &str, head_text: &str, title: String| {
            differential_svg(
                FoldedSide { folded: base_text, project_root: base_root },
                FoldedSide { folded: head_text, project_root: head_root },
                &title,
                options.flame_graph_style,
            )
            // Rendering into memory cannot fail.
            .unwrap_or_default()
        };
        let title = format!("v8inline: {} → {}", base.path.display(), head.path.display());
        svg = Some(draw(&base.text, &head.text, title.clone()));
        let mut slugs = std::collections::BTreeSet::new();
        for (name, base_text, head_text) in &benchmark_texts {
            // Names that slug alike (`a b`, `a-b`) get `-2`, `-3`...
            let mut unique = slug(name);
            let mut suffix = 1;
            while !slugs.insert(unique.clone()) {
                suffix += 1;
                unique = format!("{}-{suffix}", slug(name));
            }
            benchmark_svgs
                .push(BenchmarkSvg { slug: unique, svg: draw(base_text, head_text, format!("{title}: {name}")) });
        }
    }
    Ok(Comparison { text, regressed: compared.regressed(), svg, benchmark_svgs })
}
