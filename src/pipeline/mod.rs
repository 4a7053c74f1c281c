//! The one pipeline every command runs: a source of typed samples, the
//! expansion of their V8 JIT frames, and the sinks that aggregate them.
//!
//! ```text
//! SampleInput ─► source ─► Sample ─► V8Expander ─► ExpandedSample ─┬─► Folder (stacks)
//!   perf script  PerfScriptSource                                   │     ├─► folded text, SVG
//!   perf.data    PerfDataSource                                     │     └─► StackProfile: pprof,
//!   V8 ticks     TickLog                                            │         report, annotations
//!                                                                   └─► TimelineRecorder (asked for)
//!                                                                         └─► Timeline: .cpuprofile,
//!                                                                             Firefox Profiler
//! ```
//!
//! [`fold`] reads one input to the end and returns a [`FoldedProfile`]: the
//! aggregated stacks, the [`StackProfile`] and the [`Timeline`] when asked
//! for (finished here, so that renderers never see the expander), what
//! happened on the way ([`CollapseSummary`], [`ExpansionStats`]) and every
//! warning of every reader in one [`Diagnostics`]. [`outputs::run`] folds a
//! [`outputs::Job`] and writes the outputs it asks for. It decides the threads: a perf script is folded in chunks on
//! several when nothing needs a single folder or every sample in time order;
//! otherwise, and for every other source, the source reads on the calling
//! thread and the expansion and sinks run on another ([`relay`]).

pub mod outputs;
pub mod relay;

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use crate::collapse::parallel::fold_parallel;
use crate::collapse::timeline::TimelineRecorder;
use crate::collapse::{CollapseOptions, CollapseSummary, Folder, reader_summary};
use crate::diagnostics::{Diagnostics, WarningKind};
use crate::error::{Error, ErrorCause};
use crate::expansion::{ExpandedSample, StackSink};
use crate::files::open_stream_allowing_cut;
use crate::model::sample::{Sample, SampleInterner, SampleSink};
use crate::model::stack_profile::StackProfile;
use crate::model::timeline::Timeline;
use crate::sources::perf_data::{PerfDataSource, recording_directory};
use crate::sources::perf_script::PerfScriptSource;
use crate::sources::ticks::{NativeFrameStats, TickLog};
use crate::v8::code_logs::{CodeLogOptions, CodeLogs};
use crate::v8::expand::{ExpandOptions, ExpansionStats, V8Expander};
use crate::v8::unexpanded::warn_unexpanded;
use relay::read_with_sink;

/// Where the samples come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SampleInput {
    /// `perf script` text from a file (`.gz` too), or standard input for `-`.
    PerfScript(PathBuf),
    /// A perf.data file read directly; code logs and jitdumps default to
    /// its directory.
    PerfData(PathBuf),
    /// The `tick` records of a `node --prof --log-code` log, which is also
    /// the code log that expands them.
    Ticks(PathBuf),
}

impl SampleInput {
    /// Whether the samples are V8's own ticks (counted one each, no perf
    /// event).
    pub fn is_ticks(&self) -> bool {
        matches!(self, SampleInput::Ticks(_))
    }

    /// The input as named in titles and messages.
    pub fn display_name(&self) -> String {
        match self {
            SampleInput::PerfScript(path) if path == Path::new("-") => "<stdin>".to_string(),
            SampleInput::PerfScript(path) | SampleInput::PerfData(path) => path.display().to_string(),
            SampleInput::Ticks(path) => format!("ticks of {}", path.display()),
        }
    }
}

/// How [`fold`] folds.
#[derive(Debug, Clone, Default)]
pub struct FoldOptions {
    /// Frame naming, annotations and the event filter.
    pub collapse: CollapseOptions,
    /// The code logs and jitdumps (ignored for ticks, whose log is both),
    /// and where script sources come from.
    pub code_logs: CodeLogOptions,
    /// How JIT frames are expanded.
    pub expand: ExpandOptions,
    /// Keep each stack's code locations for [`FoldedProfile::details`]
    /// (pprof, reports). Folds into one folder (see [`FoldOptions::threads`]).
    pub record_details: bool,
    /// Also record every sample in time order for
    /// [`FoldedProfile::timeline`] (`.cpuprofile`, Firefox Profiler). Folds
    /// into one folder, samples in input order.
    pub timeline: bool,
    /// Threads to use; `None`: one per core. A perf script is folded in
    /// chunks on as many; other sources, and a perf script whose outputs
    /// need one folder, are read on one thread and expanded and folded on
    /// another when there are two or more, and a perf.data's symbols are
    /// then read ahead on others. One: everything on the calling thread.
    pub threads: Option<usize>,
}

/// The threads to use: `asked`, or one per core; at least one.
pub fn thread_count(asked: Option<usize>) -> usize {
    asked.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)).max(1)
}

impl FoldOptions {
    /// The threads to use: as asked, or one per core.
    pub fn thread_count(&self) -> usize {
        thread_count(self.threads)
    }

    /// Where to find the code logs and jitdumps, read on as many threads.
    fn code_log_options(&self) -> CodeLogOptions {
        CodeLogOptions { read_threads: self.thread_count(), ..self.code_logs.clone() }
    }
}

/// The result of [`fold`].
pub struct FoldedProfile {
    /// The aggregated stacks.
    pub folder: Folder,
    /// The stacks with their code locations, for pprof and the reports,
    /// when [`FoldOptions::record_details`] asked for them (of the first
    /// input of [`fold_all`]).
    pub details: Option<StackProfile>,
    /// The processes' code logs and jitdumps (of the first input of
    /// [`fold_all`]).
    pub code_logs: CodeLogs,
    /// Samples read, kept, skipped; distinct stacks.
    pub summary: CollapseSummary,
    /// What happened to JIT frames, over all threads.
    pub expansion: ExpansionStats,
    /// How the native frames of V8 ticks were named.
    pub native: Option<NativeFrameStats>,
    /// Every reader's warnings: samples, code logs, jitdumps, binaries.
    pub diagnostics: Diagnostics,
    /// The input, for titles and messages.
    pub input_name: String,
    /// Every sample in time order, when [`FoldOptions::timeline`] asked for it.
    pub timeline: Option<Timeline>,
    /// The threads it may be written with ([`FoldOptions::threads`]).
    pub threads: usize,
}

impl FoldedProfile {
    /// Writes the folded stacks as `inferno-collapse-perf` does, rendering
    /// them on a second thread when it has [`FoldedProfile::threads`].
    pub fn write_folded<W: io::Write>(&self, output: W) -> io::Result<u64> {
        self.folder.write_folded_on(output, self.threads)
    }
}

/// The pipeline's sink: expands each sample and hands it to the sinks
/// asked for: the folder always, the timeline recorder when a timeline is
/// asked for.
pub struct ExpandingSinks {
    expander: V8Expander,
    expanded: ExpandedSample,
    folder: Folder,
    timeline: Option<TimelineRecorder>,
    /// The threads the folded text may be written with.
    threads: usize,
    /// Describe the folded stacks' code locations at the end.
    record_details: bool,
}

impl SampleSink for ExpandingSinks {
    fn add_sample(&mut self, sample: &Sample, interner: &SampleInterner) {
        self.expanded.expand(sample, interner, &mut self.expander);
        StackSink::add_sample(&mut self.folder, sample, interner, &self.expanded, &self.expander);
        if let Some(timeline) = &mut self.timeline {
            timeline.add_sample(sample, interner, &self.expanded, &self.expander);
        }
    }
}

impl ExpandingSinks {
    /// A sink expanding with `profiles`, folding (and recording a timeline)
    /// as `options` say.
    pub fn new(code_logs: CodeLogs, options: &FoldOptions) -> ExpandingSinks {
        let mut folder = Folder::new(&options.collapse);
        if options.record_details {
            folder.record_details();
        }
        ExpandingSinks {
            expander: V8Expander::new(code_logs, options.expand),
            expanded: ExpandedSample::new(),
            folder,
            timeline: options.timeline.then(TimelineRecorder::new),
            threads: options.thread_count(),
            record_details: options.record_details,
        }
    }

    /// The stacks folded so far.
    pub fn folder(&self) -> &Folder {
        &self.folder
    }

    /// The profile, with the source's counters and warnings added.
    fn finish(
        self,
        mut summary: CollapseSummary,
        mut diagnostics: Diagnostics,
        input_name: String,
        native: Option<NativeFrameStats>,
    ) -> FoldedProfile {
        summary.take_folder_counts(&self.folder.summary());
        diagnostics.merge(&self.expander.code_logs().diagnostics);
        let timeline = self.timeline.map(|recorder| recorder.finish(summary.event.clone()));
        let details =
            self.record_details.then(|| StackProfile::from_folder(&self.folder, &self.expander, summary.event.clone()));
        FoldedProfile {
            folder: self.folder,
            summary,
            expansion: self.expander.stats.clone(),
            native,
            diagnostics,
            details,
            code_logs: self.expander.code_logs().clone(),
            input_name,
            timeline,
            threads: self.threads,
        }
    }
}

/// Reads `input` to its end, expands the V8 JIT frames of its samples with
/// the code logs and jitdumps `options` names (or finds), and aggregates the
/// stacks. A process whose JavaScript mostly did not expand gets a warning
/// naming the likely cause ([`crate::v8::unexpanded`]). An input (sample
/// file, code log, jitdump) that cannot be used at all is an [`Error`]
/// naming it; damage that still leaves something to read is a warning in
/// [`FoldedProfile::diagnostics`].
pub fn fold(input: &SampleInput, options: &FoldOptions) -> Result<FoldedProfile, Error> {
    Ok(with_expansion_warnings(fold_samples_of(input, options)?))
}

/// The warnings that only the whole fold can give: processes whose
/// JavaScript mostly did not expand, source maps that could not be used,
/// inlining tables that did not parse.
fn with_expansion_warnings(mut profile: FoldedProfile) -> FoldedProfile {
    warn_unexpanded(&profile.expansion, &profile.code_logs, &mut profile.diagnostics);
    warn_source_maps(&profile.code_logs, &mut profile.diagnostics);
    profile.code_logs.add_table_problems(&mut profile.diagnostics);
    profile
}

/// One warning per source map that was needed and could not be used, in
/// the order of their paths (every expander shares the processes' maps, so
/// the first one sees all).
fn warn_source_maps(code_logs: &CodeLogs, diagnostics: &mut Diagnostics) {
    let mut problems = std::collections::BTreeMap::new();
    for map in code_logs.maps() {
        for unusable in map.source_map_problems() {
            problems.entry(&unusable.map).or_insert(unusable);
        }
    }
    for unusable in problems.into_values() {
        diagnostics.warn(WarningKind::SourceMapUnusable, || unusable.to_string());
    }
}

/// [`fold`] but for the check of the expansion.
fn fold_samples_of(input: &SampleInput, options: &FoldOptions) -> Result<FoldedProfile, Error> {
    match input {
        SampleInput::PerfScript(path) => fold_perf_script(path, input, options),
        SampleInput::PerfData(path) => {
            let mut code_log_options = options.code_log_options();
            code_log_options.jitdump_dir.get_or_insert_with(|| recording_directory(path));
            let code_logs = CodeLogs::load(code_log_options)?;
            let mut sink = ExpandingSinks::new(code_logs, options);
            let event = options.collapse.event_filter.as_deref();
            let threads = options.thread_count();
            // On one thread, the symbols too are read there, when needed.
            let mut source = if threads > 1 { PerfDataSource::new() } else { PerfDataSource::new().on_one_thread() };
            let read = read_with_sink(&mut sink, threads, |sink| source.read(path, event, sink))?;
            let summary = CollapseSummary {
                samples_read: read.samples_read,
                samples_filtered_out: read.samples_filtered_out,
                event: read.event,
                ..CollapseSummary::default()
            };
            Ok(sink.finish(summary, read.diagnostics, input.display_name(), None))
        }
        SampleInput::Ticks(path) => {
            let mut log = TickLog::read(path, options.code_logs.sources.clone())?;
            let mut sink = ExpandingSinks::new(log.code_logs().clone(), options);
            let native = read_with_sink(&mut sink, options.thread_count(), |sink| log.read_samples(sink));
            let summary = CollapseSummary { samples_read: log.tick_count() as u64, ..CollapseSummary::default() };
            let diagnostics = std::mem::take(&mut log.diagnostics);
            Ok(sink.finish(summary, diagnostics, input.display_name(), Some(native)))
        }
    }
}

/// Folds several inputs into one profile, each read to its end with its own
/// code logs and expander, the stacks added up: e.g. the `--prof` logs of a
/// process's isolates, each the code log of its own ticks. Detailed stacks
/// ([`FoldOptions::record_details`]) describe the first input's only.
pub fn fold_all(inputs: &[SampleInput], options: &FoldOptions) -> Result<FoldedProfile, Error> {
    let Some((first, rest)) = inputs.split_first() else {
        return Err(Error::new(PathBuf::new(), ErrorCause::NothingToFold));
    };
    let mut merged = fold(first, options)?;
    for input in rest {
        let profile = fold(input, options)?;
        merged.folder.merge(&profile.folder);
        merged.summary.samples_read += profile.summary.samples_read;
        merged.summary.samples_filtered_out += profile.summary.samples_filtered_out;
        merged.summary.event = merged.summary.event.take().or(profile.summary.event);
        merged.expansion.add(&profile.expansion);
        if let (Some(total), Some(native)) = (&mut merged.native, &profile.native) {
            total.symbolized += native.symbolized;
            total.in_library_without_symbol += native.in_library_without_symbol;
            total.outside_libraries += native.outside_libraries;
        }
        merged.diagnostics.merge(&profile.diagnostics);
        merged.input_name = format!("{}, {}", merged.input_name, profile.input_name);
    }
    let folded = merged.folder.summary();
    merged.summary.take_folder_counts(&folded);
    Ok(merged)
}

/// Folds a perf script, on several threads when nothing needs one folder.
fn fold_perf_script(path: &Path, input: &SampleInput, options: &FoldOptions) -> Result<FoldedProfile, Error> {
    let code_logs = CodeLogs::load(options.code_log_options())?;
    let (stream, cut_short) = open_stream_allowing_cut(path)?;
    let name = if path == Path::new("-") { Path::new("<stdin>") } else { path };
    let mut profile = fold_perf_script_text(stream, name, code_logs, options).map_err(Error::at::<io::Error>(path))?;
    profile.input_name = input.display_name();
    if cut_short.is_set() {
        profile.diagnostics.add_compressed_cut(name, &format!("{} samples", profile.summary.samples_read));
    }
    Ok(profile)
}

/// [`fold`] of `perf script` text already open, with its processes' code
/// logs and jitdumps already loaded: what `fold` does with a perf script once
/// it has opened it (benches and fuzzing run this path). The warnings name
/// the text `name`. Only I/O errors are errors.
pub fn fold_perf_script_from<R: BufRead>(
    stream: R,
    name: &Path,
    code_logs: CodeLogs,
    options: &FoldOptions,
) -> io::Result<FoldedProfile> {
    Ok(with_expansion_warnings(fold_perf_script_text(stream, name, code_logs, options)?))
}

/// [`fold_perf_script_from`] without the warnings of the whole fold.
fn fold_perf_script_text<R: BufRead>(
    stream: R,
    name: &Path,
    code_logs: CodeLogs,
    options: &FoldOptions,
) -> io::Result<FoldedProfile> {
    let threads = options.thread_count();
    let input_name = name.display().to_string();
    // Detailed outputs read one folder and its expander, a timeline every
    // sample in time order; a process discovered on the way would be seen by
    // one thread only.
    let parallel = threads > 1 && !options.record_details && !options.timeline && !code_logs.discovers_processes();
    let (mut profile, warnings) = if parallel {
        let expanders = (0..threads).map(|_| V8Expander::new(code_logs.clone(), options.expand)).collect();
        let outcome = fold_parallel(stream, &options.collapse, expanders)?;
        let mut expansion = ExpansionStats::default();
        for expander in &outcome.expanders {
            expansion.add(&expander.stats);
        }
        let mut diagnostics = Diagnostics::new();
        diagnostics.merge(&code_logs.diagnostics);
        let warnings = outcome.summary.warnings.clone();
        let profile = FoldedProfile {
            folder: outcome.folder,
            details: None,
            code_logs: outcome.expanders[0].code_logs().clone(),
            summary: outcome.summary,
            expansion,
            native: None,
            diagnostics,
            input_name,
            timeline: None,
            threads,
        };
        (profile, warnings)
    } else {
        let mut sink = ExpandingSinks::new(code_logs, options);
        let mut reader = PerfScriptSource::new(stream, options.collapse.event_selection());
        read_with_sink(&mut sink, threads, |sink| reader.send_samples(sink))?;
        let summary = reader_summary(&reader);
        let warnings = summary.warnings.clone();
        (sink.finish(summary, Diagnostics::new(), input_name, None), warnings)
    };
    profile.diagnostics.add_perf_script(name, &warnings);
    Ok(profile)
}
