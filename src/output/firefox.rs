//! The Firefox Profiler's processed profile format (what samply writes),
//! built with samply's own crate, `fxprof-processed-profile`.
//!
//! - One process per pid, one thread per sampled tid, named from its command
//!   (comm) in its last sample; a thread whose tid is its pid is the
//!   process's main thread, and its first command names the process.
//! - Each sample at its own time (relative to the recording's first sample),
//!   weight 1, with its CPU time: the period of `cpu-clock` and `task-clock`
//!   samples, the sampling interval for other events (V8's ticks, cycles).
//! - Frames are labels, each inlined function a frame of its own:
//!   JavaScript as V8 names it without the tier (`square
//!   /app/deep.js:16:16`), flagged as JavaScript so that the profiler's "JS
//!   only" call tree is V8's view; native and kernel frames by their symbol.
//! - Categories say what a frame ran as: [`Category`].

use std::io::{self, Write};

use fxprof_processed_profile::{
    CategoryColor, CategoryPairHandle, CpuDelta, Frame, FrameFlags, FrameInfo, ProcessHandle, Profile,
    ReferenceTimestamp, SamplingInterval, StackHandle, StringHandle, ThreadHandle, Timestamp,
};
use rustc_hash::FxHashMap;

use crate::model::frames::{FrameKind, FunctionId, ProfileFrame};
use crate::model::timeline::{StackId, ThreadId, Timeline};

/// The sampling interval declared when the samples do not tell one.
const DEFAULT_INTERVAL_NANOSECONDS: u64 = 1_000_000;

/// The category of a frame in the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// JavaScript run by V8's interpreter, Ignition.
    Interpreter,
    /// JavaScript in Sparkplug baseline code.
    Sparkplug,
    /// JavaScript in Maglev code.
    Maglev,
    /// JavaScript in TurboFan code.
    TurboFan,
    /// A JavaScript function inlined into optimized code of another.
    InlinedJavaScript,
    /// JIT code of no JavaScript function: builtins, stubs, regular
    /// expressions, code v8inline could not resolve.
    Jit,
    /// Native code (C, C++, Rust...).
    Native,
    /// Kernel code.
    Kernel,
    /// V8's garbage collector, and what it calls.
    GarbageCollection,
}

impl Category {
    /// All categories, in the order the profile lists them (after the
    /// format's own "Other").
    pub const ALL: [Category; 9] = [
        Category::Interpreter,
        Category::Sparkplug,
        Category::Maglev,
        Category::TurboFan,
        Category::InlinedJavaScript,
        Category::Jit,
        Category::Native,
        Category::Kernel,
        Category::GarbageCollection,
    ];

    /// The name the profiler shows.
    pub fn name(self) -> &'static str {
        match self {
            Category::Interpreter => "JavaScript: interpreter",
            Category::Sparkplug => "JavaScript: Sparkplug",
            Category::Maglev => "JavaScript: Maglev",
            Category::TurboFan => "JavaScript: TurboFan",
            Category::InlinedJavaScript => "JavaScript: inlined",
            Category::Jit => "JIT",
            Category::Native => "Native",
            Category::Kernel => "Kernel",
            Category::GarbageCollection => "GC",
        }
    }

    /// Its color in the profiler's graphs (the flame graph's: inlined frames
    /// aqua, JIT green, kernel orange).
    fn color(self) -> CategoryColor {
        match self {
            Category::Interpreter => CategoryColor::Yellow,
            Category::Sparkplug => CategoryColor::Brown,
            Category::Maglev => CategoryColor::Purple,
            Category::TurboFan => CategoryColor::Green,
            Category::InlinedJavaScript => CategoryColor::LightBlue,
            Category::Jit => CategoryColor::LightGreen,
            Category::Native => CategoryColor::Red,
            Category::Kernel => CategoryColor::Orange,
            Category::GarbageCollection => CategoryColor::Magenta,
        }
    }

    /// The category of a frame of `kind` (outside garbage collection).
    pub fn of_kind(kind: FrameKind) -> Category {
        match kind {
            FrameKind::Interpreted => Category::Interpreter,
            FrameKind::Sparkplug => Category::Sparkplug,
            FrameKind::Maglev => Category::Maglev,
            FrameKind::TurboFan => Category::TurboFan,
            FrameKind::Inlined => Category::InlinedJavaScript,
            FrameKind::Jit => Category::Jit,
            FrameKind::Native | FrameKind::Root => Category::Native,
            FrameKind::Kernel => Category::Kernel,
        }
    }
}

/// A stack of a thread (the profile interns stacks per thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ThreadStack {
    thread: ThreadId,
    stack: StackId,
}

/// Builds the profile: categories, processes, threads, then samples.
struct ProfileBuilder<'timeline> {
    timeline: &'timeline Timeline,
    profile: Profile,
    categories: FxHashMap<Category, CategoryPairHandle>,
    threads: Vec<ThreadHandle>,
    /// Each function's label.
    labels: FxHashMap<FunctionId, StringHandle>,
    /// Each stack of each thread, interned.
    stacks: FxHashMap<ThreadStack, Option<StackHandle>>,
    /// The time everything is relative to: the first sample's.
    start_nanoseconds: u64,
}

impl<'timeline> ProfileBuilder<'timeline> {
    fn new(timeline: &'timeline Timeline, product: &str) -> ProfileBuilder<'timeline> {
        let interval = timeline.sampling_interval_nanoseconds().unwrap_or(DEFAULT_INTERVAL_NANOSECONDS);
        // The samples' clock is not wall time: times count from the first sample.
        let mut profile = Profile::new(
            product,
            ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
            SamplingInterval::from_nanos(interval),
        );
        profile.set_symbolicated(true);
        let categories = Category::ALL
            .into_iter()
            .map(|category| (category, profile.add_category(category.name(), category.color()).into()))
            .collect();
        ProfileBuilder {
            timeline,
            profile,
            categories,
            threads: Vec::new(),
            labels: FxHashMap::default(),
            stacks: FxHashMap::default(),
            start_nanoseconds: timeline.samples.first().map_or(0, |sample| sample.time_nanoseconds),
        }
    }

    fn timestamp(&self, nanoseconds: u64) -> Timestamp {
        Timestamp::from_nanos_since_reference(nanoseconds.saturating_sub(self.start_nanoseconds))
    }

    /// A process per pid and a thread per (pid, tid), starting at their
    /// first sample.
    fn add_threads(&mut self) {
        let mut first_times: Vec<u64> = vec![u64::MAX; self.timeline.threads.len()];
        for sample in &self.timeline.samples {
            let first = &mut first_times[sample.thread.index()];
            *first = (*first).min(sample.time_nanoseconds);
        }
        let mut processes: FxHashMap<Option<u32>, ProcessHandle> = FxHashMap::default();
        for (index, thread) in self.timeline.threads.iter().enumerate() {
            let start = self.timestamp(first_times[index]);
            let process = match processes.get(&thread.pid) {
                Some(&process) => process,
                None => {
                    // The main thread's first command names the process.
                    let name = self
                        .timeline
                        .threads
                        .iter()
                        .find(|other| other.pid == thread.pid && other.tid == thread.pid)
                        .unwrap_or(thread)
                        .first_name
                        .clone();
                    let process = self.profile.add_process(&name, thread.pid.unwrap_or(0), start);
                    processes.insert(thread.pid, process);
                    process
                }
            };
            let tid = thread.tid.or(thread.pid).unwrap_or(0);
            let is_main = thread.tid.is_some() && thread.tid == thread.pid;
            let handle = self.profile.add_thread(process, tid, start, is_main);
            self.profile.set_thread_name(handle, &thread.name);
            self.threads.push(handle);
        }
    }

    /// The label of a function: JavaScript as V8 names it without the tier
    /// (`square /app/deep.js:16:16`), others by name.
    fn label(&mut self, function: FunctionId) -> StringHandle {
        if let Some(&label) = self.labels.get(&function) {
            return label;
        }
        let label = self.profile.intern_string(&self.timeline.frames.function(function).to_string());
        self.labels.insert(function, label);
        label
    }

    /// A stack of a thread, interned once.
    fn stack(&mut self, thread: ThreadId, stack: StackId) -> Option<StackHandle> {
        let key = ThreadStack { thread, stack };
        if let Some(&handle) = self.stacks.get(&key) {
            return handle;
        }
        let mut frames: Vec<&ProfileFrame> = self.timeline.frames(stack).collect();
        frames.reverse();
        let collection_start = self.timeline.garbage_collection_start(&frames).unwrap_or(usize::MAX);
        let frame_infos: Vec<FrameInfo> = frames
            .iter()
            .enumerate()
            .map(|(index, frame)| {
                let category =
                    if index >= collection_start { Category::GarbageCollection } else { Category::of_kind(frame.kind) };
                let flags = if frame.kind.is_javascript() { FrameFlags::IS_JS } else { FrameFlags::empty() };
                FrameInfo {
                    frame: Frame::Label(self.label(frame.function)),
                    category_pair: self.categories[&category],
                    flags,
                }
            })
            .collect();
        let handle = self.profile.intern_stack_frames(self.threads[thread.index()], frame_infos.into_iter());
        self.stacks.insert(key, handle);
        handle
    }

    fn add_samples(&mut self) {
        let is_clock = matches!(self.timeline.event.as_deref(), Some("cpu-clock" | "task-clock"));
        let interval = self.timeline.sampling_interval_nanoseconds().unwrap_or(DEFAULT_INTERVAL_NANOSECONDS);
        for sample in &self.timeline.samples {
            let stack = self.stack(sample.thread, sample.stack);
            let cpu_nanoseconds = match (is_clock, sample.period) {
                (true, Some(period)) => period,
                _ => interval,
            };
            self.profile.add_sample(
                self.threads[sample.thread.index()],
                self.timestamp(sample.time_nanoseconds),
                stack,
                CpuDelta::from_nanos(cpu_nanoseconds),
                1,
            );
        }
    }
}

/// The Firefox Profiler profile of `timeline`, titled `product` (the
/// profiler shows it as the app's name).
pub fn firefox_profile(timeline: &Timeline, product: &str) -> Profile {
    let mut builder = ProfileBuilder::new(timeline, product);
    builder.add_threads();
    builder.add_samples();
    builder.profile
}

/// Writes `profile` as JSON, gzipped with `gzip` (the profiler opens
/// `.json` and `.json.gz` files alike).
pub fn write_firefox_profile<W: io::Write>(profile: &Profile, output: W, gzip: bool) -> io::Result<()> {
    if gzip {
        // serde_json writes a few bytes at a time; the encoder makes room
        // for its output (zeroed) on every write, so it gets them in blocks.
        let encoder = flate2::write::GzEncoder::new(output, flate2::Compression::default());
        let mut buffered = io::BufWriter::with_capacity(1 << 16, encoder);
        serde_json::to_writer(&mut buffered, profile).map_err(io::Error::other)?;
        buffered.into_inner().map_err(io::IntoInnerError::into_error)?.finish()?.flush()
    } else {
        let mut output = io::BufWriter::new(output);
        serde_json::to_writer(&mut output, profile).map_err(io::Error::other)?;
        output.flush()
    }
}
