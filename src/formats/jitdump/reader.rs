//! The record loop: frames records by their `total_size` and decodes the ones
//! asked for.

use std::io::{self, Read};
use std::path::Path;

use object::Endianness;
use object::read::Bytes;

use super::debug_info::parse_debug_info;
use super::error::{JitDumpError, JitDumpWarning, ReadPathCause, ReadPathError};
use super::header::{Header, MAGIC};
use super::record::{
    CodeLoad, DebugInfo, JitDumpRecordKind, NameInterner, RECORD_PREFIX_SIZE, RecordPrefix, RecordProblem,
    parse_code_load, parse_code_move,
};
use super::v8_mis_sized::{DebugInfoFraming, MisSizedDebugInfo, PROBE_BYTES, frame_debug_info};

/// What to decode besides CODE_LOAD and CODE_MOVE records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// Decode DEBUG_INFO records into [`JitDump::debug_infos`]. Off by
    /// default: their bodies are then not even looked at.
    pub debug_info: bool,
}

/// Everything read from one jitdump file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitDump {
    /// The file header.
    pub header: Header,
    /// CODE_LOAD records, in file order.
    pub loads: Vec<CodeLoad>,
    /// DEBUG_INFO records in file order; empty unless
    /// [`ReadOptions::debug_info`]. Each describes the next CODE_LOAD in the
    /// file with the same code address.
    pub debug_infos: Vec<DebugInfo>,
    /// Truncation, malformed records and DEBUG_INFO resynchronizations, each
    /// with its byte offset.
    pub warnings: Vec<JitDumpWarning>,
    /// DEBUG_INFO records whose size V8 got wrong (cross-script inlining,
    /// node 26 and Deno), read by their entries: V8's known defect, not
    /// damage, so not among the warnings.
    pub mis_sized_debug_infos: Vec<MisSizedDebugInfo>,
    /// Well-framed records whose content is not returned: CODE_CLOSE,
    /// UNWINDING_INFO, unknown ids, and DEBUG_INFO when
    /// [`ReadOptions::debug_info`] is off.
    pub skipped_records: u64,
}

impl JitDump {
    /// Whether reading stopped before the file's end: cut short, or a
    /// record size that cannot be right. Code loaded later is missing (its
    /// process's code log still has it).
    pub fn is_cut_short(&self) -> bool {
        self.warnings.iter().any(JitDumpWarning::stops_reading)
    }
}

/// Reads a jitdump from memory (a whole file, possibly memory-mapped).
///
/// Only an unusable header is an error. After it, every whole record is used;
/// a cut or unframeable record stops reading with a warning, a malformed record
/// is skipped with a warning. Never panics. Without
/// [`ReadOptions::debug_info`] only record prefixes, CODE_LOAD fixed fields and
/// names, and CODE_MOVE bodies are read; code bytes are never touched.
pub fn read(bytes: &[u8], options: &ReadOptions) -> Result<JitDump, JitDumpError> {
    let mut reader = Reader::new(Header::parse(bytes)?, options);
    // Header::parse checked that the header size is within the file.
    let start = usize::try_from(reader.dump.header.header_size).unwrap_or(usize::MAX);
    reader.read_records(bytes, 0, start, true);
    Ok(reader.dump)
}

/// [`read`], telling `progress` every few megabytes the offset before which
/// the file has been read (nothing read is kept but what the records say),
/// so that a caller reading a memory-mapped file can let go of those pages.
pub fn read_with_progress(
    bytes: &[u8],
    options: &ReadOptions,
    progress: impl FnMut(usize),
) -> Result<JitDump, JitDumpError> {
    read_through_windows(bytes, options, STREAM_WINDOW_BYTES, progress, None)
}

/// [`read_with_progress`], handing each CODE_LOAD to `on_load` as it is read
/// instead of keeping it in [`JitDump::loads`] (left empty): a caller that
/// keeps loads its own way does not hold them twice.
pub fn read_loads_with_progress(
    bytes: &[u8],
    options: &ReadOptions,
    progress: impl FnMut(usize),
    on_load: &mut dyn FnMut(CodeLoad),
) -> Result<JitDump, JitDumpError> {
    read_through_windows(bytes, options, STREAM_WINDOW_BYTES, progress, Some(on_load))
}

/// [`read_with_progress`] in windows of `window_bytes`.
fn read_through_windows(
    bytes: &[u8],
    options: &ReadOptions,
    window_bytes: usize,
    mut progress: impl FnMut(usize),
    on_load: Option<&mut dyn FnMut(CodeLoad)>,
) -> Result<JitDump, JitDumpError> {
    let mut reader = Reader::new(Header::parse(bytes)?, options);
    reader.load_sink = on_load;
    let mut next = usize::try_from(reader.dump.header.header_size).unwrap_or(usize::MAX);
    let mut window = window_bytes;
    loop {
        // Windows of the file as read_stream reads it, without the copy.
        let window_end = next.saturating_add(window).min(bytes.len());
        let at_end = window_end == bytes.len();
        let stopped = reader.read_records(&bytes[..window_end], 0, next, at_end);
        if at_end || reader.stopped_for_good {
            return Ok(reader.dump);
        }
        // A record longer than the window grows it.
        window = if stopped == next { window.saturating_mul(2) } else { window_bytes };
        next = stopped;
        progress(next);
    }
}

/// The size of the window [`read_stream`] reads through.
const STREAM_WINDOW_BYTES: usize = 4 << 20;

/// Reads a jitdump from a stream through a window of a few megabytes, so that
/// memory does not grow with the file (whose code bytes are most of it). The
/// result, warnings and their byte offsets included, is what [`read`] gives
/// for the whole file. The outer error is the stream's, the inner one an
/// unusable header.
pub fn read_stream<R: Read>(input: R, options: &ReadOptions) -> io::Result<Result<JitDump, JitDumpError>> {
    read_stream_through(input, options, STREAM_WINDOW_BYTES)
}

/// [`read_stream`] with a window of `window_bytes`.
fn read_stream_through<R: Read>(
    mut input: R,
    options: &ReadOptions,
    window_bytes: usize,
) -> io::Result<Result<JitDump, JitDumpError>> {
    // Grown by reading, not reserved: a small jitdump needs a small window.
    let mut window = Vec::new();
    let mut at_end = fill(&mut input, &mut window, window_bytes)?;
    // The header and the records before the window ends; a header longer
    // than the window is read whole first.
    while !at_end && window.len() < declared_header_size(&window) {
        at_end = fill(&mut input, &mut window, window_bytes)?;
    }
    if at_end {
        return Ok(read(&window, options));
    }
    let header = match Header::parse(&window) {
        Ok(header) => header,
        Err(error) => return Ok(Err(error)),
    };
    let mut reader = Reader::new(header, options);
    let mut window_offset: u64 = 0;
    let mut next = usize::try_from(reader.dump.header.header_size).unwrap_or(usize::MAX);
    loop {
        let stopped = reader.read_records(&window, window_offset, next, at_end);
        if at_end || reader.stopped_for_good {
            return Ok(Ok(reader.dump));
        }
        // Keep the unread tail (a record cut by the window), then read on; a
        // record longer than the window grows it.
        let consumed = stopped.min(window.len());
        window.drain(..consumed);
        window_offset += consumed as u64;
        next = stopped - consumed;
        let wanted = window_bytes.max(window.len());
        at_end = fill(&mut input, &mut window, wanted)?;
    }
}

/// The header size the file declares (at offset 8, in the byte order the
/// magic shows); 0 when there is no such header (then parsing it reports why).
fn declared_header_size(window: &[u8]) -> usize {
    let field = |offset: usize| -> [u8; 4] {
        window.get(offset..offset + 4).and_then(|bytes| bytes.try_into().ok()).unwrap_or_default()
    };
    let size = if u32::from_le_bytes(field(0)) == MAGIC {
        u32::from_le_bytes(field(8))
    } else if u32::from_be_bytes(field(0)) == MAGIC {
        u32::from_be_bytes(field(8))
    } else {
        0
    };
    usize::try_from(size).unwrap_or(usize::MAX)
}

/// Appends up to `amount` bytes of `input` to `window`; returns whether the
/// input has ended.
fn fill<R: Read>(input: &mut R, window: &mut Vec<u8>, amount: usize) -> io::Result<bool> {
    let read = input.take(amount as u64).read_to_end(window)?;
    Ok(read == 0)
}

/// Reads the jitdump file at `path` (not compressed: the caller decompresses a
/// `.gz`), streamed as [`read_stream`] does. Errors display as
/// `PATH: byte offset N: expected ...`.
pub fn read_path(path: &Path, options: &ReadOptions) -> Result<JitDump, ReadPathError> {
    let error = |cause: ReadPathCause| ReadPathError { path: path.to_owned(), cause };
    let file = crate::files::open_input(path).map_err(|read| error(ReadPathCause::Read(read)))?;
    match read_stream(file, options) {
        Ok(Ok(dump)) => Ok(dump),
        Ok(Err(header)) => Err(error(ReadPathCause::Header(header))),
        Err(read) => Err(error(ReadPathCause::Read(read))),
    }
}

/// State of one read.
struct Reader<'sink> {
    /// Where CODE_LOADs go instead of [`JitDump::loads`], if anywhere.
    load_sink: Option<&'sink mut dyn FnMut(CodeLoad)>,
    endian: Endianness,
    options: ReadOptions,
    dump: JitDump,
    /// A record size made the rest of the file unframeable: reading stopped
    /// (and must not start again at the next window, warning twice).
    stopped_for_good: bool,
    /// The names of the loads, each kept once.
    names: NameInterner,
}

impl Reader<'_> {
    fn new(header: Header, options: &ReadOptions) -> Self {
        Reader {
            load_sink: None,
            endian: header.endianness,
            options: *options,
            dump: JitDump {
                header,
                loads: Vec::new(),
                debug_infos: Vec::new(),
                warnings: Vec::new(),
                mis_sized_debug_infos: Vec::new(),
                skipped_records: 0,
            },
            stopped_for_good: false,
            names: NameInterner::default(),
        }
    }

    /// Walks the records in `bytes` from `start`, `bytes` being the part of
    /// the file from `window_offset` on. Unless the window reaches the end of
    /// the file (`at_end`), stops before a record the window does not hold
    /// whole. Returns where it stopped.
    fn read_records(&mut self, bytes: &[u8], window_offset: u64, start: usize, at_end: bool) -> usize {
        let mut offset = start;
        while let Some(rest) = bytes.get(offset..)
            && !rest.is_empty()
        {
            let record_offset = window_offset + offset as u64;
            let available = rest.len() as u64;
            if !at_end && !holds_whole_record(rest, self.endian) {
                return offset;
            }
            let Ok(prefix) = Bytes(rest).read_at::<RecordPrefix>(0) else {
                self.dump.warnings.push(JitDumpWarning::Truncated {
                    offset: record_offset,
                    needed: RECORD_PREFIX_SIZE as u64,
                    available,
                });
                return offset;
            };
            let total_size = prefix.total_size.get(self.endian);
            let mut record_size = usize::try_from(total_size).unwrap_or(usize::MAX);
            if record_size < RECORD_PREFIX_SIZE {
                self.dump.warnings.push(JitDumpWarning::RecordSizeTooSmall { offset: record_offset, total_size });
                self.stopped_for_good = true;
                return offset;
            }
            let kind = JitDumpRecordKind::from_id(prefix.id.get(self.endian));
            let timestamp = prefix.timestamp.get(self.endian);
            if kind == JitDumpRecordKind::DebugInfo {
                match frame_debug_info(rest, record_offset, total_size, timestamp, self.endian, at_end) {
                    DebugInfoFraming::Declared => {}
                    DebugInfoFraming::ByEntries(mis_sized) => {
                        record_size = mis_sized.written_size as usize;
                        self.dump.mis_sized_debug_infos.push(mis_sized);
                    }
                    DebugInfoFraming::NeedMoreBytes => return offset,
                }
            }
            let Some(body) = rest.get(RECORD_PREFIX_SIZE..record_size) else {
                self.dump.warnings.push(JitDumpWarning::Truncated {
                    offset: record_offset,
                    needed: u64::from(total_size),
                    available,
                });
                return offset;
            };
            // The next record's header is a cache miss: ask for it now, and
            // decode this one while it comes.
            prefetch(rest.get(record_size..).unwrap_or_default());
            self.read_record(kind, timestamp, body, record_offset);
            offset = offset.saturating_add(record_size);
        }
        offset
    }

    /// Decodes one framed record.
    fn read_record(&mut self, kind: JitDumpRecordKind, timestamp: u64, body: &[u8], record_offset: u64) {
        let endian = self.endian;
        let result = match kind {
            JitDumpRecordKind::CodeLoad => parse_code_load(body, endian, timestamp, record_offset, &mut self.names)
                .map(|load| match &mut self.load_sink {
                    Some(sink) => sink(load),
                    None => self.dump.loads.push(load),
                }),
            JitDumpRecordKind::CodeMove => {
                // Checked, then dropped: with --perf-prof V8 does not compact code
                // space, and its jitdump writer logs no moves (perf-jit.cc).
                parse_code_move(body, endian, timestamp).map(drop)
            }
            JitDumpRecordKind::DebugInfo if self.options.debug_info => {
                self.read_debug_info(body, timestamp, record_offset)
            }
            JitDumpRecordKind::DebugInfo
            | JitDumpRecordKind::CodeClose
            | JitDumpRecordKind::UnwindingInfo
            | JitDumpRecordKind::Unknown(_) => {
                self.dump.skipped_records = self.dump.skipped_records.saturating_add(1);
                Ok(())
            }
        };
        if let Err((offset_in_body, expected)) = result {
            self.dump.warnings.push(JitDumpWarning::MalformedRecord {
                offset: body_offset(record_offset, offset_in_body),
                record_offset,
                kind,
                expected,
            });
        }
    }

    /// Decodes a DEBUG_INFO record and reports its resynchronizations.
    fn read_debug_info(&mut self, body: &[u8], timestamp: u64, record_offset: u64) -> Result<(), (u64, RecordProblem)> {
        let outcome = parse_debug_info(body, self.endian, timestamp)?;
        if let Some(first_resync) = outcome.first_resync {
            self.dump.warnings.push(JitDumpWarning::DebugInfoResynced {
                offset: body_offset(record_offset, first_resync),
                record_offset,
                resyncs: outcome.info.resyncs,
            });
        }
        if let Some(incomplete_at) = outcome.incomplete_at {
            self.dump.warnings.push(JitDumpWarning::DebugInfoIncomplete {
                offset: body_offset(record_offset, incomplete_at),
                record_offset,
                declared: outcome.declared,
                read: outcome.info.entries.len() as u64,
            });
        }
        self.dump.debug_infos.push(outcome.info);
        Ok(())
    }
}

/// Hints the processor to load the cache lines of a record's header and
/// fixed fields (the first 128 bytes of `bytes`).
#[inline]
fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if !bytes.is_empty() {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start = bytes.as_ptr();
        // SAFETY: SSE is part of x86_64, and a prefetch never faults,
        // whatever the address.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(start.cast());
            _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(64).cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Whether `rest` starts with a whole record (a prefix and the `total_size`
/// it gives, and for a DEBUG_INFO the prefix of the record after it, which
/// tells whether V8 mis-sized it), or with something
/// [`Reader::read_records`] stops at anyway.
fn holds_whole_record(rest: &[u8], endian: Endianness) -> bool {
    let Ok(prefix) = Bytes(rest).read_at::<RecordPrefix>(0) else { return false };
    let lookahead = match JitDumpRecordKind::from_id(prefix.id.get(endian)) {
        JitDumpRecordKind::DebugInfo => PROBE_BYTES,
        _ => 0,
    };
    usize::try_from(prefix.total_size.get(endian)).is_ok_and(|size| size.saturating_add(lookahead) <= rest.len())
}

/// File offset of `offset_in_body` in the body of the record at
/// `record_offset`.
fn body_offset(record_offset: u64, offset_in_body: u64) -> u64 {
    record_offset.saturating_add(RECORD_PREFIX_SIZE as u64).saturating_add(offset_in_body)
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// The jitdump of `testdata/RECORDING`.
    fn real_jitdump(recording: &str) -> Vec<u8> {
        let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(recording);
        let path = std::fs::read_dir(&directory)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.file_name().unwrap().to_string_lossy().starts_with("jit-"))
            .unwrap();
        let mut bytes = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut bytes).unwrap();
        bytes
    }

    /// Streaming through small windows gives what reading the whole file
    /// gives, for whole and for cut files (the warnings' offsets and the
    /// records V8 mis-sized included).
    #[test]
    fn streaming_equals_reading_whole() {
        for version in ["node18", "node26", "esmapp/node26"] {
            let bytes = real_jitdump(version);
            if version == "esmapp/node26" {
                assert!(!read(&bytes, &ReadOptions::default()).unwrap().mis_sized_debug_infos.is_empty());
            }
            for options in [ReadOptions::default(), ReadOptions { debug_info: true }] {
                for length in [bytes.len(), bytes.len() - 1, bytes.len() / 3 + 7, 100, 39] {
                    let file = &bytes[..length];
                    let whole = read(file, &options).map_err(|error| error.to_string());
                    for window in [40, 1000, 4096, 1 << 20] {
                        let streamed =
                            read_stream_through(file, &options, window).unwrap().map_err(|error| error.to_string());
                        assert_eq!(streamed, whole, "{version}, {length} bytes, window {window}");
                        let mut last_progress = 0;
                        let windowed = read_through_windows(
                            file,
                            &options,
                            window,
                            |offset| {
                                assert!(last_progress <= offset && offset <= length);
                                last_progress = offset;
                            },
                            None,
                        )
                        .map_err(|error| error.to_string());
                        assert_eq!(windowed, whole, "{version}, {length} bytes, windows of {window}");
                    }
                }
            }
        }
    }
}
