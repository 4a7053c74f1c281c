//! Folding a perf script on several threads: [`fold_in_chunks`] folds the
//! same stacks as one thread does ([`super::collapse`]), faster on more than
//! one core.
//!
//! The input is cut into chunks of about [`CHUNK_BYTES`] at blank lines.
//! A blank line ends a sample and resets every piece of reader state inferno
//! carries from line to line (the period, the skipping of a filtered event),
//! so each chunk reads exactly as it would in one pass. The one piece of
//! state that crosses samples is the event type kept when no filter is given,
//! the first one seen: chunks are folded on the calling thread until it is
//! known, then handed to worker threads filtered by it. Each worker owns its
//! [`ExpandingSinks`] (its own folder and expander, and so its own expansion
//! cache and names); after each chunk it counts the stacks it named in the
//! one shared folder, under a lock, its frame names translated by text. So
//! there is one table of distinct stacks, not one per worker merged at the
//! end on one thread (faster on deep stacks: docs/performance-log.md).
//! Memory stays bounded: one chunk per worker waits, one per worker is folded
//! and one is read.

use std::io::{self, Read};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel, sync_channel};

use super::engine::{ExpandingSinks, Folded};
use crate::collapse::{CollapseOptions, CollapseSummary, Folder, FrameIdTranslation};
use crate::expansion::FrameExpander;
use crate::formats::perf_script::{
    EventSelection, MAX_LINE_BYTES, MAX_SAMPLE_BYTES, MAX_UNENDED_BYTES, ReaderStatistics, ReaderWarnings,
    TOO_LONG_LINE, WarningTally,
};
use crate::model::sample::{Sample, SampleInterner, SampleSink};
use crate::sources::perf_script::{LineMemory, PerfScriptSource};

/// The size chunks are read in; a chunk ends at the last blank line in it.
pub const CHUNK_BYTES: usize = 1 << 18;

/// One piece of the input, ending at a blank line (or the end of input).
struct Chunk {
    /// Its position in the input, from 0.
    index: usize,
    /// Its text.
    bytes: Vec<u8>,
}

/// What a chunk's reader saw, kept to merge line numbers and counts in input
/// order.
struct ChunkReport {
    /// The chunk's position in the input.
    index: usize,
    /// Its counters (its `lines` give later chunks their line numbers).
    statistics: ReaderStatistics,
    /// Its warnings, with line numbers counted from the chunk's start.
    warnings: ReaderWarnings,
}

/// A worker's state: its sinks, and what its chunks reported.
struct Worker<Expander> {
    /// Expands and names the worker's stacks, which the shared folder counts.
    sinks: ExpandingSinks<Expander>,
    /// The worker folder's frame ids as the shared folder's.
    translation: FrameIdTranslation,
    /// The texts of the worker's samples (its folder's ids refer to them).
    interner: SampleInterner,
    /// The lines interned there, carried from chunk to chunk.
    memory: Option<LineMemory>,
    /// The sample being folded.
    sample: Sample,
    reports: Vec<ChunkReport>,
}

impl<Expander: FrameExpander> Worker<Expander> {
    /// Folds `chunk`; returns the event type it selected and the chunk's
    /// buffer, to reuse.
    fn fold(
        &mut self,
        chunk: Chunk,
        selection: &EventSelection,
        shared: &Mutex<Folder>,
    ) -> io::Result<(Option<String>, Vec<u8>)> {
        let memory = self.memory.take().unwrap_or_default();
        // Parsed where it lies (a chunk is whole lines); not UTF-8, it is
        // read as the block reader reads such lines.
        let text = String::from_utf8(chunk.bytes)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
        let mut reader = PerfScriptSource::over_text(text, selection.clone(), memory);
        while reader.next_sample(&mut self.interner, &mut self.sample)? {
            self.sinks.add_sample(&self.sample, &self.interner);
        }
        // A poisoned lock means another worker panicked: it reports that.
        let mut shared = shared.lock().map_err(|_| io::Error::other("a folding thread panicked"))?;
        shared.count_handed_over(self.sinks.folder_mut(), &mut self.translation);
        drop(shared);
        self.reports.push(ChunkReport {
            index: chunk.index,
            statistics: reader.statistics(),
            warnings: reader.warnings().clone(),
        });
        let event = reader.selected_event().map(str::to_owned);
        let (memory, text) = reader.into_memory_and_text();
        self.memory = Some(memory);
        Ok((event, text.into_bytes()))
    }
}

/// Reads `input` in chunks that end at blank lines.
struct Chunker<R> {
    input: R,
    /// The size to read before looking for a blank line.
    chunk_bytes: usize,
    /// Bytes read after the end of the last chunk.
    carry: Vec<u8>,
    next_index: usize,
    at_end: bool,
    /// Buffers of folded chunks, sent back for reuse: no fresh memory (and
    /// page faults) per chunk.
    returned: Receiver<Vec<u8>>,
    /// Where folded chunks' buffers go.
    returner: Sender<Vec<u8>>,
}

impl<R: Read> Chunker<R> {
    fn new(input: R, chunk_bytes: usize) -> Chunker<R> {
        let (returner, returned) = channel();
        Chunker { input, chunk_bytes, carry: Vec::new(), next_index: 0, at_end: false, returned, returner }
    }

    fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        let mut bytes = self.returned.try_recv().unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(&self.carry);
        self.carry.clear();
        // Where the last line of `bytes` starts (the carry is whole
        // samples and the start of one more).
        let mut last_line_start = memchr::memrchr(b'\n', &bytes).map_or(0, |newline| newline + 1);
        loop {
            if bytes.len() >= self.chunk_bytes || self.at_end {
                // The last "\n\n" ends the chunk: all before it is whole samples.
                if let Some(blank_line) = memchr::memmem::rfind(&bytes, b"\n\n") {
                    self.carry.extend_from_slice(&bytes[blank_line + 2..]);
                    bytes.truncate(blank_line + 2);
                    break;
                }
                if self.at_end {
                    break;
                }
                // No blank line in more than a sample may hold (damage: an
                // endless stack): the chunk ends at a line end, and the
                // reader skips the sample's parts as damaged lines.
                if bytes.len() >= self.chunk_bytes + MAX_SAMPLE_BYTES && last_line_start > 0 {
                    self.carry.extend_from_slice(&bytes[last_line_start..]);
                    bytes.truncate(last_line_start);
                    break;
                }
            }
            if bytes.len() - last_line_start > MAX_LINE_BYTES {
                // A line too long is dropped up to its end, and stands as
                // one short line that the reader skips.
                bytes.truncate(last_line_start);
                let after_line = self.drop_rest_of_line()?;
                bytes.extend_from_slice(TOO_LONG_LINE.as_bytes());
                bytes.push(b'\n');
                last_line_start = bytes.len();
                bytes.extend_from_slice(&after_line);
                if let Some(newline) = memchr::memrchr(b'\n', &after_line) {
                    last_line_start += newline + 1;
                }
                continue;
            }
            // Room first, so that the read goes straight into the buffer;
            // exactly: a recycled buffer must not double for a longer carry.
            bytes.reserve_exact(self.chunk_bytes);
            let appended_at = bytes.len();
            let read = (&mut self.input).take(self.chunk_bytes as u64).read_to_end(&mut bytes)?;
            self.at_end = read == 0;
            if let Some(newline) = memchr::memrchr(b'\n', &bytes[appended_at..]) {
                last_line_start = appended_at + newline + 1;
            }
        }
        if bytes.is_empty() {
            return Ok(None);
        }
        let index = self.next_index;
        self.next_index += 1;
        Ok(Some(Chunk { index, bytes }))
    }

    /// Reads on to the end of the line being read (already over
    /// [`MAX_LINE_BYTES`]); returns the bytes read after it. An error past
    /// [`MAX_UNENDED_BYTES`] without a line end: no text.
    fn drop_rest_of_line(&mut self) -> io::Result<Vec<u8>> {
        let mut block = Vec::with_capacity(self.chunk_bytes);
        let mut dropped = MAX_LINE_BYTES as u64;
        loop {
            block.clear();
            let read = (&mut self.input).take(self.chunk_bytes as u64).read_to_end(&mut block)?;
            if read == 0 {
                self.at_end = true;
                return Ok(Vec::new());
            }
            if let Some(newline) = memchr::memchr(b'\n', &block) {
                return Ok(block.split_off(newline + 1));
            }
            dropped += read as u64;
            if dropped > MAX_UNENDED_BYTES {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("no line end in {} MiB: no perf script text (an endless stream?)", MAX_UNENDED_BYTES >> 20),
                ));
            }
        }
    }
}

/// Folds the `perf script` text of `input` on one thread per expander (at
/// least one), in chunks of about `chunk_bytes` ([`CHUNK_BYTES`]; tests and
/// the fuzz targets cut small inputs into many chunks): the stacks, counts
/// and summary one thread folds. Expanders must not depend on seeing every
/// sample (each sees a share). Only stacks are folded: details and
/// timelines need one folder and every sample in order.
pub fn fold_in_chunks<Input: Read, Expander: FrameExpander + Send>(
    input: Input,
    options: &CollapseOptions,
    expanders: Vec<Expander>,
    chunk_bytes: usize,
) -> io::Result<Folded<Expander>> {
    let mut workers: Vec<Worker<Expander>> = expanders
        .into_iter()
        .map(|expander| {
            let mut sinks = ExpandingSinks::folding(expander, options);
            sinks.folder_mut().hand_stacks_over();
            Worker {
                sinks,
                translation: FrameIdTranslation::default(),
                interner: SampleInterner::new(),
                memory: None,
                sample: Sample::default(),
                reports: Vec::new(),
            }
        })
        .collect();
    let Some(first_worker) = workers.first_mut() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a parallel fold needs at least one expander"));
    };
    let shared = Mutex::new(Folder::new(options));
    let mut chunker = Chunker::new(input, chunk_bytes);
    let mut selection = options.event_selection();
    // Fold on this thread until the event type to keep is known.
    while selection == EventSelection::FirstSeen {
        let Some(chunk) = chunker.next_chunk()? else { break };
        let (event, buffer) = first_worker.fold(chunk, &selection, &shared)?;
        let _ = chunker.returner.send(buffer);
        if let Some(event) = event {
            selection = EventSelection::Only(event);
        }
    }
    let event = match &selection {
        EventSelection::Only(event) => Some(event.clone()),
        EventSelection::FirstSeen | EventSelection::All => None,
    };
    if event.is_some() {
        fold_on_workers(&mut chunker, &mut workers, &selection, &shared)?;
    }
    drop(chunker);
    let mut summary = readers_summary(&mut workers);
    summary.event = event;
    let mut folder = shared.into_inner().map_err(|_| io::Error::other("a folding thread panicked"))?;
    let expanders = workers
        .into_iter()
        .map(|worker| {
            let (expander, worker_folder) = worker.sinks.into_parts();
            folder.add_counters(&worker_folder);
            expander
        })
        .collect();
    summary.take_folder_counts(&folder.summary());
    Ok(Folded { folder, details: None, timeline: None, benchmarks: Vec::new(), expanders, summary })
}

/// Hands the remaining chunks to one thread per worker.
fn fold_on_workers<Input: Read, Expander: FrameExpander + Send>(
    chunker: &mut Chunker<Input>,
    workers: &mut [Worker<Expander>],
    selection: &EventSelection,
    shared: &Mutex<Folder>,
) -> io::Result<()> {
    let (sender, receiver) = sync_channel::<Chunk>(workers.len());
    let receiver = Mutex::new(receiver);
    std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .iter_mut()
            .map(|worker| {
                let receiver = &receiver;
                let returner = chunker.returner.clone();
                scope.spawn(move || -> io::Result<()> {
                    while let Some(chunk) = next_from(receiver) {
                        let (_, buffer) = worker.fold(chunk, selection, shared)?;
                        // The reader may be gone (an error): then the buffer is freed.
                        let _ = returner.send(buffer);
                    }
                    Ok(())
                })
            })
            .collect();
        let mut result = Ok(());
        loop {
            match chunker.next_chunk() {
                Ok(Some(chunk)) => {
                    if sender.send(chunk).is_err() {
                        break; // Every worker stopped: their errors tell why.
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    result = Err(error);
                    break;
                }
            }
        }
        drop(sender);
        for handle in handles {
            let worker_result = handle.join().unwrap_or_else(|_| Err(io::Error::other("a folding thread panicked")));
            result = result.and(worker_result);
        }
        result
    })
}

/// The next chunk of the shared queue; `None` once it is closed and empty.
fn next_from(receiver: &Mutex<Receiver<Chunk>>) -> Option<Chunk> {
    // A poisoned lock means another worker panicked: stop too.
    receiver.lock().ok()?.recv().ok()
}

/// What the readers of every chunk read: their counts and warnings merged
/// in input order (line numbers counted from the start of the input); the
/// folder's counters left to the shared folder.
fn readers_summary<Expander>(workers: &mut [Worker<Expander>]) -> CollapseSummary {
    let mut summary = CollapseSummary::default();
    let mut reports: Vec<ChunkReport> = Vec::new();
    for worker in workers.iter_mut() {
        reports.append(&mut worker.reports);
    }
    reports.sort_unstable_by_key(|report| report.index);
    let mut lines_before = 0;
    for report in &reports {
        summary.samples_read += report.statistics.samples + report.statistics.samples_filtered_out;
        summary.samples_filtered_out += report.statistics.samples_filtered_out;
        merge_tally(&mut summary.warnings.weird_event_lines, &report.warnings.weird_event_lines, lines_before);
        merge_tally(&mut summary.warnings.weird_stack_lines, &report.warnings.weird_stack_lines, lines_before);
        lines_before += report.statistics.lines;
    }
    summary
}

/// Adds a later chunk's tally to `total`, its example moved `lines_before`
/// lines down.
fn merge_tally(total: &mut WarningTally, chunk: &WarningTally, lines_before: u64) {
    total.count += chunk.count;
    if total.first_example.is_none()
        && let Some(example) = &chunk.first_example
    {
        let mut example = example.clone();
        example.line_number += lines_before;
        total.first_example = Some(example);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::expansion::NoExpansion;
    use crate::pipeline::{collapse, collapse_with};

    fn real_perf_script(recording: &str) -> Vec<u8> {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("testdata/{recording}/perf.script.gz"));
        let mut bytes = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut bytes).unwrap();
        bytes
    }

    /// Any chunk size and thread count gives the single-threaded output and
    /// summary (warnings and their line numbers included), on real scripts
    /// of several processes with odd lines mixed in, with every event
    /// selection.
    #[test]
    fn parallel_equals_single_threaded() {
        let mut input = b"garbage before any sample\n\n".to_vec();
        for recording in ["native", "node18", "node24"] {
            input.extend(real_perf_script(recording));
            input.extend(b"\nnot an event line\n\tnor a stack line\n\n");
        }
        input.extend(
            b"node 1 1.0: 5 cycles:u:\n\t1 f (m)\n\n# comment\nnode 1 1.0: 5 cycles:u:  ff g (m)\nend-without-blank",
        );
        let filters = [None, Some("cycles".to_string()), Some("cpu-clock".to_string())];
        for event_filter in filters {
            let options = CollapseOptions { event_filter, include_pid: true, ..CollapseOptions::default() };
            let mut expected = Vec::new();
            let expected_summary = collapse(input.as_slice(), &options, &mut expected).unwrap();
            assert!(expected_summary.warnings.total() > 0 && expected_summary.samples_kept > 0);
            for (threads, chunk_bytes) in [(1, 1 << 20), (2, 64), (2, 4096), (3, 100_000)] {
                let mut output = Vec::new();
                let mut outcome =
                    fold_in_chunks(input.as_slice(), &options, vec![NoExpansion; threads], chunk_bytes).unwrap();
                outcome.summary.distinct_stacks = outcome.folder.write_folded(&mut output).unwrap();
                assert!(output == expected, "{threads} threads, chunks of {chunk_bytes}: output differs");
                assert_eq!(outcome.summary, expected_summary, "{threads} threads, chunks of {chunk_bytes}");
                assert_eq!(outcome.expanders.len(), threads);
            }
        }
    }

    /// With V8 expansion too: each thread's expander gives the same frames.
    #[test]
    fn parallel_expansion_equals_single_threaded() {
        use crate::v8::code_logs::{CodeLogOptions, CodeLogs};
        use crate::v8::expand::{ExpandOptions, V8Expander};
        let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/node20");
        let file = |prefix: &str| {
            std::fs::read_dir(&directory)
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .find(|path| path.file_name().unwrap().to_string_lossy().starts_with(prefix))
                .unwrap()
        };
        let code_logs = CodeLogs::load(CodeLogOptions {
            logs: vec![file("codspeed-v8-")],
            jitdumps: vec![file("jit-")],
            ..CodeLogOptions::default()
        })
        .unwrap();
        let input = real_perf_script("node20");
        let options = CollapseOptions { annotate_inline: true, ..CollapseOptions::default() };
        let mut expected = Vec::new();
        let mut expander = V8Expander::new(code_logs.clone(), ExpandOptions::default());
        let expected_summary = collapse_with(input.as_slice(), &options, &mut expander, &mut expected).unwrap();
        assert!(expected_summary.expanded_frames > expected_summary.stack_lines_expanded);
        let expanders = (0..2).map(|_| V8Expander::new(code_logs.clone(), ExpandOptions::default())).collect();
        let mut output = Vec::new();
        let outcome = fold_in_chunks(input.as_slice(), &options, expanders, 10_000).unwrap();
        outcome.folder.write_folded(&mut output).unwrap();
        assert!(output == expected, "expanded output differs");
        assert_eq!(outcome.summary, expected_summary);
        let mut stats = crate::v8::expand::ExpansionStats::default();
        for expander in &outcome.expanders {
            stats.add(&expander.stats);
        }
        assert_eq!(stats, expander.stats);
    }
}
