//! A sample sink on a thread of its own: the source reads on the calling
//! thread while another thread expands and aggregates what it has read.
//!
//! Past the one-time symbol load, reading a perf.data (decoding records,
//! walking address spaces, naming frames) is about 45 % of `--perf-data`'s
//! time and expanding and folding the rest: on two cores the two overlap.
//! Samples cross in batches, copied, with what the source's
//! [`SampleInterner`] gained since the batch before; the receiving thread
//! keeps a copy of the interner in step, so the ids of a sample mean there
//! what they meant to the source.

use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

use crate::model::sample::{Frame, InternerGrowth, InternerMark, Sample, SampleInterner, SampleSink};

/// A batch is sent once it holds this many frames (115 KB of them, a
/// thousand batches for 25,000 samples of 74 frames): on the realapp
/// recording, whole `--perf-data` runs took 172 ms with these and two
/// batches waiting, 198 ms with batches of 1,024 and one waiting; batches of
/// 8,192 or more were slower too (they no longer stay in the cache).
const FRAMES_PER_BATCH: usize = 2048;

/// Or once it holds this many samples (of few frames each).
const SAMPLES_PER_BATCH: usize = 1024;

/// Batches that may wait for the receiving thread: the reader runs ahead
/// by at most this many.
const BATCHES_WAITING: usize = 2;

/// Samples on their way to the receiving thread.
#[derive(Default)]
struct SampleBatch {
    /// The samples without their frames.
    samples: Vec<Sample>,
    /// The frames of all samples, one after the other: one buffer, which
    /// keeps its memory from batch to batch (a buffer per sample would keep
    /// the deepest stack it ever held, megabytes over the batches).
    frames: Vec<Frame>,
    /// Where each sample's frames end in `frames`.
    frame_ends: Vec<usize>,
    /// What the source's interner gained before the batch's last sample.
    growth: InternerGrowth,
}

impl SampleBatch {
    /// Empties the batch for reuse, keeping its memory.
    fn clear(&mut self) {
        self.samples.clear();
        self.frames.clear();
        self.frame_ends.clear();
        self.growth.clear();
    }
}

/// The sending side, the sink the source sees.
struct Relay {
    batch: SampleBatch,
    /// How far the source's interner stood when its growth was last copied.
    copied: InternerMark,
    sender: SyncSender<SampleBatch>,
    /// Batches the receiving thread is done with, for reuse.
    returned: Receiver<SampleBatch>,
}

impl SampleSink for Relay {
    fn add_sample(&mut self, sample: &Sample, interner: &SampleInterner) {
        // The growth goes with the sample that may use it: the last batch is
        // then sent with all it needs, when the interner is out of reach.
        if interner.mark() != self.copied {
            self.copied = interner.growth_since(self.copied, &mut self.batch.growth);
        }
        let batch = &mut self.batch;
        let mut header = Sample::default();
        header.copy_all_but_frames(sample);
        batch.samples.push(header);
        batch.frames.extend_from_slice(&sample.frames);
        batch.frame_ends.push(batch.frames.len());
        if batch.frames.len() >= FRAMES_PER_BATCH || batch.samples.len() >= SAMPLES_PER_BATCH {
            self.send();
        }
    }
}

impl Relay {
    /// Sends the batch and starts another.
    fn send(&mut self) {
        let next = self.returned.try_recv().unwrap_or_default();
        let full = std::mem::replace(&mut self.batch, next);
        // Only a receiving thread that panicked hangs up; its panic is
        // raised when it is joined.
        let _ = self.sender.send(full);
    }
}

/// Runs `read` with `sink`: through [`read_with_sink_on_thread`] when
/// `threads` allows a second one, directly otherwise.
pub fn read_with_sink<Sink: SampleSink + Send, Output>(
    sink: &mut Sink,
    threads: usize,
    read: impl FnOnce(&mut dyn SampleSink) -> Output,
) -> Output {
    if threads > 1 { read_with_sink_on_thread(sink, read) } else { read(sink) }
}

/// Runs `read` on this thread with a sink that hands each sample on to
/// `sink` on another thread, in the same order, and returns what `read`
/// returned once `sink` has taken every sample. `read` must use one
/// interner for all its samples, as [`SampleSink`] asks of a source.
pub fn read_with_sink_on_thread<Sink: SampleSink + Send, Output>(
    sink: &mut Sink,
    read: impl FnOnce(&mut dyn SampleSink) -> Output,
) -> Output {
    let (sender, receiver) = sync_channel::<SampleBatch>(BATCHES_WAITING);
    let (returner, returned) = channel::<SampleBatch>();
    std::thread::scope(|scope| {
        let receiving = scope.spawn(move || receive(sink, receiver, returner));
        let mut relay = Relay { batch: SampleBatch::default(), copied: InternerMark::default(), sender, returned };
        let output = read(&mut relay);
        if !relay.batch.samples.is_empty() || !relay.batch.growth.is_empty() {
            relay.send();
        }
        // Hanging up ends the receiving thread's loop.
        drop(relay);
        if let Err(panic) = receiving.join() {
            std::panic::resume_unwind(panic);
        }
        output
    })
}

/// The receiving thread: hands every sample of every batch to `sink`.
fn receive<Sink: SampleSink>(sink: &mut Sink, batches: Receiver<SampleBatch>, returner: Sender<SampleBatch>) {
    let mut interner = SampleInterner::new();
    let mut sample = Sample::default();
    for mut batch in batches {
        interner.apply(&batch.growth);
        let mut frames_start = 0;
        for (header, &frames_end) in batch.samples.iter().zip(&batch.frame_ends) {
            sample.copy_all_but_frames(header);
            sample.frames.clear();
            sample.frames.extend_from_slice(&batch.frames[frames_start..frames_end]);
            frames_start = frames_end;
            sink.add_sample(&sample, &interner);
        }
        batch.clear();
        // The reader may be done: then the batch is freed.
        let _ = returner.send(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample::{AddressKind, Frame, ModuleKind};

    /// Records each sample as text, its ids resolved through the interner
    /// it came with.
    #[derive(Default)]
    struct Transcript(Vec<String>);

    impl SampleSink for Transcript {
        fn add_sample(&mut self, sample: &Sample, interner: &SampleInterner) {
            let frames: Vec<String> = sample
                .frames
                .iter()
                .map(|frame| {
                    format!(
                        "{:x} {} ({} {:?})",
                        frame.address,
                        interner.string_or_empty(frame.symbol),
                        interner.module_path(frame.module),
                        interner.module_kind(frame.module)
                    )
                })
                .collect();
            self.0.push(format!(
                "{} {:?} {} {:?}: {}",
                interner.string_or_empty(sample.comm),
                sample.pid,
                interner.string_or_empty(sample.event),
                sample.period,
                frames.join(", ")
            ));
        }
    }

    /// Samples whose strings and modules are interned as they come, some
    /// deep (to fill batches by frames), some of no frame, with strings
    /// first seen in the last samples (sent with the last batch).
    fn read_samples(count: usize, sink: &mut dyn SampleSink) -> usize {
        let mut interner = SampleInterner::new();
        let mut sample = Sample::default();
        for index in 0..count {
            sample.clear();
            sample.comm = Some(interner.intern(&format!("thread-{}", index % 7)));
            sample.pid = Some(index as u32 % 3);
            sample.event = Some(interner.intern("cpu-clock"));
            sample.period = Some(index as u64);
            let depth = match index {
                _ if index % 5 == 0 => 0,
                _ if index % 97 == 1 => 9000,
                _ => index % 40,
            };
            for level in 0..depth {
                let module = interner.module(&format!("/lib/{}.so", level % 11), ModuleKind::File);
                sample.frames.push(Frame {
                    address: (index * 1000 + level) as u64,
                    address_kind: AddressKind::ReturnAddress,
                    module,
                    symbol: Some(interner.intern(&format!("function_{}", (index + level) % 5000))),
                    symbol_offset: None,
                    address_text: None,
                    file_address: None,
                    number: None,
                });
            }
            sink.add_sample(&sample, &interner);
        }
        count
    }

    #[test]
    fn the_sink_on_a_thread_sees_what_it_would_see_here() {
        for count in [0, 1, 5, 1500, 4000] {
            let mut expected = Transcript::default();
            read_samples(count, &mut expected);
            let mut relayed = Transcript::default();
            let read = read_with_sink_on_thread(&mut relayed, |sink| read_samples(count, sink));
            assert_eq!(read, count);
            assert_eq!(relayed.0.len(), count);
            assert!(relayed.0 == expected.0, "{count} samples: the relayed samples differ");
        }
    }
}
