//! The sink that records the [`Timeline`]: every sample in time order with
//! its thread and its stack of typed frames.
//!
//! ```text
//! Sample + ExpandedSample ─► TimelineRecorder (a StackSink beside the Folder) ─► Timeline
//!                              expanded frames: FrameExpander::location_details
//!                              other frames: symbol and module kind
//! ```

use rustc_hash::FxHashMap;

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

/// A thread met before: its id, the comm of its last sample, and which of
/// node's threads its stacks show it is.
#[derive(Debug, Clone, Copy)]
struct KnownThread {
    id: ThreadId,
    last_comm: Option<StringId>,
    node_role: Option<&'static str>,
}

/// node's threads told by the function they start in, with the names node
/// 24 gives them (`uv_thread_setname`). node 18 to 22 leave most of them
/// their process's name (`node`), so the timeline outputs would show a
/// dozen threads called `node`.
const NODE_THREAD_ROUTINES: [(&str, &str); 6] = [
    ("node::Start", "MainThread"),
    ("node::(anonymous namespace)::PlatformWorkerThread", "V8Worker"),
    ("node::worker::Worker::StartThread", "WorkerThread"),
    ("node::WorkerThreadsTaskRunner::DelayedTaskScheduler::", "DelayedTaskScheduler"),
    ("node::inspector::(anonymous namespace)::StartIoThreadMain", "SignalInspector"),
    ("node::inspector::InspectorIo::ThreadMain", "InspectorIo"),
];

/// How many frames from the root a thread's routine can be (below
/// `clone3`, `start_thread` or `__libc_start_call_main`).
const ROUTINE_DEPTH: usize = 4;

/// Which of node's threads a function starts, if it is one's routine:
/// `function` is a frame's symbol, `module` its file. libuv's thread pool
/// runs `worker` (libuv's `threadpool.c`), in node or in a shared libuv.
fn node_thread_role(function: &str, module: &str) -> Option<&'static str> {
    if function == "worker" {
        let file = module.rsplit('/').next().unwrap_or(module);
        return (file.starts_with("node") || file.starts_with("libuv")).then_some("libuv-worker");
    }
    NODE_THREAD_ROUTINES.iter().find_map(|&(routine, role)| {
        let rest = function.strip_prefix(routine)?;
        // The routine itself or its parameters, or (for a lambda's owner)
        // anything inside it.
        (rest.is_empty() || rest.starts_with('(') || routine.ends_with("::")).then_some(role)
    })
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
    /// Symbols looked at for a node thread's routine, and what they told.
    node_roles: FxHashMap<PassedThroughKey, Option<&'static str>>,
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
        name_node_threads(&mut timeline.threads, &self.threads);
        timeline.samples.sort_by_key(|sample| sample.time_nanoseconds);
        timeline.event = event;
        timeline
    }

    /// Which of node's threads the sample's stack shows, from the symbols
    /// nearest its root.
    fn node_role(&mut self, sample: &Sample, interner: &SampleInterner) -> Option<&'static str> {
        let outermost = sample.frames.len().saturating_sub(ROUTINE_DEPTH);
        sample.frames[outermost..].iter().rev().find_map(|frame| {
            let key = PassedThroughKey { symbol: frame.symbol, module: frame.module };
            *self.node_roles.entry(key).or_insert_with(|| {
                let function = interner.string(frame.symbol?);
                node_thread_role(function, interner.module_path(frame.module))
            })
        })
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
            KnownThread { id: ThreadId(threads.len() as u32 - 1), last_comm: sample.comm, node_role: None }
        });
        let thread = &mut threads[known.id.index()];
        if known.last_comm != sample.comm {
            known.last_comm = sample.comm;
            thread.name = interner.string_or_empty(sample.comm).to_string();
        }
        thread.samples += 1;
        let known = *known;
        if known.node_role.is_none()
            && let Some(role) = self.node_role(sample, interner)
            && let Some(thread) = self.threads.get_mut(&key)
        {
            thread.node_role = Some(role);
        }
        known.id
    }
}

/// Names the threads of node 18 to 22 that still carry their process's
/// name (their main thread's first comm, `node`) as node 24 names them,
/// from the routine their stacks start in. A name of node's own (node 24's
/// `V8Worker`, node 26's `node-V8Worker`) or of the program
/// (`process.title`: npm's `npm exec ...`) stays.
fn name_node_threads(threads: &mut [TimelineThread], known: &FxHashMap<ThreadKey, KnownThread>) {
    let process_names: FxHashMap<u32, String> = threads
        .iter()
        .filter(|thread| thread.pid.is_some() && thread.pid == thread.tid)
        .filter_map(|thread| Some((thread.pid?, thread.first_name.clone())))
        .collect();
    for (key, known) in known {
        let Some(role) = known.node_role else { continue };
        let thread = &mut threads[known.id.index()];
        let Some(process_name) = key.pid.and_then(|pid| process_names.get(&pid)) else { continue };
        if thread.name == *process_name {
            thread.name = role.to_string();
        }
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
                        let kind = if frames.is_native() { FrameKind::Native } else { FrameKind::Jit };
                        for frame in frames.iter() {
                            let location = self.timeline.frames.named_location(frame.name, kind);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_threads_are_told_by_their_routine() {
        let node = "/usr/bin/node";
        // As perf and v8inline name them for node 20.
        assert_eq!(node_thread_role("node::Start", node), Some("MainThread"));
        assert_eq!(node_thread_role("node::(anonymous namespace)::PlatformWorkerThread", node), Some("V8Worker"));
        assert_eq!(
            node_thread_role(
                "node::worker::Worker::StartThread(v8::FunctionCallbackInfo<v8::Value> const&)::{lambda(void*)#1}::_FUN",
                node
            ),
            Some("WorkerThread")
        );
        assert_eq!(
            node_thread_role(
                "node::WorkerThreadsTaskRunner::DelayedTaskScheduler::Start()::{lambda(void*)#1}::_FUN",
                node
            ),
            Some("DelayedTaskScheduler")
        );
        assert_eq!(node_thread_role("worker", node), Some("libuv-worker"));
        assert_eq!(node_thread_role("worker", "/usr/lib/x86_64-linux-gnu/libuv.so.1.0.0"), Some("libuv-worker"));
        // Another program's `worker`, and node functions that start no thread.
        assert_eq!(node_thread_role("worker", "/usr/bin/python3"), None);
        assert_eq!(node_thread_role("node::StartExecution", node), None);
        assert_eq!(node_thread_role("node::(anonymous namespace)::PlatformWorkerThreadX", node), None);
    }

    fn thread(pid: u32, tid: u32, name: &str) -> TimelineThread {
        TimelineThread {
            pid: Some(pid),
            tid: Some(tid),
            name: name.to_string(),
            first_name: name.to_string(),
            samples: 1,
        }
    }

    #[test]
    fn only_threads_with_their_processs_name_are_named_by_their_routine() {
        let mut threads = vec![
            thread(1, 1, "node"),
            thread(1, 2, "node"),
            // node 26 names its own.
            thread(1, 3, "node-V8Worker"),
            // npm's process.title renamed its main thread.
            thread(4, 4, "node"),
            thread(4, 5, "node"),
        ];
        threads[3].name = "npm exec node d".to_string();
        let roles =
            [(1, 1, "MainThread"), (1, 2, "V8Worker"), (1, 3, "V8Worker"), (4, 4, "MainThread"), (4, 5, "V8Worker")];
        let known: FxHashMap<ThreadKey, KnownThread> = roles
            .iter()
            .enumerate()
            .map(|(index, &(pid, tid, role))| {
                (
                    ThreadKey { pid: Some(pid), tid: Some(tid) },
                    KnownThread { id: ThreadId(index as u32), last_comm: None, node_role: Some(role) },
                )
            })
            .collect();
        name_node_threads(&mut threads, &known);
        let names: Vec<&str> = threads.iter().map(|thread| thread.name.as_str()).collect();
        assert_eq!(names, ["MainThread", "V8Worker", "node-V8Worker", "npm exec node d", "V8Worker"]);
    }
}
