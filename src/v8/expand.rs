//! The main job's expander: replaces each V8 JIT frame of a perf sample by
//! the inline stack of JavaScript functions running there.
//!
//! perf prints a JIT frame in one of three forms:
//!
//! ```text
//! 7f3e9a7e64da [unknown] (/tmp/perf-2020.map)          raw address (or a perf-map name)
//! 7f3e9a7e64da [unknown] ([unknown])                   raw address, no perf map
//! 15c JS:*root /app/a.js:4:14+0x15e (/x/jitted-2020-2338.so)   after `perf inject -j`
//! ```
//!
//! A raw address is resolved through the jitdump at the sample's time; an
//! injected frame by its jitdump code index and offset. Every frame takes the
//! source position strictly before its offset, as V8's CPU profiler does: a
//! return address points after its call, and a timer sample lands on the
//! instruction after the one that was running.

use crate::expansion::LocationDetails;
use std::sync::Arc;

use indexmap::IndexSet;
use rustc_hash::FxHashMap;

use crate::expansion::{ExpandedFrames, FrameContext, FrameExpander};
use crate::formats::v8log::builtins::embedded_builtins;
use crate::formats::v8log::{CodeName, Tier};
use crate::model::sample::{AddressKind, FrameNumberCache, MappedJitDump, ModuleKind, SampleTime};
use crate::v8::code_logs::{CodeLogs, pid_in_file_name};
use crate::v8::embedded_blob::EmbeddedBlobSymbols;
use crate::v8::inline_map::{CodeId, InlineMap, TimeRange};
use crate::v8::inline_stack::{FrameFunction, InlineFrame, PositionRule};

/// How frames are expanded.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ExpandOptions {
    /// Use the position *at* the sampled PC (the instruction perf reports)
    /// instead of the one before it. Default: false.
    pub exact_pc: bool,
}

/// What happened to the stack lines of the input, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpansionStats {
    /// JIT frames replaced by more than one frame (inlined functions found).
    pub expanded: u64,
    /// JIT frames named from the jitdump, with no inlining at that offset.
    pub resolved_without_inlining: u64,
    /// JIT frames of code the log has no source positions for
    /// (interpreted, Sparkplug, builtins, or no log for that process).
    pub resolved_without_positions: u64,
    /// JIT-looking frames with no jitdump loaded for their process.
    pub unresolved_no_jitdump: u64,
    /// JIT-looking frames whose address no code object covers.
    pub unresolved_unknown_address: u64,
    /// `jitted-PID-N.so` frames whose N is not in the jitdump.
    pub unresolved_unknown_code_index: u64,
    /// Frames resolved although no code object covering them was loaded by
    /// the sample's time (perf recorded without `-k mono`?): the oldest was used.
    pub clock_mismatches: u64,
    /// Frames passed through because they are not JIT code.
    pub not_jit: u64,
    /// Native frames the source left unnamed (`[deno]`: a binary without
    /// symbols) named from the code log as the builtins they are
    /// (`Builtins_LoadIC_Megamorphic`, [`crate::v8::embedded_blob`]).
    pub builtins_named: u64,
    /// The samples of each loaded process (indexed as [`CodeLogs::maps`]),
    /// by what became of their innermost JavaScript frame.
    pub processes: Vec<ProcessSamples>,
    /// Samples whose innermost JIT frame (in a perf map or
    /// `jitted-PID-N.so`) is of a pid with no jitdump, by pid.
    pub pids_without_jitdump: PidCounts,
}

/// How many pids a [`PidCounts`] lists.
pub const PIDS_LISTED: usize = 4;

/// Sample counts by pid: the first [`PIDS_LISTED`] pids seen, and the
/// samples of further pids together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PidCounts {
    /// The first pids seen, with their sample counts.
    pub listed: Vec<PidSamples>,
    /// The samples of further pids.
    pub unlisted: u64,
}

/// The samples of one pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidSamples {
    /// The pid: perf's, else the one in a perf map's or `jitted-PID-N.so`'s
    /// name, else the thread id.
    pub pid: u32,
    /// How many samples.
    pub samples: u64,
}

impl PidCounts {
    /// Adds `samples` samples of `pid`.
    #[inline]
    pub fn add(&mut self, pid: u32, samples: u64) {
        if let Some(entry) = self.listed.iter_mut().find(|entry| entry.pid == pid) {
            entry.samples += samples;
        } else if self.listed.len() < PIDS_LISTED {
            self.listed.push(PidSamples { pid, samples });
        } else {
            self.unlisted += samples;
        }
    }

    /// All samples counted.
    pub fn total(&self) -> u64 {
        self.listed.iter().map(|entry| entry.samples).sum::<u64>() + self.unlisted
    }

    /// Adds the counts of `other`.
    fn merge(&mut self, other: &PidCounts) {
        for entry in &other.listed {
            self.add(entry.pid, entry.samples);
        }
        self.unlisted += other.unlisted;
    }
}

/// The first and last of some sample times (nanoseconds of the samples' clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeSpan {
    /// The earliest.
    pub first: u64,
    /// The latest.
    pub last: u64,
}

/// What became of one JIT frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameOutcome {
    /// Its code is JavaScript with source positions (Maglev or TurboFan):
    /// expanded, or nothing was inlined at that offset.
    Expandable,
    /// Its code is interpreted (Ignition's trampoline copy) or Sparkplug
    /// code, which inlines nothing.
    Unoptimized,
    /// Its code is Maglev or TurboFan code whose code-creation has no
    /// code-source-info.
    WithoutSourcePositions,
    /// Its code is JavaScript the jitdump loaded with no code-creation of
    /// the same address and size in the code log.
    NotInLog,
    /// Its code is a builtin, bytecode handler, stub or regexp: never
    /// expanded, and not JavaScript.
    NotJavaScript,
    /// No code covering its address had been loaded by the sample's time:
    /// the oldest one was taken, a guess.
    BeforeAnyLoad,
    /// A raw address no code object covers.
    UnknownAddress,
    /// A `jitted-PID-N.so` frame whose N the jitdump does not have.
    UnknownCodeIndex,
}

/// The samples of one loaded process that ran JavaScript, by what became of
/// their innermost JavaScript frame (the first JIT frame from the leaf that
/// is not a builtin or stub: the function running when the sample was
/// taken), and where they came from: what [`crate::v8::unexpanded`] reads
/// after the fold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessSamples {
    /// The process's pid: its jitdump's, else the one in its code log's name.
    pub pid: Option<u32>,
    /// Samples whose frame was [`FrameOutcome::Expandable`].
    pub expandable: u64,
    /// Samples whose frame was [`FrameOutcome::Unoptimized`].
    pub unoptimized: u64,
    /// Samples whose frame was [`FrameOutcome::WithoutSourcePositions`].
    pub without_source_positions: u64,
    /// Samples whose frame was [`FrameOutcome::NotInLog`].
    pub not_in_log: u64,
    /// Samples whose frame was [`FrameOutcome::BeforeAnyLoad`].
    pub before_any_load: u64,
    /// Samples whose frame was [`FrameOutcome::UnknownAddress`].
    pub unknown_address: u64,
    /// Samples whose frame was [`FrameOutcome::UnknownCodeIndex`].
    pub unknown_code_index: u64,
    /// Samples whose frame's code only the code log knew (its jitdump was
    /// cut before that code's LOAD), whatever their outcome.
    pub from_code_log: u64,
    /// Samples of the process's own pid (or of no known pid) whose frame was
    /// [`FrameOutcome::UnknownAddress`] or [`FrameOutcome::UnknownCodeIndex`]:
    /// what its jitdump and code log left unresolved. Another pid's samples,
    /// which a lone loaded process takes too, are no loss of its files.
    pub own_unresolved: u64,
    /// The samples of pids other than [`ProcessSamples::pid`] (a lone loaded
    /// process takes every sample).
    pub other_pids: PidCounts,
    /// The first and last time of the samples.
    pub sample_times: Option<TimeSpan>,
}

impl ProcessSamples {
    /// Counts a sample of `sampled_pid` taken at `time` whose innermost
    /// JavaScript frame had `outcome` (not [`FrameOutcome::NotJavaScript`]).
    #[inline]
    fn count(&mut self, outcome: FrameOutcome, only_in_code_log: bool, sampled_pid: Option<u32>, time: Option<u64>) {
        self.from_code_log += u64::from(only_in_code_log);
        let own = sampled_pid.is_none_or(|pid| Some(pid) == self.pid);
        if own && matches!(outcome, FrameOutcome::UnknownAddress | FrameOutcome::UnknownCodeIndex) {
            self.own_unresolved += 1;
        }
        match outcome {
            FrameOutcome::Expandable => self.expandable += 1,
            FrameOutcome::Unoptimized => self.unoptimized += 1,
            FrameOutcome::WithoutSourcePositions => self.without_source_positions += 1,
            FrameOutcome::NotInLog => self.not_in_log += 1,
            FrameOutcome::NotJavaScript => {}
            FrameOutcome::BeforeAnyLoad => self.before_any_load += 1,
            FrameOutcome::UnknownAddress => self.unknown_address += 1,
            FrameOutcome::UnknownCodeIndex => self.unknown_code_index += 1,
        }
        if let Some(pid) = sampled_pid.filter(|&pid| Some(pid) != self.pid) {
            self.other_pids.add(pid, 1);
        }
        if let Some(time) = time {
            self.sample_times = Some(match self.sample_times {
                None => TimeSpan { first: time, last: time },
                Some(span) => TimeSpan { first: span.first.min(time), last: span.last.max(time) },
            });
        }
    }

    /// All samples counted.
    pub fn total(&self) -> u64 {
        self.expandable + self.not_expanded()
    }

    /// The samples whose innermost JavaScript frame did not expand: all but
    /// the [`FrameOutcome::Expandable`] ones.
    pub fn not_expanded(&self) -> u64 {
        self.unoptimized
            + self.without_source_positions
            + self.not_in_log
            + self.before_any_load
            + self.unknown_address
            + self.unknown_code_index
    }

    /// Adds the counts of the same process in another thread's expander.
    fn merge(&mut self, other: &ProcessSamples) {
        self.pid = self.pid.or(other.pid);
        self.expandable += other.expandable;
        self.unoptimized += other.unoptimized;
        self.without_source_positions += other.without_source_positions;
        self.not_in_log += other.not_in_log;
        self.before_any_load += other.before_any_load;
        self.unknown_address += other.unknown_address;
        self.unknown_code_index += other.unknown_code_index;
        self.from_code_log += other.from_code_log;
        self.own_unresolved += other.own_unresolved;
        self.other_pids.merge(&other.other_pids);
        self.sample_times = match (self.sample_times, other.sample_times) {
            (Some(mine), Some(theirs)) => {
                Some(TimeSpan { first: mine.first.min(theirs.first), last: mine.last.max(theirs.last) })
            }
            (mine, theirs) => mine.or(theirs),
        };
    }
}

impl ExpansionStats {
    /// Adds the counts of `other` (another thread's expander).
    pub fn add(&mut self, other: &ExpansionStats) {
        self.expanded += other.expanded;
        self.resolved_without_inlining += other.resolved_without_inlining;
        self.resolved_without_positions += other.resolved_without_positions;
        self.unresolved_no_jitdump += other.unresolved_no_jitdump;
        self.unresolved_unknown_address += other.unresolved_unknown_address;
        self.unresolved_unknown_code_index += other.unresolved_unknown_code_index;
        self.clock_mismatches += other.clock_mismatches;
        self.not_jit += other.not_jit;
        self.builtins_named += other.builtins_named;
        if self.processes.len() < other.processes.len() {
            self.processes.resize(other.processes.len(), ProcessSamples::default());
        }
        for (mine, theirs) in self.processes.iter_mut().zip(&other.processes) {
            mine.merge(theirs);
        }
        self.pids_without_jitdump.merge(&other.pids_without_jitdump);
    }
}

/// Where a stack line points, if it is V8 JIT code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JitFrame {
    /// `jitted-PID-N.so` after `perf inject -j`: code index and offset.
    Injected { pid: Option<u32>, code_index: u64, offset: u64 },
    /// A runtime address in anonymous executable memory, and what the
    /// source knows of the jitdump its process mapped: a named one is the
    /// only one that may name it, and with none mapped, none may.
    Raw { pid: Option<u32>, address: u64, jitdump: MappedJitDump },
}

/// Where a frame points, if it may be V8 JIT code.
fn classify(frame: &FrameContext<'_>) -> Option<JitFrame> {
    match frame.module_kind() {
        ModuleKind::JitImage { pid, code_index } => {
            Some(JitFrame::Injected { pid, code_index: code_index?, offset: frame.frame.symbol_offset.unwrap_or(0) })
        }
        ModuleKind::PerfMap { pid, jitdump } => Some(JitFrame::Raw { pid, address: frame.frame.address, jitdump }),
        ModuleKind::Unknown => {
            Some(JitFrame::Raw { pid: None, address: frame.frame.address, jitdump: MappedJitDump::NotKnown })
        }
        ModuleKind::JitDumpCode { pid } => {
            Some(JitFrame::Raw { pid: None, address: frame.frame.address, jitdump: MappedJitDump::Named(pid) })
        }
        ModuleKind::Kernel | ModuleKind::NoCode | ModuleKind::File => None,
    }
}

/// One expansion, cached per (process, code object, offset, rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ExpansionKey {
    process: usize,
    code: CodeId,
    offset: u64,
    rule: PositionRule,
}

/// A cached frame: an interned name and whether it is inlined.
#[derive(Debug, Clone, Copy)]
struct CachedFrame {
    name: u32,
    inlined: bool,
}

/// One expanded code location (a PC in a code object), cached: its id is
/// its index, which tags the frames for detailed outputs.
#[derive(Debug, Clone)]
struct CachedLocation {
    key: ExpansionKey,
    /// Where its frames start in `V8Expander::location_frames` and its
    /// inline stack in `V8Expander::location_inline_frames` (as many of
    /// each), innermost first: one arena for all, not two vectors each.
    frames_start: u32,
    /// How many frames.
    frame_count: u16,
    /// Whether the code object has source positions.
    has_positions: bool,
    /// What kind of code it is, for [`ProcessSamples`].
    outcome: FrameOutcome,
    /// Whether only the code log knew the code ([`InlineMap::only_in_code_log`]).
    only_in_code_log: bool,
}

impl CachedLocation {
    /// The range of its frames in the arenas.
    fn frames(&self) -> std::ops::Range<usize> {
        let start = self.frames_start as usize;
        start..start + usize::from(self.frame_count)
    }
}

/// A raw address looked up before, per process and position rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct AddressKey {
    process: usize,
    address: u64,
    rule: PositionRule,
    /// Whether the sample had a time.
    timed: bool,
}

impl AddressKey {
    /// The key without the address, which a frame number stands for.
    fn for_number(self) -> NumberedAddressKey {
        NumberedAddressKey { process: self.process as u32, rule: self.rule, timed: self.timed }
    }
}

/// An [`AddressKey`] for a numbered frame (whose number stands for the
/// address): what else the answer depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NumberedAddressKey {
    process: u32,
    rule: PositionRule,
    timed: bool,
}

/// What the expansion of a frame counts, from its cached location: kept
/// with a raw address's answer, so that a frame seen before needs no look
/// at the location itself.
#[derive(Debug, Clone, Copy)]
struct LocationSummary {
    outcome: FrameOutcome,
    only_in_code_log: bool,
    has_positions: bool,
    /// Whether it stands for more than one frame.
    inlines: bool,
}

/// What a raw address resolved to, and for which sample times.
#[derive(Debug, Clone, Copy)]
struct AddressHit {
    /// The location id.
    location: u32,
    /// What its expansion counts.
    summary: LocationSummary,
    /// The sample times with the same answer.
    same_answer: TimeRange,
    /// Whether the code was loaded only after the sample time.
    clock_mismatch: bool,
}

/// The last pid looked up and its process.
#[derive(Debug, Clone, Copy)]
struct ProcessLookup {
    pid: u32,
    /// How many processes were loaded then.
    loaded_processes: usize,
    process: Option<usize>,
}

/// The embedded blob looked for in one file of a process.
#[derive(Debug, Clone)]
struct FileBlob {
    /// The file, as the source names it.
    path: Box<str>,
    /// The blob's builtins there; `None` when not found.
    blob: Option<Arc<EmbeddedBlobSymbols>>,
}

/// At most this many raw addresses are remembered; then the cache starts over.
const ADDRESS_CACHE_LIMIT: usize = 1 << 20;

/// Expands V8 JIT frames through the loaded (or discovered) code_logs. One
/// expander serves the samples of one source: it keeps the answers for raw
/// addresses by the source's frame numbers ([`crate::model::sample::FrameNumber`]).
pub struct V8Expander {
    code_logs: CodeLogs,
    options: ExpandOptions,
    /// Counts by outcome.
    pub stats: ExpansionStats,
    names: IndexSet<Box<str>, rustc_hash::FxBuildHasher>,
    /// Location id per key; the id indexes `locations`.
    cache: FxHashMap<ExpansionKey, u32>,
    locations: Vec<CachedLocation>,
    /// The frames of all cached locations, as folded.
    location_frames: Vec<CachedFrame>,
    /// The inline stacks they were named from.
    location_inline_frames: Vec<InlineFrame>,
    /// Raw addresses resolved before.
    address_cache: FxHashMap<AddressKey, AddressHit>,
    /// The same by the source's frame number (a vector lookup; forgotten
    /// with `address_cache`).
    address_cache_by_number: FrameNumberCache<NumberedAddressKey, AddressHit>,
    /// The last process lookup.
    last_process: Option<ProcessLookup>,
    code_by_index: FxHashMap<(usize, u64), CodeId>,
    /// How many processes `code_by_index` covers.
    indexed_processes: usize,
    /// Per process, the embedded blob of each file it was looked for in
    /// (`None`: not found there), for frames of binaries without symbols.
    blobs: FxHashMap<usize, Vec<FileBlob>>,
    /// Whether the current sample was counted in [`ExpansionStats::processes`]
    /// or [`ExpansionStats::pids_without_jitdump`] (at its innermost
    /// JavaScript frame).
    sample_counted: bool,
}

impl V8Expander {
    /// An expander over `code_logs`.
    pub fn new(code_logs: CodeLogs, options: ExpandOptions) -> V8Expander {
        V8Expander {
            code_logs,
            options,
            stats: ExpansionStats::default(),
            names: IndexSet::default(),
            cache: FxHashMap::default(),
            locations: Vec::new(),
            location_frames: Vec::new(),
            location_inline_frames: Vec::new(),
            address_cache: FxHashMap::default(),
            address_cache_by_number: FrameNumberCache::default(),
            last_process: None,
            code_by_index: FxHashMap::default(),
            indexed_processes: 0,
            blobs: FxHashMap::default(),
            sample_counted: false,
        }
    }

    /// The code_logs (with any discovered on the way).
    pub fn code_logs(&self) -> &CodeLogs {
        &self.code_logs
    }

    /// The code logs, the expander done with.
    pub fn into_code_logs(self) -> CodeLogs {
        self.code_logs
    }

    /// The process of `pid` (see [`CodeLogs::process_for_pid`]). Most
    /// frames in a row are of one process, and the answer changes only when
    /// a process is loaded (discovery): the last answer is kept.
    /// What the expansion of cached `location` counts.
    fn summary_of(&self, location: u32) -> LocationSummary {
        let cached = &self.locations[location as usize];
        LocationSummary {
            outcome: cached.outcome,
            only_in_code_log: cached.only_in_code_log,
            has_positions: cached.has_positions,
            inlines: cached.frame_count > 1,
        }
    }

    fn process_for_pid(&mut self, pid: u32) -> Option<usize> {
        let loaded = self.code_logs.maps().len();
        if let Some(last) = self.last_process
            && last.pid == pid
            && last.loaded_processes == loaded
        {
            return last.process;
        }
        let process = self.code_logs.process_for_pid(pid);
        self.last_process = Some(ProcessLookup { pid, loaded_processes: self.code_logs.maps().len(), process });
        process
    }

    /// Counts the sample of a JIT frame of `process` whose outcome was
    /// `outcome`, if it is the sample's innermost JavaScript frame.
    #[inline]
    fn count_sample(&mut self, process: usize, outcome: FrameOutcome, sampled_pid: Option<u32>, time: Option<u64>) {
        self.count_sample_of(process, outcome, false, sampled_pid, time);
    }

    /// [`V8Expander::count_sample`] of a frame whose code may be one only
    /// the code log knew.
    fn count_sample_of(
        &mut self,
        process: usize,
        outcome: FrameOutcome,
        only_in_code_log: bool,
        sampled_pid: Option<u32>,
        time: Option<u64>,
    ) {
        if self.sample_counted || outcome == FrameOutcome::NotJavaScript {
            return;
        }
        self.sample_counted = true;
        if process >= self.stats.processes.len() {
            self.add_process_counters();
        }
        self.stats.processes[process].count(outcome, only_in_code_log, sampled_pid, time);
    }

    /// Counters for the processes loaded since the last call.
    #[cold]
    fn add_process_counters(&mut self) {
        for map in &self.code_logs.maps()[self.stats.processes.len()..] {
            let pid = map.pid.or_else(|| pid_in_file_name(map.log_path()));
            self.stats.processes.push(ProcessSamples { pid, ..ProcessSamples::default() });
        }
    }

    fn code_for_index(&mut self, process: usize, code_index: u64) -> Option<CodeId> {
        // Index the processes loaded since the last call (discovery appends).
        let maps = self.code_logs.maps();
        for (process, map) in maps.iter().enumerate().skip(self.indexed_processes) {
            for (id, code) in map.codes().iter().enumerate() {
                if let Some(index) = code.code_index() {
                    self.code_by_index.insert((process, index), CodeId(id as u32));
                }
            }
        }
        self.indexed_processes = maps.len();
        self.code_by_index.get(&(process, code_index)).copied()
    }

    fn intern(&mut self, name: &str) -> u32 {
        match self.names.get_index_of(name) {
            Some(index) => index as u32,
            None => self.names.insert_full(name.into()).0 as u32,
        }
    }

    /// The location id of one code offset, computing its frames once.
    fn cached_location(&mut self, key: ExpansionKey) -> u32 {
        if let Some(&location) = self.cache.get(&key) {
            return location;
        }
        let map = Arc::clone(&self.code_logs.maps()[key.process]);
        let frames_start = self.location_inline_frames.len();
        map.inline_frames(key.code, key.offset, key.rule, &mut self.location_inline_frames);
        for index in frames_start..self.location_inline_frames.len() {
            let function = self.location_inline_frames[index].function;
            let name = self.intern(&map.frame_name(key.code, function));
            self.location_frames.push(CachedFrame { name, inlined: matches!(function, FrameFunction::Inlined(_)) });
        }
        let frame_count = u16::try_from(self.location_frames.len() - frames_start).unwrap_or(u16::MAX);
        let has_positions = map.log_object(key.code).is_some_and(|object| object.source_info.is_some());
        let outcome = code_outcome(&map, key.code);
        let only_in_code_log = map.only_in_code_log(key.code);
        let location = u32::try_from(self.locations.len()).unwrap_or(u32::MAX);
        let frames_start = u32::try_from(frames_start).unwrap_or(u32::MAX);
        self.locations.push(CachedLocation {
            key,
            frames_start,
            frame_count,
            has_positions,
            outcome,
            only_in_code_log,
        });
        self.cache.insert(key, location);
        location
    }

    /// The builtin a frame the source could not name lies in (`[unknown]`
    /// in a file: a binary without symbols), named from its process's code
    /// log: the embedded blob is found in the file once per process and
    /// file ([`EmbeddedBlobSymbols::locate`]).
    fn embedded_builtin(&mut self, frame: &FrameContext<'_>) -> Option<String> {
        let file_address = frame.frame.file_address?;
        if frame.module_kind() != ModuleKind::File || frame.symbol() != "[unknown]" {
            return None;
        }
        let sample = frame.sample;
        let process = self.process_for_pid(sample.pid.or(sample.tid)?)?;
        let path = frame.module_path();
        let files = self.blobs.entry(process).or_default();
        let blob = match files.iter().find(|file| *file.path == *path) {
            Some(file) => file.blob.clone(),
            None => {
                let map = &self.code_logs.maps()[process];
                // The first log that names builtins: every isolate of a
                // process runs the one blob.
                let builtins = map.logs().iter().map(embedded_builtins).find(|builtins| !builtins.is_empty());
                let blob = builtins
                    .and_then(|builtins| EmbeddedBlobSymbols::locate(std::path::Path::new(path), builtins))
                    .map(Arc::new);
                files.push(FileBlob { path: path.into(), blob: blob.clone() });
                blob
            }
        };
        blob?.symbol_at(file_address).map(str::to_string)
    }

    /// Describes a location id that tagged expanded frames.
    pub fn location_details(&self, location: u32) -> Option<LocationDetails<'_>> {
        let cached = self.locations.get(location as usize)?;
        let map = self.code_logs.maps().get(cached.key.process)?;
        let code = map.code(cached.key.code);
        Some(LocationDetails {
            process: cached.key.process,
            pid: map.pid,
            address: code.address + cached.key.offset,
            code_name: map.name_of(code),
            frames: self.location_inline_frames[cached.frames()]
                .iter()
                .map(|frame| map.describe(cached.key.code, frame))
                .collect(),
        })
    }
}

impl FrameExpander for V8Expander {
    fn location_details(&self, location: u32) -> Option<LocationDetails<'_>> {
        V8Expander::location_details(self, location)
    }

    fn name_location(&self, location: u32, frames: &mut ExpandedFrames) {
        let Some(cached) = self.locations.get(location as usize) else { return };
        for cached_frame in &self.location_frames[cached.frames()] {
            frames.push(&self.names[cached_frame.name as usize], cached_frame.inlined);
        }
        frames.set_location(location);
    }

    fn expand(&mut self, frame: &FrameContext<'_>, frames: &mut ExpandedFrames) -> bool {
        if frame.index == 0 {
            self.sample_counted = false;
        }
        let Some(jit_frame) = classify(frame) else {
            if let Some(symbol) = self.embedded_builtin(frame) {
                frames.push(&symbol, false);
                frames.set_native();
                self.stats.builtins_named += 1;
                return true;
            }
            self.stats.not_jit += 1;
            return false;
        };
        let module_pid = match jit_frame {
            JitFrame::Injected { pid, .. } | JitFrame::Raw { pid, .. } => pid,
        };
        // The jitdump the frame's code is in, when the source says:
        // `jitted-PID-N.so` names it, and so does the `jit-PID.dump` a
        // perf.data shows the process mapped.
        let jitdump_pid = match jit_frame {
            JitFrame::Injected { pid, .. } => pid,
            JitFrame::Raw { jitdump: MappedJitDump::Named(pid), .. } => Some(pid),
            JitFrame::Raw { .. } => None,
        };
        // The process a sample belongs to: the jitdump's, else the pid perf
        // printed, else the one in the module name, else the thread id
        // (equal to the pid on the main thread); a lone loaded process takes
        // every sample whose jitdump is not named.
        let sample = frame.sample;
        let sampled_pid = match jit_frame {
            JitFrame::Raw { jitdump: MappedJitDump::Named(pid), .. } => Some(pid),
            _ => sample.pid.or(module_pid).or(sample.tid),
        };
        // perf prints times truncated to its resolution: take the end of that
        // interval so code loaded within it still counts.
        let time = sample.time.map(SampleTime::latest);
        // A process that mapped no jitdump: its code is no jitdump's.
        let no_jitdump = matches!(jit_frame, JitFrame::Raw { jitdump: MappedJitDump::NoneMapped, .. });
        let process =
            (!no_jitdump).then(|| self.process_for_pid(sampled_pid.unwrap_or(0))).flatten().filter(|&process| {
                // A named jitdump: the lone process that takes every sample must
                // be its, or its code indexes and addresses mean other code.
                match (jitdump_pid, self.code_logs.maps()[process].pid) {
                    (Some(jitdump_pid), Some(map_pid)) => jitdump_pid == map_pid,
                    _ => true,
                }
            });
        let Some(process) = process else {
            // `[unknown] ([unknown])` is only JIT code if a jitdump says so.
            if module_pid.is_some() || jitdump_pid.is_some() || matches!(jit_frame, JitFrame::Injected { .. }) {
                self.stats.unresolved_no_jitdump += 1;
                if !self.sample_counted {
                    self.sample_counted = true;
                    self.stats.pids_without_jitdump.add(sampled_pid.unwrap_or(0), 1);
                }
            } else {
                self.stats.not_jit += 1;
            }
            return false;
        };
        let rule = if self.options.exact_pc && frame.frame.address_kind == AddressKind::InstructionPointer {
            PositionRule::AtOrBefore
        } else {
            PositionRule::StrictlyBefore
        };
        let mut clock_mismatch = false;
        let location = match jit_frame {
            JitFrame::Injected { code_index, offset, .. } => match self.code_for_index(process, code_index) {
                Some(code) => {
                    let location = self.cached_location(ExpansionKey { process, code, offset, rule });
                    (location, self.summary_of(location))
                }
                None => {
                    self.stats.unresolved_unknown_code_index += 1;
                    self.count_sample(process, FrameOutcome::UnknownCodeIndex, sampled_pid, time);
                    return false;
                }
            },
            JitFrame::Raw { address, .. } => {
                let key = AddressKey { process, address, rule, timed: time.is_some() };
                let number = frame.frame.number;
                let cached = match self.address_cache_by_number.get(number, &key.for_number()) {
                    Some(hit) => Some(*hit),
                    None => {
                        let hit = self.address_cache.get(&key).copied();
                        if let Some(hit) = hit {
                            self.address_cache_by_number.insert(number, key.for_number(), hit);
                        }
                        hit
                    }
                };
                match cached.filter(|hit| hit.same_answer.contains(time.unwrap_or(0))) {
                    Some(hit) => {
                        self.stats.clock_mismatches += u64::from(hit.clock_mismatch);
                        clock_mismatch = hit.clock_mismatch;
                        (hit.location, hit.summary)
                    }
                    None => {
                        let map = &self.code_logs.maps()[process];
                        let Some(found) = map.find(address, time) else {
                            // `[unknown] ([unknown])` is only JIT code if a jitdump says so.
                            if module_pid.is_some() {
                                self.stats.unresolved_unknown_address += 1;
                                self.count_sample(process, FrameOutcome::UnknownAddress, sampled_pid, time);
                            } else {
                                self.stats.not_jit += 1;
                            }
                            return false;
                        };
                        clock_mismatch = !found.time_matched;
                        self.stats.clock_mismatches += u64::from(clock_mismatch);
                        let location = self.cached_location(ExpansionKey {
                            process,
                            code: found.code,
                            offset: found.offset,
                            rule,
                        });
                        if self.address_cache.len() >= ADDRESS_CACHE_LIMIT {
                            self.address_cache.clear();
                            self.address_cache_by_number.clear();
                        }
                        let summary = self.summary_of(location);
                        let hit = AddressHit { location, summary, same_answer: found.same_answer, clock_mismatch };
                        self.address_cache.insert(key, hit);
                        self.address_cache_by_number.insert(number, key.for_number(), hit);
                        (location, summary)
                    }
                }
            }
        };
        let (location, summary) = location;
        let outcome = if clock_mismatch { FrameOutcome::BeforeAnyLoad } else { summary.outcome };
        self.count_sample_of(process, outcome, summary.only_in_code_log, sampled_pid, time);
        frames.set_unnamed_location(location);
        match (summary.has_positions, summary.inlines) {
            (false, _) => self.stats.resolved_without_positions += 1,
            (true, false) => self.stats.resolved_without_inlining += 1,
            (true, true) => self.stats.expanded += 1,
        }
        true
    }
}

/// What kind of code `code` is, as far as expanding it goes.
fn code_outcome(map: &InlineMap, code: CodeId) -> FrameOutcome {
    let Some(object) = map.log_object(code) else {
        // Not in the log: JavaScript if its jitdump name carries a tier
        // marker (`JS:*f`, `LazyCompile:~f`), as V8 names only JavaScript code.
        return if name_has_tier_marker(map.code_name(code)) {
            FrameOutcome::NotInLog
        } else {
            FrameOutcome::NotJavaScript
        };
    };
    match object.tier.map(|marker| marker.tier) {
        None => FrameOutcome::NotJavaScript,
        Some(Tier::Interpreted | Tier::Sparkplug) => FrameOutcome::Unoptimized,
        Some(Tier::Maglev | Tier::TurboFan) if object.source_info.is_some() => FrameOutcome::Expandable,
        Some(Tier::Maglev | Tier::TurboFan) => FrameOutcome::WithoutSourcePositions,
    }
}

/// Whether a jitdump name `TAG:MARKERname` has a tier marker (`~ ^ + *`,
/// maybe after `o` for on-stack replacement).
fn name_has_tier_marker(name: &str) -> bool {
    CodeName::parse(name).is_some_and(|name| name.marker.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lone loaded process takes every pid's samples; what its own files
    /// left unresolved counts only its own pid's (and those of no pid).
    #[test]
    fn only_the_process_own_unresolved_samples_are_its_loss() {
        let mut samples = ProcessSamples { pid: Some(7), ..ProcessSamples::default() };
        samples.count(FrameOutcome::UnknownAddress, false, Some(8), Some(1));
        samples.count(FrameOutcome::UnknownAddress, false, Some(7), Some(2));
        samples.count(FrameOutcome::UnknownCodeIndex, false, None, Some(3));
        samples.count(FrameOutcome::Expandable, true, Some(7), Some(4));
        assert_eq!((samples.unknown_address, samples.unknown_code_index), (2, 1));
        assert_eq!((samples.own_unresolved, samples.from_code_log, samples.total()), (2, 1, 4));
        assert_eq!(samples.other_pids.total(), 1);
    }
}
