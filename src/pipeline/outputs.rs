//! The outputs of a job, chosen in the library: a caller (the main job,
//! `record`) lists the [`OutputRequest`]s it wants, [`run`] folds the input
//! and writes each of them, and each benchmark's ([`BenchmarkOutputs`]) by
//! the same `Writer` over the benchmark's share of the fold. The renderers
//! (`crate::output`) only turn the finished model into bytes: the folded
//! text, the [`StackProfile`] and the [`Timeline`] the fold built.
//!
//! A new output is one renderer, one variant of [`OutputRequest`], and its
//! arm in the three matches that do not compile without it: what it is
//! (`OutputRequest::form`: its option, what it is made from, where it goes),
//! how it is made (`Writer::make`) and what it is of one benchmark
//! (`OutputRequest::for_benchmark`); and the command line's flag.

use crate::collapse::skip_after::names_function;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{FoldOptions, FoldedProfile, SampleInput, fold, fold_all};
use crate::collapse::task_root::TaskRoot;
use crate::collapse::{CollapseSummary, Folder};
use crate::diagnostics::Diagnostics;
use crate::files::replace_file;
use crate::model::stack_profile::StackProfile;
use crate::model::timeline::Timeline;
use crate::output::annotations::{SourceRoot, github_annotations, markdown_summary};
use crate::output::cpuprofile::{CpuProfile, CpuProfileOptions, ThreadSelection, ThreadSelectionError};
use crate::output::firefox::{firefox_profile, write_firefox_profile};
use crate::output::flamegraph::{FlameGraphStyle, FrameNote, SvgOptions, write_svg_with_note};
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
#[non_exhaustive]
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

/// What an output is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MadeFrom {
    /// The folded stacks.
    Stacks,
    /// The stacks with their code locations ([`FoldOptions::record_details`]).
    Details,
    /// Every sample in time order ([`FoldOptions::timeline`]).
    Timeline,
    /// The fold's counts.
    Counts,
}

/// Where an output goes.
#[derive(Debug, Clone, Copy)]
enum Target<'a> {
    /// A file, replaced.
    File(&'a Path),
    /// A text output's destination.
    Text(&'a Destination),
    /// The caller, as a [`RunEvent`].
    Caller,
}

/// An output's option, what it is made from and where it goes.
struct Form<'a> {
    option: &'static str,
    made_from: MadeFrom,
    target: Target<'a>,
}

impl OutputRequest {
    /// The one description of every kind of output (with [`Writer::make`],
    /// which makes each): a new kind does not compile until both say what
    /// it is.
    fn form(&self) -> Form<'_> {
        let form = |option, made_from, target| Form { option, made_from, target };
        match self {
            OutputRequest::Folded(to) => form("--output", MadeFrom::Stacks, Target::Text(to)),
            OutputRequest::FlameGraph { path, .. } => form("--flamegraph", MadeFrom::Stacks, Target::File(path)),
            OutputRequest::Pprof(path) => form("--pprof", MadeFrom::Details, Target::File(path)),
            OutputRequest::ReportJson(to) => form("--report", MadeFrom::Details, Target::Text(to)),
            OutputRequest::SummaryMarkdown { to, .. } => form("--summary", MadeFrom::Details, Target::Text(to)),
            OutputRequest::GithubAnnotations { to, .. } => form("--annotate", MadeFrom::Details, Target::Text(to)),
            OutputRequest::CpuProfile { path, .. } => form("--cpuprofile", MadeFrom::Timeline, Target::File(path)),
            OutputRequest::FirefoxProfile(path) => form("--firefox-profile", MadeFrom::Timeline, Target::File(path)),
            OutputRequest::Stats => form("--stats", MadeFrom::Counts, Target::Caller),
        }
    }

    /// Whether the output is made from the detailed stacks
    /// ([`FoldOptions::record_details`]).
    pub fn needs_details(&self) -> bool {
        self.form().made_from == MadeFrom::Details
    }

    /// Whether the output is made from every sample in time order
    /// ([`FoldOptions::timeline`]).
    pub fn needs_timeline(&self) -> bool {
        self.form().made_from == MadeFrom::Timeline
    }

    /// The command line's option for this output.
    pub fn option_name(&self) -> &'static str {
        self.form().option
    }

    /// The file it is written to, if any (not standard output).
    pub fn path(&self) -> Option<&Path> {
        match self.form().target {
            Target::File(path) => Some(path),
            Target::Text(Destination::File(path) | Destination::AppendTo(path)) => Some(path),
            Target::Text(Destination::StandardOutput) | Target::Caller => None,
        }
    }

    fn destination(&self) -> Option<&Destination> {
        match self.form().target {
            Target::Text(to) => Some(to),
            Target::File(_) | Target::Caller => None,
        }
    }

    /// The same output of one benchmark's samples, in its `directory`
    /// under the same file name (a `.cpuprofile` of its `thread`); `None`
    /// for what goes elsewhere than a file of its own (standard output,
    /// `$GITHUB_STEP_SUMMARY`, the counts of `--stats`).
    pub fn for_benchmark(&self, directory: &Path, thread: ThreadSelection) -> Option<OutputRequest> {
        let beside = |path: &Path| Some(directory.join(path.file_name()?));
        let file = |to: &Destination| match to {
            Destination::File(path) => Some(Destination::File(beside(path)?)),
            Destination::StandardOutput | Destination::AppendTo(_) => None,
        };
        Some(match self {
            OutputRequest::Folded(to) => OutputRequest::Folded(file(to)?),
            OutputRequest::FlameGraph { path, style } => {
                OutputRequest::FlameGraph { path: beside(path)?, style: *style }
            }
            OutputRequest::Pprof(path) => OutputRequest::Pprof(beside(path)?),
            OutputRequest::ReportJson(to) => OutputRequest::ReportJson(file(to)?),
            OutputRequest::SummaryMarkdown { to, top, source_root } => {
                OutputRequest::SummaryMarkdown { to: file(to)?, top: *top, source_root: source_root.clone() }
            }
            OutputRequest::GithubAnnotations { to, top, source_root } => {
                OutputRequest::GithubAnnotations { to: file(to)?, top: *top, source_root: source_root.clone() }
            }
            OutputRequest::CpuProfile { path, javascript_only, .. } => {
                OutputRequest::CpuProfile { path: beside(path)?, thread, javascript_only: *javascript_only }
            }
            OutputRequest::FirefoxProfile(path) => OutputRequest::FirefoxProfile(beside(path)?),
            OutputRequest::Stats => return None,
        })
    }
}

/// What to write of one benchmark of [`FoldOptions::benchmarks`]: its
/// outputs ([`OutputRequest::for_benchmark`]), made by the same writer as
/// the whole run's, titled `title`.
#[derive(Debug, Clone)]
pub struct BenchmarkOutputs {
    /// The title of its flame graph and Firefox profile.
    pub title: String,
    /// What to write, in this order (the directories exist).
    pub outputs: Vec<OutputRequest>,
}

/// A job: the input, how to fold it and what to write.
#[derive(Debug, Clone)]
#[non_exhaustive]
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
    /// The outputs of each benchmark, in the order of
    /// [`FoldOptions::benchmarks`].
    pub benchmarks: Vec<BenchmarkOutputs>,
}

impl Job {
    /// Folds `inputs` as `fold` says and writes `outputs`, titled after the
    /// input, not strict.
    pub fn new(inputs: Vec<SampleInput>, fold: FoldOptions, outputs: Vec<OutputRequest>) -> Job {
        Job { inputs, fold, outputs, title: None, strict: false, benchmarks: Vec::new() }
    }
}

impl Job {
    /// The fold options with what the outputs need turned on.
    pub fn fold_options(&self) -> FoldOptions {
        let mut options = self.fold.clone();
        let all_outputs = || self.outputs.iter().chain(self.benchmarks.iter().flat_map(|benchmark| &benchmark.outputs));
        options.record_details |= all_outputs().any(OutputRequest::needs_details);
        options.timeline |= all_outputs().any(OutputRequest::needs_timeline);
        // The flame graph colors frames by their annotations.
        if all_outputs().any(|output| matches!(output, OutputRequest::FlameGraph { .. })) {
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
    /// Each benchmark's samples kept, total count and distinct stacks,
    /// when [`FoldOptions::benchmarks`] gave benchmarks, in their order.
    pub benchmarks: Vec<CollapseSummary>,
    /// What each benchmark's root stands for (the frames folded into it),
    /// in the same order: benchmarks.json keeps it for `compare`'s graphs.
    pub benchmark_roots: Vec<TaskRoot>,
}

/// Why a job failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
#[non_exhaustive]
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
    let mut profile = match job.inputs.as_slice() {
        [one] => fold(one, &options)?,
        several => {
            if options.record_details {
                return Err(UsageError::DetailsOfSeveralInputs.into());
            }
            fold_all(several, &options)?
        }
    };
    warn_unmatched_skip_after(&options.collapse.skip_after, &mut profile);
    events(RunEvent::Warnings(&profile.diagnostics));
    if job.strict && !profile.diagnostics.is_empty() {
        return Err(RunError::Strict { problems: profile.diagnostics.total() });
    }
    let title = job.title.clone().unwrap_or_else(|| format!("v8inline: {}", profile.input_name));
    let ticks = job.inputs.iter().any(SampleInput::is_ticks);
    let whole_run = ProfileView {
        folder: &profile.folder,
        summary: profile.summary.clone(),
        details: profile.details.as_ref(),
        timeline: profile.timeline.as_ref(),
        threads: profile.threads,
        root: None,
    };
    let writer = Writer::new(whole_run, title, ticks, &job.outputs)?;
    let summary = writer.write_all(&job.outputs, events)?;
    if job.outputs.contains(&OutputRequest::Stats) {
        let mut text = String::new();
        if let Some(native) = &profile.native {
            text.push_str(&native_frames_line(native));
        }
        text.push_str(&stats_report(&summary, &profile.expansion));
        text.push_str(&code_log_report(profile.code_logs.maps()));
        text.push_str(&profile.diagnostics.unwarned_report());
        events(RunEvent::Stats(text));
    }
    // Each benchmark's outputs, by the same writer over its share.
    let mut benchmarks = Vec::with_capacity(profile.benchmarks.len());
    for (index, (benchmark, asked)) in profile.benchmarks.iter().zip(&job.benchmarks).enumerate() {
        let timeline = match (&options.benchmarks, &profile.timeline) {
            (Some(windows), Some(timeline)) if asked.outputs.iter().any(OutputRequest::needs_timeline) => {
                Some(windows.timeline_of(timeline, index))
            }
            _ => None,
        };
        // A benchmark whose thread was not sampled has no `.cpuprofile`.
        let sampled = timeline.as_ref().is_some_and(|timeline| !timeline.samples.is_empty());
        let outputs: Vec<OutputRequest> = asked
            .outputs
            .iter()
            .filter(|output| sampled || !matches!(output, OutputRequest::CpuProfile { .. }))
            .cloned()
            .collect();
        let view = ProfileView {
            folder: &benchmark.folder,
            summary: CollapseSummary { event: profile.summary.event.clone(), ..benchmark.folder.summary() },
            details: benchmark.details.as_ref(),
            timeline: timeline.as_ref(),
            threads: 1,
            root: Some(&benchmark.root),
        };
        let writer = Writer::new(view, asked.title.clone(), ticks, &outputs)?;
        // The whole run's report tells which threads its `.cpuprofile` holds.
        benchmarks.push(writer.write_all(&outputs, &mut |_| {})?);
    }
    Ok(RunSummary {
        summary,
        expansion: profile.expansion.clone(),
        diagnostics: profile.diagnostics.clone(),
        benchmarks,
        benchmark_roots: profile.benchmarks.iter().map(|benchmark| benchmark.root.clone()).collect(),
    })
}

/// A warning for each `--skip-after` that named no frame of the profile:
/// it cut no stack (a frame it names is kept, the stack's root-most).
fn warn_unmatched_skip_after(skip_after: &[String], profile: &mut FoldedProfile) {
    for wanted in skip_after {
        if !profile.folder.frame_names().any(|frame| names_function(wanted, frame)) {
            profile.diagnostics.warn_option(format!(
                "--skip-after {wanted:?} names no frame: no stack was cut (a JavaScript function is named by \
                 NAME, NAME FILE:LINE or its frame's whole name, in any tier)"
            ));
        }
    }
}

/// The thread a `.cpuprofile` holds.
struct ChosenThread {
    description: String,
    more_threads: bool,
}

/// An output made, to be written.
enum MadeOutput<'a> {
    /// Its bytes and where they go; a `.cpuprofile` says its thread.
    Bytes { target: Target<'a>, bytes: Vec<u8>, thread: Option<ChosenThread> },
    /// The folded stacks: the text a flame graph was drawn from (with its
    /// count of stacks), or, without one, rendered from the folder as they
    /// are written (they can be large).
    FoldedText { to: &'a Destination, text: &'a [u8], distinct_stacks: Option<u64> },
    /// The counts, told once every output is written.
    Stats,
}

/// The folded text, rendered once for the flame graph and the folded output.
struct FoldedText {
    text: Vec<u8>,
    distinct_stacks: u64,
}

/// What a [`Writer`] makes outputs of: the whole run's profile, or one
/// benchmark's share of it.
struct ProfileView<'a> {
    /// The stacks.
    folder: &'a Folder,
    /// Samples read, kept, skipped; the event.
    summary: CollapseSummary,
    /// The stacks with their code locations, when asked for.
    details: Option<&'a StackProfile>,
    /// Every sample in time order, when asked for.
    timeline: Option<&'a Timeline>,
    /// The threads the folded text may be written with.
    threads: usize,
    /// A benchmark's root and what it stands for (its flame graph's
    /// tooltip says).
    root: Option<&'a TaskRoot>,
}

/// Makes the outputs of one folded profile.
struct Writer<'a> {
    view: ProfileView<'a>,
    title: String,
    /// The samples are V8 ticks (they carry no perf event).
    ticks: bool,
    /// The folded text, when a flame graph is drawn from it.
    folded: Option<FoldedText>,
    /// The per-function report of the detailed outputs, made once.
    report: std::sync::OnceLock<Report>,
}

impl<'a> Writer<'a> {
    fn new(
        view: ProfileView<'a>,
        title: String,
        ticks: bool,
        outputs: &[OutputRequest],
    ) -> Result<Writer<'a>, RunError> {
        let flame_graph = outputs.iter().find_map(|output| match output {
            OutputRequest::FlameGraph { path, .. } => Some(path),
            _ => None,
        });
        let folded = match flame_graph {
            Some(svg_path) => {
                let mut text = Vec::new();
                let distinct_stacks = view
                    .folder
                    .write_folded_on(&mut text, view.threads)
                    .map_err(|source| output_error(svg_path, source))?;
                Some(FoldedText { text, distinct_stacks })
            }
            None => None,
        };
        Ok(Writer { view, title, ticks, folded, report: std::sync::OnceLock::new() })
    }

    /// Makes every output of `outputs` (all before any is written: a thread
    /// that was not sampled leaves no output; the timeline's files on a
    /// thread beside the others) and writes them in order; the summary,
    /// with the distinct stacks written.
    fn write_all(
        &self,
        outputs: &[OutputRequest],
        events: &mut dyn FnMut(RunEvent<'_>),
    ) -> Result<CollapseSummary, RunError> {
        let made = std::thread::scope(|scope| -> Result<Vec<MadeOutput<'_>>, RunError> {
            let is_timeline = |output: &&OutputRequest| output.form().made_from == MadeFrom::Timeline;
            let timeline_files =
                scope.spawn(move || outputs.iter().filter(is_timeline).map(|output| self.make(output)).collect());
            let others: Result<Vec<_>, RunError> =
                outputs.iter().filter(|output| !is_timeline(output)).map(|output| self.make(output)).collect();
            let timeline_files: Result<Vec<_>, RunError> =
                timeline_files.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let (mut timeline_files, mut others) = (timeline_files?.into_iter(), others?.into_iter());
            // Back in the job's order.
            Ok(outputs
                .iter()
                .filter_map(|output| if is_timeline(&output) { timeline_files.next() } else { others.next() })
                .collect())
        })?;
        let mut summary = self.view.summary.clone();
        for output in made {
            match output {
                MadeOutput::Bytes { target, bytes, thread } => {
                    match target {
                        Target::File(path) => write_file(path, &bytes)?,
                        Target::Text(to) => write_to(to, |writer| writer.write_all(&bytes))?,
                        Target::Caller => {}
                    }
                    if let (Target::File(path), Some(thread)) = (target, thread) {
                        events(RunEvent::CpuProfileThread {
                            path,
                            thread: thread.description,
                            more_threads: thread.more_threads,
                        });
                    }
                }
                MadeOutput::FoldedText { to, distinct_stacks: Some(distinct_stacks), text } => {
                    write_to(to, |writer| writer.write_all(text))?;
                    summary.distinct_stacks = distinct_stacks;
                }
                MadeOutput::FoldedText { to, distinct_stacks: None, .. } => {
                    summary.distinct_stacks =
                        write_to(to, |writer| self.view.folder.write_folded_on(writer, self.view.threads))?;
                }
                MadeOutput::Stats => {}
            }
        }
        Ok(summary)
    }

    /// Makes `output`: every kind is made here (with
    /// [`OutputRequest::form`], which describes it).
    fn make<'output>(&'output self, output: &'output OutputRequest) -> Result<MadeOutput<'output>, RunError> {
        let target = output.form().target;
        let bytes = |bytes| Ok(MadeOutput::Bytes { target, bytes, thread: None });
        let failure = |source| RunError::Output {
            path: output.path().map_or_else(String::new, |path| path.display().to_string()),
            source,
        };
        match output {
            OutputRequest::Folded(to) => Ok(match &self.folded {
                Some(folded) => {
                    MadeOutput::FoldedText { to, text: &folded.text, distinct_stacks: Some(folded.distinct_stacks) }
                }
                None => MadeOutput::FoldedText { to, text: &[], distinct_stacks: None },
            }),
            OutputRequest::FlameGraph { path, style } => bytes(self.flame_graph(path, *style)?),
            OutputRequest::Pprof(path) => {
                let mut pprof = Vec::new();
                write_pprof(self.details(), &mut pprof).map_err(|source| output_error(path, source))?;
                bytes(pprof)
            }
            OutputRequest::ReportJson(to) => {
                let mut json = Vec::new();
                JsonReport::new(self.report())
                    .write(&mut json)
                    .map_err(|source| RunError::Output { path: destination_name(to), source })?;
                bytes(json)
            }
            OutputRequest::SummaryMarkdown { top, source_root, .. } => {
                bytes(markdown_summary(self.report(), &SourceRoot::new(source_root), *top).into_bytes())
            }
            OutputRequest::GithubAnnotations { top, source_root, .. } => {
                let mut text = String::new();
                for annotation in github_annotations(self.report(), &SourceRoot::new(source_root), *top) {
                    text.push_str(&annotation.command());
                    text.push('\n');
                }
                bytes(text.into_bytes())
            }
            OutputRequest::CpuProfile { path, thread, javascript_only } => {
                let options = CpuProfileOptions { thread: *thread, javascript_only: *javascript_only };
                let (cpuprofile, summary) = CpuProfile::from_timeline(self.timeline(), &options)
                    .map_err(|source| UsageError::CpuProfileThread { path: path.clone(), source })?;
                let mut json = Vec::new();
                cpuprofile.write(&mut json).map_err(failure)?;
                let thread = ChosenThread {
                    description: summary.describe(),
                    more_threads: summary.threads > 1 && *thread == ThreadSelection::default(),
                };
                Ok(MadeOutput::Bytes { target, bytes: json, thread: Some(thread) })
            }
            OutputRequest::FirefoxProfile(path) => {
                let profile = firefox_profile(self.timeline(), &self.title);
                let gzip = path.extension().is_some_and(|extension| extension == "gz");
                let mut json = Vec::new();
                write_firefox_profile(&profile, &mut json, gzip).map_err(failure)?;
                bytes(json)
            }
            OutputRequest::Stats => Ok(MadeOutput::Stats),
        }
    }

    /// The flame graph of the folded text.
    fn flame_graph(&self, path: &Path, style: FlameGraphStyle) -> Result<Vec<u8>, RunError> {
        let folded = self.folded.as_ref().map_or(&[][..], |folded| &folded.text);
        let summary = &self.view.summary;
        let svg_options = SvgOptions {
            title: self.title.clone(),
            // V8's ticks carry no perf event; each counts 1.
            event: summary.event.clone().or_else(|| self.ticks.then(|| "V8 ticks".to_string())),
            samples: summary.samples_kept,
            total_count: summary.total_count,
            style,
            differential: false,
        };
        let text = String::from_utf8_lossy(folded);
        let mut svg = Vec::new();
        let note = self.view.root.map(|root| FrameNote { frame: root.name.clone(), note: root.describe() });
        write_svg_with_note(text.lines(), &svg_options, note.as_ref(), &mut svg)
            .map_err(|source| output_error(path, source))?;
        Ok(svg)
    }

    /// The detailed stacks ([`Job::fold_options`] asks for them whenever an
    /// output needs them).
    fn details(&self) -> &StackProfile {
        static NONE: std::sync::OnceLock<StackProfile> = std::sync::OnceLock::new();
        self.view.details.unwrap_or_else(|| NONE.get_or_init(StackProfile::default))
    }

    fn report(&self) -> &Report {
        self.report.get_or_init(|| Report::new(self.details(), WeightUnit::Samples))
    }

    /// Every sample in time order ([`Job::fold_options`] asks for it
    /// whenever an output needs it).
    fn timeline(&self) -> &Timeline {
        static NONE: std::sync::OnceLock<Timeline> = std::sync::OnceLock::new();
        self.view.timeline.unwrap_or_else(|| NONE.get_or_init(Timeline::default))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A benchmark gets every output of the run that goes to a file of its
    /// own, in its directory under the same name, its `.cpuprofile` of its
    /// thread; nothing that goes to standard output, is appended to, or is
    /// told to the caller.
    #[test]
    fn a_benchmark_gets_the_runs_file_outputs_in_its_directory() {
        let run = Path::new("/out");
        let thread = ThreadSelection { pid: Some(7), tid: Some(8) };
        let benchmark = Path::new("/out/benchmarks/sum");
        let outputs = [
            OutputRequest::Folded(Destination::File(run.join("profile.folded"))),
            OutputRequest::FlameGraph { path: run.join("flamegraph.svg"), style: FlameGraphStyle::Classic },
            OutputRequest::Pprof(PathBuf::from("/elsewhere/cpu.pb.gz")),
            OutputRequest::ReportJson(Destination::StandardOutput),
            OutputRequest::GithubAnnotations {
                to: Destination::AppendTo(PathBuf::from("/summary")),
                top: 5,
                source_root: PathBuf::from("/"),
            },
            OutputRequest::CpuProfile {
                path: run.join("profile.cpuprofile"),
                thread: ThreadSelection::default(),
                javascript_only: true,
            },
            OutputRequest::FirefoxProfile(run.join("profile.firefox.json.gz")),
            OutputRequest::Stats,
        ];
        let of_benchmark: Vec<OutputRequest> =
            outputs.iter().filter_map(|output| output.for_benchmark(benchmark, thread)).collect();
        assert_eq!(
            of_benchmark,
            [
                OutputRequest::Folded(Destination::File(benchmark.join("profile.folded"))),
                OutputRequest::FlameGraph { path: benchmark.join("flamegraph.svg"), style: FlameGraphStyle::Classic },
                OutputRequest::Pprof(benchmark.join("cpu.pb.gz")),
                OutputRequest::CpuProfile { path: benchmark.join("profile.cpuprofile"), thread, javascript_only: true },
                OutputRequest::FirefoxProfile(benchmark.join("profile.firefox.json.gz")),
            ]
        );
    }
}
