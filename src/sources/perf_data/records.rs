//! One handler per kind of record the frames' names depend on, in the
//! file's time order: MMAP/MMAP2 add code to a process's memory, COMM names
//! a thread (an exec also empties its process's memory), FORK copies the
//! parent's memory and name, SAMPLE names its callchain and hands it on.
//! Each change forgets the names it makes stale; the others keep theirs.

use linux_perf_data::linux_perf_event_reader::constants::{PERF_CONTEXT_KERNEL, PERF_CONTEXT_MAX, PERF_CONTEXT_USER};
use linux_perf_data::linux_perf_event_reader::{
    CommOrExecRecord, EventRecord, ForkOrExitRecord, RawData, SampleRecord,
};

use super::address_space::{AddressSpace, jitdump_pid_in_path};
use super::frame_key::Mode;
use super::kernel::{KERNEL_DSO, KernelReference};
use super::one_line;
use super::reader::PerfDataReader;
use super::reader::ThreadTexts;
use crate::model::sample::{AddressKind, Frame, SampleSink, SampleTime};
use crate::symbols::FileMapping;

/// `PROT_EXEC` of `mmap(2)`.
pub(super) const PROT_EXEC: u32 = 4;

impl PerfDataReader {
    /// Hands a record to its handler; `event_names` name the samples'
    /// events by attribute index.
    pub(super) fn handle_record(
        &mut self,
        record: EventRecord<'_>,
        attr_index: usize,
        event_names: &[String],
        sink: &mut dyn SampleSink,
    ) {
        match record {
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
            EventRecord::Fork(fork) => self.fork(&fork),
            _ => {}
        }
    }

    /// MMAP/MMAP2 of code: a mapping of `pid`'s memory (`-1`: the kernel's).
    fn map(&mut self, pid: i32, address: u64, length: u64, page_offset: u64, path: &RawData<'_>) {
        let path: Box<str> = one_line(String::from_utf8_lossy(&path.as_slice()).into_owned()).into();
        if pid == -1
            && let Some(reference) = path.strip_prefix(KERNEL_DSO)
            && !reference.is_empty()
        {
            // perf_event__synthesize_kernel_mmap: the kernel's text, with
            // the address of its reference symbol as the page offset.
            self.recorded_kernel_reference = Some(KernelReference { symbol: reference.into(), address: page_offset });
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

    /// COMM: a thread's name; with exec, a new program in an empty address
    /// space.
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

    /// FORK: a new process gets a copy of its parent's memory, a new
    /// thread its parent thread's name.
    fn fork(&mut self, fork: &ForkOrExitRecord) {
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

    /// SAMPLE: its frames named, handed to `sink` when of the selected event.
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
        self.name_frames(record, pid, &mut sample.frames);
        sink.add_sample(&sample, &self.interner);
        self.sample = sample;
    }

    /// The frames of a sample's callchain, or of its instruction pointer
    /// without one, appended to `frames`. perf_callchain_store's context
    /// markers say whose addresses follow; the first address after each is
    /// the instruction pointer of that mode (the user one saved at kernel
    /// entry).
    fn name_frames(&mut self, record: &SampleRecord<'_>, pid: i32, frames: &mut Vec<Frame>) {
        let Some(callchain) = &record.callchain else {
            if let Some(address) = record.ip {
                frames.push(self.frame(pid, address, Mode::of_address(address), AddressKind::InstructionPointer));
            }
            return;
        };
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
                if address == PERF_CONTEXT_USER || frames.is_empty() {
                    next_kind = AddressKind::InstructionPointer;
                }
                continue;
            }
            frames.push(self.frame(pid, address, mode, next_kind));
            next_kind = AddressKind::ReturnAddress;
        }
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
}
