//! The expansion interface, between the sample sources and the sinks: a
//! [`FrameExpander`] replaces stack lines by the frames they stand for (V8's
//! JIT frames by the inline stacks of JavaScript functions,
//! `crate::v8::expand::V8Expander`), an [`ExpandedSample`] holds what it made
//! of one sample, and each [`StackSink`] (the folder, the timeline recorder)
//! takes the sample with it. A sink learns about an expanded code location
//! only through the expander's [`FrameExpander::location_details`]: no sink
//! and no renderer knows V8.

use std::borrow::Cow;
use std::fmt;

use crate::formats::v8log::Tier;
use crate::formats::v8log::name::LineColumn;
use crate::model::sample::{Frame, ModuleKind, Sample, SampleInterner};

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
    /// Whether the frames name native code the source could not name (a
    /// builtin of a binary without symbols, named from the code log):
    /// sinks treat them as the native frames they are, not as JIT code.
    native: bool,
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
        self.native = false;
    }

    /// Marks the frames as native code the source left unnamed
    /// ([`ExpandedFrames::is_native`]).
    pub fn set_native(&mut self) {
        self.native = true;
    }

    /// Whether the frames name native code (a builtin of a binary without
    /// symbols): sinks name them as native frames, without `_[j]`.
    pub fn is_native(&self) -> bool {
        self.native
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

    /// The code location `location` (an id this expander tagged frames
    /// with, [`ExpandedFrames::location`]) described for people: its
    /// address and inline stack. `None` by default: an expander without
    /// locations leaves its frames named only.
    fn location_details(&self, _location: u32) -> Option<LocationDetails<'_>> {
        None
    }
}

/// An expander lent: the caller keeps it, with its statistics, after the
/// fold (`collapse(input, options, &mut expander, output)`).
impl<Expander: FrameExpander + ?Sized> FrameExpander for &mut Expander {
    fn expand(&mut self, frame: &FrameContext<'_>, frames: &mut ExpandedFrames) -> bool {
        (**self).expand(frame, frames)
    }

    fn name_location(&self, location: u32, frames: &mut ExpandedFrames) {
        (**self).name_location(location, frames);
    }

    fn location_details(&self, location: u32) -> Option<LocationDetails<'_>> {
        (**self).location_details(location)
    }
}

/// A code location an expander tagged, described for the sinks that need
/// more than names (pprof, the reports, the timelines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationDetails<'expander> {
    /// The process's index among the expander's processes.
    pub process: usize,
    /// The process id, if known.
    pub pid: Option<u32>,
    /// The sampled runtime address.
    pub address: u64,
    /// The code object's name.
    pub code_name: &'expander str,
    /// The inline stack at the address, innermost first; the last frame is
    /// the code object's own function.
    pub frames: Vec<SourceFrame<'expander>>,
}

/// Where a frame's line and column come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PositionOrigin {
    /// The script text (log or disk) and the source-position table.
    Script,
    /// No script text: the function's own start, from its name.
    FunctionStart,
    /// Nothing known.
    Unknown,
}

/// One frame of an inline stack, described for people. Where the script
/// has a source map, the function, script, position and start are the
/// original ones (`crate::v8::source_map`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFrame<'map> {
    /// The frame's name in folded stacks: the jitdump name for the code
    /// object's own function, and for an inlined function the name V8 gives
    /// that function's own code, so both merge.
    pub frame_name: Cow<'map, str>,
    /// The bare function name (empty for top-level code).
    pub function_name: &'map str,
    /// The script's name (usually its path).
    pub script_name: &'map str,
    /// Line and column in the script.
    pub position: Option<LineColumn>,
    /// Where `position` comes from.
    pub position_origin: PositionOrigin,
    /// Where the function itself starts, when its V8 name carries it.
    pub function_start: Option<LineColumn>,
    /// Whether this function was inlined into the code object.
    pub inlined: bool,
    /// The tier of the code object it runs in.
    pub tier: Option<Tier>,
}

/// What the pipeline hands each expanded sample to: the stages after
/// expansion (the folder, the timeline recorder).
pub trait StackSink {
    /// Takes one sample with what `expander` made of its frames; the ids are
    /// those of `interner`, the same for every sample of one source, and
    /// the expanded frames' location ids are `expander`'s.
    fn add_sample(
        &mut self,
        sample: &Sample,
        interner: &SampleInterner,
        expanded: &ExpandedSample,
        expander: &dyn FrameExpander,
    );
}

/// The expander that passes every line through: output equals inferno's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoExpansion;

impl FrameExpander for NoExpansion {
    fn expand(&mut self, _frame: &FrameContext<'_>, _frames: &mut ExpandedFrames) -> bool {
        false
    }
}
