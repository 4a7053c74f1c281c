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
//! (`compressed`: a decompression bomb ends the reading).
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
//!
//! The parts, in the order a read goes through them:
//!
//! * `framing`: the records as bytes (walking the chain of record sizes,
//!   the input the crate reads, locating records for warnings);
//! * `guards`: where the crate must stop (a cut or unfinished file, the
//!   records it would mishandle), with `compressed` for `perf record -z`;
//! * `reader`: the reader's state and the record loop, re-opened after a
//!   broken record;
//! * `records`: one handler per record kind the names depend on;
//! * `address_space`, `frame_key`, `frames`, `kernel` (the symbols) and
//!   `kernel_frames`: naming a sample's frames (the reader's parts import
//!   the reader, which imports only their types: no circle);
//! * `activity`: the processes of a recording, for `record`.

mod activity;
mod address_space;
mod compressed;
mod frame_key;
mod frames;
mod framing;
mod guards;
mod kernel;
mod kernel_frames;
mod reader;
mod records;

use std::path::{Path, PathBuf};
use std::rc::Rc;

pub use self::activity::{ProcessActivity, recorded_processes};
use self::kernel::{KernelSymbols, KernelSymbolsError};
use self::reader::PerfDataReader;
use crate::diagnostics::Diagnostics;
use crate::error::{Error, ErrorCause};
use crate::files::read_file_allowing_cut;
use crate::model::sample::SampleSink;
use crate::symbols::SymbolCache;

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
        let mut reader = self.reader(event);
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
        let mut reader = self.reader(event);
        let result = reader.read(std::io::Cursor::new(bytes), path, sink);
        self.finish(reader, result, path)
    }

    /// A reader of one file, lent this source's caches.
    fn reader(&mut self, event: Option<&str>) -> PerfDataReader {
        let mut reader = PerfDataReader::new(event, std::mem::take(&mut self.symbols), self.running_kernel.clone());
        reader.reads_ahead = !self.one_thread;
        reader
    }

    /// The summary of `reader`'s read, keeping its caches for the next one.
    fn finish(
        &mut self,
        reader: PerfDataReader,
        result: Result<(), ErrorCause>,
        path: &Path,
    ) -> Result<PerfDataSummary, Error> {
        let finished = reader.finish();
        self.symbols = finished.symbols;
        self.running_kernel = finished.running_kernel;
        result.map_err(Error::at(path))?;
        Ok(finished.summary)
    }
}

/// The directory of a perf.data: where `perf record` ran, and so where
/// node wrote its jitdump and code log by default.
pub fn recording_directory(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCause;
    use crate::formats::perf_data::{PerfDataError, Section};
    use crate::model::sample::{Sample, SampleInterner};

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
}
