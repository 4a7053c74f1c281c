//! Samples read from perf.data directly, without `perf script`.
//!
//! The file is read with the `linux-perf-data` crate, which yields its
//! records in time order. The address space of each process is rebuilt from
//! the MMAP/MMAP2 records (FORK copies it, exec clears it), and each frame of a
//! sample's callchain is named as `perf script` names it:
//!
//! * an address in a mapped ELF file: the function from the file's symbol
//!   table (`crate::symbols`, perf's rules), looked up at the address itself
//!   as perf does, also for return addresses;
//! * a kernel address: the function from `/proc/kallsyms` of this machine
//!   (perf reads the same file), moved by how far the kernel moved since the
//!   recording (KASLR); none when the recording is of another kernel;
//! * an address in anonymous executable memory, or in no mapping (V8 makes
//!   its code pages executable with `mprotect`, which perf does not see):
//!   a raw `[unknown]` frame, which [`crate::v8::expand::V8Expander`] resolves
//!   through the jitdump at the sample's time and expands into the inlined
//!   JavaScript functions.
//!
//! Each sample then goes to a [`SampleSink`] (the pipeline expands and folds it).
//!
//! The records of `perf record -z` (`PERF_RECORD_COMPRESSED`, zstd) are
//! decompressed by the crate (its `zstd` feature) and read as any others,
//! after a walk over the records measured what they expand to
//! (`perf_data_compressed`: a decompression bomb ends the reading).
//!
//! Differences from `perf script` output: perf also reads `/tmp/perf-PID.map`
//! files and `~/.debug` copies of binaries, which this reader does not; a
//! file whose build id differs from the one perf recorded is not symbolized
//! (its frames are named by the file, and a warning says so); kernel module
//! functions are reported under `[kernel.kallsyms]`.
//!
//! A damaged perf.data is read as far as it goes: a file cut short up to its
//! last whole record, the file of a `perf record` that was killed (data size
//! 0 in the header, which perf itself refuses) likewise, a record that does not parse is skipped, a record the
//! reader cannot frame ends the reading (an AUXTRACE record declaring more
//! trace data than the file holds, a FINISHED_ROUND record with a body and
//! compressed records expanding too far are found by a walk over the records
//! before the crate reads them); each is a warning in
//! [`PerfDataSummary::diagnostics`] naming the byte offset.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use linux_perf_data::linux_perf_event_reader::constants::{PERF_CONTEXT_KERNEL, PERF_CONTEXT_MAX, PERF_CONTEXT_USER};
use linux_perf_data::linux_perf_event_reader::{
    AttrFlags, CommOrExecRecord, EventRecord, RawData, RecordType, SampleRecord,
};
use linux_perf_data::{PerfFile, PerfFileReader, PerfFileRecord, PerfRecordIter};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::diagnostics::{Diagnostics, EXAMPLES_PER_KIND, WarningKind};
use crate::error::{Error, ErrorCause};
use crate::files::read_file_allowing_cut;
use crate::formats::perf_data::{PerfDataError, PerfFileHeader, check_architecture, check_header};
use crate::model::sample::{
    AddressKind, Frame, FrameNumber, KERNEL_ADDRESS_START, MappedJitDump, ModuleId, ModuleKind, Sample, SampleInterner,
    SampleSink, SampleTime, StringId,
};
use crate::sources::perf_data_compressed::ExpansionCheck;
use crate::symbols::{FileMapping, SymbolCache, VDSO};

/// `PROT_EXEC` of `mmap(2)`.
const PROT_EXEC: u32 = 4;

/// Whose code an address of a callchain is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Mode {
    Kernel,
    User,
}

impl Mode {
    /// The mode of an address without a context marker before it.
    fn of_address(address: u64) -> Mode {
        if address >= KERNEL_ADDRESS_START { Mode::Kernel } else { Mode::User }
    }
}

/// What a frame's name depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FrameKey {
    pid: i32,
    address: u64,
    mode: Mode,
}

/// A thread's texts, interned.
#[derive(Debug, Clone, Copy)]
struct ThreadTexts {
    comm: StringId,
    pid_text: StringId,
    tid_text: StringId,
    event: StringId,
}

/// What reading a perf.data found besides its samples.
#[derive(Debug, Clone, Default)]
pub struct PerfDataSummary {
    /// Samples read, of every event.
    pub samples_read: u64,
    /// Samples skipped for their event (see [`read_perf_data`]).
    pub samples_filtered_out: u64,
    /// The event whose samples were handed on.
    pub event: Option<String>,
    /// What was wrong with the perf.data and the files it names (native
    /// files and kernel symbols that could not name frames).
    pub diagnostics: Diagnostics,
}

/// Reads the perf.data at `path` (`.gz` too) and hands each sample of
/// `event` (default: the first event seen, as perf script's consumers do)
/// to `sink`, in the file's time order, its frames named as `perf script`
/// names them. A damaged file is read up to its last whole record (see the
/// summary's diagnostics); only a file that cannot be opened or is not a
/// perf.data is an error, naming the file.
pub fn read_perf_data(path: &Path, event: Option<&str>, sink: &mut dyn SampleSink) -> Result<PerfDataSummary, Error> {
    PerfDataSource::new().read(path, event, sink)
}

/// Reads perf.data files, keeping what does not depend on the file for the
/// next one: the symbols of binaries and of the running kernel, loaded on
/// first use (the benchmarks read one file many times).
#[derive(Default)]
pub struct PerfDataSource {
    /// ELF symbols by path.
    symbols: SymbolCache,
    /// The running kernel's symbols, once loaded (or why they cannot be).
    running_kernel: Option<Rc<Result<KernelSymbols, KernelSymbolsError>>>,
    /// Whether symbols are read only on this thread, when first needed
    /// (see [`PerfDataSource::on_one_thread`]).
    one_thread: bool,
}

impl PerfDataSource {
    /// A source that has loaded nothing yet.
    pub fn new() -> PerfDataSource {
        PerfDataSource::default()
    }

    /// The same source reading symbols only when first needed, on the
    /// calling thread, rather than from the start on other threads (for
    /// `--threads 1`, and for fuzzing, where each input would start threads
    /// reading whatever files its build ids name).
    pub fn on_one_thread(self) -> PerfDataSource {
        PerfDataSource { one_thread: true, ..self }
    }

    /// [`read_perf_data`], with the symbols loaded before.
    pub fn read(
        &mut self,
        path: &Path,
        event: Option<&str>,
        sink: &mut dyn SampleSink,
    ) -> Result<PerfDataSummary, Error> {
        let mut reader = PerfDataReader::new(event, std::mem::take(&mut self.symbols), self.running_kernel.clone());
        reader.reads_ahead = !self.one_thread;
        let result = if path.extension().is_some_and(|extension| extension == "gz") {
            match read_file_allowing_cut(path) {
                Ok((bytes, cut_short)) => {
                    if cut_short {
                        reader.diagnostics.add_compressed_cut(path, &format!("{} decompressed bytes", bytes.len()));
                    }
                    reader.read(std::io::Cursor::new(bytes), path, sink)
                }
                Err(error) => Err(error.cause),
            }
        } else {
            // Mapped, so that records are copied from memory rather than
            // through read(2) (a twentieth of the time on a real recording).
            match crate::files::MappedFile::open(path) {
                Ok(Some(mapped)) => reader.read(crate::files::MappedReader::new(mapped), path, sink),
                Ok(None) => match crate::files::open_input(path) {
                    Ok(file) => reader.read(std::io::BufReader::with_capacity(1 << 20, file), path, sink),
                    Err(error) => Err(error.into()),
                },
                Err(error) => Err(error.cause),
            }
        };
        self.finish(reader, result, path)
    }

    /// [`PerfDataSource::read`] of a perf.data already in memory (not
    /// compressed); `path` names it in warnings and errors.
    pub fn read_bytes(
        &mut self,
        bytes: &[u8],
        path: &Path,
        event: Option<&str>,
        sink: &mut dyn SampleSink,
    ) -> Result<PerfDataSummary, Error> {
        let mut reader = PerfDataReader::new(event, std::mem::take(&mut self.symbols), self.running_kernel.clone());
        reader.reads_ahead = !self.one_thread;
        let result = reader.read(std::io::Cursor::new(bytes), path, sink);
        self.finish(reader, result, path)
    }

    /// The summary of `reader`'s read, keeping its caches for the next one.
    fn finish(
        &mut self,
        reader: PerfDataReader,
        result: Result<(), ErrorCause>,
        path: &Path,
    ) -> Result<PerfDataSummary, Error> {
        let (summary, symbols, running_kernel) = reader.finish();
        self.symbols = symbols;
        self.running_kernel = running_kernel;
        result.map_err(Error::at(path))?;
        Ok(summary)
    }
}

/// A process of a perf.data: the programs it executed and its samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessActivity {
    /// Its pid.
    pub pid: u32,
    /// The names of the programs it executed (`execve`), in order, as the
    /// kernel names them: the file name, at most 15 bytes.
    pub programs: Vec<String>,
    /// The path of the last program it executed: its first executable
    /// mapping after the `execve`, when the recording has it.
    pub executable: Option<String>,
    /// Its samples, of every event.
    pub samples: u64,
}

/// The processes of the perf.data at `path` that executed a program or were
/// sampled, by pid: what `record` needs to tell which node processes ran
/// without its flags. Reads the records of a whole file up to the first it
/// cannot read; none of a damaged one (the main read reports the damage).
pub fn recorded_processes(path: &Path) -> Result<Vec<ProcessActivity>, Error> {
    let file = std::fs::File::open(path).map_err(Error::at(path))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    // Only a whole perf.data: the main read frames a damaged one record by
    // record (`PerfDataReader::read`) and reports it; this pass does not
    // repeat those guards.
    match check_header(&mut reader) {
        Ok(Some(header)) if !header.is_cut() && !header.is_unfinished() => {}
        _ => return Ok(Vec::new()),
    }
    let PerfFileReader { mut perf_file, mut record_iter } =
        PerfFileReader::parse_file(reader).map_err(|error| Error::at(path)(PerfDataError::Format(error)))?;
    check_architecture(&perf_file).map_err(Error::at(path))?;
    let mut processes: std::collections::BTreeMap<u32, ProcessActivity> = std::collections::BTreeMap::new();
    fn process(processes: &mut std::collections::BTreeMap<u32, ProcessActivity>, pid: i32) -> &mut ProcessActivity {
        let pid = pid as u32;
        processes.entry(pid).or_insert_with(|| ProcessActivity { pid, ..ProcessActivity::default() })
    }
    while let Ok(Some(record)) = record_iter.next_record(&mut perf_file) {
        let PerfFileRecord::EventRecord { record, .. } = record else { continue };
        if mmap2_build_id_problem(&record).is_some() {
            continue;
        }
        match record.parse() {
            Ok(EventRecord::Comm(comm)) if comm.is_execve && comm.pid == comm.tid => {
                let process = process(&mut processes, comm.pid);
                process.programs.push(String::from_utf8_lossy(&comm.name.as_slice()).into_owned());
                process.executable = None;
            }
            Ok(EventRecord::Mmap2(mmap)) if mmap.protection & PROT_EXEC != 0 => {
                let process = process(&mut processes, mmap.pid);
                if process.executable.is_none() && !process.programs.is_empty() {
                    process.executable = Some(String::from_utf8_lossy(&mmap.path.as_slice()).into_owned());
                }
            }
            Ok(EventRecord::Sample(sample)) => {
                if let Some(pid) = sample.pid {
                    process(&mut processes, pid).samples += 1;
                }
            }
            _ => {}
        }
    }
    Ok(processes.into_values().collect())
}

/// The directory of a perf.data: where `perf record` ran, and so where
/// node wrote its jitdump and code log by default.
pub fn recording_directory(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// A reader of the records of `input` from its start, its first bytes
/// replaced by `header` (see [`SharedInput`]).
fn open_records<R: Read + Seek>(
    input: &Rc<RefCell<R>>,
    header: Option<Vec<u8>>,
) -> Result<(PerfFile, PerfRecordIter<SharedInput<R>>), ErrorCause> {
    input.borrow_mut().seek(SeekFrom::Start(0))?;
    let shared = SharedInput { inner: Rc::clone(input), header, position: 0 };
    let PerfFileReader { perf_file, record_iter } =
        PerfFileReader::parse_file(shared).map_err(PerfDataError::Format)?;
    check_architecture(&perf_file)?;
    Ok((perf_file, record_iter))
}

/// `PERF_RECORD_MISC_MMAP_BUILD_ID`: an MMAP2 record carries a build id
/// (its length, padding, 20 bytes) instead of device and inode numbers.
const MISC_MMAP_BUILD_ID: u16 = 1 << 14;
/// Where an MMAP2 record's build id length lies in its body: after pid,
/// tid, address, length and page offset.
const MMAP2_BUILD_ID_LENGTH_OFFSET: usize = 32;
/// The longest build id an MMAP2 record holds.
const MMAP2_BUILD_ID_CAPACITY: u8 = 20;

/// Why an MMAP2 record with a build id cannot be parsed: a build id length
/// past its 20 bytes, which `linux-perf-event-reader` (0.10) asserts against
/// instead of returning an error (a damaged record would abort the process).
fn mmap2_build_id_problem(
    record: &linux_perf_data::linux_perf_event_reader::RawEventRecord<'_>,
) -> Option<std::io::Error> {
    if record.record_type != RecordType::MMAP2 || record.misc & MISC_MMAP_BUILD_ID == 0 {
        return None;
    }
    let length = *record.data.as_slice().get(MMAP2_BUILD_ID_LENGTH_OFFSET)?;
    (length > MMAP2_BUILD_ID_CAPACITY).then(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a build id of {length} bytes, more than the {MMAP2_BUILD_ID_CAPACITY} an MMAP2 record holds"),
        )
    })
}

/// `struct perf_event_header`: type, misc, size.
const RECORD_HEADER_SIZE: u64 = 8;

/// `PERF_RECORD_FINISHED_ROUND`: a header alone.
const RECORD_FINISHED_ROUND: u32 = 68;

/// `PERF_RECORD_AUXTRACE`: its body (`struct perf_record_auxtrace`) starts
/// with the size of the trace data that follows the record in the file.
const RECORD_AUXTRACE: u32 = 71;

/// Where a walk of the records stopped (see [`walk_records`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RecordsEnd {
    /// The byte offset of the first record not whole, or the end.
    offset: u64,
    /// When the record there is an AUXTRACE record whose trace data goes
    /// past the end: the size of the trace data it declares.
    auxtrace_overrun: Option<u64>,
    /// When the record there is a FINISHED_ROUND record longer than its
    /// header: its size. linux-perf-data reads the header alone and would
    /// take the rest of the record for the next one.
    finished_round_size: Option<u64>,
}

/// Walks the records of the data section from byte `start` to `end`, in
/// file order, calling `visit(offset, type, body)` for each whole one until
/// it returns `false`; the trace data after an AUXTRACE record is skipped.
/// Returns where the walk stopped: the end of the data, or the first record
/// that is smaller than its header or reaches past `end` (where a cut or a
/// damaged size breaks the chain of records), its trace data included, or
/// that is a FINISHED_ROUND record with a body.
fn walk_records<R: Read + Seek>(
    input: &mut R,
    start: u64,
    end: u64,
    little_endian: bool,
    mut visit: impl FnMut(u64, u32, &[u8]) -> bool,
) -> std::io::Result<RecordsEnd> {
    input.seek(SeekFrom::Start(start))?;
    let mut offset = start;
    let mut body = Vec::new();
    while offset.saturating_add(RECORD_HEADER_SIZE) <= end {
        let mut header = [0; RECORD_HEADER_SIZE as usize];
        input.read_exact(&mut header)?;
        let (record_type, size) = if little_endian {
            (
                u32::from_le_bytes([header[0], header[1], header[2], header[3]]),
                u16::from_le_bytes([header[6], header[7]]),
            )
        } else {
            (
                u32::from_be_bytes([header[0], header[1], header[2], header[3]]),
                u16::from_be_bytes([header[6], header[7]]),
            )
        };
        let size = u64::from(size);
        if record_type == RECORD_AUXTRACE && size >= RECORD_HEADER_SIZE + 8 && offset + size > end {
            // Past the end itself: linux-perf-data still reads it whole
            // when the file goes on, and allocates the trace data it
            // declares before reading that.
            if let Some(trace_size) = read_trace_size(input, little_endian) {
                return Ok(RecordsEnd { offset, auxtrace_overrun: Some(trace_size), finished_round_size: None });
            }
        }
        if size < RECORD_HEADER_SIZE || offset + size > end {
            break;
        }
        if record_type == RECORD_FINISHED_ROUND && size != RECORD_HEADER_SIZE {
            return Ok(RecordsEnd { offset, auxtrace_overrun: None, finished_round_size: Some(size) });
        }
        body.resize((size - RECORD_HEADER_SIZE) as usize, 0);
        input.read_exact(&mut body)?;
        let trace_size = match body.get(..8) {
            Some(mut field) if record_type == RECORD_AUXTRACE => {
                read_trace_size(&mut field, little_endian).unwrap_or(0)
            }
            _ => 0,
        };
        if (offset + size).checked_add(trace_size).is_none_or(|record_end| record_end > end) {
            return Ok(RecordsEnd { offset, auxtrace_overrun: Some(trace_size), finished_round_size: None });
        }
        let go_on = visit(offset, record_type, &body);
        offset += size + trace_size;
        if trace_size > 0 {
            input.seek(SeekFrom::Start(offset))?;
        }
        if !go_on {
            break;
        }
    }
    Ok(RecordsEnd { offset, auxtrace_overrun: None, finished_round_size: None })
}

/// The trace data size an AUXTRACE body starts with (`struct
/// perf_record_auxtrace`'s `size`), read from `input`.
fn read_trace_size(input: &mut impl Read, little_endian: bool) -> Option<u64> {
    let mut field = [0; 8];
    input.read_exact(&mut field).ok()?;
    Some(if little_endian { u64::from_le_bytes(field) } else { u64::from_be_bytes(field) })
}

/// Where the records of the data section stop being whole before `end`:
/// the first one smaller than its header or reaching past `end`, else `end`.
fn whole_records_end<R: Read + Seek>(input: &mut R, header: &PerfFileHeader, end: u64) -> std::io::Result<u64> {
    Ok(walk_records(input, header.data.offset, end, header.little_endian, |_, _, _| true)?.offset)
}

/// The perf.data as `linux-perf-data` reads it: shared with [`PerfDataReader::read`],
/// which locates the records the crate could not parse afterwards, and with
/// the first bytes replaced (the header of a cut file, see
/// [`PerfFileHeader::cut_at`]).
struct SharedInput<R> {
    inner: Rc<RefCell<R>>,
    /// What the first bytes of the file read as instead.
    header: Option<Vec<u8>>,
    /// Where the next read starts.
    position: u64,
}

impl<R: Read> Read for SharedInput<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let count = self.inner.borrow_mut().read(buffer)?;
        if let Some(header) = &self.header
            && let Some(replaced) = header.get(self.position as usize..)
        {
            let overlap = count.min(replaced.len());
            buffer[..overlap].copy_from_slice(&replaced[..overlap]);
        }
        self.position += count as u64;
        Ok(count)
    }
}

impl<R: Seek> Seek for SharedInput<R> {
    fn seek(&mut self, position: SeekFrom) -> std::io::Result<u64> {
        self.position = self.inner.borrow_mut().seek(position)?;
        Ok(self.position)
    }
}

/// A record `linux-perf-data` framed but could not parse, kept to be located
/// in the file for the warning.
struct UnparsableRecord {
    record_type: u32,
    body: Vec<u8>,
    error: String,
}

/// The byte offsets of `records` in the data section: the first record of
/// the same type and body not yet taken (`None` where none is, e.g. inside a
/// compressed record).
fn locate_records<R: Read + Seek>(
    input: &mut R,
    header: &PerfFileHeader,
    records: &[UnparsableRecord],
) -> Vec<Option<u64>> {
    let mut offsets = vec![None; records.len()];
    let _ = walk_records(
        input,
        header.data.offset,
        header.data_end(),
        header.little_endian,
        |offset, record_type, body| {
            let wanted = records
                .iter()
                .zip(&mut offsets)
                .find(|(record, found)| found.is_none() && record.record_type == record_type && record.body == body);
            if let Some((_, found)) = wanted {
                *found = Some(offset);
            }
            offsets.iter().any(Option::is_none)
        },
    );
    offsets
}

/// `text` with its line breaks made spaces: a thread or file name from the
/// perf.data becomes part of a folded line, which must stay one line (as
/// JIT names do, [`crate::v8::inline_map`]).
fn one_line(text: String) -> String {
    if text.contains(['\n', '\r']) { text.replace(['\n', '\r'], " ") } else { text }
}

/// Lowercase hex, as perf prints build ids.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The memory mappings of one process, by start address, not overlapping.
#[derive(Debug, Clone, Default)]
struct AddressSpace {
    mappings: BTreeMap<u64, FileMapping>,
    /// The pid in the name of the jitdump the process mapped (V8 maps
    /// `jit-PID.dump` as a marker for perf inject), if it did.
    jitdump_pid: Option<u32>,
}

impl AddressSpace {
    /// Adds a mapping; older mappings it overlaps are cut away, as the
    /// kernel replaces them (perf's `maps__fixup_overlappings`).
    fn insert(&mut self, mapping: FileMapping) {
        if mapping.end <= mapping.start {
            return;
        }
        if let Some(pid) = jitdump_pid_in_path(&mapping.path) {
            self.jitdump_pid = Some(pid);
        }
        let overlapping: Vec<u64> = self
            .mappings
            .range(..mapping.end)
            .rev()
            .take_while(|(_, existing)| existing.end > mapping.start)
            .map(|(&start, _)| start)
            .collect();
        for start in overlapping {
            let Some(existing) = self.mappings.remove(&start) else { continue };
            if existing.start < mapping.start {
                let before = FileMapping { end: mapping.start, ..existing.clone() };
                self.mappings.insert(before.start, before);
            }
            if existing.end > mapping.end {
                let after = FileMapping {
                    start: mapping.end,
                    file_offset: existing.file_offset.wrapping_add(mapping.end - existing.start),
                    ..existing
                };
                self.mappings.insert(after.start, after);
            }
        }
        self.mappings.insert(mapping.start, mapping);
    }

    /// The mapping containing `address`.
    fn find(&self, address: u64) -> Option<&FileMapping> {
        let (_, mapping) = self.mappings.range(..=address).next_back()?;
        mapping.contains(address).then_some(mapping)
    }

    /// What memory with no mapping is: V8's code pages when the process
    /// mapped a jitdump; else, when perf described the process's memory,
    /// no code a jitdump names (another program's, or a node run without
    /// `--perf-prof`: not to be named from another process's jitdump); else
    /// unknown.
    fn unmapped_kind(&self) -> ModuleKind {
        match self.mapped_jitdump() {
            MappedJitDump::Named(pid) => ModuleKind::JitDumpCode { pid },
            MappedJitDump::NoneMapped => ModuleKind::NoCode,
            MappedJitDump::NotKnown => ModuleKind::Unknown,
        }
    }

    /// The jitdump the process mapped: none when perf described its memory
    /// and no jitdump was in it, not known when perf described nothing.
    fn mapped_jitdump(&self) -> MappedJitDump {
        match self.jitdump_pid {
            Some(pid) => MappedJitDump::Named(pid),
            None if !self.mappings.is_empty() => MappedJitDump::NoneMapped,
            None => MappedJitDump::NotKnown,
        }
    }
}

/// The pid in a jitdump's path as V8 names it, `DIR/jit-PID.dump`
/// ([`LinuxPerfJitLogger::OpenJitDumpFile`](https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/diagnostics/perf-jit.cc)).
fn jitdump_pid_in_path(path: &str) -> Option<u32> {
    let name = path.rsplit('/').next()?;
    let digits = name.strip_prefix("jit-")?.strip_suffix(".dump")?;
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Why the running kernel's symbols cannot be used: a warning
/// ([`WarningKind::NoKernelSymbols`]), its kernel frames stay unnamed.
/// Displays as `/proc/kallsyms: CAUSE`.
#[derive(Debug, thiserror::Error)]
enum KernelSymbolsError {
    /// `/proc/kallsyms` cannot be read.
    #[error("{KALLSYMS}: {0}")]
    Unreadable(#[source] std::io::Error),
    /// It lists no function with an address: all addresses read as zero
    /// (`kernel.kptr_restrict`).
    #[error(
        "{KALLSYMS}: expected function symbols with their addresses, found none (addresses hidden: kernel.kptr_restrict)"
    )]
    Hidden,
}

/// The kernel's function symbols (`/proc/kallsyms`), by address.
#[derive(Debug, Default)]
struct KernelSymbols {
    /// (address, name), ascending.
    symbols: Vec<(u64, Box<str>)>,
}

impl KernelSymbols {
    /// Reads `/proc/kallsyms`; why not when it is unreadable or hidden (all
    /// zeros).
    fn load() -> Result<KernelSymbols, KernelSymbolsError> {
        let text = std::fs::read_to_string(KALLSYMS).map_err(KernelSymbolsError::Unreadable)?;
        let mut symbols: Vec<(u64, Box<str>)> = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let address = u64::from_str_radix(fields.next()?, 16).ok()?;
                let kind = fields.next()?;
                let name = fields.next()?;
                (address != 0 && matches!(kind, "t" | "T" | "w" | "W")).then(|| (address, name.into()))
            })
            .collect();
        if symbols.is_empty() {
            return Err(KernelSymbolsError::Hidden);
        }
        symbols.sort_by_key(|(address, _)| *address);
        Ok(KernelSymbols { symbols })
    }

    /// What to add to an address of a recording, whose kernel had the
    /// symbol `reference` at `recorded_address`, to look it up here: how far
    /// the kernel moved since (KASLR), 0 where `reference` is unknown.
    fn relocation(&self, reference: &str, recorded_address: u64) -> u64 {
        let running_address =
            self.symbols.iter().find(|(_, symbol)| **symbol == *reference).map(|(address, _)| *address);
        running_address.map_or(0, |running_address| running_address.wrapping_sub(recorded_address))
    }

    /// The function at `address` and the offset into it.
    fn lookup(&self, address: u64) -> Option<(&str, u64)> {
        let after = self.symbols.partition_point(|(start, _)| *start <= address);
        let (start, name) = self.symbols.get(after.checked_sub(1)?)?;
        Some((name, address - start))
    }
}

/// The name perf gives the kernel in build ids and frames.
const KERNEL_DSO: &str = "[kernel.kallsyms]";

/// The running kernel's symbols.
const KALLSYMS: &str = "/proc/kallsyms";

/// The running kernel's release (`uname -r`).
const KERNEL_RELEASE: &str = "/proc/sys/kernel/osrelease";

/// The running kernel's notes, with its build id.
const KERNEL_NOTES: &str = "/sys/kernel/notes";

/// The `NT_GNU_BUILD_ID` note in an ELF note section's bytes (native byte
/// order, as `/sys/kernel/notes`): `namesz, descsz, type`, then the name and
/// the description, each padded to 4 bytes.
fn gnu_build_id(notes: &[u8]) -> Option<Vec<u8>> {
    const NT_GNU_BUILD_ID: u32 = 3;
    let padded = |length: usize| length.checked_add(3).map(|length| length & !3);
    let mut rest = notes;
    while rest.len() >= 12 {
        let word = |index: usize| u32::from_ne_bytes([rest[index], rest[index + 1], rest[index + 2], rest[index + 3]]);
        let (name_size, description_size, note_type) = (word(0) as usize, word(4) as usize, word(8));
        let name_end = 12usize.checked_add(padded(name_size)?)?;
        let description_end = name_end.checked_add(padded(description_size)?)?;
        if description_end > rest.len() {
            return None;
        }
        if note_type == NT_GNU_BUILD_ID && rest.get(12..12 + name_size) == Some(b"GNU\0".as_slice()) {
            return Some(rest[name_end..name_end + description_size].to_vec());
        }
        rest = &rest[description_end..];
    }
    None
}

/// The state of one read.
struct PerfDataReader {
    /// The texts of the samples.
    interner: SampleInterner,
    /// The sample being built.
    sample: Sample,
    /// Frames named before (cleared when a mapping changes).
    frames: FxHashMap<FrameKey, Frame>,
    /// How many frames were named (numbered) so far.
    frames_numbered: u64,
    /// Interned thread texts by (pid, tid).
    thread_texts: FxHashMap<(i32, i32), ThreadTexts>,
    symbols: SymbolCache,
    /// The kernel symbols frames are named by: the running kernel's, or
    /// none when the recording is of another kernel.
    kernel: Option<Rc<Result<KernelSymbols, KernelSymbolsError>>>,
    /// The running kernel's symbols, once loaded.
    running_kernel: Option<Rc<Result<KernelSymbols, KernelSymbolsError>>>,
    /// The running kernel's symbols being read on another thread, from
    /// when the recording's events turn out to allow kernel frames: the
    /// kernel formats `/proc/kallsyms` slowly (30 ms), and the files the
    /// samples hit are read meanwhile ([`SymbolCache::read_ahead`]).
    kernel_read_ahead: Option<std::thread::JoinHandle<Result<KernelSymbols, KernelSymbolsError>>>,
    /// Whether symbols are read ahead at all.
    reads_ahead: bool,
    /// Address spaces by pid.
    processes: FxHashMap<i32, AddressSpace>,
    /// Thread names by tid.
    thread_names: FxHashMap<i32, String>,
    /// Build ids perf recorded, by path.
    recorded_build_ids: FxHashMap<Box<str>, Vec<u8>>,
    /// The kernel release perf recorded (`uname -r`, the OSRELEASE feature).
    recorded_kernel_release: Option<String>,
    /// Where the recorded kernel's text was: the symbol perf names in its
    /// kernel mapping (`[kernel.kallsyms]_text`) and that symbol's address
    /// (the mapping's page offset, perf's `ref_reloc_sym`).
    recorded_kernel_reference: Option<(Box<str>, u64)>,
    /// What to add to a recorded kernel address to find it in the running
    /// kernel's symbols: nonzero when the kernel was placed elsewhere at
    /// boot (KASLR) since the recording.
    kernel_relocation: u64,
    /// Files whose build id on disk differs from the recorded one.
    mismatched_files: FxHashSet<Box<str>>,
    /// Files already checked against their recorded build id.
    checked_files: FxHashSet<Box<str>>,
    /// The event samples must have: given, or the first one seen.
    selected_event: Option<String>,
    samples_read: u64,
    samples_filtered_out: u64,
    /// What was wrong with the perf.data and the files it names.
    diagnostics: Diagnostics,
    /// The perf.data, for warnings.
    path: PathBuf,
}

impl PerfDataReader {
    fn new(
        event: Option<&str>,
        symbols: SymbolCache,
        running_kernel: Option<Rc<Result<KernelSymbols, KernelSymbolsError>>>,
    ) -> PerfDataReader {
        PerfDataReader {
            interner: SampleInterner::new(),
            sample: Sample::default(),
            frames: FxHashMap::default(),
            frames_numbered: 0,
            thread_texts: FxHashMap::default(),
            symbols,
            kernel: None,
            running_kernel,
            kernel_read_ahead: None,
            reads_ahead: true,
            processes: FxHashMap::default(),
            thread_names: FxHashMap::default(),
            recorded_build_ids: FxHashMap::default(),
            recorded_kernel_release: None,
            recorded_kernel_reference: None,
            kernel_relocation: 0,
            mismatched_files: FxHashSet::default(),
            checked_files: FxHashSet::default(),
            selected_event: event.map(str::to_owned),
            samples_read: 0,
            samples_filtered_out: 0,
            diagnostics: Diagnostics::new(),
            path: PathBuf::new(),
        }
    }

    /// Reads every record of the file at `path`, warning about damage.
    fn read<R: Read + Seek>(&mut self, mut input: R, path: &Path, sink: &mut dyn SampleSink) -> Result<(), ErrorCause> {
        self.path = path.to_owned();
        let header = check_header(&mut input)?;
        let input = Rc::new(RefCell::new(input));
        let mut replaced_header = None;
        // Where the records the crate reads end, when not at the data end.
        let mut records_end = None;
        if let Some(header) = header.as_ref().filter(|header| header.is_cut()) {
            // Up to the last whole record, which the crate then reads as the
            // whole data section.
            let data_end = whole_records_end(&mut *input.borrow_mut(), header, header.file_length)?;
            self.diagnostics.warn(WarningKind::PerfDataCutShort, || {
                format!(
                    "{}: byte offset {}: expected a data section of {} bytes, the file ends {} bytes into it (cut short); \
                     the records up to byte offset {data_end} were used, the feature sections (build ids, event names) are lost",
                    path.display(),
                    header.data.offset,
                    header.data.size,
                    header.file_length.saturating_sub(header.data.offset)
                )
            });
            replaced_header = Some(header.cut_at(data_end));
            records_end = Some(data_end);
        } else if let Some(header) = header.as_ref().filter(|header| header.is_unfinished()) {
            let data_end = whole_records_end(&mut *input.borrow_mut(), header, header.file_length)?;
            self.diagnostics.warn(WarningKind::PerfDataUnfinished, || {
                format!(
                    "{}: byte offset 48: expected the size of the data section, found 0: the recording was not finished \
                     (perf record was killed before it could write the header); the whole records from byte offset {} \
                     up to byte offset {data_end} of the file's {} bytes were used, the feature sections (build ids, \
                     event names) are missing",
                    path.display(),
                    header.data.offset,
                    header.file_length
                )
            });
            replaced_header = Some(header.cut_at(data_end));
            records_end = Some(data_end);
        }
        if let Some(header) = &header {
            // Records the crate would mishandle end the reading, as a broken
            // one does: an AUXTRACE record declaring more trace data than
            // there is (the crate allocates it before reading: a damaged
            // size would abort the process), a FINISHED_ROUND record with a
            // body (the crate would lose track of the records after it), and
            // compressed records expanding past the limits of
            // `perf_data_compressed` (the crate decompresses each whole).
            let end = records_end.unwrap_or_else(|| header.data_end());
            let mut expansion_check = ExpansionCheck::new(header.little_endian);
            let mut expanded = None;
            let mut walk = |expansion_check: &mut ExpansionCheck| {
                walk_records(
                    &mut *input.borrow_mut(),
                    header.data.offset,
                    end,
                    header.little_endian,
                    |offset, record_type, body| match expansion_check.visit(record_type, body) {
                        Ok(()) => true,
                        Err(expansion) => {
                            expanded = Some((offset, expansion.to_string()));
                            false
                        }
                    },
                )
            };
            let walked = walk(&mut expansion_check)?;
            if expansion_check.is_undecided() {
                // The zstd headers alone could not tell: decompress.
                walk(&mut ExpansionCheck::decompressing(header.little_endian))?;
            }
            // A compressed record going too far comes first: the walk that
            // decompresses stops there.
            let problem = if expanded.is_some() {
                expanded
            } else if let Some(trace_size) = walked.auxtrace_overrun {
                Some((
                    walked.offset,
                    format!(
                        "expected an AUXTRACE record and the {trace_size} bytes of trace data it declares, the data \
                         section ends {} bytes after its start",
                        end - walked.offset
                    ),
                ))
            } else {
                walked.finished_round_size.map(|size| {
                    (
                        walked.offset,
                        format!(
                            "expected a FINISHED_ROUND record of {RECORD_HEADER_SIZE} bytes (a header alone), found \
                             one of {size} bytes"
                        ),
                    )
                })
            };
            if let Some((offset, problem)) = problem {
                self.diagnostics.warn(WarningKind::PerfDataBrokenRecord, || {
                    format!("{}: byte offset {offset}: {problem}; the records before it were used", path.display())
                });
                replaced_header = Some(header.cut_at(offset));
            }
        }
        let (mut perf_file, mut record_iter) = open_records(&input, replaced_header)?;
        if let Ok(build_ids) = perf_file.build_ids() {
            for info in build_ids.into_values() {
                let path: Box<str> = String::from_utf8_lossy(&info.path).into();
                self.recorded_build_ids.insert(path, info.build_id);
            }
        }
        self.recorded_kernel_release = perf_file.os_release().ok().flatten().map(str::to_string);
        self.read_symbols_ahead(&perf_file);
        let event_names: Vec<String> =
            perf_file.event_attributes().iter().map(|attribute| attribute.name().unwrap_or("").to_string()).collect();
        let mut bad_records = 0u64;
        let mut unparsable = Vec::new();
        // Records read, and how many a second read up to a broken record
        // skips (they were folded).
        let (mut records_read, mut records_to_skip, mut read_again) = (0u64, 0u64, false);
        loop {
            let record = match record_iter.next_record(&mut perf_file) {
                Ok(Some(record)) => record,
                Ok(None) => break,
                Err(error) => {
                    let position = input.borrow_mut().stream_position()?;
                    // Where the chain of record sizes breaks, when it does.
                    let broken = header.as_ref().filter(|_| !read_again).and_then(|header| {
                        let end = whole_records_end(&mut *input.borrow_mut(), header, header.data_end()).ok()?;
                        (end < header.data_end()).then_some((header, end))
                    });
                    self.diagnostics.warn(WarningKind::PerfDataBrokenRecord, || match broken {
                        Some((_, offset)) => format!(
                            "{}: byte offset {offset}: expected a whole record, {error}; the records before it were used",
                            path.display()
                        ),
                        None => format!("{}: byte offset {position}: expected a whole record, {error}", path.display()),
                    });
                    let Some((header, offset)) = broken else { break };
                    // The crate drops the records it read ahead of the broken
                    // one (it sorts each round of records by time): read
                    // again up to it, skipping what was folded.
                    (perf_file, record_iter) = open_records(&input, Some(header.cut_at(offset)))?;
                    (records_to_skip, read_again) = (records_read, true);
                    continue;
                }
            };
            records_read += 1;
            if records_to_skip > 0 {
                records_to_skip -= 1;
                continue;
            }
            let PerfFileRecord::EventRecord { attr_index, record } = record else { continue };
            let parsed = match mmap2_build_id_problem(&record).map_or_else(|| record.parse(), Err) {
                Ok(parsed) => parsed,
                Err(error) => {
                    bad_records += 1;
                    if unparsable.len() < EXAMPLES_PER_KIND {
                        let body = record.data.as_slice().into_owned();
                        unparsable.push(UnparsableRecord {
                            record_type: record.record_type.0,
                            body,
                            error: error.to_string(),
                        });
                    }
                    continue;
                }
            };
            match parsed {
                EventRecord::Sample(sample) => {
                    let event = event_names.get(attr_index).map_or("", String::as_str);
                    self.sample(&sample, event, sink);
                }
                // Only code matters for symbols.
                EventRecord::Mmap(mmap) if mmap.is_executable => {
                    self.map(mmap.pid, mmap.address, mmap.length, mmap.page_offset, &mmap.path);
                }
                EventRecord::Mmap2(mmap) if mmap.protection & PROT_EXEC != 0 => {
                    self.map(mmap.pid, mmap.address, mmap.length, mmap.page_offset, &mmap.path);
                }
                EventRecord::Comm(comm) => self.comm(&comm),
                EventRecord::Fork(fork) => {
                    if fork.pid != fork.ppid {
                        let parent = self.processes.get(&fork.ppid).cloned().unwrap_or_default();
                        self.processes.insert(fork.pid, parent);
                        self.forget_frames(fork.pid, 0..u64::MAX);
                    }
                    if let Some(name) = self.thread_names.get(&fork.ptid).cloned() {
                        self.thread_names.entry(fork.tid).or_insert(name);
                    }
                    self.thread_texts.retain(|&(_, tid), _| tid != fork.tid);
                }
                _ => {}
            }
        }
        drop(record_iter);
        if bad_records > 0 {
            let offsets = match &header {
                Some(header) => locate_records(&mut *input.borrow_mut(), header, &unparsable),
                None => vec![None; unparsable.len()],
            };
            let examples = unparsable.iter().zip(offsets).map(|(record, offset)| {
                let place = offset.map(|offset| format!(" byte offset {offset}:")).unwrap_or_default();
                format!(
                    "{}:{place} {:?} record of {} bytes: expected the fields its event's sample format declares, {}",
                    path.display(),
                    RecordType(record.record_type),
                    RECORD_HEADER_SIZE + record.body.len() as u64,
                    record.error
                )
            });
            self.diagnostics.add(WarningKind::PerfDataUnparsableRecord, bad_records, examples);
        }
        Ok(())
    }

    fn map(&mut self, pid: i32, address: u64, length: u64, page_offset: u64, path: &RawData<'_>) {
        let path: Box<str> = one_line(String::from_utf8_lossy(&path.as_slice()).into_owned()).into();
        if pid == -1
            && let Some(reference) = path.strip_prefix(KERNEL_DSO)
            && !reference.is_empty()
        {
            // perf_event__synthesize_kernel_mmap: the kernel's text, with
            // the address of its reference symbol as the page offset.
            self.recorded_kernel_reference = Some((reference.into(), page_offset));
        }
        let mapping =
            FileMapping { start: address, end: address.saturating_add(length), file_offset: page_offset, path };
        // A jitdump mapped changes what the process's unmapped memory is
        // (`AddressSpace::unmapped_kind`): every frame is named again.
        let range = match jitdump_pid_in_path(&mapping.path) {
            Some(_) => 0..u64::MAX,
            None => mapping.start..mapping.end,
        };
        self.processes.entry(pid).or_default().insert(mapping);
        self.forget_frames(pid, range);
    }

    /// Forgets the frames named in `range` of `pid`'s address space (a
    /// mapping there changed), not the others: a process mapping a file
    /// would otherwise have every frame named again.
    fn forget_frames(&mut self, pid: i32, range: std::ops::Range<u64>) {
        self.frames.retain(|key, _| key.mode == Mode::Kernel || key.pid != pid || !range.contains(&key.address));
    }

    fn comm(&mut self, comm: &CommOrExecRecord<'_>) {
        let name = one_line(String::from_utf8_lossy(&comm.name.as_slice()).into_owned());
        if comm.is_execve && comm.pid == comm.tid {
            // A new program: the old address space is gone.
            self.processes.insert(comm.pid, AddressSpace::default());
            self.forget_frames(comm.pid, 0..u64::MAX);
        }
        self.thread_names.insert(comm.tid, name);
        self.thread_texts.retain(|&(_, tid), _| tid != comm.tid);
    }

    fn sample(&mut self, record: &SampleRecord<'_>, event: &str, sink: &mut dyn SampleSink) {
        self.samples_read += 1;
        let selected = self.selected_event.get_or_insert_with(|| event.to_string());
        if selected != event {
            self.samples_filtered_out += 1;
            return;
        }
        let pid = record.pid.unwrap_or(-1);
        let tid = record.tid.unwrap_or(pid);
        let thread = self.thread_texts(pid, tid, event);
        let mut sample = std::mem::take(&mut self.sample);
        sample.clear();
        sample.pid = Some(pid as u32);
        sample.tid = Some(tid as u32);
        sample.comm = Some(thread.comm);
        sample.pid_text = Some(thread.pid_text);
        sample.tid_text = Some(thread.tid_text);
        sample.event = Some(thread.event);
        sample.cpu = record.cpu;
        sample.time = record.timestamp.map(SampleTime::exact);
        sample.clock_nanoseconds = record.timestamp;
        sample.period = record.period;
        sample.input_position = self.samples_read;
        match &record.callchain {
            Some(callchain) => {
                // perf_callchain_store's context markers say whose addresses
                // follow; the first address after each is the instruction
                // pointer of that mode (the user one saved at kernel entry).
                let mut mode = Mode::of_address(record.ip.unwrap_or(0));
                let mut next_kind = AddressKind::InstructionPointer;
                for index in 0..callchain.len() {
                    let Some(address) = callchain.get(index) else { break };
                    if address >= PERF_CONTEXT_MAX {
                        match address {
                            PERF_CONTEXT_KERNEL => mode = Mode::Kernel,
                            PERF_CONTEXT_USER => mode = Mode::User,
                            _ => {}
                        }
                        if address == PERF_CONTEXT_USER || sample.frames.is_empty() {
                            next_kind = AddressKind::InstructionPointer;
                        }
                        continue;
                    }
                    let frame = self.frame(pid, address, mode, next_kind);
                    sample.frames.push(frame);
                    next_kind = AddressKind::ReturnAddress;
                }
            }
            None => {
                if let Some(address) = record.ip {
                    let frame = self.frame(pid, address, Mode::of_address(address), AddressKind::InstructionPointer);
                    sample.frames.push(frame);
                }
            }
        }
        sink.add_sample(&sample, &self.interner);
        self.sample = sample;
    }

    /// The interned thread texts of a sample.
    fn thread_texts(&mut self, pid: i32, tid: i32, event: &str) -> ThreadTexts {
        if let Some(texts) = self.thread_texts.get(&(pid, tid)) {
            return *texts;
        }
        let comm = self.thread_names.get(&tid).map_or(":-1", String::as_str);
        let texts = ThreadTexts {
            comm: self.interner.intern(comm),
            pid_text: self.interner.intern(&(pid as u32).to_string()),
            tid_text: self.interner.intern(&(tid as u32).to_string()),
            event: self.interner.intern(event),
        };
        self.thread_texts.insert((pid, tid), texts);
        texts
    }

    /// One frame, named as perf script names it.
    fn frame(&mut self, pid: i32, address: u64, mode: Mode, address_kind: AddressKind) -> Frame {
        let key = FrameKey { pid, address, mode };
        if let Some(frame) = self.frames.get(&key) {
            return Frame { address_kind, ..*frame };
        }
        // Numbered on, not from 0, after the frames are forgotten (a
        // mapping changed): a number must not be reused.
        let number = u32::try_from(self.frames_numbered).ok().map(FrameNumber::new);
        self.frames_numbered += 1;
        let frame = Frame { address_kind, number, ..self.name_frame(pid, address, mode) };
        self.frames.insert(key, frame);
        frame
    }

    /// Names one frame as perf script would print it.
    fn name_frame(&mut self, pid: i32, address: u64, mode: Mode) -> Frame {
        let frame = |module: ModuleId, symbol: &str, symbol_offset: Option<u64>, interner: &mut SampleInterner| Frame {
            address,
            address_kind: AddressKind::ReturnAddress,
            module,
            symbol: Some(interner.intern(symbol)),
            symbol_offset,
            address_text: None,
            number: None,
        };
        if mode == Mode::Kernel {
            if self.kernel.is_none() {
                self.kernel = Some(self.load_kernel_symbols());
            }
            let module = self.interner.module(KERNEL_DSO, ModuleKind::Kernel);
            let hit = self
                .kernel
                .as_deref()
                .and_then(|kernel| kernel.as_ref().ok())
                .and_then(|kernel| kernel.lookup(address.wrapping_add(self.kernel_relocation)));
            return match hit {
                Some((name, offset)) => frame(module, name, Some(offset), &mut self.interner),
                None => frame(module, "[unknown]", None, &mut self.interner),
            };
        }
        let space = self.processes.get(&pid);
        let Some(mapping) = space.and_then(|space| space.find(address)) else {
            // V8's code pages: made executable by mprotect, unseen by perf.
            let kind = space.map_or(ModuleKind::Unknown, AddressSpace::unmapped_kind);
            let module = self.interner.module("[unknown]", kind);
            return frame(module, "[unknown]", None, &mut self.interner);
        };
        let is_anonymous = mapping.path.starts_with("//anon") || mapping.path.starts_with("[anon");
        // perf script prints an address in a file as the file's own address
        // (`map__map_ip`: minus the mapping's start, plus its file offset);
        // anonymous memory keeps the runtime address.
        let address_in_file = address.wrapping_sub(mapping.start).wrapping_add(mapping.file_offset);
        let address_text = (!is_anonymous && address_in_file != address)
            .then(|| self.interner.intern(&format!("{address_in_file:x}")));
        let in_file = |frame: Frame| Frame { address_text, ..frame };
        if !mapping.has_symbols() {
            let module = if is_anonymous {
                // perf's name for anonymous executable memory (map__new).
                let jitdump = space.map_or(MappedJitDump::NotKnown, AddressSpace::mapped_jitdump);
                self.interner
                    .module(&format!("/tmp/perf-{pid}.map"), ModuleKind::PerfMap { pid: Some(pid as u32), jitdump })
            } else {
                self.interner.module_at_path(&mapping.path)
            };
            return in_file(frame(module, "[unknown]", None, &mut self.interner));
        }
        let mapping = mapping.clone();
        let module = self.interner.module_at_path(&mapping.path);
        if !self.build_id_matches(&mapping.path) {
            return in_file(frame(module, "[unknown]", None, &mut self.interner));
        }
        in_file(match self.symbols.symbolize(&mapping, address) {
            Some(hit) => frame(module, hit.name, Some(hit.offset), &mut self.interner),
            None => frame(module, "[unknown]", None, &mut self.interner),
        })
    }

    /// Why the recording is of another kernel than the running one, when
    /// it is: its build id differs from `/sys/kernel/notes`, or, where perf
    /// recorded none, its release differs from the running one.
    fn other_kernel(&self) -> Option<String> {
        let recorded = self.recorded_build_ids.get(KERNEL_DSO);
        let running = std::fs::read(KERNEL_NOTES).ok().and_then(|notes| gnu_build_id(&notes));
        if let (Some(recorded), Some(running)) = (recorded, &running)
            && !recorded.starts_with(running)
        {
            return Some(format!(
                "{KERNEL_DSO}: build id {} in the recording, {} running ({KERNEL_NOTES})",
                hex(&recorded[..running.len().min(recorded.len())]),
                hex(running)
            ));
        }
        let running_release = std::fs::read_to_string(KERNEL_RELEASE).ok();
        if recorded.is_none()
            && let (Some(recorded), Some(running)) = (&self.recorded_kernel_release, running_release)
            && recorded.trim() != running.trim()
        {
            return Some(format!(
                "{KERNEL_DSO}: release {} in the recording, {} running ({KERNEL_RELEASE}), and no build id recorded",
                recorded.trim(),
                running.trim()
            ));
        }
        None
    }

    /// Starts reading, on other threads, the symbols the samples will need:
    /// the files perf lists as hit by samples (its build ids), largest
    /// first, and the running kernel's when the events allow kernel frames
    /// and the recording is of this kernel.
    fn read_symbols_ahead(&mut self, perf_file: &PerfFile) {
        if !self.reads_ahead {
            return;
        }
        let size = |path: &PathBuf| std::fs::metadata(path).map_or(0, |metadata| metadata.len());
        let mut files: Vec<PathBuf> = self
            .recorded_build_ids
            .keys()
            // Not the kernel's modules (kallsyms names their code), nor the
            // images `perf inject --jit` writes, one per code object.
            .filter(|path| (path.starts_with('/') && ModuleKind::of_path(path) == ModuleKind::File) || &***path == VDSO)
            .map(|path| PathBuf::from(&**path))
            .collect();
        files.sort_by_cached_key(|path| (std::cmp::Reverse(size(path)), path.clone()));
        self.symbols.read_ahead(files);
        let kernel_frames_possible =
            perf_file.event_attributes().iter().any(|event| !event.attr.flags.contains(AttrFlags::EXCLUDE_KERNEL));
        if kernel_frames_possible
            && self.running_kernel.is_none()
            && self.kernel_read_ahead.is_none()
            && self.other_kernel().is_none()
        {
            self.kernel_read_ahead =
                std::thread::Builder::new().name("kallsyms".to_string()).spawn(KernelSymbols::load).ok();
        }
    }

    /// This machine's kernel symbols, unless perf recorded another kernel:
    /// its build id differs from `/sys/kernel/notes`, or, where perf
    /// recorded none, its release differs from the running one. Where the
    /// kernel was placed elsewhere at boot since, its symbols are moved to
    /// the recorded addresses, as perf does (`kallsyms__delta`).
    fn load_kernel_symbols(&mut self) -> Rc<Result<KernelSymbols, KernelSymbolsError>> {
        if let Some(other_kernel) = self.other_kernel() {
            self.diagnostics.warn(WarningKind::OtherKernel, || format!("{}: {other_kernel}", self.path.display()));
            return Rc::new(Ok(KernelSymbols::default()));
        }
        let read_ahead = self.kernel_read_ahead.take();
        let running = self
            .running_kernel
            .get_or_insert_with(|| {
                let read = read_ahead.and_then(|thread| thread.join().ok());
                Rc::new(read.unwrap_or_else(KernelSymbols::load))
            })
            .clone();
        match running.as_ref() {
            Err(problem) => self.diagnostics.warn(WarningKind::NoKernelSymbols, || format!("{KERNEL_DSO}: {problem}")),
            Ok(symbols) => {
                if let Some((reference, recorded_address)) = &self.recorded_kernel_reference {
                    self.kernel_relocation = symbols.relocation(reference, *recorded_address);
                }
            }
        }
        running
    }

    /// Whether the file on disk is the one perf saw (when perf recorded its
    /// build id and the file has one).
    fn build_id_matches(&mut self, path: &str) -> bool {
        if self.mismatched_files.contains(path) {
            return false;
        }
        if self.checked_files.insert(path.into()) {
            let recorded = self.recorded_build_ids.get(path);
            let on_disk = self.symbols.get(Path::new(path)).and_then(|symbols| symbols.build_id.clone());
            if let (Some(recorded), Some(on_disk)) = (recorded, on_disk) {
                // perf pads build ids to 20 bytes.
                if !recorded.starts_with(&on_disk) {
                    self.diagnostics.warn(WarningKind::BuildIdMismatch, || {
                        format!(
                            "{path}: build id {} in the recording, {} on disk",
                            hex(&recorded[..on_disk.len().min(recorded.len())]),
                            hex(&on_disk)
                        )
                    });
                    self.mismatched_files.insert(path.into());
                    return false;
                }
            }
        }
        true
    }

    /// The summary, and the caches to keep for the next file.
    fn finish(mut self) -> (PerfDataSummary, SymbolCache, Option<Rc<Result<KernelSymbols, KernelSymbolsError>>>) {
        // Each file reports the binaries it could not use.
        self.diagnostics.merge(&std::mem::take(&mut self.symbols.diagnostics));
        let summary = PerfDataSummary {
            samples_read: self.samples_read,
            samples_filtered_out: self.samples_filtered_out,
            event: self.selected_event,
            diagnostics: self.diagnostics,
        };
        (summary, self.symbols, self.running_kernel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::perf_data::Section;

    fn mapping(start: u64, end: u64, file_offset: u64, path: &str) -> FileMapping {
        FileMapping { start, end, file_offset, path: path.into() }
    }

    #[test]
    fn unmapped_memory_is_the_mapped_jitdumps_code_or_no_jitdumps() {
        assert_eq!(jitdump_pid_in_path("/tmp/out/jit-17052.dump"), Some(17052));
        assert_eq!(jitdump_pid_in_path("jit-7.dump"), Some(7));
        for not_a_jitdump in ["/tmp/jit-.dump", "/tmp/jit-12.dump.gz", "/tmp/xjit-12.dump", "/tmp/jit-1a.dump"] {
            assert_eq!(jitdump_pid_in_path(not_a_jitdump), None, "{not_a_jitdump}");
        }
        // Nothing known of the process: perhaps JIT code of any jitdump.
        let mut space = AddressSpace::default();
        assert_eq!(space.unmapped_kind(), ModuleKind::Unknown);
        // Its memory known, no jitdump in it (npm without --perf-prof, sh).
        space.insert(mapping(0x1000, 0x2000, 0, "/usr/bin/node"));
        assert_eq!(space.unmapped_kind(), ModuleKind::NoCode);
        assert_eq!(space.mapped_jitdump(), MappedJitDump::NoneMapped);
        // V8 mapped its jitdump (in a container, under another pid).
        space.insert(mapping(0x7f00_0000, 0x7f00_1000, 0, "/app/jit-1.dump"));
        assert_eq!(space.unmapped_kind(), ModuleKind::JitDumpCode { pid: 1 });
        assert_eq!(space.mapped_jitdump(), MappedJitDump::Named(1));
    }

    #[test]
    fn kernel_addresses_of_a_recording_before_the_kernel_moved_are_looked_up_where_it_is_now() {
        let symbols = |text_at: u64| KernelSymbols {
            symbols: vec![(text_at, "_text".into()), (text_at + 0x100, "schedule".into())],
        };
        // Recorded with _text at 0xffffffff81000000; booted since at
        // 0xffffffff9a200000.
        let moved = symbols(0xffff_ffff_9a20_0000);
        let relocation = moved.relocation("_text", 0xffff_ffff_8100_0000);
        assert_eq!(moved.lookup(0xffff_ffff_8100_0105u64.wrapping_add(relocation)), Some(("schedule", 5)));
        let unmoved = symbols(0xffff_ffff_8100_0000);
        assert_eq!(unmoved.relocation("_text", 0xffff_ffff_8100_0000), 0);
        assert_eq!(unmoved.relocation("_stext", 0xffff_ffff_8100_0000), 0, "a reference it does not have");
        assert_eq!(unmoved.lookup(0xffff_ffff_8100_0105), Some(("schedule", 5)));
    }

    #[test]
    fn kernel_symbol_problems_name_kallsyms() {
        let unreadable = KernelSymbolsError::Unreadable(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert_eq!(unreadable.to_string(), "/proc/kallsyms: permission denied");
        assert_eq!(
            KernelSymbolsError::Hidden.to_string(),
            "/proc/kallsyms: expected function symbols with their addresses, found none \
             (addresses hidden: kernel.kptr_restrict)"
        );
    }

    #[test]
    fn reads_the_gnu_build_id_note() {
        let mut notes = Vec::new();
        for (name, note_type, description) in [(&b"Xen\0"[..], 1u32, &[9u8; 3][..]), (b"GNU\0", 3, &[0xab; 20])] {
            notes.extend((name.len() as u32).to_ne_bytes());
            notes.extend((description.len() as u32).to_ne_bytes());
            notes.extend(note_type.to_ne_bytes());
            notes.extend(name);
            notes.extend(description);
            notes.resize(notes.len().next_multiple_of(4), 0);
        }
        assert_eq!(gnu_build_id(&notes), Some(vec![0xab; 20]));
        assert_eq!(gnu_build_id(&notes[..notes.len() - 1]), None);
        assert_eq!(gnu_build_id(&[0xff; 12]), None);
        if let Ok(running) = std::fs::read("/sys/kernel/notes") {
            assert!(gnu_build_id(&running).is_some_and(|id| id.len() == 20));
        }
    }

    #[test]
    fn unreadable_headers_are_typed_errors_naming_the_file_and_offset() {
        struct Discard;
        impl SampleSink for Discard {
            fn add_sample(&mut self, _: &Sample, _: &SampleInterner) {}
        }
        let read = |bytes: &[u8]| PerfDataSource::new().read_bytes(bytes, Path::new("x.data"), None, &mut Discard);
        let error = read(b"PERFILE2").expect_err("a header cut short");
        assert!(matches!(
            error.cause,
            ErrorCause::PerfData(PerfDataError::SectionOutsideFile { section: Section::Header, size: 16, .. })
        ));
        assert_eq!(
            error.to_string(),
            "x.data: the header section (16 bytes at byte offset 0) does not fit in the file (8 bytes)"
        );
        let mut cut = vec![0u8; 50];
        cut[..8].copy_from_slice(b"PERFILE2");
        cut[8..16].copy_from_slice(&104u64.to_le_bytes());
        assert_eq!(
            read(&cut).expect_err("a file's header cut short").to_string(),
            "x.data: the header section (104 bytes at byte offset 0) does not fit in the file (50 bytes)"
        );
        let mut pipe = cut.clone();
        pipe[8..16].copy_from_slice(&16u64.to_le_bytes());
        let error = read(&pipe).expect_err("a pipe's header");
        assert!(matches!(error.cause, ErrorCause::PerfData(PerfDataError::PipeMode)), "{error:?}");
        let mut header = vec![0u8; 104];
        header[..8].copy_from_slice(b"PERFILE2");
        header[16..24].copy_from_slice(&8u64.to_le_bytes());
        let error = read(&header).expect_err("an implausible attribute size");
        assert!(matches!(error.cause, ErrorCause::PerfData(PerfDataError::AttributeSize { size: 8 })));
        assert_eq!(error.to_string(), "x.data: byte offset 16: implausible attribute size 8");
        let error = read(&[b'x'; 200]).expect_err("not perf's format");
        assert!(matches!(error.cause, ErrorCause::PerfData(PerfDataError::Format(_))), "{error:?}");
        assert!(error.to_string().starts_with("x.data: "), "{error}");
    }

    /// Found by the `perf_data` fuzz target (an abort: 40 PB asked for the
    /// event ids): an event type whose attribute declares 102 bytes is read
    /// as 96 by the attribute reader, and the ids section after it from 6
    /// bytes too early. Now an error naming the attribute's offset.
    #[test]
    fn attributes_the_reader_would_not_read_whole_are_refused() {
        struct Discard;
        impl SampleSink for Discard {
            fn add_sample(&mut self, _: &Sample, _: &SampleInterner) {}
        }
        let file = |declared_size: u32| {
            let mut bytes = vec![0u8; 104];
            bytes[..8].copy_from_slice(b"PERFILE2");
            let mut word = |offset: usize, value: u64| bytes[offset..offset + 8].copy_from_slice(&value.to_le_bytes());
            word(8, 104);
            word(16, 144); // attr_size
            word(40, 264); // data: offset, size 0
            word(56, 104); // event types: offset, size of one entry
            word(64, 160);
            let mut entry = vec![0u8; 160];
            entry[4..8].copy_from_slice(&declared_size.to_le_bytes());
            entry[144..152].copy_from_slice(&0u64.to_le_bytes()); // its ids: offset 0, 8 bytes
            entry[152..160].copy_from_slice(&8u64.to_le_bytes());
            bytes.extend(entry);
            bytes
        };
        let read = |bytes: &[u8]| PerfDataSource::new().read_bytes(bytes, Path::new("x.data"), None, &mut Discard);
        let error = read(&file(102)).expect_err("an attribute of 102 bytes");
        assert!(matches!(
            error.cause,
            ErrorCause::PerfData(PerfDataError::EventAttributeSize { offset: 104, size: 102, slot: 144 })
        ));
        assert!(error.to_string().starts_with("x.data: byte offset 104: an event attribute of 102 bytes"), "{error}");
        // A size the reader reads whole (perf_event_attr's 136 today): an
        // empty recording, read.
        let summary = read(&file(136)).expect("an empty recording");
        assert_eq!(summary.samples_read, 0);
    }

    #[test]
    fn new_mappings_cut_old_ones() {
        let mut space = AddressSpace::default();
        space.insert(mapping(0x1000, 0x5000, 0, "/old"));
        space.insert(mapping(0x2000, 0x3000, 0x10, "/new"));
        assert_eq!(space.find(0x1fff).unwrap(), &mapping(0x1000, 0x2000, 0, "/old"));
        assert_eq!(space.find(0x2000).unwrap().path.as_ref(), "/new");
        assert_eq!(space.find(0x3000).unwrap(), &mapping(0x3000, 0x5000, 0x2000, "/old"));
        assert_eq!(space.find(0x5000), None);
        assert_eq!(space.find(0xfff), None);
        space.insert(mapping(0x800, 0x6000, 0, "/all"));
        assert_eq!(space.mappings.len(), 1);
        space.insert(mapping(0x10, 0x10, 0, "/empty"));
        assert_eq!(space.mappings.len(), 1);
    }
}
