//! Folding `perf script` samples into stacks, like `inferno-collapse-perf`.
//!
//! [`collapse`] reads `perf script` text and writes folded stacks
//! (`root;caller;callee count`, sorted by stack). With [`NoExpansion`] the
//! output is byte for byte what inferno 0.12.8's `perf` collapser writes with
//! the same options. A [`FrameExpander`] may replace any stack line by several
//! frames: V8 JIT frames by the inline stacks of JavaScript functions.
//!
//! The pieces: [`PerfScriptSource`] yields
//! samples, a [`Folder`] names their frames (the rules are in [`naming`]) and
//! counts distinct stacks, and [`Folder::write_folded`] renders them (or
//! [`Folder::stacks`] hands the counts to other outputs).

mod folded;
pub mod naming;
pub mod parallel;
mod stack_table;

use std::fmt;
use std::io::{self, BufRead, Write};

use crate::formats::perf_script::{EventSelection, ReaderWarnings};
use crate::model::sample::{Frame, ModuleKind, Sample, SampleInterner, SampleSink};
use crate::sources::perf_script::PerfScriptSource;

pub use folded::{DetailedFrame, DetailedStack, Folder, FrameIdTranslation, FrameOrigin, PassedThroughKind};
pub use stack_table::{FrameId, StackIndex, StackTable};

/// Options of the collapser, with inferno's meanings and defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollapseOptions {
    /// Name the root frame `comm-PID` instead of `comm` (inferno's
    /// `include_pid`; a `?` stands for a PID perf did not print). Default
    /// `false`.
    pub include_pid: bool,
    /// Name the root frame `comm-PID/TID`; implies `include_pid` (inferno's
    /// `include_tid`). Default `false`.
    pub include_tid: bool,
    /// Name frames without a symbol `[module <address>]` /
    /// `[unknown <address>]` instead of `[module]` / `[unknown]` (inferno's
    /// `include_addrs`). Default `false`.
    pub include_addrs: bool,
    /// Suffix kernel frames with `_[k]` (inferno's `annotate_kernel`).
    /// Default `false`.
    pub annotate_kernel: bool,
    /// Suffix JIT frames with `_[j]`: passed-through frames whose module is
    /// `/tmp/perf-PID.map` or `.../jitted-PID-N.so` (inferno's
    /// `annotate_jit`), and every frame an expander produced, except inlined
    /// ones when `annotate_inline` is on. Default `false`.
    pub annotate_jit: bool,
    /// Suffix frames an expander marked inlined with `_[i]` (passed-through
    /// Java `a->b` inline chains always get it, as in inferno). Default
    /// `false`.
    pub annotate_inline: bool,
    /// Only fold samples of this event type (e.g. `cpu-clock`); `None` means
    /// the first event type in the input, as inferno does. Default `None`.
    pub event_filter: Option<String>,
    /// Function names after which a stack is cut: when a stack line's
    /// function (without `+0x` offset) equals one of them, that line's frames
    /// are kept and all frames toward the root, including the root frame, are
    /// dropped (inferno's `skip_after`). An expanded frame whose name equals
    /// one cuts the stack after that frame. Default empty.
    pub skip_after: Vec<String>,
}

impl CollapseOptions {
    /// The reader's event selection these options ask for.
    pub fn event_selection(&self) -> EventSelection {
        match &self.event_filter {
            Some(event) => EventSelection::Only(event.clone()),
            None => EventSelection::FirstSeen,
        }
    }
}

/// What the collapser asks an expander about each frame of a sample.
#[derive(Debug, Clone, Copy)]
pub struct FrameContext<'a> {
    /// The sample.
    pub sample: &'a Sample,
    /// The frame.
    pub frame: &'a Frame,
    /// The frame's index in the sample, 0 = the sampled instruction.
    pub index: usize,
    /// The texts the sample's ids stand for.
    pub interner: &'a SampleInterner,
}

impl<'a> FrameContext<'a> {
    /// The sample's command (thread) name.
    pub fn comm(&self) -> &'a str {
        self.interner.string_or_empty(self.sample.comm)
    }

    /// The frame's symbol without offset (empty when there is none).
    pub fn symbol(&self) -> &'a str {
        self.interner.string_or_empty(self.frame.symbol)
    }

    /// The frame's module path.
    pub fn module_path(&self) -> &'a str {
        self.interner.module_path(self.frame.module)
    }

    /// The frame's module kind.
    pub fn module_kind(&self) -> ModuleKind {
        self.interner.module_kind(self.frame.module)
    }
}

/// One frame produced by an expansion, as stored in [`ExpandedFrames`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpandedFrame<'a> {
    /// The frame's name before tidying and annotation.
    pub name: &'a str,
    /// Whether the function was inlined into its caller (the next frame).
    pub inlined: bool,
}

/// The frames an expander produces for one stack line, innermost first, the
/// last being the code object's own function. The collapser reuses one
/// instance, so pushing names copies them into a reused buffer: no
/// allocation per frame.
#[derive(Debug, Clone, Default)]
pub struct ExpandedFrames {
    /// All names, concatenated.
    names: String,
    /// Each frame's range in `names` and its inlined flag.
    entries: Vec<ExpandedEntry>,
    /// The expander's id for the code location the frames stand for, which
    /// detailed outputs (pprof, reports) resolve through the expander.
    location: Option<u32>,
    /// Whether the expander left the names out, to be asked for with
    /// [`FrameExpander::name_location`] by a sink that has not named this
    /// location before (most have: copying the names of every frame of
    /// every sample was a tenth of the time).
    unnamed: bool,
}

/// One frame of [`ExpandedFrames`].
#[derive(Debug, Clone, Copy)]
struct ExpandedEntry {
    /// Start of the name in `names`.
    start: usize,
    /// End of the name in `names`.
    end: usize,
    /// Whether the frame is inlined.
    inlined: bool,
}

impl ExpandedFrames {
    /// An empty list.
    pub fn new() -> ExpandedFrames {
        ExpandedFrames::default()
    }

    /// Appends a frame (the next one toward the caller).
    pub fn push(&mut self, name: &str, inlined: bool) {
        let start = self.names.len();
        self.names.push_str(name);
        self.entries.push(ExpandedEntry { start, end: self.names.len(), inlined });
    }

    /// Appends a frame whose name is formatted in place, e.g.
    /// `frames.push_formatted(format_args!("{function} {url}:{line}"), true)`.
    pub fn push_formatted(&mut self, name: fmt::Arguments<'_>, inlined: bool) {
        let start = self.names.len();
        // Writing into a String cannot fail.
        let _ = fmt::Write::write_fmt(&mut self.names, name);
        self.entries.push(ExpandedEntry { start, end: self.names.len(), inlined });
    }

    /// The number of frames.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no frame.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes all frames and the location.
    pub fn clear(&mut self) {
        self.names.clear();
        self.entries.clear();
        self.location = None;
        self.unnamed = false;
    }

    /// Stands for the frames of the expander's `location`, without their
    /// names: a sink asks [`FrameExpander::name_location`] for them.
    pub fn set_unnamed_location(&mut self, location: u32) {
        self.names.clear();
        self.entries.clear();
        self.location = Some(location);
        self.unnamed = true;
    }

    /// Whether the names were left out
    /// ([`ExpandedFrames::set_unnamed_location`]).
    pub fn is_unnamed(&self) -> bool {
        self.unnamed
    }

    /// Tags the frames with the expander's id for their code location (one
    /// sampled PC), so that detailed outputs can ask the expander about it.
    pub fn set_location(&mut self, location: u32) {
        self.location = Some(location);
    }

    /// The location id set by [`ExpandedFrames::set_location`].
    pub fn location(&self) -> Option<u32> {
        self.location
    }

    /// The frame at `index` (0 = innermost).
    pub fn get(&self, index: usize) -> Option<ExpandedFrame<'_>> {
        self.entries.get(index).map(|entry| self.frame(entry))
    }

    /// The frames, innermost first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ExpandedFrame<'_>> + '_ {
        self.entries.iter().map(|entry| self.frame(entry))
    }

    /// Resolves an entry.
    fn frame(&self, entry: &ExpandedEntry) -> ExpandedFrame<'_> {
        ExpandedFrame { name: &self.names[entry.start..entry.end], inlined: entry.inlined }
    }
}

/// What an expander made of each frame of one sample: the stage between
/// sources and sinks. Reused from sample to sample (no allocation once its
/// buffers have grown).
#[derive(Debug, Clone, Default)]
pub struct ExpandedSample {
    /// Per frame of the sample, the frames that replace it.
    replacements: Vec<ExpandedFrames>,
    /// Per frame of the sample, whether it is replaced.
    replaced: Vec<bool>,
    /// The number of frames of the sample.
    frame_count: usize,
}

impl ExpandedSample {
    /// An empty expansion.
    pub fn new() -> ExpandedSample {
        ExpandedSample::default()
    }

    /// Asks `expander` about every frame of `sample`, leaf first.
    pub fn expand<E: FrameExpander + ?Sized>(&mut self, sample: &Sample, interner: &SampleInterner, expander: &mut E) {
        let frame_count = sample.frames.len();
        if self.replacements.len() < frame_count {
            self.replacements.resize_with(frame_count, ExpandedFrames::new);
            self.replaced.resize(frame_count, false);
        }
        self.frame_count = frame_count;
        for (index, frame) in sample.frames.iter().enumerate() {
            let frames = &mut self.replacements[index];
            frames.clear();
            let context = FrameContext { sample, frame, index, interner };
            self.replaced[index] = expander.expand(&context, frames);
        }
    }

    /// The frames that replace frame `index` of the sample (innermost first,
    /// possibly none), or `None` when it passes through as it is.
    pub fn replacement(&self, index: usize) -> Option<&ExpandedFrames> {
        (index < self.frame_count && self.replaced[index]).then(|| &self.replacements[index])
    }
}

/// Replaces stack lines by the frames they stand for (e.g. a V8 code object
/// by the JavaScript functions inlined into it).
pub trait FrameExpander {
    /// Called for each frame of each kept sample, leaf first, with
    /// `frames` empty. Returns `true` to replace the line by the frames pushed
    /// to `frames` (innermost first, the last being the code object's own
    /// function; none drops the line), or `false` to pass the line through
    /// exactly as inferno would name it (what was pushed is then ignored).
    fn expand(&mut self, frame: &FrameContext<'_>, frames: &mut ExpandedFrames) -> bool;

    /// Pushes the frames of `location` to `frames` (empty), for an
    /// expansion that left them out ([`ExpandedFrames::set_unnamed_location`]).
    fn name_location(&self, _location: u32, _frames: &mut ExpandedFrames) {}
}

/// The expander that passes every line through: output equals inferno's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoExpansion;

impl FrameExpander for NoExpansion {
    fn expand(&mut self, _frame: &FrameContext<'_>, _frames: &mut ExpandedFrames) -> bool {
        false
    }
}

/// What a collapse did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollapseSummary {
    /// Samples whose event line was read (of every event type).
    pub samples_read: u64,
    /// Samples skipped because of their event type (see
    /// [`CollapseOptions::event_filter`]).
    pub samples_filtered_out: u64,
    /// Samples of the selected event type with no frame left after naming
    /// (no stack line, or only lines inferno drops); like inferno, they are
    /// not written.
    pub samples_without_frames: u64,
    /// Samples folded into a written stack.
    pub samples_kept: u64,
    /// The sum of the counts written: over kept samples, the period or 1.
    pub total_count: u64,
    /// The number of distinct stacks: lines written by [`collapse`]. (From
    /// [`Folder::summary`], distinct frame sequences, which differ only if a
    /// comm contains `;`.)
    pub distinct_stacks: u64,
    /// The event type that was kept, if any was seen or given.
    pub event: Option<String>,
    /// Stack lines an expander replaced.
    pub stack_lines_expanded: u64,
    /// Stack lines named as inferno names them.
    pub stack_lines_passed_through: u64,
    /// Frames expanders produced.
    pub expanded_frames: u64,
    /// Lines the reader could not parse.
    pub warnings: ReaderWarnings,
}

impl CollapseSummary {
    /// Takes the counters a [`Folder`] keeps from its summary `folded`,
    /// keeping the reader's (samples read and filtered out, event, warnings).
    pub fn take_folder_counts(&mut self, folded: &CollapseSummary) {
        self.samples_kept = folded.samples_kept;
        self.samples_without_frames = folded.samples_without_frames;
        self.total_count = folded.total_count;
        self.distinct_stacks = folded.distinct_stacks;
        self.stack_lines_expanded = folded.stack_lines_expanded;
        self.stack_lines_passed_through = folded.stack_lines_passed_through;
        self.expanded_frames = folded.expanded_frames;
    }

    /// Samples read but not written: filtered out or without frames.
    pub fn samples_skipped(&self) -> u64 {
        self.samples_filtered_out + self.samples_without_frames
    }
}

/// Reads `perf script` text from `input`, folds its samples with `expander`
/// and writes the folded stacks to `output` (then flushes it).
///
/// With [`NoExpansion`], the output equals inferno 0.12.8's `perf` collapser
/// with the same options. The counts written sum to
/// [`CollapseSummary::total_count`]. Only I/O errors are errors.
///
/// The inferno-compatible entry for any [`FrameExpander`], on one thread;
/// the main job runs [`crate::pipeline::fold`] (threads, V8's code logs,
/// timelines, the warnings of the whole fold).
pub fn collapse<R: BufRead, W: Write>(
    input: R,
    options: &CollapseOptions,
    expander: &mut dyn FrameExpander,
    output: W,
) -> io::Result<CollapseSummary> {
    let mut folder = Folder::new(options);
    let mut summary = fold_samples(input, options, expander, &mut folder)?;
    summary.distinct_stacks = folder.write_folded(output)?;
    Ok(summary)
}

/// Reads `perf script` text from `input` and folds its samples into
/// `folder` with `expander`. The summary's `distinct_stacks` counts distinct
/// frame sequences.
pub(crate) fn fold_samples<R: BufRead>(
    input: R,
    options: &CollapseOptions,
    expander: &mut dyn FrameExpander,
    folder: &mut Folder,
) -> io::Result<CollapseSummary> {
    let mut reader = PerfScriptSource::new(input, options.event_selection());
    let mut sink = ExpandThenFold { expander, folder, expanded: ExpandedSample::new() };
    reader.send_samples(&mut sink)?;
    let mut summary = reader_summary(&reader);
    summary.take_folder_counts(&folder.summary());
    Ok(summary)
}

/// What a perf script reader read, as a summary: samples read and filtered
/// out, the event kept, the lines skipped (the folder's counters left empty).
pub fn reader_summary<R: BufRead>(reader: &PerfScriptSource<R>) -> CollapseSummary {
    let statistics = reader.statistics();
    CollapseSummary {
        samples_read: statistics.samples + statistics.samples_filtered_out,
        samples_filtered_out: statistics.samples_filtered_out,
        event: reader.selected_event().map(str::to_owned),
        warnings: reader.warnings().clone(),
        ..CollapseSummary::default()
    }
}

/// Expands each sample and folds it: [`fold_samples`]' sink, for any
/// expander (the pipeline's own, [`crate::pipeline::ExpandingSinks`], also
/// records timelines and loads V8's code logs).
struct ExpandThenFold<'a> {
    expander: &'a mut dyn FrameExpander,
    folder: &'a mut Folder,
    expanded: ExpandedSample,
}

impl SampleSink for ExpandThenFold<'_> {
    fn add_sample(&mut self, sample: &Sample, interner: &SampleInterner) {
        self.expanded.expand(sample, interner, self.expander);
        self.folder.add_sample(sample, interner, &self.expanded, &*self.expander);
    }
}
