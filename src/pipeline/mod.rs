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

pub mod engine;
pub mod outputs;
pub mod parallel;
pub mod relay;

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use crate::collapse::{CollapseOptions, CollapseSummary, Folder};
use crate::diagnostics::{Diagnostics, WarningKind};
use crate::error::{Error, ErrorCause};
use crate::expansion::FrameExpander;
use crate::files::open_stream_allowing_cut;
use crate::model::stack_profile::StackProfile;
use crate::model::timeline::Timeline;
use crate::sources::perf_data::{PerfDataSource, recording_directory};
use crate::sources::perf_script::PerfScriptSource;
use crate::sources::ticks::{NativeFrameStats, TickLog};
use crate::v8::code_logs::{CodeLogOptions, CodeLogs};
use crate::v8::expand::{ExpandOptions, ExpansionStats, V8Expander};
use crate::v8::unexpanded::warn_unexpanded;
pub use engine::{BenchmarkFold, ExpandingSinks, Folded};
use relay::read_with_sink;

/// Where the samples come from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// Also fold the samples of each benchmark's windows (by process,
    /// thread and CLOCK_MONOTONIC time) into a folder of its own
    /// ([`FoldedProfile::benchmarks`]). Folds into one folder.
    pub benchmarks: Option<std::sync::Arc<crate::model::benchmarks::BenchmarkWindows>>,
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

/// The result of [`fold`]: the aggregated stacks, and what the outputs are
/// made from.
pub struct FoldedProfile {
    /// The aggregated stacks.
    pub(crate) folder: Folder,
    /// The stacks with their code locations, when
    /// [`FoldOptions::record_details`] asked for them (of the first input of
    /// [`fold_all`]).
    pub(crate) details: Option<StackProfile>,
    /// The processes' code logs and jitdumps (of the first input of
    /// [`fold_all`]).
    pub(crate) code_logs: CodeLogs,
    /// Samples read, kept, skipped; distinct stacks.
    pub(crate) summary: CollapseSummary,
    /// What happened to JIT frames, over all threads.
    pub(crate) expansion: ExpansionStats,
    /// How the native frames of V8 ticks were named.
    pub(crate) native: Option<NativeFrameStats>,
    /// Every reader's warnings: samples, code logs, jitdumps, binaries.
    pub(crate) diagnostics: Diagnostics,
    /// The input, for titles and messages.
    pub(crate) input_name: String,
    /// Every sample in time order, when [`FoldOptions::timeline`] asked for it.
    pub(crate) timeline: Option<Timeline>,
    /// The threads the folded text may be written with ([`FoldOptions::threads`]).
    pub(crate) threads: usize,
    /// Each benchmark's stacks, when [`FoldOptions::benchmarks`] gave them.
    pub(crate) benchmarks: Vec<BenchmarkFold>,
}

impl FoldedProfile {
    /// Writes the folded stacks as `inferno-collapse-perf` does (rendering
    /// them on a second thread when [`FoldOptions::threads`] allows); the
    /// number of distinct stacks written.
    pub fn write_folded<W: io::Write>(&self, output: W) -> io::Result<u64> {
        self.folder.write_folded_on(output, self.threads)
    }

    /// Samples read, kept and skipped; distinct stacks.
    pub fn summary(&self) -> &CollapseSummary {
        &self.summary
    }

    /// The stacks with their code locations (pprof and the reports are made
    /// from them), when [`FoldOptions::record_details`] asked for them.
    pub fn details(&self) -> Option<&StackProfile> {
        self.details.as_ref()
    }

    /// Every sample in time order with its thread (the `.cpuprofile` and the
    /// Firefox profile are made from it), when [`FoldOptions::timeline`]
    /// asked for it.
    pub fn timeline(&self) -> Option<&Timeline> {
        self.timeline.as_ref()
    }

    /// What happened to the JIT frames: expanded, left as they were, and why.
    pub fn expansion(&self) -> &ExpansionStats {
        &self.expansion
    }

    /// Every reader's warnings: samples, code logs, jitdumps, binaries.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// The input, as titles and messages name it.
    pub fn input_name(&self) -> &str {
        &self.input_name
    }
}

impl FoldedProfile {
    /// The profile of what `folded` folded with V8's code logs, the
    /// source's `diagnostics` (the code logs' added), named `input_name`:
    /// the one place a [`FoldedProfile`] is made.
    fn new(
        folded: Folded<V8Expander>,
        mut diagnostics: Diagnostics,
        input_name: String,
        native: Option<NativeFrameStats>,
        threads: usize,
    ) -> FoldedProfile {
        let Folded { folder, details, timeline, benchmarks, expanders, summary } = folded;
        let mut expansion = ExpansionStats::default();
        for expander in &expanders {
            expansion.add(&expander.stats);
        }
        // Every expander shares the processes' code logs.
        let code_logs =
            expanders.into_iter().next().map_or_else(|| CodeLogs::from_maps(Vec::new()), V8Expander::into_code_logs);
        diagnostics.merge(&code_logs.diagnostics);
        FoldedProfile {
            folder,
            details,
            code_logs,
            summary,
            expansion,
            native,
            diagnostics,
            input_name,
            timeline,
            threads,
            benchmarks,
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
    crate::v8::unexpanded::add_jitdump_cuts(&profile.code_logs, Some(&profile.expansion), &mut profile.diagnostics);
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
        // A map inside npm's (or vitest's) own install is its business.
        match crate::v8::tool_code::tool_install_of(&unusable.map) {
            Some(tool) => diagnostics.not_the_users(format!("a source map in {tool}'s install: {unusable}")),
            None => diagnostics.warn(WarningKind::SourceMapUnusable, || unusable.to_string()),
        }
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
            let mut sinks = ExpandingSinks::new(V8Expander::new(code_logs, options.expand), options);
            let event = options.collapse.event_filter.as_deref();
            let threads = options.thread_count();
            // On one thread, the symbols too are read there, when needed.
            let mut source = if threads > 1 { PerfDataSource::new() } else { PerfDataSource::new().on_one_thread() };
            let read = read_with_sink(&mut sinks, threads, |sink| source.read(path, event, sink))?;
            let summary = CollapseSummary {
                samples_read: read.samples_read,
                samples_filtered_out: read.samples_filtered_out,
                event: read.event,
                ..CollapseSummary::default()
            };
            Ok(FoldedProfile::new(sinks.finish(summary), read.diagnostics, input.display_name(), None, threads))
        }
        SampleInput::Ticks(path) => {
            let mut log = TickLog::read(path, options.code_logs.sources.clone())?;
            let expander = V8Expander::new(log.code_logs().clone(), options.expand);
            let mut sinks = ExpandingSinks::new(expander, options);
            let threads = options.thread_count();
            let native = read_with_sink(&mut sinks, threads, |sink| log.read_samples(sink));
            let summary = CollapseSummary { samples_read: log.tick_count() as u64, ..CollapseSummary::default() };
            let diagnostics = std::mem::take(&mut log.diagnostics);
            Ok(FoldedProfile::new(sinks.finish(summary), diagnostics, input.display_name(), Some(native), threads))
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
    // A process discovered on the way would be seen by one thread only.
    let parallel = !code_logs.discovers_processes();
    let folded =
        fold_perf_script_with(stream, options, parallel, || V8Expander::new(code_logs.clone(), options.expand))?;
    let warnings = folded.summary.warnings.clone();
    let mut profile = FoldedProfile::new(folded, Diagnostics::new(), name.display().to_string(), None, threads);
    profile.diagnostics.add_perf_script(name, &warnings);
    Ok(profile)
}

/// Folds `perf script` text with expanders `new_expander` makes: in chunks
/// on [`FoldOptions::threads`] threads ([`parallel`]) when `parallel` allows
/// it and nothing needs one folder (details) or every sample in time order
/// (a timeline); otherwise read on this thread and expanded and folded on
/// another ([`relay`]), or all on this one for one thread.
pub fn fold_perf_script_with<R: BufRead, Expander: FrameExpander + Send>(
    stream: R,
    options: &FoldOptions,
    parallel: bool,
    mut new_expander: impl FnMut() -> Expander,
) -> io::Result<Folded<Expander>> {
    let threads = options.thread_count();
    // One root per process is named from the whole input's samples, in
    // one folder; so are the benchmarks' windows.
    let one_folder = options.record_details
        || options.timeline
        || options.collapse.one_root_per_process
        || options.benchmarks.is_some();
    if parallel && threads > 1 && !one_folder {
        let expanders = (0..threads).map(|_| new_expander()).collect();
        return parallel::fold_in_chunks(stream, &options.collapse, expanders, parallel::CHUNK_BYTES);
    }
    let mut sinks = ExpandingSinks::new(new_expander(), options);
    let mut reader = PerfScriptSource::new(stream, options.collapse.event_selection());
    read_with_sink(&mut sinks, threads, |sink| reader.send_samples(sink))?;
    Ok(sinks.finish(reader_summary(&reader)))
}

/// What a perf script reader read, as a summary: samples read and filtered
/// out, the event kept, the lines skipped (the folder's counters left empty).
fn reader_summary<R: BufRead>(reader: &PerfScriptSource<R>) -> CollapseSummary {
    let statistics = reader.statistics();
    CollapseSummary {
        samples_read: statistics.samples + statistics.samples_filtered_out,
        samples_filtered_out: statistics.samples_filtered_out,
        event: reader.selected_event().map(str::to_owned),
        warnings: reader.warnings().clone(),
        ..CollapseSummary::default()
    }
}

/// Reads `perf script` text from `input`, folds its samples on this thread
/// and writes the folded stacks to `output` (then flushes it), as
/// `inferno-collapse-perf` does: the output is byte for byte what inferno
/// 0.12.8's `perf` collapser writes with the same options. The counts
/// written sum to [`CollapseSummary::total_count`]. Only I/O errors are
/// errors. ([`fold`] expands V8's frames too, and writes more outputs.)
pub fn collapse<R: BufRead, W: io::Write>(
    input: R,
    options: &CollapseOptions,
    output: W,
) -> io::Result<CollapseSummary> {
    collapse_with(input, options, crate::expansion::NoExpansion, output)
}

/// [`collapse`] with `expander` replacing stack lines by frames (any number,
/// none drops the line). Pass `&mut expander` to keep the expander and its
/// statistics.
pub fn collapse_with<R: BufRead, W: io::Write, Expander: FrameExpander + Send>(
    input: R,
    options: &CollapseOptions,
    expander: Expander,
    output: W,
) -> io::Result<CollapseSummary> {
    let options = FoldOptions { collapse: options.clone(), threads: Some(1), ..FoldOptions::default() };
    let mut expander = Some(expander);
    let folded = fold_perf_script_with(input, &options, false, || expander.take().expect("one thread, one expander"))?;
    let mut summary = folded.summary;
    summary.distinct_stacks = folded.folder.write_folded(output)?;
    Ok(summary)
}
