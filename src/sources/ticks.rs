//! Samples from V8's own profiler: the `tick` records of a `node --prof
//! --log-code` log. No perf and no root needed.
//!
//! V8 writes one `tick` per sample (V8's `V8FileLogger::TickEvent` in
//! `src/logging/log.cc`):
//!
//! ```text
//! tick,PC,TIME,IS_EXTERNAL_CALLBACK,TOS_OR_CALLBACK,VM_STATE[,overflow],RETURN_ADDRESS...
//! ```
//!
//! Each tick becomes a [`crate::model::sample::Sample`] folded like a perf sample,
//! the frames found the way V8's `tools/tickprocessor.mjs` finds them:
//!
//! * addresses are looked up in the log's `shared-library` mappings first
//!   (so V8's embedded builtins are named by the node binary's ELF symbols,
//!   `Builtins_InterpreterEntryTrampoline`, as perf names them), then in the
//!   code objects of the log (expanded into inlined functions by
//!   [`crate::v8::expand::V8Expander`]);
//! * the code objects live at a tick are those created before it in the log:
//!   the tick processor replays the log in order, and V8 writes ticks and
//!   code events with the same clock, so log order is time order;
//! * in an external callback the PC is replaced by the callback's entry;
//!   otherwise a top-of-stack value inside JavaScript code (a frameless
//!   call) becomes the caller frame after the PC;
//! * the frames after the PC are return addresses: native ones are
//!   symbolized at `address - 1` (the call), JavaScript ones take the
//!   source position before the address, as in the perf path.
//!
//! JavaScript frames are named as in the jitdump (`JS:*kernel
//! /app/deep.js:32:16`) from the log's code-creation names; node 18 logs
//! `LazyCompile:*kernel /app/deep.js:32:16` (its jitdump drops the column).

use std::path::Path;

use rustc_hash::FxHashMap;

use crate::diagnostics::Diagnostics;
use crate::error::{Error, ErrorCause};
use crate::files::read_file_allowing_cut;
use crate::formats::v8log::{CodeLog, CodeObjectId, Tick};
use crate::model::sample::{AddressKind, Frame, ModuleKind, Sample, SampleInterner, SampleSink, SampleTime};
use crate::symbols::{FileMapping, SymbolCache};
use crate::v8::code_logs::{CodeLogs, pid_in_file_name};
use crate::v8::inline_map::{CodeDescription, InlineMap, JitCodes, LogId, LogObject, SourceOptions};

/// The root frame of tick samples: V8 does not log the process name.
const COMMAND_NAME: &str = "node";

/// A `--prof` log read: its ticks, libraries and code objects, ready to
/// hand its ticks on as samples.
pub struct TickLog {
    /// The log's ticks, in log order.
    ticks: Vec<Tick>,
    /// Its `shared-library` records.
    libraries: Vec<FileMapping>,
    /// The process id (from the file name; 0 when it has none).
    pid: u32,
    /// Its code objects, for the expander and for telling live code.
    code_logs: CodeLogs,
    /// What was wrong with the log: skipped lines, a `.gz` cut short.
    pub diagnostics: Diagnostics,
}

/// How the non-JavaScript frames of ticks were named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NativeFrameStats {
    /// Frames named by an ELF symbol.
    pub symbolized: u64,
    /// Frames in a library with no symbol there.
    pub in_library_without_symbol: u64,
    /// Frames in no library: V8 code (then counted by the expansion stats)
    /// or unknown.
    pub outside_libraries: u64,
}

impl TickLog {
    /// Reads the `--prof` log at `path` (`.gz` too); script sources as
    /// `sources` says.
    pub fn read(path: &Path, sources: SourceOptions) -> Result<TickLog, Error> {
        let (bytes, cut_short) = read_file_allowing_cut(path)?;
        let log = CodeLog::parse(&bytes);
        drop(bytes);
        let mut diagnostics = Diagnostics::new();
        if cut_short {
            diagnostics.add_compressed_cut(path, &format!("{} lines", log.line_count));
        }
        TickLog::from_log(log, path, sources, diagnostics)
    }

    /// [`TickLog::read`] of a log already in memory (not compressed); `path`
    /// names it in warnings and gives the pid (`prof-PID.log`).
    pub fn parse(bytes: &[u8], path: &Path, sources: SourceOptions) -> Result<TickLog, Error> {
        TickLog::from_log(CodeLog::parse(bytes), path, sources, Diagnostics::new())
    }

    /// The tick log of `log`, read from `path`, with the warnings of reading
    /// it so far.
    fn from_log(
        mut log: CodeLog,
        path: &Path,
        sources: SourceOptions,
        mut diagnostics: Diagnostics,
    ) -> Result<TickLog, Error> {
        log.path = path.to_owned();
        if log.ticks.is_empty() {
            return Err(Error::new(path, ErrorCause::NoTicks));
        }
        diagnostics.add_code_log(&log);
        let ticks = std::mem::take(&mut log.ticks);
        let libraries = library_mappings(&log);
        let pid = pid_in_file_name(path).unwrap_or(0);
        let codes = log_codes(&log);
        let map = InlineMap::from_codes(vec![log], codes, Some(pid), sources);
        let code_logs = CodeLogs::from_maps(vec![(pid, map)]);
        Ok(TickLog { ticks, libraries, pid, code_logs, diagnostics })
    }

    /// The log's code objects, for the expander of its JavaScript frames.
    pub fn code_logs(&self) -> &CodeLogs {
        &self.code_logs
    }

    /// Hands each tick to `sink` as a sample, in log order, its native
    /// frames named by the libraries' ELF symbols; problems reading those
    /// go to the log's diagnostics.
    pub fn read_samples(&mut self, sink: &mut dyn SampleSink) -> NativeFrameStats {
        self.read_samples_with(sink, SymbolCache::new())
    }

    /// [`TickLog::read_samples`] with the native frames named from
    /// `symbols` (e.g. [`SymbolCache::reading_no_files`]).
    pub fn read_samples_with(&mut self, sink: &mut dyn SampleSink, mut symbols: SymbolCache) -> NativeFrameStats {
        let mut interner = SampleInterner::new();
        let mut sample = Sample::default();
        let mut native = NativeFrameStats::default();
        for tick in &self.ticks {
            let mut context = TickContext {
                libraries: &self.libraries,
                symbols: &mut symbols,
                code_logs: &self.code_logs,
                log_line: tick.log_line,
                native: &mut native,
                interner: &mut interner,
            };
            build_sample(tick, self.pid, &mut context, &mut sample);
            sink.add_sample(&sample, &interner);
        }
        self.diagnostics.merge(&symbols.diagnostics);
        native
    }

    /// The number of ticks.
    pub fn tick_count(&self) -> usize {
        self.ticks.len()
    }
}

/// The log's `shared-library` records as mappings. V8 writes each library's
/// start as the address of file offset 0 (it subtracts the mapping's offset,
/// `OS::GetSharedLibraryAddresses`), so the file offset at `start` is 0. A
/// later record of the same range replaces an earlier one. Line breaks in a
/// path (an escaped `\n` in the log) become spaces, as in the paths of a
/// perf.data: the library names a module of a folded line, which must stay
/// one line.
fn library_mappings(log: &CodeLog) -> Vec<FileMapping> {
    let mut mappings: Vec<FileMapping> = Vec::new();
    for library in &log.shared_libraries {
        let start = library.start.wrapping_add_signed(library.aslr_slide);
        let end = library.end.wrapping_add_signed(library.aslr_slide);
        let path = one_line(&library.path);
        mappings.retain(|mapping| !(mapping.start == start && mapping.path == path));
        mappings.push(FileMapping { start, end, file_offset: 0, path });
    }
    mappings
}

/// `text` with its line breaks made spaces (a library path, a code name:
/// part of a folded line, which must stay one line).
fn one_line(text: &str) -> Box<str> {
    if text.contains(['\n', '\r']) { text.replace(['\n', '\r'], " ").into() } else { text.into() }
}

/// The log's code objects in the order they appeared, with `code-move`s
/// replayed as new loads of the moved object at its new address. The log
/// line stands for the time: an address resolves to the newest code object
/// there before the tick that sampled it, as the tick processor's code map
/// replays the log.
fn log_codes(log: &CodeLog) -> JitCodes {
    let mut codes = JitCodes::default();
    // Which code object is at an address now.
    let mut object_at: FxHashMap<u64, CodeObjectId> = FxHashMap::default();
    let mut moves = log.code_moves.iter().peekable();
    let mut apply_moves_before = |line: u64, codes: &mut JitCodes, object_at: &mut FxHashMap<u64, CodeObjectId>| {
        while let Some(moved) = moves.next_if(|moved| moved.log_line < line) {
            let Some(id) = object_at.remove(&moved.from) else { continue };
            object_at.insert(moved.to, id);
            add_code(codes, log, id, moved.to, moved.log_line);
        }
    };
    for (index, object) in log.code_objects.iter().enumerate() {
        apply_moves_before(object.log_line, &mut codes, &mut object_at);
        let id = CodeObjectId(index as u32);
        object_at.insert(object.address, id);
        add_code(&mut codes, log, id, object.address, object.log_line);
    }
    apply_moves_before(u64::MAX, &mut codes, &mut object_at);
    codes
}

/// Adds code object `id` of the log (the map's only one), at `address` since log line `log_line`,
/// named as the jitdump names code: `TAG:MARKERname` (on one line: a name
/// may hold an escaped `\n`).
fn add_code(codes: &mut JitCodes, log: &CodeLog, id: CodeObjectId, address: u64, log_line: u64) {
    let object = log.code_object(id);
    let marker = object.tier.map(|tier| tier.text()).unwrap_or_default();
    codes.push(CodeDescription {
        address,
        size: object.size,
        load_time: Some(log_line),
        code_index: None,
        name: &one_line(&format!("{}:{}{}", log.object_tag(object), marker, log.object_name(object))),
        log_object: Some(LogObject { log: LogId(0), object: id }),
    });
}

/// What naming the frames of a tick needs besides the tick.
struct TickContext<'context> {
    /// The log's libraries.
    libraries: &'context [FileMapping],
    /// Their symbols.
    symbols: &'context mut SymbolCache,
    /// The code objects.
    code_logs: &'context CodeLogs,
    /// The tick's line in the log: its time.
    log_line: u64,
    /// Counters.
    native: &'context mut NativeFrameStats,
    /// The texts of the samples.
    interner: &'context mut SampleInterner,
}

/// Fills `sample` with one tick.
fn build_sample(tick: &Tick, pid: u32, context: &mut TickContext<'_>, sample: &mut Sample) {
    sample.clear();
    let pid_text = context.interner.intern(&pid.to_string());
    sample.pid = Some(pid);
    sample.tid = Some(pid);
    sample.comm = Some(context.interner.intern(COMMAND_NAME));
    sample.pid_text = Some(pid_text);
    sample.tid_text = Some(pid_text);
    // Log order is V8's time order: the log line stands for the time.
    sample.time = Some(SampleTime::exact(tick.log_line));
    sample.clock_nanoseconds = u64::try_from(tick.timestamp_micros).ok().map(|micros| micros.saturating_mul(1000));
    sample.input_position = tick.log_line;
    // tickprocessor.mjs `processTick`: in an external callback the PC may
    // point into the callback, which would look like a self-call.
    let program_counter = if tick.external_callback { tick.top_of_stack_or_callback } else { tick.pc };
    sample.frames.push(tick_frame(program_counter, TickAddressKind::ProgramCounter, context));
    let top_of_stack = tick.top_of_stack_or_callback;
    if !tick.external_callback
        && top_of_stack != 0
        && is_javascript_code(context.code_logs, top_of_stack, tick.log_line)
        && !context.libraries.iter().any(|library| library.contains(top_of_stack))
    {
        sample.frames.push(tick_frame(top_of_stack, TickAddressKind::ReturnAddress, context));
    }
    for &address in &tick.frames {
        sample.frames.push(tick_frame(address, TickAddressKind::ReturnAddressOrCFunction, context));
    }
}

/// Whether `address` is in the code of a JavaScript function at `log_line`
/// (the tick processor's `isJSFunction` test for the top of stack).
fn is_javascript_code(code_logs: &CodeLogs, address: u64, log_line: u64) -> bool {
    let Some(map) = code_logs.maps().first() else { return false };
    map.find(address, Some(log_line))
        .filter(|found| found.time_matched)
        .and_then(|found| map.log_object(found.code))
        .is_some_and(|object| object.function.is_some())
}

/// Whether a code object covering `address` was created before `log_line`.
fn is_live_code(code_logs: &CodeLogs, address: u64, log_line: u64) -> bool {
    code_logs.maps().first().and_then(|map| map.find(address, Some(log_line))).is_some_and(|found| found.time_matched)
}

/// What an address of a tick is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TickAddressKind {
    /// The sampled instruction.
    ProgramCounter,
    /// A stack entry: a return address, or the entry of a C++ function V8
    /// was calling when it left JavaScript (recorded for `--prof`:
    /// `TickSample::GetStackSample` with `kIncludeCEntryFrame`, and API
    /// callbacks). An address that is exactly a function's start is taken as
    /// the latter: a return address follows a call instruction.
    ReturnAddressOrCFunction,
    /// A return address (the top of stack of a frameless call).
    ReturnAddress,
}

/// One frame: a library's symbol, or a raw address for the expander.
fn tick_frame(address: u64, kind: TickAddressKind, context: &mut TickContext<'_>) -> Frame {
    let TickContext { libraries, symbols, code_logs, log_line, native, interner } = context;
    let address_kind = if kind == TickAddressKind::ProgramCounter {
        AddressKind::InstructionPointer
    } else {
        AddressKind::ReturnAddress
    };
    let unknown = interner.intern("[unknown]");
    let mut frame = Frame {
        address,
        address_kind,
        module: interner.module("[unknown]", ModuleKind::Unknown),
        symbol: Some(unknown),
        symbol_offset: None,
        address_text: None,
        file_address: None,
        number: None,
    };
    // The newest library record covering the address wins.
    let Some(library) = libraries.iter().rev().find(|library| library.contains(address)) else {
        native.outside_libraries += 1;
        // The expander resolves unknown frames; code created only after the
        // tick is not there yet (the tick processor says unknown).
        if !is_live_code(code_logs, address, *log_line) {
            frame.module = interner.module("[unknown]", ModuleKind::NoCode);
        }
        return frame;
    };
    frame.module = interner.module_at_path(&library.path);
    // A return address points after its call, possibly past the caller's end.
    let is_function_entry = kind == TickAddressKind::ReturnAddressOrCFunction
        && symbols.symbolize(library, address).is_some_and(|hit| hit.offset == 0);
    let lookup_address =
        if kind == TickAddressKind::ProgramCounter || is_function_entry { address } else { address.saturating_sub(1) };
    match symbols.symbolize(library, lookup_address) {
        Some(hit) => {
            native.symbolized += 1;
            frame.symbol = Some(interner.intern(hit.name));
            frame.symbol_offset = Some(hit.offset + (address - lookup_address));
        }
        None => native.in_library_without_symbol += 1,
    }
    frame
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::WarningKind;

    /// Folds a hand-written log; returns the folded text and the warnings.
    fn fold(log: &str) -> (String, Diagnostics) {
        let directory = std::env::temp_dir().join(format!("v8inline-ticks-unit-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let path = directory.join(format!("prof-{}.log", log.len()));
        std::fs::write(&path, log).unwrap();
        let input = crate::pipeline::SampleInput::Ticks(path.clone());
        let report = crate::pipeline::fold(&input, &crate::pipeline::FoldOptions::default());
        std::fs::remove_file(&path).unwrap();
        let report = report.unwrap();
        let mut folded = Vec::new();
        report.write_folded(&mut folded).unwrap();
        (String::from_utf8(folded).unwrap(), report.diagnostics)
    }

    #[test]
    fn frames_as_the_tick_processor_finds_them() {
        let log = "\
shared-library,/nonexistent/libfake.so,0x1000,0x2000,0
code-creation,JS,10,100,0x5000,256,outer /app/a.js:1:1,0x9000,~
code-creation,JS,10,101,0x6000,256,inner /app/a.js:5:1,0x9100,*
tick,0x6010,200,0,0x5050,0,0x5060
tick,0x1500,201,1,0x6020,6,0x5060
tick,0x7010,202,0,0x0,0
code-creation,JS,10,103,0x7000,256,late /app/a.js:9:1,0x9200,*
tick,0x7010,204,0,0x0,0
code-move,0x5000,0x8000
tick,0x8010,205,0,0x0,0
tick,0x1800,206,0,0x0,0,0x6030
tick,not an address
";
        let (folded, diagnostics) = fold(log);
        assert_eq!(
            folded,
            "\
node;JS:*inner /app/a.js:5:1;[libfake.so] 1
node;JS:*late /app/a.js:9:1 1
node;JS:~outer /app/a.js:1:1 1
node;JS:~outer /app/a.js:1:1;JS:*inner /app/a.js:5:1 1
node;JS:~outer /app/a.js:1:1;JS:~outer /app/a.js:1:1;JS:*inner /app/a.js:5:1 1
node;[unknown] 1
"
        );
        // The PC of an external callback is replaced by the callback (tick 2);
        // a top of stack in JavaScript is the PC's caller (tick 1); an
        // address resolves to code created before the tick (tick 3, 4) and
        // follows code-moves (tick 5).
        let examples = |kind| diagnostics.tally(kind).map(|tally| tally.examples.clone()).unwrap_or_default();
        let unparsable = examples(WarningKind::LogUnparsableLine);
        assert!(
            unparsable.len() == 1 && unparsable[0].ends_with(".log:12: tick: field 2: expected a pc"),
            "{unparsable:?}"
        );
        assert_eq!(
            examples(WarningKind::NoSymbols),
            vec!["/nonexistent/libfake.so: No such file or directory (os error 2)".to_string()]
        );
        // The log has no code-source-info: nothing could be inlined.
        let unexpanded = examples(WarningKind::UnexpandedJavaScript);
        assert!(
            unexpanded.len() == 1
                && unexpanded[0].ends_with(
                    ".log: 5 of 5 samples that ran JavaScript did not expand: the code log has no code-source-info \
                     records (recorded without --log-code?); record with node --log-code, which logs the source \
                     positions and inlined functions"
                ),
            "{unexpanded:?}"
        );
        assert_eq!(diagnostics.total(), 3, "{diagnostics}");
    }

    /// Found by the `ticks` fuzz target: an escaped line break in a
    /// `shared-library` path or in a code object's name split a folded line
    /// in two.
    #[test]
    fn line_breaks_in_library_paths_and_code_names_stay_on_one_folded_line() {
        let log = "\
shared-library,/nonexistent/lib\\nfake.so,0x1000,0x2000,0
code-creation,JS,10,100,0x5000,256,out\\ner /app/a.js:1:1,0x9000,~
tick,0x1500,201,0,0x0,6
tick,0x5010,202,0,0x0,0
";
        let (folded, _) = fold(log);
        assert_eq!(folded, "node;JS:~out er /app/a.js:1:1 1\nnode;[lib fake.so] 1\n");
    }

    #[test]
    fn a_log_without_ticks_is_an_error() {
        let directory = std::env::temp_dir();
        let path = directory.join(format!("v8inline-no-ticks-{}.log", std::process::id()));
        std::fs::write(&path, "code-creation,JS,10,100,0x5000,256,outer /app/a.js:1:1,0x9000,~\n").unwrap();
        let result = TickLog::read(&path, SourceOptions::default());
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(result, Err(Error { cause: ErrorCause::NoTicks, .. })));
    }
}
