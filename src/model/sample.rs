//! The typed sample: what every source produces and every sink consumes.
//!
//! A [`Sample`] has its process and thread, time, weight and event, and its
//! [`Frame`]s innermost first. A frame carries its address, how that address
//! was taken ([`AddressKind`]), its module as a type ([`ModuleKind`]) and its
//! symbol. Text (symbols, module paths, thread names) is interned once in a
//! [`SampleInterner`] and travels as ids: sources do not render samples as
//! `perf script` text, and nothing downstream parses a module name to learn
//! what it is.
//!
//! ```text
//! perf script text ─┐
//! perf.data ────────┼─► Sample (+ SampleInterner) ─► expansion ─► sinks
//! V8 tick records ──┘
//! ```

use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

/// Addresses from here up are kernel addresses: the kernel half of the
/// address space of x86-64 (`0xffff_8000_0000_0000` and up) and of AArch64
/// with 48-bit addresses (`0xffff_0000_0000_0000` and up). User space ends
/// far below on both.
pub const KERNEL_ADDRESS_START: u64 = 0xffff_0000_0000_0000;

/// A sample's timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SampleTime {
    /// The time in nanoseconds since the origin of the source's clock
    /// (CLOCK_MONOTONIC for `perf record -k mono`); digits a text source did
    /// not print count as zeros.
    pub nanoseconds: u64,
    /// The value of one unit in the last digit the source gave, in
    /// nanoseconds: 1000 for perf script's usual six decimals, 1 for exact
    /// binary times.
    pub resolution_nanoseconds: u64,
}

impl SampleTime {
    /// An exact time, as binary sources give it.
    pub fn exact(nanoseconds: u64) -> SampleTime {
        SampleTime { nanoseconds, resolution_nanoseconds: 1 }
    }

    /// The latest time this one may stand for: a time printed to
    /// microseconds covers the whole microsecond.
    pub fn latest(self) -> u64 {
        self.nanoseconds.saturating_add(self.resolution_nanoseconds.saturating_sub(1))
    }
}

/// The number of an interned string in a [`SampleInterner`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StringId(u32);

/// The number of an interned module in a [`SampleInterner`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId(u32);

/// A source's number for one of its distinct frames: two frames of one
/// source with the same number are equal in everything but their
/// [`AddressKind`]. Numbers are dense from 0 and never reused by a source
/// (nor by the sources that carry on its memory, the chunks of one worker
/// of a parallel fold), so what a sink works out about a frame can be kept
/// in a vector by this number instead of a hash map by its contents
/// ([`FrameNumberCache`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameNumber(u32);

impl FrameNumber {
    /// The `index`-th distinct frame.
    pub(crate) fn new(index: u32) -> FrameNumber {
        FrameNumber(index)
    }

    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A cache by [`FrameNumber`]: what was worked out for a frame of one
/// source under a `Key`, what else than the frame the answer depends on
/// (e.g. the sample's process), checked on every lookup. Its users must
/// keep one cache per source (or per sources that share numbers). Numbers from
/// [`FRAME_NUMBER_CACHE_LIMIT`] on are not kept (a source of ever new
/// frames); their callers fall back to a cache by contents.
#[derive(Debug, Clone)]
pub struct FrameNumberCache<Key, Value> {
    entries: Vec<Option<(Key, Value)>>,
}

/// The numbers a [`FrameNumberCache`] keeps: below this.
pub const FRAME_NUMBER_CACHE_LIMIT: usize = 1 << 20;

impl<Key, Value> Default for FrameNumberCache<Key, Value> {
    fn default() -> Self {
        FrameNumberCache { entries: Vec::new() }
    }
}

impl<Key: PartialEq, Value> FrameNumberCache<Key, Value> {
    /// What was kept for frame `number` under `key`.
    #[inline]
    pub fn get(&self, number: Option<FrameNumber>, key: &Key) -> Option<&Value> {
        match self.entries.get(number?.index()) {
            Some(Some((kept_key, value))) if kept_key == key => Some(value),
            _ => None,
        }
    }

    /// Keeps `value` for frame `number` under `key` (replacing what was kept
    /// for it), unless the number is past the limit.
    pub fn insert(&mut self, number: Option<FrameNumber>, key: Key, value: Value) {
        let Some(index) = number.map(FrameNumber::index).filter(|&index| index < FRAME_NUMBER_CACHE_LIMIT) else {
            return;
        };
        if self.entries.len() <= index {
            self.entries.resize_with(index + 1, || None);
        }
        self.entries[index] = Some((key, value));
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

/// How a frame's address was taken (samply's `Frame` variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressKind {
    /// The address of the instruction that was running: the sampled PC, or
    /// the user-space PC saved when the thread entered the kernel.
    InstructionPointer,
    /// A return address as found on the stack: it points after the call.
    ReturnAddress,
    /// A return address already moved back into its call instruction
    /// (`address - 1`), as V8's tick processor looks native ones up.
    AdjustedReturnAddress,
}

/// What kind of code a module is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModuleKind {
    /// Kernel code: `[kernel.kallsyms]` and other `[...]` modules, `*.ko`,
    /// `vmlinux*` (inferno's `is_kernel`).
    Kernel,
    /// A V8 code object written as an ELF image by `perf inject -j`:
    /// `.../jitted-PID-N.so`, where N is the jitdump's code index.
    JitImage {
        /// The process, from the file name.
        pid: Option<u32>,
        /// The jitdump code index, from the file name.
        code_index: Option<u64>,
    },
    /// Anonymous executable memory of a process that JIT compilers describe
    /// in a perf map (`/tmp/perf-PID.map`, perf's name for such memory).
    PerfMap {
        /// The process, from the file name.
        pid: Option<u32>,
        /// The jitdump the process mapped, when the source knows.
        jitdump: MappedJitDump,
    },
    /// Memory the source knows no mapping for (`[unknown]`): V8's code pages
    /// are made executable by `mprotect`, which perf does not see, so this
    /// may still be JIT code of the sample's process.
    Unknown,
    /// Memory with no mapping (`[unknown]`, as [`ModuleKind::Unknown`]) of a
    /// process that mapped V8's jitdump `jit-PID.dump` (a perf.data tells):
    /// V8's code pages, whose code is that jitdump's, and no other's. The
    /// pid is the jitdump's, as V8 named it (in a container, not perf's).
    JitDumpCode {
        /// The pid in the jitdump's file name.
        pid: u32,
    },
    /// An address the source knows is in no code it can name (a V8 tick in
    /// no library and no live code object). Named like [`ModuleKind::Unknown`]
    /// but never resolved.
    NoCode,
    /// A file: an executable or shared library.
    File,
}

/// What a source says of the jitdump a process mapped (V8 maps
/// `jit-PID.dump` as a marker for perf inject; a perf.data records it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MappedJitDump {
    /// The source does not tell (perf script prints no mappings).
    NotKnown,
    /// `jit-PID.dump`: its code is that jitdump's, and no other's. The pid
    /// is the jitdump's, as V8 named it (in a container, not perf's).
    Named(u32),
    /// The process mapped none: its code is no jitdump's (a node run
    /// without `--perf-prof`, another JIT).
    NoneMapped,
}

impl ModuleKind {
    /// The kind of a module as perf script prints it, by inferno's rules
    /// (so that its `_[k]` and `_[j]` annotations stay the same).
    pub fn of_path(path: &str) -> ModuleKind {
        if path == "[unknown]" {
            return ModuleKind::Unknown;
        }
        if path.starts_with('[') || path.ends_with(".ko") || is_vmlinux(path) {
            return ModuleKind::Kernel;
        }
        // The suffix first: it rejects most modules without a substring search.
        if path.ends_with(".map")
            && let Some(pid) = path.strip_prefix("/tmp/perf-")
        {
            return ModuleKind::PerfMap {
                pid: pid.strip_suffix(".map").and_then(|pid| pid.parse().ok()),
                jitdump: MappedJitDump::NotKnown,
            };
        }
        if path.ends_with(".so") && path.contains("/jitted-") {
            let file_name = path.rsplit('/').next().unwrap_or(path);
            let numbers = file_name.strip_prefix("jitted-").and_then(|rest| rest.strip_suffix(".so"));
            let (pid, code_index) = match numbers.and_then(|numbers| numbers.split_once('-')) {
                Some((pid, code_index)) => (pid.parse().ok(), code_index.parse().ok()),
                None => (None, None),
            };
            return ModuleKind::JitImage { pid, code_index };
        }
        ModuleKind::File
    }

    /// Whether this is kernel code.
    pub fn is_kernel(self) -> bool {
        self == ModuleKind::Kernel
    }

    /// Whether inferno counts this as JIT code (`_[j]`): a perf map or a
    /// `perf inject -j` image.
    pub fn is_jit(self) -> bool {
        matches!(self, ModuleKind::JitImage { .. } | ModuleKind::PerfMap { .. })
    }
}

/// Whether `module` ends in `vmlinux` and a version (inferno's `is_vmlinux`).
fn is_vmlinux(module: &str) -> bool {
    // A byte search rejects most modules before the substring search.
    if memchr::memchr(b'v', module.as_bytes()).is_none() {
        return false;
    }
    match module.rfind("vmlinux") {
        Some(start) => module[start..]
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || matches!(character, '-' | '.' | '_')),
        None => false,
    }
}

/// A module: its path as the source names it, and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Module {
    /// The path (`/usr/bin/node`, `[kernel.kallsyms]`, `[unknown]`).
    pub path: StringId,
    /// What it is.
    pub kind: ModuleKind,
}

/// One frame of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The address.
    pub address: u64,
    /// How it was taken.
    pub address_kind: AddressKind,
    /// The code it lies in.
    pub module: ModuleId,
    /// The function's name without offset: `None` when the source printed
    /// no symbol at all (inferno names such a frame `" "`), `[unknown]` when
    /// it could not name the function.
    pub symbol: Option<StringId>,
    /// The offset of the address into the symbol, when the source gave one.
    pub symbol_offset: Option<u64>,
    /// The address as `perf script` prints it, when that differs from
    /// `{address:x}`: a text source's own digits, or for a frame in a mapped
    /// file the file's address of it (names with addresses show it).
    pub address_text: Option<StringId>,
    /// For a frame in a mapped file, its address in that file as perf
    /// gives it (`map__map_ip`: the runtime address minus the mapping's
    /// start plus its file offset): what perf script prints for such a
    /// frame, and what a perf.data's mappings tell. `None` when the source
    /// does not know it.
    pub file_address: Option<u64>,
    /// The source's number for this frame, when it numbers them.
    pub number: Option<FrameNumber>,
}

/// One sample: where and when it was taken, what it weighs, and its frames.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// The process id, when the source knows it.
    pub pid: Option<u32>,
    /// The thread id (perf's default script output prints only this one).
    pub tid: Option<u32>,
    /// The thread's command name.
    pub comm: Option<StringId>,
    /// The process id as inferno prints it in root frames: the source's
    /// digits, `?` when unknown.
    pub pid_text: Option<StringId>,
    /// The thread id as the source printed it.
    pub tid_text: Option<StringId>,
    /// The CPU it ran on, when known.
    pub cpu: Option<u32>,
    /// When it was taken, on the clock code objects are looked up by: the
    /// jitdump's for perf, the log line for V8 ticks.
    pub time: Option<SampleTime>,
    /// When it was taken, in nanoseconds of a clock of elapsed time, for
    /// timelines: perf's sample time (CLOCK_MONOTONIC with `perf record -k
    /// mono`), a V8 tick's time since its log started.
    pub clock_nanoseconds: Option<u64>,
    /// The sample period (nanoseconds of `cpu-clock`, events of a counter),
    /// when the source gives one.
    pub period: Option<u64>,
    /// The event, e.g. `cpu-clock`.
    pub event: Option<StringId>,
    /// The frames, innermost (the sampled instruction) first.
    pub frames: Vec<Frame>,
    /// Where the sample starts in its input: a line number of a text input,
    /// a record index or byte offset of a binary one.
    pub input_position: u64,
}

impl Sample {
    /// Empties the sample for reuse, keeping the frames' memory.
    pub fn clear(&mut self) {
        let mut frames = std::mem::take(&mut self.frames);
        frames.clear();
        *self = Sample { frames, ..Sample::default() };
    }

    /// How much this sample weighs in folded output: its period, or 1.
    pub fn weight(&self) -> u64 {
        self.period.unwrap_or(1)
    }

    /// Makes this sample a copy of `other` but for the frames, which stay
    /// as they are.
    pub fn copy_all_but_frames(&mut self, other: &Sample) {
        // Every field named: a new one cannot be forgotten here.
        let Sample {
            pid,
            tid,
            comm,
            pid_text,
            tid_text,
            cpu,
            time,
            clock_nanoseconds,
            period,
            event,
            frames: _,
            input_position,
        } = other;
        self.pid = *pid;
        self.tid = *tid;
        self.comm = *comm;
        self.pid_text = *pid_text;
        self.tid_text = *tid_text;
        self.cpu = *cpu;
        self.time = *time;
        self.clock_nanoseconds = *clock_nanoseconds;
        self.period = *period;
        self.event = *event;
        self.input_position = *input_position;
    }
}

/// What a source hands each of its samples to, in input order.
pub trait SampleSink {
    /// Takes one sample; its ids are those of `interner`, the same for
    /// every sample of one source.
    fn add_sample(&mut self, sample: &Sample, interner: &SampleInterner);
}

/// The strings and modules that samples refer to by id.
#[derive(Debug, Clone, Default)]
pub struct SampleInterner {
    strings: IndexSet<Box<str>, FxBuildHasher>,
    modules: IndexSet<Module, FxBuildHasher>,
}

/// How far a [`SampleInterner`] has grown: ids are handed out in order and
/// never taken back, so its sizes say which ones exist.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InternerMark {
    strings: usize,
    modules: usize,
}

/// The strings and modules an interner gained after an [`InternerMark`], in
/// the order it gave them ids: applied to a copy that stood at the mark, they
/// get the same ids there ([`SampleInterner::apply`]).
#[derive(Debug, Clone, Default)]
pub struct InternerGrowth {
    strings: Vec<Box<str>>,
    modules: Vec<Module>,
}

impl InternerGrowth {
    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty() && self.modules.is_empty()
    }

    /// Forgets what it holds, keeping its memory.
    pub fn clear(&mut self) {
        self.strings.clear();
        self.modules.clear();
    }
}

impl SampleInterner {
    /// An empty interner.
    pub fn new() -> SampleInterner {
        SampleInterner::default()
    }

    /// The id of `text`, added if new.
    pub fn intern(&mut self, text: &str) -> StringId {
        let index = match self.strings.get_index_of(text) {
            Some(index) => index,
            None => self.strings.insert_full(text.into()).0,
        };
        StringId(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// The text of an id (empty for an id of another interner).
    pub fn string(&self, id: StringId) -> &str {
        self.strings.get_index(id.0 as usize).map_or("", |text| text)
    }

    /// The text of an optional id (empty for none).
    pub fn string_or_empty(&self, id: Option<StringId>) -> &str {
        id.map_or("", |id| self.string(id))
    }

    /// The id of the module at `path` of `kind`, added if new.
    pub fn module(&mut self, path: &str, kind: ModuleKind) -> ModuleId {
        let module = Module { path: self.intern(path), kind };
        let index = match self.modules.get_index_of(&module) {
            Some(index) => index,
            None => self.modules.insert_full(module).0,
        };
        ModuleId(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// The id of the module at `path`, its kind by [`ModuleKind::of_path`].
    pub fn module_at_path(&mut self, path: &str) -> ModuleId {
        self.module(path, ModuleKind::of_path(path))
    }

    /// A module by id (an unknown module for an id of another interner).
    pub fn module_info(&self, id: ModuleId) -> Module {
        self.modules
            .get_index(id.0 as usize)
            .copied()
            .unwrap_or(Module { path: StringId(0), kind: ModuleKind::Unknown })
    }

    /// The path of a module.
    pub fn module_path(&self, id: ModuleId) -> &str {
        self.string(self.module_info(id).path)
    }

    /// The kind of a module.
    pub fn module_kind(&self, id: ModuleId) -> ModuleKind {
        self.module_info(id).kind
    }

    /// How far it has grown.
    pub fn mark(&self) -> InternerMark {
        InternerMark { strings: self.strings.len(), modules: self.modules.len() }
    }

    /// Adds to `growth` what was interned after `mark` (a mark of this
    /// interner) and returns the mark it stands at now.
    pub fn growth_since(&self, mark: InternerMark, growth: &mut InternerGrowth) -> InternerMark {
        let strings = self.strings.get_range(mark.strings..).into_iter().flatten();
        growth.strings.extend(strings.cloned());
        growth.modules.extend(self.modules.get_range(mark.modules..).into_iter().flatten().copied());
        self.mark()
    }

    /// Interns `growth`, taken from an interner that stood where this one
    /// stands: its strings and modules get the ids they have there.
    pub fn apply(&mut self, growth: &InternerGrowth) {
        for text in &growth.strings {
            let (_, new) = self.strings.insert_full(text.clone());
            debug_assert!(new, "an interner's growth applied to a copy that did not stand at its mark");
        }
        for &module in &growth.modules {
            let (_, new) = self.modules.insert_full(module);
            debug_assert!(new, "an interner's growth applied to a copy that did not stand at its mark");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_kinds_follow_inferno() {
        assert_eq!(ModuleKind::of_path("[kernel.kallsyms]"), ModuleKind::Kernel);
        assert_eq!(ModuleKind::of_path("/usr/lib/debug/boot/vmlinux-5.4.14-cloudflare-2020.1.11"), ModuleKind::Kernel);
        assert_eq!(ModuleKind::of_path("module.ko"), ModuleKind::Kernel);
        assert_eq!(ModuleKind::of_path("[unknown]"), ModuleKind::Unknown);
        assert_eq!(ModuleKind::of_path("vmlinux-5.4.14)"), ModuleKind::File);
        assert_eq!(ModuleKind::of_path("/usr/bin/node"), ModuleKind::File);
        assert_eq!(
            ModuleKind::of_path("/tmp/perf-2020.map"),
            ModuleKind::PerfMap { pid: Some(2020), jitdump: MappedJitDump::NotKnown }
        );
        assert_eq!(
            ModuleKind::of_path("/tmp/perf-x.map"),
            ModuleKind::PerfMap { pid: None, jitdump: MappedJitDump::NotKnown }
        );
        assert_eq!(
            ModuleKind::of_path("/tmp/exp/jitted-2020-2338.so"),
            ModuleKind::JitImage { pid: Some(2020), code_index: Some(2338) }
        );
        assert_eq!(ModuleKind::of_path("/x/jitted-a.so"), ModuleKind::JitImage { pid: None, code_index: None });
        assert_eq!(ModuleKind::of_path("jitted-1-2.so"), ModuleKind::File);
    }

    #[test]
    fn interns_strings_and_modules_once() {
        let mut interner = SampleInterner::new();
        let node = interner.module_at_path("/usr/bin/node");
        assert_eq!(interner.module_at_path("/usr/bin/node"), node);
        let unknown = interner.module("[unknown]", ModuleKind::Unknown);
        let no_code = interner.module("[unknown]", ModuleKind::NoCode);
        assert_ne!(unknown, no_code);
        assert_eq!(interner.module_path(no_code), "[unknown]");
        assert_eq!(interner.module_kind(node), ModuleKind::File);
    }
}
