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
//!
//! The map is split by concern:
//!
//! * this module: [`InlineMap`] itself, built from logs and a jitdump, and
//!   its codes and logs by id;
//! * `codes`: the code objects ([`JitCode`], [`JitCodes`]) and their ids;
//! * `join`: the join of LOADs with code-creations, and the logs' clocks
//!   ([`ClockAlignment`]);
//! * `lookup`: the map by address and time ([`InlineMap::find`]);
//! * `names`: the names of inline frames, as the jitdump names code;
//! * `sources`: scripts, line tables and source maps
//!   ([`SourceOptions`], [`InlineMap::describe`]).

mod codes;
mod join;
mod lookup;
mod names;
mod sources;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use crate::formats::jitdump::JitDump;
use crate::formats::v8log::{CodeLog, CodeObject};
use crate::v8::source::LineTable;
use crate::v8::source_map::ScriptSourceMap;

pub use codes::{CodeDescription, CodeId, CodeNameId, JitCode, JitCodes, LogId, LogObject};
pub use join::ClockAlignment;
pub use lookup::{AddressMatch, TimeRange};
pub use sources::SourceOptions;

use codes::NameStyle;
use codes::{jitdump_style_name, log_codes};
use join::{address_order, code_keys, codes_after_the_cut, join_loads, key_order, log_code_keys};
use lookup::AddressIndex;
use names::detect_name_style;

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
    /// The codes from here on are known to the code logs only: the jitdump
    /// was cut before their LOADs ([`InlineMap::join_cut_jitdump`]).
    first_code_only_in_log: usize,
    /// The jitdump's file, when it was read from one.
    pub jitdump_path: Option<PathBuf>,
    /// Whether reading the jitdump stopped before its end (cut short, or a
    /// record size that cannot be right): code loaded later is missing.
    pub jitdump_cut_short: bool,
    /// The jitdump's cut, when it is the one a killed writer leaves: said
    /// once the samples are expanded ([`crate::v8::unexpanded::add_jitdump_cuts`]).
    pub jitdump_cut_by_writers_death: Option<String>,
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
                if jitdump.is_cut_short() {
                    InlineMap::join_cut_jitdump(logs, loads, Some(jitdump.header.pid), sources)
                } else {
                    InlineMap::join(logs, loads, Some(jitdump.header.pid), sources)
                }
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

    /// [`InlineMap::join`] of a jitdump cut short (its writer killed by a
    /// signal, as test runners stop their workers): the code objects the
    /// logs created after the jitdump's last LOAD of them are added from the
    /// logs ([`codes_after_the_cut`]: range, kind and name from the
    /// code-creation, inlining and positions from its code-source-info,
    /// later addresses from code-moves), timed on the jitdump's clock by
    /// each log's [`ClockAlignment`]. They have no code index: perf inject
    /// made no `jitted-PID-N.so` of them, so their samples are raw addresses.
    pub fn join_cut_jitdump(
        logs: Vec<CodeLog>,
        mut loads: JitCodes,
        pid: Option<u32>,
        sources: SourceOptions,
    ) -> InlineMap {
        let join = join_loads(&logs, &mut loads.codes);
        let unmatched_loads = loads.codes.iter().filter(|load| load.log_object().is_none()).count();
        let loaded = loads.len();
        let name_style = detect_name_style(&logs, &loads.codes, &loads.names);
        for lost in codes_after_the_cut(&logs, &loads.codes, &join.clocks) {
            let log = &logs[lost.object.log.index()];
            let object = log.code_object(lost.object.object);
            loads.push(CodeDescription {
                address: lost.address,
                size: object.size,
                load_time: Some(lost.load_time),
                code_index: None,
                name: &jitdump_style_name(log, object, name_style),
                log_object: Some(lost.object),
            });
        }
        drop(join.load_order);
        let index = AddressIndex::new(code_keys(&loads.codes), address_order(&loads.codes));
        let mut map = InlineMap::with_index(logs, loads, index, pid, sources);
        map.unmatched_loads = unmatched_loads;
        map.clocks = join.clocks;
        map.first_code_only_in_log = loaded;
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
        let first_code_only_in_log = codes.len();
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
            first_code_only_in_log,
            jitdump_path: None,
            jitdump_cut_short: false,
            jitdump_cut_by_writers_death: None,
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

    /// Whether only the code logs knew this code: a cut jitdump lost its
    /// LOAD ([`InlineMap::join_cut_jitdump`]).
    pub fn only_in_code_log(&self, id: CodeId) -> bool {
        id.index() >= self.first_code_only_in_log
    }

    /// The codes only the code logs knew ([`InlineMap::only_in_code_log`]),
    /// in time order.
    pub fn codes_only_in_code_log(&self) -> impl ExactSizeIterator<Item = CodeId> + use<> {
        (self.first_code_only_in_log..self.codes.len()).map(|index| CodeId(index as u32))
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::jitdump::CodeLoad;
    use crate::v8::inline_map::codes::tests::load;

    /// A sample past a killed process's jitdump cut resolves to the code
    /// the log created, named as the jitdump would have named it.
    #[test]
    fn a_cut_jitdump_map_resolves_from_the_log() {
        let log = CodeLog::parse(
            b"code-creation,JS,13,4,0x300,64,g /a.js:2:1,0x910,*\n\
              code-creation,JS,13,20,0x400,64,h /a.js:3:1,0x920,*\n",
        );
        let start = 5_000_000_000;
        let mut loads = JitCodes::default();
        loads.push_load(&CodeLoad { name: "JS:*g /a.js:2:1".into(), code_index: 7, ..load(0x300, 64, start + 4_000) });
        let whole = InlineMap::join(vec![CodeLog::parse(b"")], JitCodes::default(), Some(1), SourceOptions::default());
        assert_eq!(whole.codes_only_in_code_log().len(), 0);
        let map = InlineMap::join_cut_jitdump(vec![log], loads, Some(1), SourceOptions::default());
        let found = map.find(0x410, Some(start + 25_000)).unwrap();
        assert!(map.only_in_code_log(found.code) && found.time_matched, "{found:?}");
        assert_eq!((map.code_name(found.code), found.offset), ("JS:*h /a.js:3:1", 0x10));
        assert_eq!(map.code(found.code).code_index(), None);
        assert!(!map.only_in_code_log(map.find(0x310, Some(start + 25_000)).unwrap().code));
        // Before the log created it, the code was not there yet.
        assert!(!map.find(0x410, Some(start + 10_000)).unwrap().time_matched);
        assert_eq!(map.codes_only_in_code_log().collect::<Vec<_>>(), [CodeId(1)]);
    }
}
