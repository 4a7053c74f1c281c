//! The sink that records the [`Timeline`]: every sample in time order with
//! its thread and its stack of typed frames.
//!
//! ```text
//! Sample + ExpandedSample ─► TimelineRecorder (a StackSink beside the Folder) ─► Timeline
//!                              expanded frames: FrameExpander::location_details
//!                              other frames: symbol and module kind
//! ```

use fxhash::FxHashMap;

use crate::collapse::naming::{fix_partially_demangled_rust_symbol, push_function_or_module, tidy_generic};
use crate::expansion::{ExpandedFrames, ExpandedSample, FrameExpander, StackSink};
use crate::model::frames::{FrameKind, LocationId};
use crate::model::sample::{ModuleId, Sample, SampleInterner, StringId};
use crate::model::timeline::{StackId, ThreadId, Timeline, TimelineSample, TimelineThread};

/// What a passed-through frame's location depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct PassedThroughKey {
    symbol: Option<StringId>,
    module: ModuleId,
}

/// A thread as samples name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ThreadKey {
    pid: Option<u32>,
    tid: Option<u32>,
}

/// A thread met before: its id and the comm of its last sample.
#[derive(Debug, Clone, Copy)]
struct KnownThread {
    id: ThreadId,
    last_comm: Option<StringId>,
}

/// The sink that records the [`Timeline`]: each sample's thread, time and
/// stack, its expanded frames described by the [`FrameExpander`] that made
/// them.
#[derive(Default)]
pub struct TimelineRecorder {
    timeline: Timeline,
    /// Passed-through frames located before (`None`: a frame inferno
    /// skips, like `(anonymous)` process names).
    passed_through: FxHashMap<PassedThroughKey, Option<LocationId>>,
    /// Expanded locations by the expander's location id.
    expanded: Vec<Option<LocationId>>,
    /// The threads met.
    threads: FxHashMap<ThreadKey, KnownThread>,
    /// The stack being built, leaf first.
    stack: Vec<LocationId>,
    /// A frame name being built.
    name: String,
}

impl TimelineRecorder {
    /// An empty recorder.
    pub fn new() -> TimelineRecorder {
        TimelineRecorder::default()
    }

    /// The timeline, its samples sorted by time; `event` names what they count.
    pub fn finish(self, event: Option<String>) -> Timeline {
        let mut timeline = self.timeline;
        timeline.samples.sort_by_key(|sample| sample.time_nanoseconds);
        timeline.event = event;
        timeline
    }

    /// The location of a frame v8inline does not expand, named as inferno
    /// names it (its function, `[module]` for an unknown one in a known
    /// module, `[unknown]`), of the kind its module says.
    fn passed_through_location(
        &mut self,
        sample: &Sample,
        index: usize,
        interner: &SampleInterner,
    ) -> Option<LocationId> {
        let frame = &sample.frames[index];
        let key = PassedThroughKey { symbol: frame.symbol, module: frame.module };
        if let Some(&location) = self.passed_through.get(&key) {
            return location;
        }
        // inferno names a frame without a symbol " " and skips functions
        // starting with `(` (Java's process names).
        let function = frame.symbol.map_or(" ", |symbol| interner.string(symbol));
        let location = (!function.starts_with('(')).then(|| {
            let module = interner.module_info(frame.module);
            self.name.clear();
            let function = fix_partially_demangled_rust_symbol(function);
            push_function_or_module(&mut self.name, &function, interner.string(module.path), "", false);
            tidy_generic(&mut self.name);
            let kind = if module.kind.is_kernel() {
                FrameKind::Kernel
            } else if module.kind.is_jit() {
                FrameKind::Jit
            } else {
                FrameKind::Native
            };
            self.timeline.frames.named_location(&self.name, kind)
        });
        self.passed_through.insert(key, location);
        location
    }

    /// The location of an expanded code location, described once.
    fn expanded_location(&mut self, location: u32, expander: &dyn FrameExpander) -> Option<LocationId> {
        if let Some(&Some(known)) = self.expanded.get(location as usize) {
            return Some(known);
        }
        let details = expander.location_details(location)?;
        let id = self.timeline.frames.expanded_location(&details, usize::MAX);
        let index = location as usize;
        if self.expanded.len() <= index {
            self.expanded.resize(index + 1, None);
        }
        self.expanded[index] = Some(id);
        Some(id)
    }

    /// The thread of a sample, its name updated to the sample's comm.
    fn thread(&mut self, sample: &Sample, interner: &SampleInterner) -> ThreadId {
        let threads = &mut self.timeline.threads;
        let key = ThreadKey { pid: sample.pid, tid: sample.tid };
        let known = self.threads.entry(key).or_insert_with(|| {
            let name = interner.string_or_empty(sample.comm).to_string();
            threads.push(TimelineThread {
                pid: sample.pid,
                tid: sample.tid,
                name: name.clone(),
                first_name: name,
                samples: 0,
            });
            KnownThread { id: ThreadId(threads.len() as u32 - 1), last_comm: sample.comm }
        });
        let thread = &mut threads[known.id.index()];
        if known.last_comm != sample.comm {
            known.last_comm = sample.comm;
            thread.name = interner.string_or_empty(sample.comm).to_string();
        }
        thread.samples += 1;
        known.id
    }
}

impl StackSink for TimelineRecorder {
    fn add_sample(
        &mut self,
        sample: &Sample,
        interner: &SampleInterner,
        expanded: &ExpandedSample,
        expander: &dyn FrameExpander,
    ) {
        self.stack.clear();
        for index in 0..sample.frames.len() {
            match expanded.replacement(index) {
                Some(frames) => match frames.location().and_then(|location| self.expanded_location(location, expander))
                {
                    Some(location) => self.stack.push(location),
                    // Frames no location describes: named as the expander named them.
                    None => {
                        let mut named = ExpandedFrames::new();
                        let frames = match frames.location().filter(|_| frames.is_unnamed()) {
                            Some(unnamed) => {
                                expander.name_location(unnamed, &mut named);
                                &named
                            }
                            None => frames,
                        };
                        for frame in frames.iter() {
                            let location = self.timeline.frames.named_location(frame.name, FrameKind::Jit);
                            self.stack.push(location);
                        }
                    }
                },
                None => {
                    if let Some(location) = self.passed_through_location(sample, index, interner) {
                        self.stack.push(location);
                    }
                }
            }
        }
        // As the folder, which writes no stack for them.
        if self.stack.is_empty() {
            return;
        }
        let stack = match self.timeline.stacks.get_index_of(self.stack.as_slice()) {
            Some(index) => index,
            None => self.timeline.stacks.insert_full(self.stack.as_slice().into()).0,
        };
        let thread = self.thread(sample, interner);
        let time_nanoseconds = match sample.clock_nanoseconds {
            Some(time) => time,
            None => {
                self.timeline.samples_without_time += 1;
                let previous = self.timeline.samples.last();
                previous.map_or(0, |previous| previous.time_nanoseconds + sample.period.unwrap_or(0))
            }
        };
        self.timeline.samples.push(TimelineSample {
            time_nanoseconds,
            thread,
            stack: StackId(stack as u32),
            period: sample.period,
        });
    }
}
