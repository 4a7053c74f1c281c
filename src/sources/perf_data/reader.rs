//! One read of a perf.data: the state it builds up and the record loop.
//! The loop lets `linux-perf-data` sort the records by time and hands each
//! to its handler ([`super::records`]); around it, what the crate cannot do
//! for a damaged file: the header it is to read instead
//! ([`super::guards`]), a second pass up to a record whose size breaks the
//! chain (the crate drops the records it had read ahead of it), and the
//! byte offsets of the records it could not parse, for the warning.

use std::cell::RefCell;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use linux_perf_data::linux_perf_event_reader::RecordType;
use linux_perf_data::{PerfFile, PerfFileRecord};
use rustc_hash::{FxHashMap, FxHashSet};

use super::PerfDataSummary;
use super::address_space::AddressSpace;
use super::frame_key::FrameKey;
use super::framing::{
    RECORD_HEADER_SIZE, Records, UnparsableRecord, locate_records, open_records, record_the_crate_mishandles,
    whole_records_end,
};
use super::guards::replacement_header;
use super::kernel::{KernelReference, KernelSymbols, KernelSymbolsError};
use crate::diagnostics::{Diagnostics, EXAMPLES_PER_KIND, WarningKind};
use crate::error::ErrorCause;
use crate::formats::perf_data::{PerfFileHeader, check_header};
use crate::model::sample::{Frame, Sample, SampleInterner, SampleSink, StringId};
use crate::symbols::SymbolCache;

/// The state of one read.
pub(super) struct PerfDataReader {
    /// The texts of the samples.
    pub(super) interner: SampleInterner,
    /// The sample being built.
    pub(super) sample: Sample,
    /// Frames named before (cleared when a mapping changes).
    pub(super) frames: FxHashMap<FrameKey, Frame>,
    /// How many frames were named (numbered) so far.
    pub(super) frames_numbered: u64,
    /// Interned thread texts by (pid, tid).
    pub(super) thread_texts: FxHashMap<(i32, i32), ThreadTexts>,
    pub(super) symbols: SymbolCache,
    /// The kernel symbols frames are named by: the running kernel's, or
    /// none when the recording is of another kernel.
    pub(super) kernel: Option<Rc<Result<KernelSymbols, KernelSymbolsError>>>,
    /// The running kernel's symbols, once loaded.
    pub(super) running_kernel: Option<Rc<Result<KernelSymbols, KernelSymbolsError>>>,
    /// The running kernel's symbols being read on another thread, from
    /// when the recording's events turn out to allow kernel frames: the
    /// kernel formats `/proc/kallsyms` slowly (30 ms), and the files the
    /// samples hit are read meanwhile ([`SymbolCache::read_ahead`]).
    pub(super) kernel_read_ahead: Option<std::thread::JoinHandle<Result<KernelSymbols, KernelSymbolsError>>>,
    /// Whether symbols are read ahead at all.
    pub(super) reads_ahead: bool,
    /// Address spaces by pid.
    pub(super) processes: FxHashMap<i32, AddressSpace>,
    /// Thread names by tid.
    pub(super) thread_names: FxHashMap<i32, String>,
    /// Build ids perf recorded, by path.
    pub(super) recorded_build_ids: FxHashMap<Box<str>, Vec<u8>>,
    /// The kernel release perf recorded (`uname -r`, the OSRELEASE feature).
    pub(super) recorded_kernel_release: Option<String>,
    /// Where the recorded kernel's text was: the symbol perf names in its
    /// kernel mapping (`[kernel.kallsyms]_text`) and that symbol's address
    /// (the mapping's page offset, perf's `ref_reloc_sym`).
    pub(super) recorded_kernel_reference: Option<KernelReference>,
    /// What to add to a recorded kernel address to find it in the running
    /// kernel's symbols: nonzero when the kernel was placed elsewhere at
    /// boot (KASLR) since the recording.
    pub(super) kernel_relocation: u64,
    /// Files whose build id on disk differs from the recorded one.
    pub(super) mismatched_files: FxHashSet<Box<str>>,
    /// Files already checked against their recorded build id.
    pub(super) checked_files: FxHashSet<Box<str>>,
    /// The event samples must have: given, or the first one seen.
    pub(super) selected_event: Option<String>,
    pub(super) samples_read: u64,
    pub(super) samples_filtered_out: u64,
    /// What was wrong with the perf.data and the files it names.
    pub(super) diagnostics: Diagnostics,
    /// The perf.data, for warnings.
    pub(super) path: PathBuf,
}

/// What a read leaves: its summary, and the caches to keep for the next
/// file.
pub(super) struct FinishedRead {
    pub(super) summary: PerfDataSummary,
    pub(super) symbols: SymbolCache,
    pub(super) running_kernel: Option<Rc<Result<KernelSymbols, KernelSymbolsError>>>,
}

/// Where the record loop is: how many records it read, and how many of them
/// a second read up to a broken record skips (they were handled).
#[derive(Debug, Default)]
struct Progress {
    records_read: u64,
    records_to_skip: u64,
    /// Whether this is the second read, up to a broken record.
    read_again: bool,
}

/// The records `linux-perf-data` framed but could not parse: how many, and
/// the first few, to be located in the file for the warning.
#[derive(Default)]
struct UnparsableRecords {
    count: u64,
    examples: Vec<UnparsableRecord>,
}

impl PerfDataReader {
    pub(super) fn new(
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
    pub(super) fn read<R: Read + Seek>(
        &mut self,
        mut input: R,
        path: &Path,
        sink: &mut dyn SampleSink,
    ) -> Result<(), ErrorCause> {
        self.path = path.to_owned();
        let header = check_header(&mut input)?;
        let input = Rc::new(RefCell::new(input));
        let replaced_header = match &header {
            Some(header) => replacement_header(&mut *input.borrow_mut(), header, path, &mut self.diagnostics)?,
            None => None,
        };
        let records = open_records(&input, replaced_header)?;
        self.read_features(&records.perf_file);
        let unparsable = self.read_records(&input, header.as_ref(), records, sink)?;
        self.report_unparsable(&input, header.as_ref(), &unparsable);
        Ok(())
    }

    /// What the feature sections tell: the build ids and the kernel release
    /// perf recorded; then starts reading the symbols the samples will need.
    fn read_features(&mut self, perf_file: &PerfFile) {
        if let Ok(build_ids) = perf_file.build_ids() {
            for info in build_ids.into_values() {
                let path: Box<str> = String::from_utf8_lossy(&info.path).into();
                self.recorded_build_ids.insert(path, info.build_id);
            }
        }
        self.recorded_kernel_release = perf_file.os_release().ok().flatten().map(str::to_string);
        self.read_symbols_ahead(perf_file);
    }

    /// The record loop: each record the crate yields, in time order, to its
    /// handler, up to the end or a record the crate cannot frame.
    fn read_records<R: Read + Seek>(
        &mut self,
        input: &Rc<RefCell<R>>,
        header: Option<&PerfFileHeader>,
        records: Records<R>,
        sink: &mut dyn SampleSink,
    ) -> Result<UnparsableRecords, ErrorCause> {
        let Records { mut perf_file, mut record_iter } = records;
        let event_names: Vec<String> =
            perf_file.event_attributes().iter().map(|attribute| attribute.name().unwrap_or("").to_string()).collect();
        let mut unparsable = UnparsableRecords::default();
        let mut progress = Progress::default();
        loop {
            let record = match record_iter.next_record(&mut perf_file) {
                Ok(Some(record)) => record,
                Ok(None) => break,
                Err(error) => match self.reopen_before_broken_record(input, header, &error, &mut progress)? {
                    Some(reopened) => {
                        Records { perf_file, record_iter } = reopened;
                        continue;
                    }
                    None => break,
                },
            };
            progress.records_read += 1;
            if progress.records_to_skip > 0 {
                progress.records_to_skip -= 1;
                continue;
            }
            let PerfFileRecord::EventRecord { attr_index, record } = record else { continue };
            match record_the_crate_mishandles(&record).map_or_else(|| record.parse(), Err) {
                Ok(parsed) => self.handle_record(parsed, attr_index, &event_names, sink),
                Err(error) => unparsable.add(record.record_type.0, || record.data.as_slice().into_owned(), &error),
            }
        }
        Ok(unparsable)
    }

    /// After the crate failed to read a record: warns, and when the chain
    /// of record sizes breaks before the data's end (and this is not the
    /// second read already), the records again up to there, skipping those
    /// handled. The crate drops the records it read ahead of the broken one
    /// (it sorts each round of records by time).
    fn reopen_before_broken_record<R: Read + Seek>(
        &mut self,
        input: &Rc<RefCell<R>>,
        header: Option<&PerfFileHeader>,
        error: &linux_perf_data::Error,
        progress: &mut Progress,
    ) -> Result<Option<Records<R>>, ErrorCause> {
        let position = input.borrow_mut().stream_position()?;
        // Where the chain of record sizes breaks, when it does.
        let broken = header.filter(|_| !progress.read_again).and_then(|header| {
            let end = whole_records_end(&mut *input.borrow_mut(), header, header.data_end()).ok()?;
            (end < header.data_end()).then_some((header, end))
        });
        let path = &self.path;
        self.diagnostics.warn(WarningKind::PerfDataBrokenRecord, || match broken {
            Some((_, offset)) => format!(
                "{}: byte offset {offset}: expected a whole record, {error}; the records before it were used",
                path.display()
            ),
            None => format!("{}: byte offset {position}: expected a whole record, {error}", path.display()),
        });
        let Some((header, offset)) = broken else { return Ok(None) };
        let reopened = open_records(input, Some(header.cut_at(offset)))?;
        (progress.records_to_skip, progress.read_again) = (progress.records_read, true);
        Ok(Some(reopened))
    }

    /// The warning about the records that did not parse, naming where they
    /// are in the file.
    fn report_unparsable<R: Read + Seek>(
        &mut self,
        input: &Rc<RefCell<R>>,
        header: Option<&PerfFileHeader>,
        unparsable: &UnparsableRecords,
    ) {
        if unparsable.count == 0 {
            return;
        }
        let offsets = match header {
            Some(header) => locate_records(&mut *input.borrow_mut(), header, &unparsable.examples),
            None => vec![None; unparsable.examples.len()],
        };
        let examples = unparsable.examples.iter().zip(offsets).map(|(record, offset)| {
            let place = offset.map(|offset| format!(" byte offset {offset}:")).unwrap_or_default();
            format!(
                "{}:{place} {:?} record of {} bytes: expected the fields its event's sample format declares, {}",
                self.path.display(),
                RecordType(record.record_type),
                RECORD_HEADER_SIZE + record.body.len() as u64,
                record.error
            )
        });
        self.diagnostics.add(WarningKind::PerfDataUnparsableRecord, unparsable.count, examples);
    }

    /// The summary, and the caches to keep for the next file.
    pub(super) fn finish(mut self) -> FinishedRead {
        // Each file reports the binaries it could not use.
        self.diagnostics.merge(&std::mem::take(&mut self.symbols.diagnostics));
        let summary = PerfDataSummary {
            samples_read: self.samples_read,
            samples_filtered_out: self.samples_filtered_out,
            event: self.selected_event,
            diagnostics: self.diagnostics,
        };
        FinishedRead { summary, symbols: self.symbols, running_kernel: self.running_kernel }
    }
}

impl UnparsableRecords {
    /// Counts a record that did not parse, keeping its `body` as an example
    /// while there are few.
    fn add(&mut self, record_type: u32, body: impl FnOnce() -> Vec<u8>, error: &dyn std::fmt::Display) {
        self.count += 1;
        if self.examples.len() < EXAMPLES_PER_KIND {
            self.examples.push(UnparsableRecord { record_type, body: body(), error: error.to_string() });
        }
    }
}

/// A thread's texts, interned.
#[derive(Debug, Clone, Copy)]
pub(super) struct ThreadTexts {
    pub(super) comm: StringId,
    pub(super) pid_text: StringId,
    pub(super) tid_text: StringId,
    pub(super) event: StringId,
}
