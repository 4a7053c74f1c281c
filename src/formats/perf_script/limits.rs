//! The reader's limits: how much it reads at a time, and the line, sample
//! and unended input sizes past which the input is damage.

use std::io;

/// How many bytes the reader takes from its input at a time (more when a
/// line is longer).
pub(super) const BLOCK_BYTES: usize = 128 * 1024;

/// The longest line read: a longer one is damage, dropped as it is read
/// and counted as a skipped line. Real lines are a few kilobytes (the
/// longest in testdata/ is 7,201 bytes: a stack line of a long C++ name);
/// names of megabytes are still read.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// What stands in the text for a line over [`MAX_LINE_BYTES`]: no event
/// or stack line (no digits, no address), so it is skipped and counted
/// where the line was, and shown as the example.
pub const TOO_LONG_LINE: &str = "<v8inline: a line of more than sixty-four MiB, skipped>";

/// Past this many bytes without a line end the input is no text at all
/// (`/dev/zero` through a pipe): an error, not an endless read.
pub const MAX_UNENDED_BYTES: u64 = 1 << 30;

/// The most a sample may hold: its stack lines and the bytes from its event
/// line on. Real stacks have at most perf's `kernel.perf_event_max_stack`
/// (127 by default) frames. A larger sample is damage: dropped, counted as
/// a skipped line, the memory it held let go.
pub const MAX_SAMPLE_LINES: usize = 1 << 16;
/// See [`MAX_SAMPLE_LINES`].
pub const MAX_SAMPLE_BYTES: usize = 64 << 20;

/// The error of an input with no line end in [`MAX_UNENDED_BYTES`].
pub(super) fn no_line_end() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("no line end in {} MiB: no perf script text (an endless stream?)", MAX_UNENDED_BYTES >> 20),
    )
}
