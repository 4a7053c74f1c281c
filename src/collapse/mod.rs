//! The sinks: folding samples into stacks, like `inferno-collapse-perf`,
//! and the other aggregates of expanded samples.
//!
//! A [`Folder`] names the frames of expanded samples (the rules are in
//! [`naming`]) and counts distinct stacks (`root;caller;callee count`,
//! sorted by stack), and [`Folder::write_folded`] renders them (or
//! [`Folder::stacks`] hands the counts to other outputs); [`details`] turns
//! them into a `StackProfile`, and [`timeline`] records every sample in
//! time order. The pipeline feeds them ([`crate::pipeline::engine`]).

pub mod details;
mod folded;
pub mod naming;
pub mod process_roots;
pub mod skip_after;
mod stack_table;
pub mod task_root;
pub mod timeline;

use crate::expansion::{ExpandedSample, FrameExpander, StackSink};
use crate::formats::perf_script::{EventSelection, ReaderWarnings};
use crate::model::sample::{Sample, SampleInterner};

pub use folded::{DetailedFrame, DetailedStack, Folder, FrameIdTranslation, FrameOrigin, PassedThroughKind};
pub use stack_table::{FrameId, StackIndex, StackTable};

/// Options of the collapser, with inferno's meanings and defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
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
    /// One root frame per process (per thread with `include_tid`), named
    /// once, from its main thread's last name (`comm-PID`), even when it
    /// retitles itself (npm: `node`, `npm`, `npm run bench`) or renames its
    /// threads; a sample whose pid is unknown keeps a root per name.
    /// Default `false`: a root per name (comm), as inferno's. The main job
    /// turns it on with `--one-root-per-process`, `record` always.
    pub one_root_per_process: bool,
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

impl StackSink for Folder {
    fn add_sample(
        &mut self,
        sample: &Sample,
        interner: &SampleInterner,
        expanded: &ExpandedSample,
        expander: &dyn FrameExpander,
    ) {
        Folder::add_sample(self, sample, interner, expanded, expander);
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
    /// The number of distinct stacks: lines written by
    /// [`crate::pipeline::collapse`]. (From
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
