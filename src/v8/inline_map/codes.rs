//! The code objects an [`InlineMap`](super::InlineMap) is built from ([`JitCode`], gathered
//! in [`JitCodes`] from jitdump LOADs or from logs alone, with their names
//! interned), and the ids of codes, logs and names.

use std::borrow::Cow;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::formats::jitdump::CodeLoad;
use crate::formats::v8log::{CodeLog, CodeObject, CodeObjectId, NameId, TagId, TierMarker};

/// Index of a code object in an [`InlineMap`](super::InlineMap) (one per jitdump LOAD, or per
/// log code object when there is no jitdump), in load order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeId(pub(crate) u32);

impl CodeId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a code log in an [`InlineMap`](super::InlineMap): one per isolate of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogId(pub(crate) u32);

impl LogId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A code object of one of an [`InlineMap`](super::InlineMap)'s code logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LogObject {
    /// The log (isolate) that created it.
    pub log: LogId,
    /// The code object in that log.
    pub object: CodeObjectId,
}

/// Index of a code object's name in the names of an [`InlineMap`](super::InlineMap) (or of the
/// [`JitCodes`] it is built from): [`InlineMap::code_name`](super::InlineMap::code_name).
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
/// map's names ([`InlineMap::code_name`](super::InlineMap::code_name)), and its optional fields are read
/// through methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JitCode {
    /// Start of its instructions.
    pub address: u64,
    /// Size in bytes.
    pub size: u64,
    /// [`JitCode::load_time`] when `has_load_time`.
    pub(super) load_time: u64,
    /// [`JitCode::code_index`] when `has_code_index`.
    pub(super) code_index: u64,
    /// The log of [`JitCode::log_object`]; [`NO_LOG`] for none.
    pub(super) log: u32,
    /// The code object in that log.
    pub(super) object: u32,
    /// Its symbol: the jitdump name, e.g. `JS:*kernel /app/deep.js:24:16`.
    pub(super) name: CodeNameId,
    pub(super) has_load_time: bool,
    pub(super) has_code_index: bool,
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

    /// Its name's id in the map ([`InlineMap::code_name`](super::InlineMap::code_name)).
    pub fn name_id(&self) -> CodeNameId {
        self.name
    }

    pub(super) fn set_log_object(&mut self, object: Option<LogObject>) {
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

/// The code objects an [`InlineMap`](super::InlineMap) is built from, in load order, with
/// their names interned.
#[derive(Debug, Default)]
pub struct JitCodes {
    pub(super) codes: Vec<JitCode>,
    pub(super) names: Vec<Arc<str>>,
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
pub(super) fn log_codes(logs: &[CodeLog]) -> JitCodes {
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

/// `name` with line breaks turned into spaces: frame names become lines of
/// folded output, and V8 names (escaped `\n` in the log, raw bytes in the
/// jitdump) may hold them.
pub(super) fn one_line(name: &str) -> Cow<'_, str> {
    if memchr::memchr2(b'\n', b'\r', name.as_bytes()).is_some() {
        Cow::Owned(name.replace(['\n', '\r'], " "))
    } else {
        Cow::Borrowed(name)
    }
}

/// The jitdump-style name of a log code object: `TAG:MARKER name`.
fn log_style_name(log: &CodeLog, object: &CodeObject) -> String {
    let marker = object.tier.map(|tier| tier.text()).unwrap_or_default();
    format!("{}:{}{}", log.object_tag(object), marker, log.object_name(object))
}

/// How V8 formats JS code names in this process's jitdump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NameStyle {
    /// `JS:*name script:line:col` (node 20 and later).
    LineAndColumn,
    /// `LazyCompile:*name script:line` (node 18).
    LineOnly,
}

/// Drops a trailing `:col` from `name script:line:col`.
pub(super) fn strip_column(name: &str) -> &str {
    let Some(last_colon) = name.rfind(':') else { return name };
    let has_line = name[..last_colon].rsplit(':').next().is_some_and(|line| line.parse::<u32>().is_ok());
    if has_line && name[last_colon + 1..].parse::<u32>().is_ok() { &name[..last_colon] } else { name }
}

/// A log code object named as this process's jitdump names code
/// (`name_style`: node 18's drops the column), on one line.
pub(super) fn jitdump_style_name(log: &CodeLog, object: &CodeObject, name_style: NameStyle) -> String {
    let marker = object.tier.map(|tier| tier.text()).unwrap_or_default();
    let name = log.object_name(object);
    let name = match name_style {
        NameStyle::LineAndColumn => name,
        NameStyle::LineOnly if object.function.is_some() => strip_column(name),
        NameStyle::LineOnly => name,
    };
    one_line(&format!("{}:{marker}{name}", log.object_tag(object))).into_owned()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) fn code(address: u64, size: u64, load_time: u64) -> JitCode {
        let mut codes = JitCodes::default();
        let name = format!("code@{address:x}/{load_time}");
        let load_time = Some(load_time);
        codes.push(CodeDescription { address, size, load_time, code_index: None, name: &name, log_object: None });
        codes.codes[0]
    }

    pub(crate) fn jit_codes(loads: impl IntoIterator<Item = CodeLoad>) -> Vec<JitCode> {
        let mut codes = JitCodes::default();
        for load in loads {
            codes.push_load(&load);
        }
        codes.codes
    }

    pub(crate) fn load(code_address: u64, code_size: u64, timestamp: u64) -> CodeLoad {
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
}
