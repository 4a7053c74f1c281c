//! Chrome's `.cpuprofile` (the DevTools protocol's `Profiler.Profile`), as
//! `node --cpu-prof` writes it, for Chrome DevTools, VS Code, speedscope and
//! CPUpro; with v8inline's stacks, so an inlined function is a node of its
//! own.
//!
//! The layout follows the files node writes (V8's
//! [`CpuProfileJSONSerializer`](https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/profiler/profile-generator.cc),
//! node's `--cpu-prof`):
//!
//! ```text
//! {"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},
//!            "hitCount":0,"children":[2,3]},
//!           {"id":2,"callFrame":{"functionName":"kernel","scriptId":"1","url":"file:///app/deep.js","lineNumber":31,"columnNumber":15},
//!            "hitCount":12,"children":[4],"positionTicks":[{"line":35,"ticks":12}]}, ...],
//!  "startTime":534712045,"endTime":536360150,"samples":[2,4,4,...],"timeDeltas":[0,1003,1004,...]}
//! ```
//!
//! - Nodes in depth-first order, each before its children; ids in the order
//!   the nodes were first sampled. `children` and `positionTicks` are left
//!   out when empty, as V8 leaves them out.
//! - `callFrame` is the function: `lineNumber` and `columnNumber` are where
//!   it starts, 0-based; `url` is the script (`file://` for a path, as node
//!   names CommonJS and ES modules alike); `scriptId` numbers the scripts in
//!   order of appearance, `"0"` for no script. A function is one node per
//!   caller whatever tier it ran in, as V8 merges them.
//! - `positionTicks` counts the samples whose leaf is the node by the line
//!   running there, 1-based as V8 counts them.
//! - `startTime`, `endTime` (the first and last sample of the recording, any
//!   thread) and `timeDeltas` are microseconds of the samples' own clock
//!   (CLOCK_MONOTONIC for `perf record -k mono`, as V8's own timestamps);
//!   `samples` and `timeDeltas` are in time order, the first delta from
//!   `startTime`.
//!
//! V8's names for what is not a function: `(root)`; `(garbage collector)`
//! for a sample in V8's collector (the native frames it ran stay above it,
//! without `--js-only`), a child of the root as V8 writes it, which viewers
//! place on top of the stack sampled before; `(program)` for a sample none
//! of whose frames could be named; `(idle)` where the thread went unsampled
//! for more than two sampling intervals (it was off the CPU), one sample an
//! interval after the last, so that viewers that give each sample the time
//! up to the next one do not give that gap to the last stack. Native and
//! kernel frames are nodes named by their symbol, with an empty url.

use std::fmt::Write as _;
use std::io;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::model::frames::{FunctionId, ProfileFrame};
use crate::model::timeline::{StackId, ThreadId, Timeline, TimelineThread};

/// A `.cpuprofile`: the DevTools protocol's `Profiler.Profile`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuProfile {
    /// The call tree, the root first, each node before its children.
    pub nodes: Vec<CpuProfileNode>,
    /// When the profile starts, in microseconds.
    pub start_time: u64,
    /// When it ends, in microseconds.
    pub end_time: u64,
    /// The leaf node of each sample, in time order.
    pub samples: Vec<u32>,
    /// Microseconds from the previous sample (from `start_time` for the
    /// first) to each sample.
    pub time_deltas: Vec<u64>,
}

/// A node of the call tree: a function called from its parent's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuProfileNode {
    /// The node's id, from 1.
    pub id: u32,
    /// The function.
    pub call_frame: CallFrame,
    /// The samples whose leaf is this node.
    pub hit_count: u64,
    /// The ids of the functions it called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<u32>,
    /// The leaf samples by source line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub position_ticks: Vec<PositionTick>,
}

/// The DevTools protocol's `Runtime.CallFrame`: a function.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallFrame {
    /// The function's name; empty for anonymous JavaScript functions.
    pub function_name: String,
    /// The script's id (a number, as text); `"0"` for none.
    pub script_id: String,
    /// The script's URL; empty for none.
    pub url: String,
    /// The 0-based line where the function starts; -1 when unknown.
    pub line_number: i64,
    /// The 0-based column where the function starts; -1 when unknown.
    pub column_number: i64,
}

/// How many leaf samples ran one line of a node's function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PositionTick {
    /// The 1-based line.
    pub line: u32,
    /// The samples.
    pub ticks: u64,
}

/// Which thread a `.cpuprofile` holds (it holds one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadSelection {
    /// Only threads of this process.
    pub pid: Option<u32>,
    /// Only this thread.
    pub tid: Option<u32>,
}

/// How [`CpuProfile::from_timeline`] builds the profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuProfileOptions {
    /// The thread: of those selected, the one with the most samples.
    /// Default: any thread.
    pub thread: ThreadSelection,
    /// Keep only JavaScript frames, as V8's own profiler does: native and
    /// kernel time goes to the nearest JavaScript caller, samples without
    /// one to `(program)`, garbage collection to `(garbage collector)`.
    /// Default `false`.
    pub javascript_only: bool,
}

/// No thread matches a [`ThreadSelection`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ThreadSelectionError {
    /// What was asked for and what was sampled.
    pub message: String,
}

/// What a `.cpuprofile` was made of: the thread and how much of the
/// recording it is, for the note the command line prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuProfileSummary {
    /// The thread; `None` when nothing was sampled.
    pub thread: Option<TimelineThread>,
    /// Its samples.
    pub thread_samples: u64,
    /// The samples of every thread.
    pub all_samples: u64,
    /// The number of threads sampled.
    pub threads: usize,
    /// `(idle)` samples added where the thread went unsampled.
    pub idle_samples: u64,
}

impl CpuProfileSummary {
    /// `thread MainThread (pid 13537, tid 13537): 810 of 1022 samples, 5
    /// other threads`, or `no samples`.
    pub fn describe(&self) -> String {
        let Some(thread) = &self.thread else { return "no samples".to_string() };
        let mut text = format!("thread {}", describe_thread(thread));
        let _ = write!(text, ": {} of {} samples", self.thread_samples, self.all_samples);
        match self.threads.saturating_sub(1) {
            0 => {}
            1 => text.push_str(", 1 other thread"),
            others => {
                let _ = write!(text, ", {others} other threads");
            }
        }
        text
    }
}

/// `MainThread (pid 13537, tid 13537)`.
fn describe_thread(thread: &TimelineThread) -> String {
    let mut ids = Vec::new();
    if let Some(pid) = thread.pid {
        ids.push(format!("pid {pid}"));
    }
    if let Some(tid) = thread.tid {
        ids.push(format!("tid {tid}"));
    }
    if ids.is_empty() { thread.name.clone() } else { format!("{} ({})", thread.name, ids.join(", ")) }
}

/// The thread `selection` picks: of the threads it matches, the one with
/// the most samples (the first sampled of those with as many). `None` when
/// nothing was sampled and no thread was asked for.
pub fn select_thread(
    timeline: &Timeline,
    selection: ThreadSelection,
) -> Result<Option<ThreadId>, ThreadSelectionError> {
    let matches = |thread: &TimelineThread| {
        selection.pid.is_none_or(|pid| thread.pid == Some(pid))
            && selection.tid.is_none_or(|tid| thread.tid == Some(tid))
    };
    // The first sampled of the busiest: the greatest (samples, earliest).
    let best = (0..timeline.threads.len())
        .filter(|&index| matches(&timeline.threads[index]))
        .max_by_key(|&index| (timeline.threads[index].samples, std::cmp::Reverse(index)));
    if let Some(index) = best {
        return Ok(Some(ThreadId(index as u32)));
    }
    if timeline.threads.is_empty() && selection == ThreadSelection::default() {
        return Ok(None);
    }
    let mut asked = Vec::new();
    if let Some(pid) = selection.pid {
        asked.push(format!("pid {pid}"));
    }
    if let Some(tid) = selection.tid {
        asked.push(format!("tid {tid}"));
    }
    let mut threads: Vec<&TimelineThread> = timeline.threads.iter().collect();
    threads.sort_by_key(|thread| std::cmp::Reverse(thread.samples));
    let listed: Vec<String> = threads
        .iter()
        .take(10)
        .map(|thread| format!("{}: {} samples", describe_thread(thread), thread.samples))
        .collect();
    let more = threads.len().saturating_sub(listed.len());
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    Err(ThreadSelectionError {
        message: format!("no samples of {}; sampled: {}{more}", asked.join(" "), listed.join("; ")),
    })
}

/// What a node of the tree stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum NodeFrame {
    /// `(root)`.
    Root,
    /// `(program)`: no frame could be named.
    Program,
    /// `(idle)`: the thread was not running.
    Idle,
    /// `(garbage collector)`.
    GarbageCollector,
    /// A function.
    Function(FunctionId),
}

impl NodeFrame {
    /// V8's name of a node that is not a function.
    fn v8_name(self) -> Option<&'static str> {
        match self {
            NodeFrame::Root => Some("(root)"),
            NodeFrame::Program => Some("(program)"),
            NodeFrame::Idle => Some("(idle)"),
            NodeFrame::GarbageCollector => Some("(garbage collector)"),
            NodeFrame::Function(_) => None,
        }
    }
}

/// A node under a parent: how the tree finds a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ChildKey {
    /// The parent's index.
    parent: u32,
    /// What the child stands for.
    frame: NodeFrame,
}

/// A node being built.
struct TreeNode {
    frame: NodeFrame,
    children: Vec<u32>,
    hit_count: u64,
    /// Leaf samples per 1-based line.
    position_ticks: FxHashMap<u32, u64>,
}

/// One node of a sample's path from the root.
#[derive(Debug, Clone, Copy)]
struct PathStep {
    /// What the node stands for.
    frame: NodeFrame,
    /// The 1-based line running in it, for JavaScript.
    line: Option<u32>,
}

/// The leaf node of a sampled stack, and the line running in it.
#[derive(Debug, Clone, Copy)]
struct SampledLeaf {
    /// The node's index (its id minus one).
    node: u32,
    /// The 1-based line running in its function, for JavaScript.
    line: Option<u32>,
}

/// Builds the call tree, one path per sampled stack.
struct TreeBuilder<'timeline> {
    timeline: &'timeline Timeline,
    javascript_only: bool,
    nodes: Vec<TreeNode>,
    /// Each node's index by its parent and frame.
    children: FxHashMap<ChildKey, u32>,
    /// The leaf of each stack met before.
    leaves: FxHashMap<StackId, SampledLeaf>,
}

impl<'timeline> TreeBuilder<'timeline> {
    fn new(timeline: &'timeline Timeline, javascript_only: bool) -> TreeBuilder<'timeline> {
        let root = TreeNode {
            frame: NodeFrame::Root,
            children: Vec::new(),
            hit_count: 0,
            position_ticks: FxHashMap::default(),
        };
        TreeBuilder {
            timeline,
            javascript_only,
            nodes: vec![root],
            children: FxHashMap::default(),
            leaves: FxHashMap::default(),
        }
    }

    /// The index of `frame` under `parent`, created if new.
    fn child(&mut self, parent: u32, frame: NodeFrame) -> u32 {
        let key = ChildKey { parent, frame };
        if let Some(&child) = self.children.get(&key) {
            return child;
        }
        let child = self.nodes.len() as u32;
        self.nodes.push(TreeNode { frame, children: Vec::new(), hit_count: 0, position_ticks: FxHashMap::default() });
        self.nodes[parent as usize].children.push(child);
        self.children.insert(key, child);
        child
    }

    /// The path of a stack below the root, root first.
    fn path(&self, stack: StackId) -> Vec<PathStep> {
        let mut frames: Vec<&ProfileFrame> = self.timeline.frames(stack).collect();
        frames.reverse();
        let function = |frame: &ProfileFrame| PathStep {
            frame: NodeFrame::Function(frame.function),
            line: frame.line.map(|line| line.line),
        };
        if let Some(start) = self.timeline.garbage_collection_start(&frames) {
            let mut path = vec![PathStep { frame: NodeFrame::GarbageCollector, line: None }];
            if !self.javascript_only {
                path.extend(frames[start..].iter().map(|frame| function(frame)));
            }
            return path;
        }
        let kept: Vec<&ProfileFrame> = if self.javascript_only {
            frames.into_iter().filter(|frame| frame.kind.is_javascript()).collect()
        } else {
            frames
        };
        let unnamed = kept.iter().all(|frame| self.timeline.function_name(frame) == "[unknown]");
        if unnamed {
            return vec![PathStep { frame: NodeFrame::Program, line: None }];
        }
        kept.into_iter().map(function).collect()
    }

    /// The leaf of a stack, its path created on first use.
    fn leaf(&mut self, stack: StackId) -> SampledLeaf {
        if let Some(&leaf) = self.leaves.get(&stack) {
            return leaf;
        }
        let mut node = 0;
        let mut line = None;
        for step in self.path(stack) {
            node = self.child(node, step.frame);
            line = step.line;
        }
        // Only JavaScript frames carry a line.
        let leaf = SampledLeaf { node, line };
        self.leaves.insert(stack, leaf);
        leaf
    }

    /// Counts one sample at a leaf.
    fn hit(&mut self, leaf: SampledLeaf) {
        let node = &mut self.nodes[leaf.node as usize];
        node.hit_count += 1;
        if let Some(line) = leaf.line {
            *node.position_ticks.entry(line).or_default() += 1;
        }
    }

    /// The nodes with their ids, depth first.
    fn finish(self) -> Vec<CpuProfileNode> {
        let mut scripts: FxHashMap<&str, u32> = FxHashMap::default();
        let mut nodes = Vec::with_capacity(self.nodes.len());
        let mut pending = vec![0u32];
        while let Some(index) = pending.pop() {
            let node = &self.nodes[index as usize];
            let mut position_ticks: Vec<PositionTick> =
                node.position_ticks.iter().map(|(&line, &ticks)| PositionTick { line, ticks }).collect();
            position_ticks.sort_unstable_by_key(|tick| tick.line);
            nodes.push(CpuProfileNode {
                id: index + 1,
                call_frame: self.call_frame(node.frame, &mut scripts),
                hit_count: node.hit_count,
                children: node.children.iter().map(|child| child + 1).collect(),
                position_ticks,
            });
            pending.extend(node.children.iter().rev());
        }
        nodes
    }

    /// The call frame of a node; scripts are numbered as they first appear.
    fn call_frame(&self, frame: NodeFrame, scripts: &mut FxHashMap<&'timeline str, u32>) -> CallFrame {
        let NodeFrame::Function(id) = frame else {
            return CallFrame {
                function_name: frame.v8_name().unwrap_or_default().to_string(),
                script_id: "0".to_string(),
                url: String::new(),
                line_number: -1,
                column_number: -1,
            };
        };
        let function = self.timeline.frames.function(id);
        let Some(file) = function.file.as_deref() else {
            return CallFrame {
                function_name: function.name.clone(),
                script_id: "0".to_string(),
                url: String::new(),
                line_number: -1,
                column_number: -1,
            };
        };
        let next = scripts.len() as u32 + 1;
        let script_id = *scripts.entry(file).or_insert(next);
        // V8 names anonymous functions "", which viewers show as (anonymous).
        let function_name = if function.name == "(anonymous)" { String::new() } else { function.name.clone() };
        let start = function.start;
        CallFrame {
            function_name,
            script_id: script_id.to_string(),
            url: script_url(file),
            line_number: start.map_or(-1, |start| i64::from(start.line) - 1),
            column_number: start.and_then(|start| start.column).map_or(-1, |column| i64::from(column) - 1),
        }
    }
}

/// A script's URL as node writes it: `file://` and the path for a path
/// (percent-encoding what a URL path cannot hold), other names (`node:fs`,
/// `file:///app.mjs`, `https://...`) as they are.
pub fn script_url(script: &str) -> String {
    if !script.starts_with('/') {
        return script.to_string();
    }
    let mut url = String::with_capacity(script.len() + 7);
    url.push_str("file://");
    for byte in script.bytes() {
        let plain = byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte);
        if plain {
            url.push(byte as char);
        } else {
            let _ = write!(url, "%{byte:02X}");
        }
    }
    url
}

impl CpuProfile {
    /// The profile of one thread of `timeline` (see [`CpuProfileOptions`]),
    /// and what it holds; without samples, the root alone.
    pub fn from_timeline(
        timeline: &Timeline,
        options: &CpuProfileOptions,
    ) -> Result<(CpuProfile, CpuProfileSummary), ThreadSelectionError> {
        let thread = select_thread(timeline, options.thread)?;
        let mut builder = TreeBuilder::new(timeline, options.javascript_only);
        let microseconds = |nanoseconds: u64| nanoseconds / 1000;
        let start_time = timeline.samples.first().map_or(0, |sample| microseconds(sample.time_nanoseconds));
        let end_time = timeline.samples.last().map_or(0, |sample| microseconds(sample.time_nanoseconds));
        // A gap longer than this is the thread off the CPU.
        let interval = timeline.sampling_interval_nanoseconds();
        let mut samples = Vec::new();
        let mut time_deltas = Vec::new();
        let mut previous_time: Option<u64> = None;
        let mut previous_microseconds = start_time;
        let mut idle_samples = 0;
        let mut push = |node: u32, time: u64, time_deltas: &mut Vec<u64>, samples: &mut Vec<u32>| {
            let time = microseconds(time);
            samples.push(node + 1);
            time_deltas.push(time - previous_microseconds);
            previous_microseconds = time;
        };
        for sample in timeline.samples.iter().filter(|sample| Some(sample.thread) == thread) {
            if let (Some(previous), Some(interval)) = (previous_time, interval)
                && 2 * (sample.time_nanoseconds - previous) > 3 * interval
            {
                let idle = builder.child(0, NodeFrame::Idle);
                builder.nodes[idle as usize].hit_count += 1;
                idle_samples += 1;
                push(idle, previous + interval, &mut time_deltas, &mut samples);
            }
            let leaf = builder.leaf(sample.stack);
            builder.hit(leaf);
            push(leaf.node, sample.time_nanoseconds, &mut time_deltas, &mut samples);
            previous_time = Some(sample.time_nanoseconds);
        }
        let profile = CpuProfile { nodes: builder.finish(), start_time, end_time, samples, time_deltas };
        let summary = CpuProfileSummary {
            thread: thread.map(|thread| timeline.thread(thread).clone()),
            thread_samples: thread.map_or(0, |thread| timeline.thread(thread).samples),
            all_samples: timeline.samples.len() as u64,
            threads: timeline.threads.len(),
            idle_samples,
        };
        Ok((profile, summary))
    }

    /// Writes the profile as JSON, on one line as node writes it.
    pub fn write<W: io::Write>(&self, output: W) -> io::Result<()> {
        serde_json::to_writer(output, self).map_err(io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::frames::{FrameKind, Function, Location, LocationId, SourceLine};
    use crate::model::timeline::TimelineSample;

    /// A timeline of one thread: `kernel` (TurboFan) with `square` inlined,
    /// garbage collection under `kernel`, an unnamed stack; cpu-clock at 1 ms.
    fn timeline() -> Timeline {
        let mut timeline = Timeline { event: Some("cpu-clock".to_string()), ..Timeline::default() };
        let frames = &mut timeline.frames;
        let mut javascript = |name: &str, line: u32, running: u32, kind: FrameKind| {
            let function = frames.intern_function(Function {
                name: name.to_string(),
                file: Some("/app/deep.js".to_string()),
                start: Some(SourceLine { line, column: Some(16) }),
            });
            ProfileFrame { function, line: Some(SourceLine { line: running, column: Some(3) }), kind }
        };
        let square = javascript("square", 16, 17, FrameKind::Inlined);
        let kernel = javascript("kernel", 32, 35, FrameKind::TurboFan);
        let inlined = frames.intern_location(Location { address: Some(0x1000), frames: vec![square, kernel] });
        let alone = frames.intern_location(Location { address: Some(0x1008), frames: vec![kernel] });
        let collect = frames.named_location("v8::internal::Heap::CollectGarbage", FrameKind::Native);
        let mark = frames.named_location("v8::internal::MarkCompactCollector::MarkLiveObjects", FrameKind::Native);
        let unknown = frames.named_location("[unknown]", FrameKind::Native);
        let stacks: [&[LocationId]; 4] = [&[inlined], &[alone], &[mark, collect, alone], &[unknown, unknown]];
        for stack in stacks {
            timeline.stacks.insert(stack.into());
        }
        timeline.threads.push(TimelineThread {
            pid: Some(7),
            tid: Some(7),
            name: "MainThread".to_string(),
            first_name: "node".to_string(),
            samples: 6,
        });
        // Times in ms; the thread is off the CPU between 4 and 9.
        for (time, stack) in [(1, 0), (2, 0), (3, 1), (4, 2), (9, 3), (10, 0)] {
            timeline.samples.push(TimelineSample {
                time_nanoseconds: time * 1_000_000,
                thread: ThreadId(0),
                stack: StackId(stack),
                period: Some(1_000_000),
            });
        }
        timeline
    }

    /// The nodes as `name[hits]` with their children, depth first.
    fn tree(profile: &CpuProfile) -> Vec<String> {
        profile
            .nodes
            .iter()
            .map(|node| {
                let mut text = format!("{} {}[{}]", node.id, node.call_frame.function_name, node.hit_count);
                if !node.children.is_empty() {
                    text.push_str(&format!(" -> {:?}", node.children));
                }
                text
            })
            .collect()
    }

    #[test]
    fn samples_become_nodes_at_their_times() {
        let (profile, summary) = CpuProfile::from_timeline(&timeline(), &CpuProfileOptions::default()).unwrap();
        assert_eq!(
            tree(&profile),
            [
                "1 (root)[0] -> [2, 4, 7, 8]",
                "2 kernel[1] -> [3]",
                "3 square[3]",
                "4 (garbage collector)[0] -> [5]",
                "5 v8::internal::Heap::CollectGarbage[0] -> [6]",
                "6 v8::internal::MarkCompactCollector::MarkLiveObjects[1]",
                "7 (idle)[1]",
                "8 (program)[1]",
            ]
        );
        assert_eq!(profile.samples, [3, 3, 2, 6, 7, 8, 3]);
        // The idle sample one interval after the last one before the gap.
        assert_eq!(profile.time_deltas, [0, 1000, 1000, 1000, 1000, 4000, 1000]);
        assert_eq!((profile.start_time, profile.end_time), (1000, 10_000));
        let square = &profile.nodes[2];
        assert_eq!(
            square.call_frame,
            CallFrame {
                function_name: "square".to_string(),
                script_id: "1".to_string(),
                url: "file:///app/deep.js".to_string(),
                line_number: 15,
                column_number: 15,
            }
        );
        assert_eq!(square.position_ticks, [PositionTick { line: 17, ticks: 3 }]);
        assert_eq!(profile.nodes[1].position_ticks, [PositionTick { line: 35, ticks: 1 }]);
        assert_eq!(summary.idle_samples, 1);
        assert_eq!(summary.describe(), "thread MainThread (pid 7, tid 7): 6 of 6 samples");
    }

    #[test]
    fn javascript_only_is_v8s_view() {
        let options = CpuProfileOptions { javascript_only: true, ..CpuProfileOptions::default() };
        let (profile, _) = CpuProfile::from_timeline(&timeline(), &options).unwrap();
        assert_eq!(
            tree(&profile),
            [
                "1 (root)[0] -> [2, 4, 5, 6]",
                "2 kernel[1] -> [3]",
                "3 square[3]",
                "4 (garbage collector)[1]",
                "5 (idle)[1]",
                "6 (program)[1]",
            ]
        );
        assert_eq!(profile.samples, [3, 3, 2, 4, 5, 6, 3]);
    }

    #[test]
    fn a_thread_not_sampled_is_an_error_naming_the_sampled_ones() {
        let selection = ThreadSelection { pid: None, tid: Some(8) };
        let options = CpuProfileOptions { thread: selection, ..CpuProfileOptions::default() };
        let error = CpuProfile::from_timeline(&timeline(), &options).unwrap_err();
        assert_eq!(error.to_string(), "no samples of tid 8; sampled: MainThread (pid 7, tid 7): 6 samples");
        // Nothing sampled, nothing asked: the root alone.
        let (profile, summary) =
            CpuProfile::from_timeline(&Timeline::default(), &CpuProfileOptions::default()).unwrap();
        assert_eq!(tree(&profile), ["1 (root)[0]"]);
        assert_eq!(summary.describe(), "no samples");
    }

    #[test]
    fn paths_become_file_urls() {
        assert_eq!(script_url("/tmp/app/deep.js"), "file:///tmp/app/deep.js");
        assert_eq!(script_url("/tmp/my app/100%.js"), "file:///tmp/my%20app/100%25.js");
        assert_eq!(script_url("/tmp/ü.js"), "file:///tmp/%C3%BC.js");
        assert_eq!(script_url("node:internal/modules/cjs/loader"), "node:internal/modules/cjs/loader");
        assert_eq!(script_url("file:///tmp/app.mjs"), "file:///tmp/app.mjs");
    }

    #[test]
    fn nodes_serialize_in_nodes_field_order() {
        let node = CpuProfileNode {
            id: 2,
            call_frame: CallFrame {
                function_name: "kernel".to_string(),
                script_id: "1".to_string(),
                url: "file:///app/deep.js".to_string(),
                line_number: 31,
                column_number: 15,
            },
            hit_count: 3,
            children: vec![3],
            position_ticks: vec![PositionTick { line: 35, ticks: 3 }],
        };
        assert_eq!(
            serde_json::to_string(&node).unwrap(),
            r#"{"id":2,"callFrame":{"functionName":"kernel","scriptId":"1","url":"file:///app/deep.js","lineNumber":31,"columnNumber":15},"hitCount":3,"children":[3],"positionTicks":[{"line":35,"ticks":3}]}"#
        );
        let leaf = CpuProfileNode { children: Vec::new(), position_ticks: Vec::new(), ..node };
        assert_eq!(
            serde_json::to_string(&leaf).unwrap(),
            r#"{"id":2,"callFrame":{"functionName":"kernel","scriptId":"1","url":"file:///app/deep.js","lineNumber":31,"columnNumber":15},"hitCount":3}"#
        );
    }
}
