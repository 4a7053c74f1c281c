//! The join of a process's V8 code logs (one per isolate) with its jitdump,
//! and the lookup of a sampled address in it.
//!
//! V8 writes a jitdump CODE_LOAD and a log `code-creation` from the same code
//! event, and reuses the addresses of freed code. So within one isolate the
//! k-th LOAD at an (address, size) key and the k-th code-creation at that key
//! are the same code object. A sample at time T belongs to the newest LOAD at
//! or before T that covers its address: code objects overlap over time, not
//! only at equal start addresses.
//!
//! A process with worker threads has one isolate per thread, each with its
//! own log (`isolate-0x<address>-<pid>-<logfile>`), and one jitdump for all.
//! Each log counts time from its own isolate's start, so its clock is
//! aligned with the jitdump's first ([`ClockAlignment`]); where several logs
//! created code at the same key (the embedded builtins every isolate logs,
//! addresses reused after an isolate freed them), each LOAD takes the next
//! code-creation of the log whose aligned time is nearest to it.

use crate::expansion::{PositionOrigin, SourceFrame};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use crate::formats::jitdump::{CodeLoad, JitDump};
use crate::formats::v8log::{CodeLog, CodeObject, CodeObjectId, NameId, SharedFunction, TagId, TierMarker};
use crate::formats::v8log::{CodeName, FunctionName, LineColumn};
use crate::v8::inline_stack::{FrameFunction, InlineFrame, PositionRule, WalkProblem, inlining_stack};
use crate::v8::source::LineTable;
use crate::v8::source_map::{
    LoadedSourceMap, ScriptSourceMap, SourceMapOptions, UnusableSourceMap, load_script_map, script_file_name,
};

/// Index of a code object in an [`InlineMap`] (one per jitdump LOAD, or per
/// log code object when there is no jitdump), in load order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeId(pub(crate) u32);

impl CodeId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a code log in an [`InlineMap`]: one per isolate of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogId(pub(crate) u32);

impl LogId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A code object of one of an [`InlineMap`]'s code logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LogObject {
    /// The log (isolate) that created it.
    pub log: LogId,
    /// The code object in that log.
    pub object: CodeObjectId,
}

/// How a code log's clock relates to the jitdump's: each isolate's log
/// counts microseconds from that isolate's start, the jitdump CLOCK_MONOTONIC
/// nanoseconds.
///
/// Learned from the code objects whose (address, size) the jitdump loads
/// once and only this log creates: for those the LOAD and the code-creation
/// are the same event, written at the same moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockAlignment {
    /// Jitdump time minus code-creation time (µs × 1000), in nanoseconds:
    /// the median over the pairs.
    pub offset_nanoseconds: i64,
    /// How many code objects it was learned from.
    pub pair_count: usize,
    /// How far 95 % of the pairs lie from the offset, in nanoseconds.
    pub spread_nanoseconds: u64,
}

impl ClockAlignment {
    /// A code-creation time of this log on the jitdump's clock (ns).
    pub fn jitdump_time(self, timestamp_micros: i64) -> i64 {
        timestamp_micros.saturating_mul(1000).saturating_add(self.offset_nanoseconds)
    }
}

/// Index of a code object's name in the names of an [`InlineMap`] (or of the
/// [`JitCodes`] it is built from): [`InlineMap::code_name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeNameId(pub(crate) u32);

impl CodeNameId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A code object as the sampled process saw it.
///
/// Processes load millions: it takes 48 bytes, its name is an id of the
/// map's names ([`InlineMap::code_name`]), and its optional fields are read
/// through methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JitCode {
    /// Start of its instructions.
    pub address: u64,
    /// Size in bytes.
    pub size: u64,
    /// [`JitCode::load_time`] when `has_load_time`.
    load_time: u64,
    /// [`JitCode::code_index`] when `has_code_index`.
    code_index: u64,
    /// The log of [`JitCode::log_object`]; [`NO_LOG`] for none.
    log: u32,
    /// The code object in that log.
    object: u32,
    /// Its symbol: the jitdump name, e.g. `JS:*kernel /app/deep.js:24:16`.
    name: CodeNameId,
    has_load_time: bool,
    has_code_index: bool,
}

/// [`JitCode::log`] of a code no log created (a log index no process has).
const NO_LOG: u32 = u32::MAX;

impl JitCode {
    /// When it was loaded (jitdump timestamp, CLOCK_MONOTONIC ns).
    pub fn load_time(&self) -> Option<u64> {
        self.has_load_time.then_some(self.load_time)
    }

    /// The jitdump code index (`jitted-PID-N.so` after `perf inject -j`).
    pub fn code_index(&self) -> Option<u64> {
        self.has_code_index.then_some(self.code_index)
    }

    /// The matching code object of the code logs.
    pub fn log_object(&self) -> Option<LogObject> {
        (self.log != NO_LOG).then_some(LogObject { log: LogId(self.log), object: CodeObjectId(self.object) })
    }

    /// Its name's id in the map ([`InlineMap::code_name`]).
    pub fn name_id(&self) -> CodeNameId {
        self.name
    }

    fn set_log_object(&mut self, object: Option<LogObject>) {
        (self.log, self.object) = match object {
            Some(object) => (object.log.0, object.object.0),
            None => (NO_LOG, 0),
        };
    }
}

/// A code object as its source describes it, to add to [`JitCodes`].
#[derive(Debug, Clone, Copy)]
pub struct CodeDescription<'name> {
    /// Start of its instructions.
    pub address: u64,
    /// Size in bytes.
    pub size: u64,
    /// When it was loaded (jitdump clock, ns; or whatever stands for time).
    pub load_time: Option<u64>,
    /// The jitdump code index.
    pub code_index: Option<u64>,
    /// Its symbol (line breaks become spaces).
    pub name: &'name str,
    /// The matching code object of the code logs, if known.
    pub log_object: Option<LogObject>,
}

/// The code objects an [`InlineMap`] is built from, in load order, with
/// their names interned.
#[derive(Debug, Default)]
pub struct JitCodes {
    codes: Vec<JitCode>,
    names: Vec<Arc<str>>,
    /// Names by the address of the jitdump reader's interned text (it gives
    /// every LOAD of one name the same `Arc`).
    names_by_pointer: FxHashMap<usize, CodeNameId>,
    /// Names by their text.
    names_by_text: FxHashMap<Arc<str>, CodeNameId>,
}

impl JitCodes {
    /// How many code objects.
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// Adds the code object of a jitdump CODE_LOAD, not yet joined to a log.
    pub fn push_load(&mut self, load: &CodeLoad) {
        let pointer = Arc::as_ptr(&load.name) as *const u8 as usize;
        let name = match self.names_by_pointer.get(&pointer) {
            Some(&name) => name,
            None => {
                let name = self.intern(&load.name);
                // The names keep the pointer's text alive only when it is
                // interned as it is; a renamed one is keyed by its text.
                if Arc::ptr_eq(&self.names[name.index()], &load.name) {
                    self.names_by_pointer.insert(pointer, name);
                }
                name
            }
        };
        self.codes.push(JitCode {
            address: load.code_address,
            size: load.code_size,
            load_time: load.timestamp,
            code_index: load.code_index,
            log: NO_LOG,
            object: 0,
            name,
            has_load_time: true,
            has_code_index: true,
        });
    }

    /// Adds a code object.
    pub fn push(&mut self, code: CodeDescription<'_>) {
        let name = self.intern_text(code.name);
        self.push_named(code, name);
    }

    fn push_named(&mut self, code: CodeDescription<'_>, name: CodeNameId) {
        let mut jit_code = JitCode {
            address: code.address,
            size: code.size,
            load_time: code.load_time.unwrap_or(0),
            code_index: code.code_index.unwrap_or(0),
            log: NO_LOG,
            object: 0,
            name,
            has_load_time: code.load_time.is_some(),
            has_code_index: code.code_index.is_some(),
        };
        jit_code.set_log_object(code.log_object);
        self.codes.push(jit_code);
    }

    /// The id of a shared name, on one line.
    fn intern(&mut self, name: &Arc<str>) -> CodeNameId {
        if let Some(&id) = self.names_by_text.get(&**name) {
            return id;
        }
        let one = match one_line(name) {
            Cow::Borrowed(_) => name.clone(),
            Cow::Owned(renamed) => {
                if let Some(&id) = self.names_by_text.get(renamed.as_str()) {
                    return id;
                }
                renamed.into()
            }
        };
        self.add_name(one)
    }

    /// The id of a name, on one line.
    fn intern_text(&mut self, name: &str) -> CodeNameId {
        let one = one_line(name);
        match self.names_by_text.get(&*one) {
            Some(&id) => id,
            None => self.add_name(one.into()),
        }
    }

    fn add_name(&mut self, name: Arc<str>) -> CodeNameId {
        let id = CodeNameId(self.names.len() as u32);
        self.names.push(name.clone());
        self.names_by_text.insert(name, id);
        id
    }
}

/// The code objects of logs without a jitdump: their own code-creation
/// addresses, in log order, log after log, named as the jitdump names code.
fn log_codes(logs: &[CodeLog]) -> JitCodes {
    let mut codes = JitCodes::default();
    codes.codes.reserve_exact(logs.iter().map(|log| log.code_objects.len()).sum());
    for (log, code_log) in logs.iter().enumerate() {
        // The jitdump-style name is made once per tag, tier and name.
        let mut names: FxHashMap<(TagId, Option<TierMarker>, NameId), CodeNameId> = FxHashMap::default();
        for (index, object) in code_log.code_objects.iter().enumerate() {
            let key = (object.tag, object.tier, object.name);
            let name = match names.get(&key) {
                Some(&name) => name,
                None => {
                    let name = codes.intern_text(&log_style_name(code_log, object));
                    names.insert(key, name);
                    name
                }
            };
            let description = CodeDescription {
                address: object.address,
                size: object.size,
                load_time: None,
                code_index: None,
                name: "",
                log_object: Some(LogObject { log: LogId(log as u32), object: CodeObjectId(index as u32) }),
            };
            codes.push_named(description, name);
        }
    }
    codes
}

/// How to find script text when the log carries none (`--no-log-source-code`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SourceOptions {
    /// Read scripts from disk by the path V8 names them with.
    pub read_from_disk: bool,
    /// Path prefixes to replace before reading (`FROM`, `TO`), for profiles
    /// recorded elsewhere.
    pub path_substitutions: Vec<(String, String)>,
    /// Where source maps come from, and whether frames are mapped at all.
    pub source_maps: SourceMapOptions,
}

/// The code object found for an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressMatch {
    /// The code object.
    pub code: CodeId,
    /// `address - code.address`.
    pub offset: u64,
    /// False when a time was given but no object covering the address had
    /// been loaded by then (a clock mismatch): the oldest one was taken.
    pub time_matched: bool,
    /// The times for which the same address gives the same answer: from
    /// this object's load to the next load covering the address
    /// (`u64::MAX` for the newest). Callers cache by it.
    pub same_answer: TimeRange,
}

/// Times from `start` up to, not including, `end` (jitdump clock, ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    /// The first time in the range.
    pub start: u64,
    /// The first time after it.
    pub end: u64,
}

impl TimeRange {
    /// Whether `time` lies in the range.
    pub fn contains(self, time: u64) -> bool {
        self.start <= time && time < self.end
    }
}

/// How V8 formats JS code names in this process's jitdump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameStyle {
    /// `JS:*name script:line:col` (node 20 and later).
    LineAndColumn,
    /// `LazyCompile:*name script:line` (node 18).
    LineOnly,
}

/// The code logs of a process joined with its jitdump, ready for address
/// lookups.
pub struct InlineMap {
    /// The code logs, one per isolate, indexed by [`LogId`].
    logs: Vec<CodeLog>,
    /// Each log's clock against the jitdump's (`None` for a lone log, which
    /// needs none, or one no code object aligns).
    clocks: Vec<Option<ClockAlignment>>,
    /// The process id (from the jitdump header), if known.
    pub pid: Option<u32>,
    codes: Vec<JitCode>,
    /// The codes' names, by [`CodeNameId`].
    code_names: Vec<Arc<str>>,
    index: AddressIndex,
    name_style: NameStyle,
    sources: SourceOptions,
    /// Per log, its scripts' line tables, built on first use.
    line_tables: Vec<FxHashMap<i64, OnceLock<Option<LineTable>>>>,
    /// Per log, its scripts' source maps, found and parsed on first use.
    source_maps: Vec<FxHashMap<i64, OnceLock<ScriptSourceMap>>>,
    /// Jitdump LOADs that had no code-creation in any log.
    pub unmatched_loads: usize,
    /// The jitdump's file, when it was read from one.
    pub jitdump_path: Option<PathBuf>,
    /// Whether reading the jitdump stopped before its end (cut short, or a
    /// record size that cannot be right): code loaded later is missing.
    pub jitdump_cut_short: bool,
}

impl InlineMap {
    /// Joins the code logs of one process (one per isolate) with its
    /// `jitdump`. Without a jitdump the logs' own code-creation addresses are
    /// used, in log order, log after log.
    pub fn new(logs: Vec<CodeLog>, jitdump: Option<&JitDump>, sources: SourceOptions) -> InlineMap {
        match jitdump {
            Some(jitdump) => {
                let mut loads = JitCodes::default();
                for load in &jitdump.loads {
                    loads.push_load(load);
                }
                InlineMap::join(logs, loads, Some(jitdump.header.pid), sources)
            }
            None => {
                // Indexed before the codes are made: the index's scaffolding
                // and the codes are never in memory together.
                let index = AddressIndex::new(log_code_keys(&logs), key_order(log_code_keys(&logs)));
                let codes = log_codes(&logs);
                InlineMap::with_index(logs, codes, index, None, sources)
            }
        }
    }

    /// Joins the code logs of one process (one per isolate) with the code
    /// objects of its jitdump, in file order ([`JitCodes::push_load`]): what
    /// [`InlineMap::new`] does, for a caller that read the jitdump's loads
    /// straight into code objects.
    pub fn join(logs: Vec<CodeLog>, mut loads: JitCodes, pid: Option<u32>, sources: SourceOptions) -> InlineMap {
        let join = join_loads(&logs, &mut loads.codes);
        let unmatched_loads = loads.codes.iter().filter(|load| load.log_object().is_none()).count();
        let index = AddressIndex::new(code_keys(&loads.codes), join.load_order);
        let mut map = InlineMap::with_index(logs, loads, index, pid, sources);
        map.unmatched_loads = unmatched_loads;
        map.clocks = join.clocks;
        map
    }

    /// A map over code objects the caller has already joined to `logs`
    /// (e.g. from a log alone, with `code-move`s replayed), in load order.
    pub fn from_codes(logs: Vec<CodeLog>, codes: JitCodes, pid: Option<u32>, sources: SourceOptions) -> InlineMap {
        let index = AddressIndex::new(code_keys(&codes.codes), address_order(&codes.codes));
        InlineMap::with_index(logs, codes, index, pid, sources)
    }

    /// [`InlineMap::from_codes`] with the codes' index at hand.
    fn with_index(
        logs: Vec<CodeLog>,
        codes: JitCodes,
        index: AddressIndex,
        pid: Option<u32>,
        sources: SourceOptions,
    ) -> InlineMap {
        let JitCodes { codes, names: code_names, .. } = codes;
        let name_style = detect_name_style(&logs, &codes, &code_names);
        let line_tables =
            logs.iter().map(|log| log.scripts.keys().map(|&id| (id, OnceLock::new())).collect()).collect();
        let source_maps =
            logs.iter().map(|log| log.scripts.keys().map(|&id| (id, OnceLock::new())).collect()).collect();
        let clocks = vec![None; logs.len()];
        InlineMap {
            logs,
            clocks,
            pid,
            codes,
            code_names,
            index,
            name_style,
            sources,
            line_tables,
            source_maps,
            unmatched_loads: 0,
            jitdump_path: None,
            jitdump_cut_short: false,
        }
    }

    /// The code logs, one per isolate, in the order given.
    pub fn logs(&self) -> &[CodeLog] {
        &self.logs
    }

    /// The ids of the code logs, in the order of [`InlineMap::logs`].
    pub fn log_ids(&self) -> impl ExactSizeIterator<Item = LogId> + use<> {
        (0..self.logs.len()).map(|index| LogId(index as u32))
    }

    /// The path of the first code log (empty without one): the one that
    /// messages name, and whose name may carry the pid.
    pub fn log_path(&self) -> &std::path::Path {
        self.logs.first().map_or(std::path::Path::new(""), |log| log.path.as_path())
    }

    /// The code log with this id.
    pub fn log(&self, id: LogId) -> &CodeLog {
        &self.logs[id.index()]
    }

    /// How the clock of a log relates to the jitdump's, when the process
    /// has several logs and code objects to learn it from.
    pub fn clock_alignment(&self, id: LogId) -> Option<ClockAlignment> {
        self.clocks.get(id.index()).copied().flatten()
    }

    /// The log that created a code, if joined.
    pub fn log_of(&self, id: CodeId) -> Option<&CodeLog> {
        self.code(id).log_object().map(|object| self.log(object.log))
    }

    /// All code objects, in load order.
    pub fn codes(&self) -> &[JitCode] {
        &self.codes
    }

    /// The ids of all code objects, in the order of [`InlineMap::codes`].
    pub fn code_ids(&self) -> impl ExactSizeIterator<Item = CodeId> + use<> {
        (0..self.codes.len()).map(|index| CodeId(index as u32))
    }

    /// The code object with this id.
    pub fn code(&self, id: CodeId) -> &JitCode {
        &self.codes[id.index()]
    }

    /// The name of a code: the jitdump's, e.g. `JS:*kernel /app/deep.js:24:16`,
    /// or for log code `TAG:MARKER name` as the jitdump would name it.
    pub fn code_name(&self, id: CodeId) -> &str {
        self.name_of(self.code(id))
    }

    /// The name of one of this map's codes ([`InlineMap::code_name`]).
    pub fn name_of(&self, code: &JitCode) -> &str {
        &self.code_names[code.name.index()]
    }

    /// The log's code object for a code, if joined.
    pub fn log_object(&self, id: CodeId) -> Option<&CodeObject> {
        self.code(id).log_object().map(|object| self.log(object.log).code_object(object.object))
    }

    /// The code object covering `address` at `time` (jitdump clock, ns):
    /// the newest one loaded at or before `time`; without a time, the newest.
    pub fn find(&self, address: u64, time: Option<u64>) -> Option<AddressMatch> {
        let candidates = self.index.covering(address);
        let load_time =
            |index: usize| candidates.get(index).map(|&code| self.codes[code as usize].load_time().unwrap_or(0));
        // The answer is the newest candidate loaded by `time` (the oldest
        // when none was): `chosen`, valid until the next one's load.
        let (chosen, time_matched) = match time {
            None => (candidates.len().checked_sub(1)?, true),
            Some(time) => {
                let loaded =
                    candidates.partition_point(|&code| self.codes[code as usize].load_time().unwrap_or(0) <= time);
                match loaded {
                    0 if candidates.is_empty() => return None,
                    0 => (0, false),
                    count => (count - 1, true),
                }
            }
        };
        let same_answer = match time {
            None => TimeRange { start: 0, end: u64::MAX },
            Some(_) if !time_matched => TimeRange { start: 0, end: load_time(0).unwrap_or(u64::MAX) },
            Some(_) => {
                TimeRange { start: load_time(chosen).unwrap_or(0), end: load_time(chosen + 1).unwrap_or(u64::MAX) }
            }
        };
        let code = CodeId(candidates[chosen]);
        Some(AddressMatch { code, offset: address - self.code(code).address, time_matched, same_answer })
    }

    /// The inline stack of `offset` in `code`, innermost first. A code object
    /// without source positions gives just its own frame.
    pub fn inline_frames(
        &self,
        code: CodeId,
        offset: u64,
        rule: PositionRule,
        frames: &mut Vec<InlineFrame>,
    ) -> Option<WalkProblem> {
        let tables = self.log_object(code).zip(self.log_of(code)).and_then(|(object, log)| log.source_tables(object));
        match tables {
            Some(tables) => inlining_stack(&tables, offset, rule, frames),
            None => {
                frames.push(InlineFrame { function: FrameFunction::Outer, script_offset: -1 });
                None
            }
        }
    }

    /// The folded-stack name of one inline frame of `code`.
    ///
    /// A frame of a script with a source map is named after the original:
    /// the tier marker kept, then the original function name (where the map
    /// records one at the function's start, else V8's), file and start.
    pub fn frame_name(&self, code: CodeId, function: FrameFunction) -> Cow<'_, str> {
        let name = self.generated_frame_name(code, function);
        match self.mapped_frame_name(code, function, &name) {
            Some(mapped) => Cow::Owned(mapped),
            None => name,
        }
    }

    /// [`InlineMap::frame_name`] before source maps.
    fn generated_frame_name(&self, code: CodeId, function: FrameFunction) -> Cow<'_, str> {
        let jit_code = self.code(code);
        let FrameFunction::Inlined(function) = function else {
            return Cow::Borrowed(self.name_of(jit_code));
        };
        // Inlined functions exist only in the log of their host code.
        let Some(log) = self.log_of(code) else { return Cow::Borrowed(self.name_of(jit_code)) };
        let function = log.function(function);
        let host = self.log_object(code);
        // V8 names code `TAG:MARKER name`; an inlined function is named as
        // its own code of the host's compiler would be (no OSR `o` or
        // context-specialization `'`), so it merges with its standalone frames.
        let tag = host.map_or("JS", |object| log.object_tag(object));
        let marker = host.and_then(|object| object.tier).map_or("", |tier| tier.tier.marker());
        // Brackets, not parentheses: folding cuts names at a `(` (C++ arguments).
        let name: &str = if function.name.is_empty() { "[unknown function]" } else { &function.name };
        let name = match self.name_style {
            NameStyle::LineAndColumn => name,
            NameStyle::LineOnly => strip_column(name),
        };
        Cow::Owned(one_line(&format!("{tag}:{marker}{name}")).into_owned())
    }

    /// The log and script id of one inline frame's function.
    fn frame_script(&self, code: CodeId, function: FrameFunction) -> Option<(LogId, i64)> {
        let host = self.log_object(code);
        let log_id = self.code(code).log_object().map(|object| object.log)?;
        let log = self.log(log_id);
        let script_id = match function {
            FrameFunction::Outer => host
                .and_then(|object| log.source_info(object))
                .map(|info| info.script_id)
                .or_else(|| host.and_then(|object| object.function).and_then(|id| log.function(id).script_id)),
            FrameFunction::Inlined(id) => log.function(id).script_id,
        }?;
        Some((log_id, script_id))
    }

    /// `name` (`TAG:MARKER function script:line[:column]`) with the function,
    /// script and start mapped through the script's source map; `None`
    /// without a map or a mapping at the start.
    fn mapped_frame_name(&self, code: CodeId, function: FrameFunction, name: &str) -> Option<String> {
        let (log_id, script_id) = self.frame_script(code, function)?;
        let source_map = self.source_map(log_id, script_id)?;
        let script_name = &*self.log(log_id).scripts.get(&script_id)?.name;
        let parsed = FunctionName::parse(name, Some(script_name));
        let start = parsed.start?;
        let original = source_map.original(start)?;
        let prefix_length = tier_prefix_length(parsed.function);
        let prefix = &parsed.function[..prefix_length];
        let generated_function = &parsed.function[prefix_length..];
        let original_function = original_function_name(source_map, start).unwrap_or(generated_function);
        let position = original.position;
        Some(match self.name_style {
            NameStyle::LineAndColumn => {
                format!("{prefix}{original_function} {}:{}:{}", original.source, position.line, position.column)
            }
            NameStyle::LineOnly => format!("{prefix}{original_function} {}:{}", original.source, position.line),
        })
    }

    /// The source map of a script of one log, found and parsed on first use
    /// (see [`crate::v8::source_map::load_script_map`]); `None` when source
    /// maps are off, the script has none, or it could not be used (then
    /// [`InlineMap::source_map_problems`] says why).
    pub fn source_map(&self, log: LogId, script_id: i64) -> Option<&LoadedSourceMap> {
        if !self.sources.source_maps.enabled {
            return None;
        }
        let cell = self.source_maps.get(log.index())?.get(&script_id)?;
        let state = cell.get_or_init(|| {
            let Some(script) = self.log(log).scripts.get(&script_id) else { return ScriptSourceMap::None };
            // Node's own scripts (`node:internal/...`) have no maps.
            if script.name.is_empty() || script.name.starts_with("node:") {
                return ScriptSourceMap::None;
            }
            let file_name = script_file_name(&script.name);
            let path = substitute_path(&file_name, &self.sources.path_substitutions);
            let path = Path::new(path.as_ref());
            // Read once for both: a log's sources are read back from its file.
            let escaped = self.log(log).script_source(script);
            let source = match escaped.as_deref() {
                // Most scripts name no map: unescape only those that may.
                Some(escaped) if memchr::memmem::find(escaped, b"sourceMappingURL").is_none() => None,
                Some(escaped) => Some(crate::formats::v8log::escape::unescape(escaped)),
                None if self.sources.read_from_disk
                    && std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file()) =>
                {
                    std::fs::read(path).ok().map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                }
                None => None,
            };
            let lines = self.line_table_given(log, script_id, escaped.as_deref());
            load_script_map(&script.name, path, source.as_deref(), lines, &self.sources.source_maps)
        });
        match state {
            ScriptSourceMap::Loaded(map) => Some(map),
            ScriptSourceMap::None | ScriptSourceMap::Failed(_) => None,
        }
    }

    /// The source maps found so far that could not be used.
    pub fn source_map_problems(&self) -> impl Iterator<Item = &UnusableSourceMap> {
        self.source_maps.iter().flat_map(|scripts| scripts.values()).filter_map(|cell| match cell.get() {
            Some(ScriptSourceMap::Failed(problem)) => Some(problem),
            _ => None,
        })
    }

    /// Describes one inline frame of `code` for people.
    pub fn describe(&self, code: CodeId, frame: &InlineFrame) -> SourceFrame<'_> {
        let host = self.log_object(code);
        let log_id = self.code(code).log_object().map(|object| object.log);
        let log = log_id.map(|id| self.log(id));
        let (function, script_id): (Option<&SharedFunction>, Option<i64>) = match (frame.function, log) {
            (FrameFunction::Outer, _) => {
                let function = host.and_then(|object| object.function).zip(log).map(|(id, log)| log.function(id));
                let script = host
                    .zip(log)
                    .and_then(|(object, log)| log.source_info(object))
                    .map(|info| info.script_id)
                    .or_else(|| function.and_then(|function| function.script_id));
                (function, script)
            }
            (FrameFunction::Inlined(id), Some(log)) => {
                let function = log.function(id);
                (Some(function), function.script_id)
            }
            (FrameFunction::Inlined(_), None) => (None, None),
        };
        let full_name: &str = match (frame.function, function) {
            (_, Some(function)) if !function.name.is_empty() => &function.name,
            (FrameFunction::Outer, _) => {
                host.zip(log).map_or(self.code_name(code), |(object, log)| log.object_name(object))
            }
            _ => "",
        };
        let script_name = script_id.zip(log).and_then(|(id, log)| log.scripts.get(&id)).map(|script| &*script.name);
        // Code the log knows to be no JavaScript function (a regular
        // expression, a stub) is named by its code name as it is: a RegExp's
        // pattern may hold spaces and `:N`, which are no script or line.
        let is_function_code = host.is_none_or(|object| object.function.is_some());
        let parsed = if is_function_code {
            FunctionName::parse(full_name, script_name)
        } else {
            FunctionName { function: full_name, script: "", start: None }
        };
        let script_position = script_id
            .zip(log_id)
            .and_then(|(script_id, log_id)| self.line_table(log_id, script_id))
            .and_then(|table| table.position(i64::from(frame.script_offset)));
        let (mut position, position_origin) = match (script_position, parsed.start) {
            (Some(position), _) => (Some(position), PositionOrigin::Script),
            (None, Some(start)) => (Some(start), PositionOrigin::FunctionStart),
            (None, None) => (None, PositionOrigin::Unknown),
        };
        let mut function_name = parsed.function;
        let mut script_name = script_name.unwrap_or(parsed.script);
        let mut function_start = parsed.start;
        // Through the script's source map: the function's start decides its
        // original file and name; the frame's position maps on its own.
        let source_map = script_id.zip(log_id).and_then(|(script_id, log_id)| self.source_map(log_id, script_id));
        if let Some((source_map, start)) = source_map.zip(parsed.start)
            && let Some(original_start) = source_map.original(start)
        {
            function_name = original_function_name(source_map, start).unwrap_or(function_name);
            script_name = original_start.source;
            function_start = Some(original_start.position);
            position = position.map(|generated| {
                source_map
                    .original(generated)
                    .filter(|original| original.source == original_start.source)
                    .map_or(original_start.position, |original| original.position)
            });
        }
        SourceFrame {
            frame_name: self.frame_name(code, frame.function),
            function_name,
            script_name,
            position,
            position_origin,
            function_start,
            inlined: matches!(frame.function, FrameFunction::Inlined(_)),
            tier: host.and_then(|object| object.tier).map(|tier| tier.tier),
        }
    }

    /// The line table of a script of one log (script ids are per isolate):
    /// from the log's `script-source`, else from disk when allowed. Built
    /// once, on first use.
    pub fn line_table(&self, log: LogId, script_id: i64) -> Option<&LineTable> {
        self.line_table_given(log, script_id, None)
    }

    /// [`InlineMap::line_table`], built from `escaped`, the script's source
    /// as the log carries it, when the caller has read it already.
    fn line_table_given(&self, log: LogId, script_id: i64, escaped: Option<&[u8]>) -> Option<&LineTable> {
        let cell = self.line_tables.get(log.index())?.get(&script_id)?;
        cell.get_or_init(|| {
            let script = self.log(log).scripts.get(&script_id)?;
            if let Some(escaped) = escaped {
                return Some(LineTable::from_escaped_source(escaped));
            }
            if let Some(source) = self.log(log).script_source(script) {
                return Some(LineTable::from_escaped_source(&source));
            }
            if !self.sources.read_from_disk {
                return None;
            }
            let path = substitute_path(&script.name, &self.sources.path_substitutions);
            let path = Path::new(path.as_ref());
            // Only regular files: a script named `/dev/zero` or a FIFO in a
            // damaged log must not hang the run or exhaust memory.
            if !std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file()) {
                return None;
            }
            let bytes = std::fs::read(path).ok()?;
            Some(LineTable::from_text(&String::from_utf8_lossy(&bytes)))
        })
        .as_ref()
    }
}

/// `name` with line breaks turned into spaces: frame names become lines of
/// folded output, and V8 names (escaped `\n` in the log, raw bytes in the
/// jitdump) may hold them.
fn one_line(name: &str) -> Cow<'_, str> {
    if memchr::memchr2(b'\n', b'\r', name.as_bytes()).is_some() {
        Cow::Owned(name.replace(['\n', '\r'], " "))
    } else {
        Cow::Borrowed(name)
    }
}

/// How long the `TAG:MARKER` prefix of a code name's function part is, as
/// the one parser of V8 code names reads it (`JS:*`, `LazyCompile:~`,
/// `JS:o^`); 0 without a tier marker.
fn tier_prefix_length(function: &str) -> usize {
    match CodeName::parse(function) {
        Some(name) if name.marker.is_some() => function.len() - name.rest.len(),
        _ => 0,
    }
}

/// The original name of the function starting at `start` (V8's start: the
/// `(` of its parameters): the name the map records at the start or at the
/// identifier just before it, as DevTools resolves minified names.
fn original_function_name(source_map: &LoadedSourceMap, start: LineColumn) -> Option<&str> {
    source_map.original(start).and_then(|original| original.name).or_else(|| {
        let before = LineColumn { line: start.line, column: start.column.checked_sub(1).filter(|&column| column > 0)? };
        source_map.original(before)?.name
    })
}

/// Applies the first matching prefix substitution.
fn substitute_path<'path>(path: &'path str, substitutions: &[(String, String)]) -> Cow<'path, str> {
    for (from, to) in substitutions {
        if let Some(rest) = path.strip_prefix(from.as_str()) {
            return Cow::Owned(format!("{to}{rest}"));
        }
    }
    Cow::Borrowed(path)
}

/// The jitdump-style name of a log code object: `TAG:MARKER name`.
fn log_style_name(log: &CodeLog, object: &CodeObject) -> String {
    let marker = object.tier.map(|tier| tier.text()).unwrap_or_default();
    format!("{}:{}{}", log.object_tag(object), marker, log.object_name(object))
}

/// Drops a trailing `:col` from `name script:line:col`.
fn strip_column(name: &str) -> &str {
    let Some(last_colon) = name.rfind(':') else { return name };
    let has_line = name[..last_colon].rsplit(':').next().is_some_and(|line| line.parse::<u32>().is_ok());
    if has_line && name[last_colon + 1..].parse::<u32>().is_ok() { &name[..last_colon] } else { name }
}

/// Node 18's jitdump names drop the column the log names carry; later
/// versions keep it. Decided by the joined code objects themselves.
fn detect_name_style(logs: &[CodeLog], codes: &[JitCode], names: &[Arc<str>]) -> NameStyle {
    let mut line_only = 0;
    let mut line_and_column = 0;
    for code in codes.iter().filter(|code| code.has_code_index) {
        let Some(id) = code.log_object() else { continue };
        let code_name = &names[code.name.index()];
        let log = &logs[id.log.index()];
        let object = log.code_object(id.object);
        if object.function.is_none() {
            continue;
        }
        let object_name = log.object_name(object);
        if code_name.ends_with(object_name) {
            line_and_column += 1;
        } else if code_name.ends_with(strip_column(object_name)) {
            line_only += 1;
        }
    }
    if line_only > line_and_column { NameStyle::LineOnly } else { NameStyle::LineAndColumn }
}

/// What [`join_loads`] found besides each LOAD's code object.
struct Join {
    /// Each log's clock against the jitdump's (only learned for several logs).
    clocks: Vec<Option<ClockAlignment>>,
    /// The LOADs by key: their [`address_order`].
    load_order: Vec<KeyedLoad>,
}

/// The (address, size) key of a code object and of a LOAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct CodeKey {
    address: u64,
    size: u64,
}

/// A code object of the logs beside its key.
type KeyedObject = (CodeKey, LogObject);

/// A LOAD (its index) beside its key.
type KeyedLoad = (CodeKey, u32);

/// When a LOAD happened (jitdump clock, ns), as a signed time.
fn load_time(load: &JitCode) -> i64 {
    i64::try_from(load.load_time().unwrap_or(0)).unwrap_or(i64::MAX)
}

/// Sets the log code object of each jitdump LOAD (the `loads` are jitdump
/// code objects, in file order). Both sides are sorted by key
/// (then by log and order) and walked together, which takes far less memory
/// than a map of lists on logs with millions of code objects.
///
/// At a key that one log created code at, the k-th LOAD is that log's k-th
/// code-creation. At a key several logs created code at, each LOAD takes the
/// next code-creation of the log whose time, on the jitdump's clock, is
/// nearest to the LOAD's: each log stays in its own order.
fn join_loads(logs: &[CodeLog], loads: &mut [JitCode]) -> Join {
    // Sorted with their keys beside them (millions of objects): no key is
    // looked up through an index while sorting or walking.
    let mut objects: Vec<KeyedObject> = Vec::with_capacity(logs.iter().map(|log| log.code_objects.len()).sum());
    for (log, code_log) in logs.iter().enumerate() {
        for (index, object) in code_log.code_objects.iter().enumerate() {
            let key = CodeKey { address: object.address, size: object.size };
            objects.push((key, LogObject { log: LogId(log as u32), object: CodeObjectId(index as u32) }));
        }
    }
    objects.sort_unstable_by_key(|&(key, object)| (key, object.log, object.object));
    let load_order = address_order(loads);
    let groups = KeyGroups { objects: &objects, load_order: &load_order };
    let clocks = if logs.len() > 1 { learn_clocks(logs, loads, groups.iter()) } else { vec![None; logs.len()] };
    for load in loads.iter_mut() {
        load.set_log_object(None);
    }
    for group in groups.iter() {
        let first_log = group.objects.first().map(|(_, object)| object.log);
        if group.objects.iter().all(|(_, object)| Some(object.log) == first_log) {
            for (&(_, load), &(_, object)) in group.load_order.iter().zip(group.objects) {
                loads[load as usize].set_log_object(Some(object));
            }
        } else {
            match_nearest_in_time(logs, loads, &clocks, group);
        }
    }
    drop(objects);
    Join { clocks, load_order }
}

/// The LOADs and code objects of one key, each in order.
#[derive(Clone, Copy)]
struct KeyGroup<'join> {
    /// LOADs, ascending.
    load_order: &'join [KeyedLoad],
    /// Code objects, by log then log order.
    objects: &'join [KeyedObject],
}

/// Both sorted sides of [`join_loads`], to walk key by key.
#[derive(Clone, Copy)]
struct KeyGroups<'join> {
    /// Code objects sorted by key, then log and log order.
    objects: &'join [KeyedObject],
    /// LOADs sorted by key, then index.
    load_order: &'join [KeyedLoad],
}

impl<'join> KeyGroups<'join> {
    /// The keys that have LOADs, each with its LOADs and code objects (none
    /// when no log created code there).
    fn iter(self) -> impl Iterator<Item = KeyGroup<'join>> {
        let mut next_object = 0;
        let mut next_load = 0;
        std::iter::from_fn(move || {
            let &(key, _) = self.load_order.get(next_load)?;
            // Groups are short: walked, not searched.
            let mut loads_end = next_load + 1;
            while self.load_order.get(loads_end).is_some_and(|&(load_key, _)| load_key == key) {
                loads_end += 1;
            }
            while self.objects.get(next_object).is_some_and(|&(object_key, _)| object_key < key) {
                next_object += 1;
            }
            let mut objects_end = next_object;
            while self.objects.get(objects_end).is_some_and(|&(object_key, _)| object_key == key) {
                objects_end += 1;
            }
            let group = KeyGroup {
                load_order: &self.load_order[next_load..loads_end],
                objects: &self.objects[next_object..objects_end],
            };
            next_load = loads_end;
            next_object = objects_end;
            Some(group)
        })
    }
}

/// Each log's clock against the jitdump's, from the keys the jitdump loads
/// once and one log creates once: jitdump time − code-creation time × 1000,
/// the median over those pairs.
fn learn_clocks<'join>(
    logs: &[CodeLog],
    loads: &[JitCode],
    groups: impl Iterator<Item = KeyGroup<'join>>,
) -> Vec<Option<ClockAlignment>> {
    let mut differences: Vec<Vec<i64>> = vec![Vec::new(); logs.len()];
    for group in groups {
        let ([(_, load)], [(_, object)]) = (group.load_order, group.objects) else { continue };
        let creation = logs[object.log.index()].code_object(object.object);
        let load_time = load_time(&loads[*load as usize]);
        differences[object.log.index()].push(load_time.saturating_sub(creation.timestamp_micros.saturating_mul(1000)));
    }
    differences.into_iter().map(|mut pairs| median_alignment(&mut pairs)).collect()
}

/// The median of `differences` and how far 95 % of them lie from it.
fn median_alignment(differences: &mut [i64]) -> Option<ClockAlignment> {
    if differences.is_empty() {
        return None;
    }
    let middle = differences.len() / 2;
    let offset_nanoseconds = *differences.select_nth_unstable(middle).1;
    let mut deviations: Vec<u64> =
        differences.iter().map(|&difference| difference.abs_diff(offset_nanoseconds)).collect();
    let percentile = (deviations.len() * 95).div_ceil(100).saturating_sub(1);
    let spread_nanoseconds = *deviations.select_nth_unstable(percentile).1;
    Some(ClockAlignment { offset_nanoseconds, pair_count: differences.len(), spread_nanoseconds })
}

/// Joins the LOADs of a key several logs created code at: each LOAD, in
/// order, takes the next unmatched code-creation of the log whose aligned
/// time is nearest to the LOAD's (a log without a clock only when no other
/// log has code left there).
fn match_nearest_in_time(
    logs: &[CodeLog],
    loads: &mut [JitCode],
    clocks: &[Option<ClockAlignment>],
    group: KeyGroup<'_>,
) {
    // The objects are sorted by log: one cursor per log's run.
    let mut runs: Vec<&[KeyedObject]> = group.objects.chunk_by(|(_, left), (_, right)| left.log == right.log).collect();
    for &(_, load) in group.load_order {
        let load_time = load_time(&loads[load as usize]);
        let distance = |run: &[KeyedObject]| {
            let (_, object) = run[0];
            match clocks[object.log.index()] {
                Some(clock) => {
                    let creation = logs[object.log.index()].code_object(object.object);
                    clock.jitdump_time(creation.timestamp_micros).abs_diff(load_time)
                }
                None => u64::MAX,
            }
        };
        let nearest = runs.iter().enumerate().filter(|(_, run)| !run.is_empty()).min_by_key(|(_, run)| distance(run));
        let Some((run_index, _)) = nearest else { break };
        let run = &mut runs[run_index];
        loads[load as usize].set_log_object(Some(run[0].1));
        *run = &run[1..];
    }
}

/// The codes (their ids) with their keys, by key: address, then size, then id.
fn address_order(codes: &[JitCode]) -> Vec<KeyedLoad> {
    key_order(code_keys(codes))
}

/// The keys of `codes`, in their order.
fn code_keys(codes: &[JitCode]) -> impl Iterator<Item = CodeKey> + Clone + '_ {
    codes.iter().map(|code| CodeKey { address: code.address, size: code.size })
}

/// The keys of the logs' code objects, log after log: the codes of a map
/// without a jitdump ([`log_codes`]).
fn log_code_keys(logs: &[CodeLog]) -> impl Iterator<Item = CodeKey> + Clone + '_ {
    logs.iter().flat_map(|log| &log.code_objects).map(|object| CodeKey { address: object.address, size: object.size })
}

/// [`address_order`] of codes given by their keys, in load order.
fn key_order(keys: impl Iterator<Item = CodeKey>) -> Vec<KeyedLoad> {
    let mut order: Vec<KeyedLoad> = keys.enumerate().map(|(id, key)| (key, id as u32)).collect();
    order.sort_unstable();
    order
}

/// For each address, the code objects that ever covered it, in load order.
///
/// The address space is cut at every code object's start and end into
/// segments; each segment lists the objects covering it. Lookups are one
/// binary search.
struct AddressIndex {
    /// Sorted segment boundaries; segment i is `boundaries[i]..boundaries[i+1]`.
    boundaries: Vec<u64>,
    /// `segment_starts[i]..segment_starts[i+1]` indexes `covering` for segment i.
    segment_starts: Vec<u32>,
    /// Code ids, ascending (= load order) within each segment.
    covering: Vec<u32>,
}

impl AddressIndex {
    /// The index of the codes whose keys `keys` gives, in load order;
    /// `order` lists them (with their keys) by address, as [`key_order`]
    /// gives it.
    fn new(keys: impl Iterator<Item = CodeKey> + Clone, order: Vec<KeyedLoad>) -> AddressIndex {
        let end = |key: &CodeKey| key.address.saturating_add(key.size);
        // Starts come in order; ends nearly so (code objects rarely overlap).
        let mut ends: Vec<u64> = order.iter().filter(|(key, _)| key.size > 0).map(|(key, _)| end(key)).collect();
        ends.sort_unstable();
        // The boundaries, merged in order without repeats; each code's first
        // segment is where its start went (no search per code).
        let mut boundaries: Vec<u64> = Vec::with_capacity(ends.len() * 2);
        let push = |boundaries: &mut Vec<u64>, at: u64| {
            if boundaries.last() != Some(&at) {
                boundaries.push(at);
            }
        };
        let mut first_segments = vec![0u32; order.len()];
        let mut next_end = 0;
        for (key, id) in order.iter().filter(|(key, _)| key.size > 0) {
            while ends.get(next_end).is_some_and(|&end| end < key.address) {
                push(&mut boundaries, ends[next_end]);
                next_end += 1;
            }
            push(&mut boundaries, key.address);
            first_segments[*id as usize] = (boundaries.len() - 1) as u32;
        }
        for &end in &ends[next_end..] {
            push(&mut boundaries, end);
        }
        drop(ends);
        drop(order);
        let segment_count = boundaries.len().saturating_sub(1);
        // A code's segments run from its first to the boundary at its end.
        let segments = |id: usize, key: &CodeKey| {
            let first = first_segments[id] as usize;
            let end = end(key);
            first..first + boundaries[first..].iter().take_while(|&&at| at < end).count()
        };
        let mut segment_starts = vec![0u32; segment_count + 1];
        for (id, key) in keys.clone().enumerate().filter(|(_, key)| key.size > 0) {
            for segment in segments(id, &key) {
                segment_starts[segment + 1] += 1;
            }
        }
        for segment in 0..segment_count {
            segment_starts[segment + 1] += segment_starts[segment];
        }
        // Filled in load order: each segment lists its codes ascending.
        let mut filled: Vec<u32> = segment_starts[..segment_count].to_vec();
        let mut covering = vec![0u32; segment_starts[segment_count] as usize];
        for (id, key) in keys.enumerate().filter(|(_, key)| key.size > 0) {
            for segment in segments(id, &key) {
                covering[filled[segment] as usize] = id as u32;
                filled[segment] += 1;
            }
        }
        AddressIndex { boundaries, segment_starts, covering }
    }

    fn covering(&self, address: u64) -> &[u32] {
        let after = self.boundaries.partition_point(|&boundary| boundary <= address);
        if after == 0 || after >= self.boundaries.len() {
            return &[];
        }
        let segment = after - 1;
        let start = self.segment_starts[segment] as usize;
        let end = self.segment_starts[segment + 1] as usize;
        &self.covering[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(address: u64, size: u64, load_time: u64) -> JitCode {
        let mut codes = JitCodes::default();
        let name = format!("code@{address:x}/{load_time}");
        let load_time = Some(load_time);
        codes.push(CodeDescription { address, size, load_time, code_index: None, name: &name, log_object: None });
        codes.codes[0]
    }

    fn jit_codes(loads: impl IntoIterator<Item = CodeLoad>) -> Vec<JitCode> {
        let mut codes = JitCodes::default();
        for load in loads {
            codes.push_load(&load);
        }
        codes.codes
    }

    #[test]
    fn address_index_lists_every_object_that_covered_an_address() {
        let codes = vec![code(100, 50, 1), code(120, 10, 2), code(140, 40, 3), code(300, 0, 4)];
        let index = AddressIndex::new(code_keys(&codes), address_order(&codes));
        assert_eq!(index.covering(99), &[] as &[u32]);
        assert_eq!(index.covering(100), &[0]);
        assert_eq!(index.covering(125), &[0, 1]);
        assert_eq!(index.covering(130), &[0]);
        assert_eq!(index.covering(145), &[0, 2]);
        assert_eq!(index.covering(150), &[2]);
        assert_eq!(index.covering(179), &[2]);
        assert_eq!(index.covering(180), &[] as &[u32]);
        assert_eq!(index.covering(300), &[] as &[u32]);
    }

    /// Against the definition, on overlapping code objects of random
    /// places and sizes (some empty, some at one address).
    #[test]
    fn address_index_agrees_with_a_scan_of_every_object() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let codes: Vec<JitCode> = (0..400).map(|time| code(next(1000), next(60), time)).collect();
        let index = AddressIndex::new(code_keys(&codes), address_order(&codes));
        for address in 0..1100 {
            let expected: Vec<u32> = (0..codes.len() as u32)
                .filter(|&id| {
                    let code = &codes[id as usize];
                    code.address <= address && address < code.address + code.size
                })
                .collect();
            assert_eq!(index.covering(address), expected, "address {address}");
        }
    }

    fn load(code_address: u64, code_size: u64, timestamp: u64) -> CodeLoad {
        CodeLoad {
            timestamp,
            pid: 1,
            tid: 1,
            vma: code_address,
            code_address,
            code_size,
            code_index: 0,
            name: "".into(),
            record_offset: 0,
        }
    }

    /// Two isolates whose clocks started 50 ms apart: both log the embedded
    /// builtin at 0x100, and the worker reuses the main isolate's freed
    /// address 0x1000. The worker's log comes first, so log order alone
    /// would give it the main isolate's code.
    #[test]
    fn loads_join_the_isolate_whose_aligned_clock_is_nearest() {
        let worker = CodeLog::parse(
            b"code-creation,Builtin,2,5,0x100,16,Abort\n\
              code-creation,JS,10,8,0x3000,32,h /w.js:1:1,0x900,*\n\
              code-creation,JS,10,9,0x4000,32,k /w.js:2:1,0x910,*\n\
              code-creation,JS,10,100,0x1000,32,reused /w.js:3:1,0x920,*\n",
        );
        let main = CodeLog::parse(
            b"code-creation,Builtin,2,10,0x100,16,Abort\n\
              code-creation,JS,10,20,0x1000,32,f /m.js:1:1,0x800,*\n\
              code-creation,JS,10,30,0x2000,32,g /m.js:2:1,0x810,*\n",
        );
        let main_start = 1_000_000_000;
        let worker_start = 1_050_000_000;
        let loads = [
            load(0x100, 16, main_start + 10_000),
            load(0x1000, 32, main_start + 20_000),
            load(0x2000, 32, main_start + 30_000),
            load(0x100, 16, worker_start + 5_000),
            load(0x3000, 32, worker_start + 8_000),
            load(0x4000, 32, worker_start + 9_000),
            load(0x1000, 32, worker_start + 100_000),
            load(0x5000, 8, worker_start + 200_000),
        ];
        let mut loads = jit_codes(loads);
        let join = join_loads(&[worker, main], &mut loads);
        let object = |log: u32, object: u32| Some(LogObject { log: LogId(log), object: CodeObjectId(object) });
        assert_eq!(
            loads.iter().map(JitCode::log_object).collect::<Vec<_>>(),
            [object(1, 0), object(1, 1), object(1, 2), object(0, 0), object(0, 1), object(0, 2), object(0, 3), None]
        );
        // The worker aligns on h and k, the main isolate on g (0x1000 and
        // 0x100 are loaded twice).
        assert_eq!(
            join.clocks,
            [
                Some(ClockAlignment { offset_nanoseconds: worker_start as i64, pair_count: 2, spread_nanoseconds: 0 }),
                Some(ClockAlignment { offset_nanoseconds: main_start as i64, pair_count: 1, spread_nanoseconds: 0 }),
            ]
        );
    }

    /// A lone log needs no clock: the k-th LOAD at a key is its k-th
    /// code-creation there, whatever the times say.
    #[test]
    fn a_lone_log_joins_by_order() {
        let log = CodeLog::parse(
            b"code-creation,JS,10,1,0x1000,32,f /m.js:1:1,0x800,*\n\
              code-creation,JS,10,2,0x1000,32,g /m.js:2:1,0x810,*\n",
        );
        let mut loads = jit_codes([load(0x1000, 32, 99), load(0x1000, 32, 7), load(0x1000, 32, 5)]);
        let join = join_loads(&[log], &mut loads);
        let object = |object: u32| Some(LogObject { log: LogId(0), object: CodeObjectId(object) });
        assert_eq!(loads.iter().map(JitCode::log_object).collect::<Vec<_>>(), [object(0), object(1), None]);
        assert_eq!(join.clocks, [None]);
    }

    #[test]
    fn the_median_offset_and_its_spread() {
        let alignment = median_alignment(&mut [5_000, 1_000, 900_000, 3_000, 2_000]).unwrap();
        assert_eq!(alignment, ClockAlignment { offset_nanoseconds: 3_000, pair_count: 5, spread_nanoseconds: 897_000 });
        let mut pairs: Vec<i64> = (0..100).map(|index| 10_000 + index * 10).collect();
        pairs.push(5_000_000);
        let alignment = median_alignment(&mut pairs).unwrap();
        assert_eq!((alignment.offset_nanoseconds, alignment.spread_nanoseconds), (10_500, 480));
        assert_eq!(median_alignment(&mut []), None);
    }

    /// Code objects are numerous: their size is watched.
    #[test]
    fn jit_codes_stay_small() {
        assert!(size_of::<JitCode>() <= 48, "{} bytes", size_of::<JitCode>());
    }

    /// LOADs of one name share it; a name with line breaks is put on one line.
    #[test]
    fn jit_code_names_are_interned_on_one_line() {
        let mut codes = JitCodes::default();
        let shared: Arc<str> = "JS:*f /a.js:1:1".into();
        let broken: Arc<str> = "eval\nat f".into();
        for (address, name) in [(1, &shared), (2, &broken), (3, &shared), (4, &broken)] {
            codes.push_load(&CodeLoad { name: name.clone(), ..load(address, 1, address) });
        }
        codes.push(CodeDescription {
            address: 5,
            size: 1,
            load_time: None,
            code_index: None,
            name: "eval\nat f",
            log_object: None,
        });
        let names: Vec<&str> = codes.codes.iter().map(|code| &*codes.names[code.name.index()]).collect();
        assert_eq!(names, ["JS:*f /a.js:1:1", "eval at f", "JS:*f /a.js:1:1", "eval at f", "eval at f"]);
        assert_eq!(codes.names.len(), 2);
        assert_eq!((codes.codes[4].load_time(), codes.codes[4].code_index()), (None, None));
        assert_eq!((codes.codes[3].load_time(), codes.codes[3].code_index()), (Some(4), Some(0)));
    }

    #[test]
    fn names_are_one_line() {
        assert_eq!(one_line("f /a.js:1:1"), "f /a.js:1:1");
        assert_eq!(one_line("eval\nat f\r\n"), "eval at f  ");
    }

    #[test]
    fn names_without_columns() {
        assert_eq!(strip_column("f /a/b.js:3:4"), "f /a/b.js:3");
        assert_eq!(strip_column("f /a/b.js:3"), "f /a/b.js:3");
        assert_eq!(strip_column("Builtin:Foo"), "Builtin:Foo");
    }

    #[test]
    fn substitutions() {
        let substitutions = vec![("/ci/work".to_string(), "/home/me/src".to_string())];
        assert_eq!(substitute_path("/ci/work/app.js", &substitutions), "/home/me/src/app.js");
        assert_eq!(substitute_path("/other/app.js", &substitutions), "/other/app.js");
    }

    #[test]
    fn tier_prefixes() {
        let cases = [("JS:*parse", 4), ("JS:o^parse", 5), ("LazyCompile:~open", 13), ("JS:open", 0), ("open", 0)];
        for (function, length) in cases {
            assert_eq!(tier_prefix_length(function), length, "{function}");
        }
    }
}
