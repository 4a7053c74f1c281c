//! The outputs of a job, chosen in the library: a caller (the main job,
//! `record`) lists the [`OutputRequest`]s it wants, [`run`] folds the input
//! and writes each of them. The renderers (`crate::output`) only turn the
//! finished model into bytes: the folded text, the [`StackProfile`] and the
//! [`Timeline`] the fold built.
//!
//! A new output is one renderer plus one variant of [`OutputRequest`].

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{FoldOptions, FoldedProfile, SampleInput, fold, fold_all};
use crate::collapse::CollapseSummary;
use crate::diagnostics::Diagnostics;
use crate::files::replace_file;
use crate::model::stack_profile::StackProfile;
use crate::model::timeline::Timeline;
use crate::output::annotations::{SourceRoot, github_annotations, markdown_summary};
use crate::output::cpuprofile::{CpuProfile, CpuProfileOptions, ThreadSelection, ThreadSelectionError};
use crate::output::firefox::{firefox_profile, write_firefox_profile};
use crate::output::flamegraph::{FlameGraphStyle, SvgOptions, write_svg};
use crate::output::json::JsonReport;
use crate::output::pprof::write_pprof;
use crate::output::report::{Report, WeightUnit};
use crate::output::stats::{code_log_report, native_frames_line, stats_report};
use crate::v8::expand::ExpansionStats;

/// Where a text output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output (at most one output of a job).
    StandardOutput,
    /// A file, replaced.
    File(PathBuf),
    /// A file, appended to (as `$GITHUB_STEP_SUMMARY` wants).
    AppendTo(PathBuf),
}

/// One output a job writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputRequest {
    /// The folded stacks, as `inferno-collapse-perf` writes them.
    Folded(Destination),
    /// A flame graph SVG of the folded stacks.
    FlameGraph {
        /// The file.
        path: PathBuf,
        /// How it is drawn.
        style: FlameGraphStyle,
    },
    /// A pprof profile (gzipped `profile.proto`).
    Pprof(PathBuf),
    /// The JSON report per function and source line.
    ReportJson(Destination),
    /// A markdown summary of the top functions.
    SummaryMarkdown {
        /// Where it goes.
        to: Destination,
        /// Rows per table.
        top: usize,
        /// Paths are shown relative to this directory.
        source_root: PathBuf,
    },
    /// GitHub Actions annotations on the hottest functions and lines.
    GithubAnnotations {
        /// Where they go.
        to: Destination,
        /// At most this many.
        top: usize,
        /// Only files under this directory, relative to it.
        source_root: PathBuf,
    },
    /// A Chrome `.cpuprofile` of one thread.
    CpuProfile {
        /// The file.
        path: PathBuf,
        /// Which thread.
        thread: ThreadSelection,
        /// Only JavaScript frames, as V8's own profiler keeps.
        javascript_only: bool,
    },
    /// A Firefox Profiler profile of every thread; gzipped when the file
    /// name ends in `.gz`.
    FirefoxProfile(PathBuf),
    /// The counts of `--stats`, handed to the caller as text
    /// ([`RunEvent::Stats`]).
    Stats,
}

impl OutputRequest {
    /// Whether the output is made from the detailed stacks
    /// ([`FoldOptions::record_details`]).
    pub fn needs_details(&self) -> bool {
        matches!(
            self,
            OutputRequest::Pprof(_)
                | OutputRequest::ReportJson(_)
                | OutputRequest::SummaryMarkdown { .. }
                | OutputRequest::GithubAnnotations { .. }
        )
    }

    /// Whether the output is made from every sample in time order
    /// ([`FoldOptions::timeline`]).
    pub fn needs_timeline(&self) -> bool {
        matches!(self, OutputRequest::CpuProfile { .. } | OutputRequest::FirefoxProfile(_))
    }

    /// The command line's option for this output.
    pub fn option_name(&self) -> &'static str {
        match self {
            OutputRequest::Folded(_) => "--output",
            OutputRequest::FlameGraph { .. } => "--flamegraph",
            OutputRequest::Pprof(_) => "--pprof",
            OutputRequest::ReportJson(_) => "--report",
            OutputRequest::SummaryMarkdown { .. } => "--summary",
            OutputRequest::GithubAnnotations { .. } => "--annotate",
            OutputRequest::CpuProfile { .. } => "--cpuprofile",
            OutputRequest::FirefoxProfile(_) => "--firefox-profile",
            OutputRequest::Stats => "--stats",
        }
    }

    /// Where a text output goes, if it is one.
    /// The file it is written to, if any (not standard output).
    pub fn path(&self) -> Option<&Path> {
        match self {
            OutputRequest::FlameGraph { path, .. }
            | OutputRequest::Pprof(path)
            | OutputRequest::CpuProfile { path, .. }
            | OutputRequest::FirefoxProfile(path) => Some(path),
            _ => match self.destination()? {
                Destination::File(path) | Destination::AppendTo(path) => Some(path),
                Destination::StandardOutput => None,
            },
        }
    }

    fn destination(&self) -> Option<&Destination> {
        match self {
            OutputRequest::Folded(to)
            | OutputRequest::ReportJson(to)
            | OutputRequest::SummaryMarkdown { to, .. }
            | OutputRequest::GithubAnnotations { to, .. } => Some(to),
            _ => None,
        }
    }
}

/// A job: the input, how to fold it and what to write.
#[derive(Debug, Clone)]
pub struct Job {
    /// The samples: one input, or several folded into one profile (the
    /// `--prof` logs of a process's isolates).
    pub inputs: Vec<SampleInput>,
    /// How to fold; [`Job::fold_options`] turns on what the outputs need.
    pub fold: FoldOptions,
    /// What to write, in this order.
    pub outputs: Vec<OutputRequest>,
    /// The title of the flame graph and the Firefox profile; by default
    /// `v8inline: INPUT`.
    pub title: Option<String>,
    /// Refuse to write anything when a reader warned.
    pub strict: bool,
}

impl Job {
    /// The fold options with what the outputs need turned on.
    pub fn fold_options(&self) -> FoldOptions {
        let mut options = self.fold.clone();
        options.record_details |= self.outputs.iter().any(OutputRequest::needs_details);
        options.timeline |= self.outputs.iter().any(OutputRequest::needs_timeline);
        // The flame graph colors frames by their annotations.
        if self.outputs.iter().any(|output| matches!(output, OutputRequest::FlameGraph { .. })) {
            options.collapse.annotate_inline = true;
            options.collapse.annotate_jit = true;
            options.collapse.annotate_kernel = true;
        }
        options
    }
}

/// What [`run`] tells its caller while it runs, in this order.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// Every reader's warnings (and the producer defects read around), once
    /// the input is folded and before anything is written.
    Warnings(&'a Diagnostics),
    /// A `.cpuprofile` holds this thread (`thread` says which, and how much
    /// of the recording it is); `more_threads`: others were sampled and
    /// none was asked for.
    CpuProfileThread {
        /// The file.
        path: &'a Path,
        /// The thread, described.
        thread: String,
        /// Other threads were sampled and no thread was asked for.
        more_threads: bool,
    },
    /// The `--stats` text (lines starting `v8inline: `).
    Stats(String),
}

/// What a job did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Samples read, kept, skipped; distinct stacks written.
    pub summary: CollapseSummary,
    /// What happened to JIT frames.
    pub expansion: ExpansionStats,
    /// Every reader's warnings.
    pub diagnostics: Diagnostics,
}

/// Why a job failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// An input that cannot be used at all.
    #[error(transparent)]
    Input(#[from] crate::error::Error),
    /// The job asks for something that cannot be done.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// An output that could not be written.
    #[error("{path}: {source}")]
    Output {
        /// The file, or `standard output`.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// `strict` and the readers warned.
    #[error("--strict: {problems} input problem(s), listed above; no output written")]
    Strict {
        /// How many warnings.
        problems: u64,
    },
}

impl RunError {
    /// Whether the reader of standard output went away (not a failure for
    /// a command line).
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, RunError::Output { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// A job that asks for something that cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// Several outputs would write to standard output.
    #[error(
        "{} would all write to standard output: give all but one a file (--report-output, --summary-output, \
         --annotate-output)",
        .0.join(" and ")
    )]
    SeveralOnStandardOutput(Vec<&'static str>),
    /// Detailed outputs of several inputs (each has its own code locations).
    #[error("--pprof, --report, --summary and --annotate take one --ticks log")]
    DetailsOfSeveralInputs,
    /// A `.cpuprofile` of a thread that was not sampled.
    #[error("--cpuprofile {}: {source}", path.display())]
    CpuProfileThread {
        /// The file asked for.
        path: PathBuf,
        /// What was asked for and what was sampled.
        source: ThreadSelectionError,
    },
}

/// Checks that at most one output goes to standard output.
pub fn check_outputs(outputs: &[OutputRequest]) -> Result<(), UsageError> {
    let on_standard_output: Vec<&'static str> = outputs
        .iter()
        .filter(|output| output.destination() == Some(&Destination::StandardOutput))
        .map(OutputRequest::option_name)
        .collect();
    if on_standard_output.len() > 1 {
        return Err(UsageError::SeveralOnStandardOutput(on_standard_output));
    }
    Ok(())
}

/// Folds the job's input and writes its outputs, telling `events` what the
/// user should read on the way. Nothing is written when `strict` and a
/// reader warned, nor when an output cannot be made (a `.cpuprofile` of a
/// thread that was not sampled).
pub fn run(job: &Job, events: &mut dyn FnMut(RunEvent<'_>)) -> Result<RunSummary, RunError> {
    check_outputs(&job.outputs)?;
    let options = job.fold_options();
    let profile = match job.inputs.as_slice() {
        [one] => fold(one, &options)?,
        several => {
            if options.record_details {
                return Err(UsageError::DetailsOfSeveralInputs.into());
            }
            fold_all(several, &options)?
        }
    };
    events(RunEvent::Warnings(&profile.diagnostics));
    if job.strict && !profile.diagnostics.is_empty() {
        return Err(RunError::Strict { problems: profile.diagnostics.total() });
    }
    let title = job.title.clone().unwrap_or_else(|| format!("v8inline: {}", profile.input_name));
    let writer = Writer { profile: &profile, title, ticks: job.inputs.iter().any(SampleInput::is_ticks) };
    // The timeline files and the flame graph are rendered side by side, and
    // both before anything is written: a thread that was not sampled leaves
    // no output.
    let (timeline_files, flame_graph) = std::thread::scope(|scope| {
        let timeline_files = scope.spawn(|| writer.timeline_files(&job.outputs));
        let flame_graph = writer.flame_graph(&job.outputs);
        let timeline_files = timeline_files.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (timeline_files, flame_graph)
    });
    let timeline_files = timeline_files?;
    let mut summary = profile.summary.clone();
    if let Some(distinct_stacks) = writer.write_folded_and_flame_graph(&job.outputs, flame_graph?)? {
        summary.distinct_stacks = distinct_stacks;
    }
    if let Some(details) = &profile.details {
        writer.detailed_outputs(&job.outputs, details)?;
    }
    for file in &timeline_files {
        write_file(&file.path, &file.bytes)?;
        if let Some(thread) = &file.thread {
            events(RunEvent::CpuProfileThread {
                path: &file.path,
                thread: thread.description.clone(),
                more_threads: thread.more_threads,
            });
        }
    }
    if job.outputs.contains(&OutputRequest::Stats) {
        let mut text = String::new();
        if let Some(native) = &profile.native {
            text.push_str(&native_frames_line(native));
        }
        text.push_str(&stats_report(&summary, &profile.expansion));
        text.push_str(&code_log_report(profile.code_logs.maps()));
        events(RunEvent::Stats(text));
    }
    Ok(RunSummary { summary, expansion: profile.expansion.clone(), diagnostics: profile.diagnostics.clone() })
}

/// A timeline file made before any output is written.
struct TimelineFile {
    path: PathBuf,
    bytes: Vec<u8>,
    /// For a `.cpuprofile`: the thread it holds.
    thread: Option<ChosenThread>,
}

/// The thread a `.cpuprofile` holds.
struct ChosenThread {
    description: String,
    more_threads: bool,
}

/// A flame graph rendered, and the folded stacks it was drawn from.
struct RenderedFlameGraph {
    folded: Vec<u8>,
    distinct_stacks: u64,
    svg_path: PathBuf,
    svg: Vec<u8>,
}

/// Writes the outputs of one folded profile.
struct Writer<'a> {
    profile: &'a FoldedProfile,
    title: String,
    /// The samples are V8 ticks (they carry no perf event).
    ticks: bool,
}

impl Writer<'_> {
    /// The `.cpuprofile` and Firefox profiles asked for, rendered.
    fn timeline_files(&self, outputs: &[OutputRequest]) -> Result<Vec<TimelineFile>, RunError> {
        let mut files = Vec::new();
        let empty = Timeline::default();
        let timeline = self.profile.timeline.as_ref().unwrap_or(&empty);
        for output in outputs {
            match output {
                OutputRequest::CpuProfile { path, thread, javascript_only } => {
                    let options = CpuProfileOptions { thread: *thread, javascript_only: *javascript_only };
                    let (cpuprofile, summary) = CpuProfile::from_timeline(timeline, &options)
                        .map_err(|source| UsageError::CpuProfileThread { path: path.clone(), source })?;
                    let mut bytes = Vec::new();
                    cpuprofile.write(&mut bytes).map_err(|source| output_error(path, source))?;
                    let thread = ChosenThread {
                        description: summary.describe(),
                        more_threads: summary.threads > 1 && *thread == ThreadSelection::default(),
                    };
                    files.push(TimelineFile { path: path.clone(), bytes, thread: Some(thread) });
                }
                OutputRequest::FirefoxProfile(path) => {
                    let profile = firefox_profile(timeline, &self.title);
                    let gzip = path.extension().is_some_and(|extension| extension == "gz");
                    let mut bytes = Vec::new();
                    write_firefox_profile(&profile, &mut bytes, gzip).map_err(|source| output_error(path, source))?;
                    files.push(TimelineFile { path: path.clone(), bytes, thread: None });
                }
                _ => {}
            }
        }
        Ok(files)
    }

    /// The flame graph, if one is asked for, rendered with the folded
    /// stacks it is drawn from.
    fn flame_graph(&self, outputs: &[OutputRequest]) -> Result<Option<RenderedFlameGraph>, RunError> {
        let Some((svg_path, style)) = outputs.iter().find_map(|output| match output {
            OutputRequest::FlameGraph { path, style } => Some((path, *style)),
            _ => None,
        }) else {
            return Ok(None);
        };
        let mut folded = Vec::new();
        let distinct_stacks =
            self.profile.write_folded(&mut folded).map_err(|source| output_error(svg_path, source))?;
        let summary = &self.profile.summary;
        let svg_options = SvgOptions {
            title: self.title.clone(),
            // V8's ticks carry no perf event; each counts 1.
            event: summary.event.clone().or_else(|| self.ticks.then(|| "V8 ticks".to_string())),
            samples: summary.samples_kept,
            total_count: summary.total_count,
            style,
        };
        let text = String::from_utf8_lossy(&folded);
        let mut svg = Vec::new();
        write_svg(text.lines(), &svg_options, &mut svg).map_err(|source| output_error(svg_path, source))?;
        Ok(Some(RenderedFlameGraph { folded, distinct_stacks, svg_path: svg_path.clone(), svg }))
    }

    /// Writes the folded stacks (those the flame graph was drawn from, when
    /// one was rendered) and the flame graph; the number of distinct stacks
    /// written, if any were.
    fn write_folded_and_flame_graph(
        &self,
        outputs: &[OutputRequest],
        flame_graph: Option<RenderedFlameGraph>,
    ) -> Result<Option<u64>, RunError> {
        let folded_to = outputs.iter().find_map(|output| match output {
            OutputRequest::Folded(to) => Some(to),
            _ => None,
        });
        let Some(flame_graph) = flame_graph else {
            return match folded_to {
                Some(to) => write_to(to, |writer| self.profile.write_folded(writer)).map(Some),
                None => Ok(None),
            };
        };
        if let Some(to) = folded_to {
            write_to(to, |writer| writer.write_all(&flame_graph.folded))?;
        }
        write_file(&flame_graph.svg_path, &flame_graph.svg)?;
        Ok(folded_to.map(|_| flame_graph.distinct_stacks))
    }

    /// pprof, the report, the summary and the annotations.
    fn detailed_outputs(&self, outputs: &[OutputRequest], details: &StackProfile) -> Result<(), RunError> {
        let report = Report::new(details, WeightUnit::Samples);
        for output in outputs {
            match output {
                OutputRequest::Pprof(path) => {
                    let mut bytes = Vec::new();
                    write_pprof(details, &mut bytes).map_err(|source| output_error(path, source))?;
                    write_file(path, &bytes)?;
                }
                OutputRequest::ReportJson(to) => {
                    let mut bytes = Vec::new();
                    JsonReport::new(&report)
                        .write(&mut bytes)
                        .map_err(|source| RunError::Output { path: destination_name(to), source })?;
                    write_to(to, |writer| writer.write_all(&bytes))?;
                }
                OutputRequest::SummaryMarkdown { to, top, source_root } => {
                    let text = markdown_summary(&report, &SourceRoot::new(source_root), *top);
                    write_to(to, |writer| writer.write_all(text.as_bytes()))?;
                }
                OutputRequest::GithubAnnotations { to, top, source_root } => {
                    let mut text = String::new();
                    for annotation in github_annotations(&report, &SourceRoot::new(source_root), *top) {
                        text.push_str(&annotation.command());
                        text.push('\n');
                    }
                    write_to(to, |writer| writer.write_all(text.as_bytes()))?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The name of a destination in messages.
fn destination_name(to: &Destination) -> String {
    match to {
        Destination::StandardOutput => "standard output".to_string(),
        Destination::File(path) | Destination::AppendTo(path) => path.display().to_string(),
    }
}

fn output_error(path: &Path, source: io::Error) -> RunError {
    RunError::Output { path: path.display().to_string(), source }
}

/// Replaces the file at `path` by `bytes`, whole or not at all.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    replace_file(path, |output| output.write_all(bytes)).map_err(|source| output_error(path, source))
}

/// Runs `write` on the destination, buffered; its result, or the failure
/// naming the destination.
fn write_to<T>(to: &Destination, write: impl FnOnce(&mut dyn Write) -> io::Result<T>) -> Result<T, RunError> {
    let failure = |source| RunError::Output { path: destination_name(to), source };
    match to {
        Destination::StandardOutput => {
            let mut output = io::stdout().lock();
            let result = write(&mut output).map_err(failure)?;
            output.flush().map_err(failure)?;
            Ok(result)
        }
        // Whole or not at all: a full disk or an interrupted run leaves the
        // file the user had.
        Destination::File(path) => replace_file(path, write).map_err(failure),
        Destination::AppendTo(path) => {
            let file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(failure)?;
            let mut output = io::BufWriter::new(file);
            let result = write(&mut output).map_err(failure)?;
            output.flush().map_err(failure)?;
            Ok(result)
        }
    }
}
