//! Every sample in time order with its thread and its stack of typed frames:
//! what the timeline outputs (`output::cpuprofile` for Chrome DevTools, VS
//! Code and speedscope, `output::firefox` for the Firefox Profiler) need and
//! folded stacks lose: times and threads. `collapse::timeline` records it.
//!
//! Frames are the [`FrameTable`]'s functions and locations, the same types
//! pprof and the reports are built from: an expanded location holds one
//! frame per inlined function (innermost first, each with its tier or
//! `Inlined`, its function's start and the line running in it), a frame
//! v8inline does not expand is one location named as `inferno-collapse-perf`
//! names it (without annotations or addresses).

use indexmap::IndexSet;

use super::frames::{FrameKind, FrameTable, LocationId, ProfileFrame};

/// The number of a thread in [`Timeline::threads`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(pub(crate) u32);

impl ThreadId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The number of a stack in [`Timeline::stacks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackId(pub(crate) u32);

impl StackId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A sampled thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineThread {
    /// The process id, when the source knows it.
    pub pid: Option<u32>,
    /// The thread id, when the source knows it.
    pub tid: Option<u32>,
    /// The thread's name: its command (comm) in its last sample (node
    /// renames its main thread `MainThread` once it runs).
    pub name: String,
    /// Its command in its first sample: for a main thread, the program's
    /// name (`node`) until it renamed itself.
    pub first_name: String,
    /// How many of the timeline's samples are of this thread.
    pub samples: u64,
}

/// One sample of the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimelineSample {
    /// When it was taken, in nanoseconds (`Sample::clock_nanoseconds` of the sample model).
    pub time_nanoseconds: u64,
    /// Its thread.
    pub thread: ThreadId,
    /// Its stack.
    pub stack: StackId,
    /// Its period (nanoseconds of CPU time for `cpu-clock`), when the
    /// source gives one.
    pub period: Option<u64>,
}

/// Every sample in time order, with its thread and stack; see the module
/// documentation.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// The functions and locations the stacks are made of.
    pub frames: FrameTable,
    /// The distinct stacks: locations, leaf first (each location's frames
    /// innermost first). A stack's index is its [`StackId`].
    pub stacks: IndexSet<Box<[LocationId]>>,
    /// The sampled threads, in the order of their first sample; an index is
    /// a [`ThreadId`].
    pub threads: Vec<TimelineThread>,
    /// The samples, sorted by time (samples of equal time in input order).
    pub samples: Vec<TimelineSample>,
    /// Samples that came without a time: each was given the time of the
    /// sample before it plus its period.
    pub samples_without_time: u64,
    /// The perf event the samples are of, when known.
    pub event: Option<String>,
}

impl Timeline {
    /// The thread with this id.
    pub fn thread(&self, id: ThreadId) -> &TimelineThread {
        &self.threads[id.index()]
    }

    /// The locations of a stack, leaf first.
    pub fn stack(&self, id: StackId) -> &[LocationId] {
        &self.stacks[id.index()]
    }

    /// The frames of a stack, leaf first (each location's frames innermost
    /// first).
    pub fn frames(&self, id: StackId) -> impl Iterator<Item = &ProfileFrame> + '_ {
        self.stack(id).iter().flat_map(|&location| self.frames.location(location).frames.iter())
    }

    /// The function name of a frame.
    pub fn function_name(&self, frame: &ProfileFrame) -> &str {
        &self.frames.function(frame.function).name
    }

    /// The time from the first sample to the last, in nanoseconds (0 for
    /// fewer than two samples).
    pub fn duration_nanoseconds(&self) -> u64 {
        match (self.samples.first(), self.samples.last()) {
            (Some(first), Some(last)) => last.time_nanoseconds - first.time_nanoseconds,
            _ => 0,
        }
    }

    /// The interval between samples, in nanoseconds: the period of
    /// `cpu-clock` and `task-clock` samples (nanoseconds of CPU time), else
    /// the median time between consecutive samples of the thread with the
    /// most samples. `None` without two samples to tell.
    pub fn sampling_interval_nanoseconds(&self) -> Option<u64> {
        let is_clock = matches!(self.event.as_deref(), Some("cpu-clock" | "task-clock"));
        if is_clock && let Some(period) = self.samples.iter().find_map(|sample| sample.period) {
            return Some(period);
        }
        let busiest = self.busiest_thread()?;
        let mut previous = None;
        let mut gaps = Vec::new();
        for sample in self.samples.iter().filter(|sample| sample.thread == busiest) {
            if let Some(previous) = previous {
                gaps.push(sample.time_nanoseconds - previous);
            }
            previous = Some(sample.time_nanoseconds);
        }
        if gaps.is_empty() {
            return None;
        }
        let middle = gaps.len() / 2;
        Some(*gaps.select_nth_unstable(middle).1)
    }

    /// The thread with the most samples (the first of those with as many).
    pub fn busiest_thread(&self) -> Option<ThreadId> {
        (0..self.threads.len())
            .max_by_key(|&index| (self.threads[index].samples, std::cmp::Reverse(index)))
            .map(|index| ThreadId(index as u32))
    }

    /// Where garbage collection starts in a stack given root first: the
    /// index of the outermost frame of V8's collector (see
    /// [`is_garbage_collection`]), if any.
    pub fn garbage_collection_start(&self, frames_from_root: &[&ProfileFrame]) -> Option<usize> {
        frames_from_root.iter().position(|frame| {
            matches!(frame.kind, FrameKind::Native | FrameKind::Jit) && is_garbage_collection(self.function_name(frame))
        })
    }
}

/// The functions that start V8's garbage collection: on the thread that
/// allocates (`Heap::CollectGarbage` and what it calls) and on V8's worker
/// threads (concurrent marking, sweeping, parallel scavenging), by their C++
/// names in V8's `src/heap/`. Native frames only: a sample in one of them,
/// or in what they call, is garbage collection time.
const GARBAGE_COLLECTION_PREFIXES: [&str; 22] = [
    "v8::internal::Heap::CollectGarbage",
    "v8::internal::Heap::CollectAllGarbage",
    "v8::internal::Heap::CollectAllAvailableGarbage",
    "v8::internal::Heap::PerformGarbageCollection",
    "v8::internal::Heap::Scavenge",
    "v8::internal::Heap::MarkCompact",
    "v8::internal::Heap::MinorMarkSweep",
    "v8::internal::Heap::FinalizeIncrementalMarking",
    "v8::internal::Heap::StartIncrementalMarking",
    "v8::internal::ScavengerCollector::",
    "v8::internal::Scavenger::",
    "v8::internal::MarkCompactCollector::",
    "v8::internal::MinorMarkCompactCollector::",
    "v8::internal::MinorMarkSweepCollector::",
    "v8::internal::ConcurrentMarking::",
    "v8::internal::IncrementalMarking::",
    "v8::internal::IncrementalMarkingJob::",
    "v8::internal::ScavengeJob::",
    "v8::internal::Sweeper::",
    "v8::internal::ArrayBufferSweeper::",
    "v8::internal::MemoryReducer::",
    "cppgc::internal::",
];

/// Whether a native function is (the start of) V8's garbage collection:
/// its name starts with one of V8's collector functions or classes
/// (`v8::internal::Heap::CollectGarbage`, `v8::internal::ConcurrentMarking::`...).
pub fn is_garbage_collection(function_name: &str) -> bool {
    GARBAGE_COLLECTION_PREFIXES.iter().any(|prefix| function_name.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_collection_is_told_by_v8_heap_functions() {
        assert!(is_garbage_collection("v8::internal::Heap::CollectGarbage"));
        assert!(is_garbage_collection(
            "v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, v8::internal::GarbageCollectionReason)"
        ));
        assert!(is_garbage_collection("v8::internal::ConcurrentMarking::JobTaskMajor::Run"));
        assert!(is_garbage_collection("v8::internal::Sweeper::MajorSweeperJob::RunImpl"));
        assert!(!is_garbage_collection("v8::internal::Heap::AllocateRaw"));
        assert!(!is_garbage_collection(
            "heap::base::Stack::SetMarkerAndCallbackImpl<v8::internal::Heap::CollectGarbage>"
        ));
        assert!(!is_garbage_collection("v8::internal::GCExtension::GC"));
    }
}
