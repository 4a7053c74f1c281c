//! `perf script` text as typed [`Sample`]s.

use std::io::{self, BufRead};

use crate::formats::perf_script::{
    EventSelection, PerfScriptReader, ReaderStatistics, ReaderWarnings, StackLine, StackLineMemo, strip_symbol_offset,
};
use crate::model::sample::{
    AddressKind, Frame, FrameNumber, KERNEL_ADDRESS_START, ModuleId, ModuleKind, Sample, SampleInterner, SampleSink,
    StringId,
};

/// Reads `perf script` text into typed samples: each stack line's symbol
/// and module are interned, the module classified once
/// ([`ModuleKind::of_path`]), and each frame's [`AddressKind`] set: the first
/// frame and the first user-space frame below kernel frames (the user PC
/// saved at kernel entry) are instruction pointers, the others return
/// addresses.
pub struct PerfScriptSource<R> {
    reader: PerfScriptReader<R>,
    /// The frame of each stack line the reader numbered, once interned.
    frames: Vec<Option<Frame>>,
    /// The last texts interned for the thread fields.
    last_thread: Option<ThreadTexts>,
}

/// The stack lines and thread fields a [`PerfScriptSource`] interned, to
/// carry over to the next source that interns into the same
/// [`SampleInterner`] (the next chunk of a parallel fold).
#[derive(Default)]
pub struct LineMemory {
    /// The reader's numbered stack lines.
    memo: StackLineMemo,
    /// The frame of each, once interned.
    frames: Vec<Option<Frame>>,
    /// The last texts interned for the thread fields.
    last_thread: Option<ThreadTexts>,
}

/// The thread fields of the last sample, interned.
struct ThreadTexts {
    comm: Box<str>,
    pid_text: Box<str>,
    tid_text: Box<str>,
    event: Box<str>,
    ids: [StringId; 4],
}

impl<R: BufRead> PerfScriptSource<R> {
    /// A source over `input` yielding the samples `selection` picks.
    pub fn new(input: R, selection: EventSelection) -> PerfScriptSource<R> {
        PerfScriptSource::with_memory(input, selection, LineMemory::default())
    }

    /// A source that starts with what another source interned before, into
    /// the interner this one will intern into too.
    pub fn with_memory(input: R, selection: EventSelection, memory: LineMemory) -> PerfScriptSource<R> {
        PerfScriptSource {
            reader: PerfScriptReader::new(input).with_event_selection(selection).with_memo(memory.memo),
            frames: memory.frames,
            last_thread: memory.last_thread,
        }
    }

    /// Reads the next sample into `sample`, interning its texts in
    /// `interner` (always the same one for one source). Returns `false` at
    /// the end of the input. Only I/O errors are errors.
    pub fn next_sample(&mut self, interner: &mut SampleInterner, sample: &mut Sample) -> io::Result<bool> {
        let Some(record) = self.reader.next_sample()? else { return Ok(false) };
        sample.clear();
        let texts = [record.comm, record.pid_text, record.tid_text, record.event];
        let ids = match &self.last_thread {
            Some(last)
                if *last.comm == *texts[0]
                    && *last.pid_text == *texts[1]
                    && *last.tid_text == *texts[2]
                    && *last.event == *texts[3] =>
            {
                last.ids
            }
            _ => {
                let ids = texts.map(|text| interner.intern(text));
                self.last_thread = Some(ThreadTexts {
                    comm: texts[0].into(),
                    pid_text: texts[1].into(),
                    tid_text: texts[2].into(),
                    event: texts[3].into(),
                    ids,
                });
                ids
            }
        };
        let [comm, pid_text, tid_text, event] = ids;
        sample.comm = Some(comm);
        sample.pid = record.pid;
        sample.tid = record.tid_text.parse().ok();
        sample.pid_text = Some(pid_text);
        sample.tid_text = Some(tid_text);
        sample.event = (!record.event.is_empty()).then_some(event);
        sample.cpu = record.cpu;
        sample.time = record.time;
        sample.clock_nanoseconds = record.time.map(|time| time.nanoseconds);
        sample.period = record.period;
        sample.input_position = record.line_number;
        let mut in_kernel_prefix = true;
        for index in 0..record.frame_count() {
            let known = record.stack_line_id(index).and_then(|id| self.frames.get(id.index()).copied().flatten());
            let mut frame = match known {
                Some(frame) => frame,
                None => match record.frame(index) {
                    Some(line) => intern_line(&mut self.frames, &line, interner),
                    None => break,
                },
            };
            let mut address_kind =
                if index == 0 { AddressKind::InstructionPointer } else { AddressKind::ReturnAddress };
            if in_kernel_prefix {
                let is_kernel =
                    frame.address >= KERNEL_ADDRESS_START || interner.module_kind(frame.module) == ModuleKind::Kernel;
                if !is_kernel {
                    in_kernel_prefix = false;
                    address_kind = AddressKind::InstructionPointer;
                }
            }
            frame.address_kind = address_kind;
            sample.frames.push(frame);
        }
        Ok(true)
    }

    /// Reads every remaining sample and hands it to `sink`, in input
    /// order, its texts interned in one interner. Only I/O errors are errors.
    pub fn send_samples(&mut self, sink: &mut dyn SampleSink) -> io::Result<()> {
        let mut interner = SampleInterner::new();
        let mut sample = Sample::default();
        while self.next_sample(&mut interner, &mut sample)? {
            sink.add_sample(&sample, &interner);
        }
        Ok(())
    }

    /// The event type samples are filtered by (see
    /// [`PerfScriptReader::selected_event`]).
    pub fn selected_event(&self) -> Option<&str> {
        self.reader.selected_event()
    }

    /// Counters of what was read so far.
    pub fn statistics(&self) -> ReaderStatistics {
        self.reader.statistics()
    }

    /// The lines skipped so far.
    pub fn warnings(&self) -> &ReaderWarnings {
        self.reader.warnings()
    }
}

impl PerfScriptSource<&'static [u8]> {
    /// A source over `text`, a whole chunk of `perf script` lines, parsed
    /// where it lies, starting with what another source interned.
    pub fn over_text(text: String, selection: EventSelection, memory: LineMemory) -> PerfScriptSource<&'static [u8]> {
        let source = PerfScriptSource::with_memory(&[][..], selection, memory);
        PerfScriptSource { reader: source.reader.with_text(text), ..source }
    }

    /// What this source interned, for [`PerfScriptSource::with_memory`] and
    /// [`PerfScriptSource::over_text`], and the text's buffer to reuse.
    pub fn into_memory_and_text(self) -> (LineMemory, String) {
        let (memo, text) = self.reader.into_memo_and_text();
        (LineMemory { memo, frames: self.frames, last_thread: self.last_thread }, text)
    }
}

/// The frame of a stack line not interned before, kept in `frames` by the
/// line's number when the reader numbered it (the source looks a numbered
/// line up there first).
fn intern_line(frames: &mut Vec<Option<Frame>>, line: &StackLine<'_>, interner: &mut SampleInterner) -> Frame {
    let module: ModuleId = interner.module_at_path(line.module);
    let function = strip_symbol_offset(line.symbol);
    let symbol = (!line.symbol.is_empty()).then(|| interner.intern(function));
    let symbol_offset =
        line.symbol[function.len()..].strip_prefix("+0x").and_then(|digits| u64::from_str_radix(digits, 16).ok());
    let address_text = (!is_canonical_address(line.address_text)).then(|| interner.intern(line.address_text));
    let frame = Frame {
        address: line.address,
        address_kind: AddressKind::ReturnAddress,
        module,
        symbol,
        symbol_offset,
        address_text,
        // perf script prints a frame in a file by its address in the file.
        file_address: (interner.module_kind(module) == ModuleKind::File).then_some(line.address),
        // The reader numbers lines densely and never reuses a number.
        number: line.id.map(|id| FrameNumber::new(id.index() as u32)),
    };
    if let Some(id) = line.id {
        if frames.len() <= id.index() {
            frames.resize(id.index() + 1, None);
        }
        frames[id.index()] = Some(frame);
    }
    frame
}

/// Whether `text` is how `{:x}` prints its value: lowercase hex digits with
/// no leading zero, at most 16 of them.
fn is_canonical_address(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 16
        && (bytes[0] != b'0' || bytes.len() == 1)
        && bytes.iter().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_addresses() {
        assert!(is_canonical_address("7f3e9a7e64da"));
        assert!(is_canonical_address("0"));
        assert!(!is_canonical_address("07f"));
        assert!(!is_canonical_address("7F"));
        assert!(!is_canonical_address(""));
        assert!(!is_canonical_address("zz"));
        assert!(!is_canonical_address("11111111111111111"));
    }

    #[test]
    fn types_frames() {
        let text = "node 40/41 5.000000001: 1000 cpu-clock:\n\
            \tffffffff81000c82 asm_exc_page_fault+0x22 ([kernel.kallsyms])\n\
            \t7f0010 JS:*hot /app/deep.js:12:3+0x10 (/tmp/perf-40.map)\n\
            \t0055aa node::Start+0x (/usr/bin/node)\n\
            \t15c JS:~f a.js:1:1+0x15c (/tmp/jitted-40-7.so)\n\
            \n";
        let mut source = PerfScriptSource::new(text.as_bytes(), EventSelection::FirstSeen);
        let mut interner = SampleInterner::new();
        let mut sample = Sample::default();
        assert!(source.next_sample(&mut interner, &mut sample).unwrap());
        assert_eq!((sample.pid, sample.tid, sample.period), (Some(40), Some(41), Some(1000)));
        assert_eq!(interner.string_or_empty(sample.comm), "node");
        let kinds: Vec<_> = sample.frames.iter().map(|frame| frame.address_kind).collect();
        assert_eq!(
            kinds,
            [
                AddressKind::InstructionPointer,
                AddressKind::InstructionPointer,
                AddressKind::ReturnAddress,
                AddressKind::ReturnAddress
            ]
        );
        let modules: Vec<_> = sample.frames.iter().map(|frame| interner.module_kind(frame.module)).collect();
        assert_eq!(
            modules,
            [
                ModuleKind::Kernel,
                ModuleKind::PerfMap { pid: Some(40), jitdump: crate::model::sample::MappedJitDump::NotKnown },
                ModuleKind::File,
                ModuleKind::JitImage { pid: Some(40), code_index: Some(7) }
            ]
        );
        assert_eq!(interner.string_or_empty(sample.frames[1].symbol), "JS:*hot /app/deep.js:12:3");
        assert_eq!(sample.frames[1].symbol_offset, Some(0x10));
        assert_eq!(sample.frames[2].symbol_offset, None);
        assert_eq!(sample.frames[2].address_text.map(|text| interner.string(text)), Some("0055aa"));
        assert_eq!(sample.frames[3].symbol_offset, Some(0x15c));
        assert!(!source.next_sample(&mut interner, &mut sample).unwrap());
    }
}
