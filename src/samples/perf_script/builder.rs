//! Building [`Sample`]s from sources other than `perf script` text (V8's
//! `tick` records, perf.data), so that they fold through the same
//! [`crate::collapse::Folder`] and get the same frame names.

use super::{Sample, SampleTime, Span, StackLineParts};

/// A reusable buffer that holds one sample's fields and stack lines.
///
/// Each frame is given as perf script would print it (`address symbol
/// (module)`), so the folder names it exactly as it names a perf script line.
///
/// ```
/// use v8inline::samples::SampleBuilder;
///
/// let mut builder = SampleBuilder::new();
/// builder.start("node", 42, 42, None);
/// builder.push_frame(0x1234, "main+0x4", "/usr/bin/node");
/// let sample = builder.sample(Some(1));
/// assert_eq!(sample.frame(0).unwrap().symbol, "main+0x4");
/// assert_eq!(sample.frame(0).unwrap().module, "/usr/bin/node");
/// ```
#[derive(Debug, Default)]
pub struct SampleBuilder {
    /// `comm`, the pid and tid texts, the event, then each frame's address,
    /// symbol and module texts.
    text: String,
    /// Range of the comm in `text`.
    comm: Span,
    /// Range of the pid text.
    pid_text: Span,
    /// Range of the tid text.
    tid_text: Span,
    /// Range of the event name.
    event: Span,
    /// The process id.
    pid: u32,
    /// The thread id.
    tid: u32,
    /// The sample time.
    time: Option<SampleTime>,
    /// The stack lines, leaf first.
    stack: Vec<StackLineParts>,
}

impl SampleBuilder {
    /// An empty builder.
    pub fn new() -> SampleBuilder {
        SampleBuilder::default()
    }

    /// Starts a new sample of thread `tid` of process `pid`, named `comm`
    /// (the root frame), forgetting the previous one.
    pub fn start(&mut self, comm: &str, pid: u32, tid: u32, time: Option<SampleTime>) {
        use std::fmt::Write;
        self.text.clear();
        self.stack.clear();
        self.comm = self.append(|text| text.push_str(comm));
        self.pid_text = self.append(|text| {
            let _ = write!(text, "{pid}");
        });
        self.tid_text = self.append(|text| {
            let _ = write!(text, "{tid}");
        });
        self.event = Span::default();
        self.pid = pid;
        self.tid = tid;
        self.time = time;
    }

    /// Sets the event name (e.g. `cpu-clock`) of the current sample.
    pub fn set_event(&mut self, event: &str) {
        self.event = self.append(|text| text.push_str(event));
    }

    /// Appends a frame toward the root: `symbol` with any `+0x` offset, and
    /// `module` without parentheses (`[unknown]` when none).
    pub fn push_frame(&mut self, address: u64, symbol: &str, module: &str) {
        use std::fmt::Write;
        let address_text = self.append(|text| {
            let _ = write!(text, "{address:x}");
        });
        let symbol = self.append(|text| text.push_str(symbol));
        let module = self.append(|text| text.push_str(module));
        self.stack.push(StackLineParts { address, address_text, symbol, module });
    }

    /// The number of frames pushed since [`SampleBuilder::start`].
    pub fn frame_count(&self) -> usize {
        self.stack.len()
    }

    /// The sample built so far, weighing `period` (or 1).
    pub fn sample(&self, period: Option<u64>) -> Sample<'_> {
        Sample {
            comm: self.comm.of(&self.text),
            pid: Some(self.pid),
            tid: self.tid,
            pid_text: self.pid_text.of(&self.text),
            tid_text: self.tid_text.of(&self.text),
            cpu: None,
            time: self.time,
            period,
            event: self.event.of(&self.text),
            line_number: 0,
            text: &self.text,
            stack: &self.stack,
        }
    }

    /// Appends what `write` writes to the text and returns its range.
    fn append(&mut self, write: impl FnOnce(&mut String)) -> Span {
        let start = self.text.len();
        write(&mut self.text);
        Span { start, end: self.text.len() }
    }
}
