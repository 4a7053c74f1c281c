//! Reading a code log: from a stream in blocks ([`CodeLog::read`]), or
//! whole from memory, its text copied out or retained
//! ([`CodeLog::parse_retained`]); each line goes to the record builder.

use std::io::{self, Read};

use memchr::memchr_iter;

use super::builder::LogBuilder;
use super::{CodeLog, MAX_LINE_BYTES, MAX_UNENDED_BYTES, RetainedText};

/// The size of the blocks [`CodeLog::read`] reads.
const READ_BLOCK_BYTES: usize = 1 << 20;

impl CodeLog {
    /// Reads a code log from a stream, a block at a time: memory holds what
    /// the log describes, not its text (mostly script sources and position
    /// tables). Gives what [`CodeLog::parse`] gives for the whole text.
    pub fn read<R: Read>(input: R) -> io::Result<CodeLog> {
        CodeLog::read_in_blocks(input, READ_BLOCK_BYTES)
    }

    /// [`CodeLog::read`] in blocks of `block_bytes`.
    fn read_in_blocks<R: Read>(mut input: R, block_bytes: usize) -> io::Result<CodeLog> {
        let mut builder = LogBuilder::default();
        let mut buffer: Vec<u8> = Vec::with_capacity(block_bytes);
        // Where the bytes not yet searched for a line end start.
        let mut searched = 0;
        // The length so far of a line over MAX_LINE_BYTES being dropped.
        let mut dropping: Option<u64> = None;
        loop {
            let read = (&mut input).take(block_bytes as u64).read_to_end(&mut buffer)?;
            if let Some(dropped) = dropping.take() {
                match memchr::memchr(b'\n', &buffer) {
                    Some(newline) => {
                        builder.too_long_line(dropped + newline as u64);
                        buffer.drain(..=newline);
                        searched = 0;
                    }
                    None => {
                        let dropped = dropped + buffer.len() as u64;
                        buffer.clear();
                        if read == 0 {
                            builder.too_long_line(dropped);
                            return Ok(builder.log);
                        }
                        if dropped > MAX_UNENDED_BYTES {
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                format!(
                                    "no line end in {} MiB: no code log (an endless stream?)",
                                    MAX_UNENDED_BYTES >> 20
                                ),
                            ));
                        }
                        dropping = Some(dropped);
                        continue;
                    }
                }
            }
            // Whole lines are parsed where they lie; the cut last one waits
            // for the next block (a line longer than a block grows the
            // buffer, up to MAX_LINE_BYTES).
            let mut line_start = 0;
            for newline in memchr_iter(b'\n', &buffer[searched..]) {
                let newline = searched + newline;
                builder.line(&buffer[line_start..newline]);
                line_start = newline + 1;
            }
            buffer.drain(..line_start);
            searched = buffer.len();
            if read == 0 {
                if !buffer.is_empty() {
                    builder.cut_last_line(&buffer);
                }
                return Ok(builder.log);
            }
            if buffer.len() > MAX_LINE_BYTES {
                dropping = Some(buffer.len() as u64);
                buffer.clear();
                searched = 0;
            }
        }
    }

    /// Parses a whole code log held in memory.
    pub fn parse(bytes: &[u8]) -> CodeLog {
        CodeLog::parse_with_progress(bytes, |_| {})
    }

    /// [`CodeLog::parse`], telling `progress` every few megabytes the offset
    /// before which everything has been read (and nothing is kept: what the
    /// log keeps is copied out), so that a caller reading a memory-mapped
    /// file can let go of those pages.
    pub fn parse_with_progress(bytes: &[u8], progress: impl FnMut(usize)) -> CodeLog {
        CodeLog::parse_lines(bytes, None, progress)
    }

    /// [`CodeLog::parse_with_progress`] of `bytes`, which `retained` gives
    /// back for as long as the log lives (the same text in memory, or its
    /// file): the position tables and script sources are not copied out,
    /// only their ranges are kept, so `progress` may let go of the pages
    /// read as with [`CodeLog::parse_with_progress`].
    pub fn parse_retained(bytes: &[u8], retained: RetainedText, progress: impl FnMut(usize)) -> CodeLog {
        CodeLog::parse_lines(bytes, Some(&retained), progress)
    }

    fn parse_lines(bytes: &[u8], retained: Option<&RetainedText>, mut progress: impl FnMut(usize)) -> CodeLog {
        const PROGRESS_BYTES: usize = 16 << 20;
        let mut builder =
            LogBuilder { retained_base: retained.map(|_| bytes.as_ptr() as usize), ..LogBuilder::default() };
        let mut line_start = 0;
        let mut next_progress = PROGRESS_BYTES;
        for newline in memchr_iter(b'\n', bytes) {
            builder.line(&bytes[line_start..newline]);
            line_start = newline + 1;
            if line_start >= next_progress {
                progress(line_start);
                next_progress = line_start + PROGRESS_BYTES;
            }
        }
        if line_start < bytes.len() {
            builder.cut_last_line(&bytes[line_start..]);
        }
        builder.log.retained = retained.cloned();
        builder.log
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading in blocks, however small, parses every line as a whole-text
    /// parse does.
    #[test]
    fn reading_in_blocks_equals_parsing_whole() {
        let text: &[u8] = b"v8-version,11,3,244,8,-node.38,0\n\
            code-creation,JS,13,45545,0x7f3e9a7e5a40,396,b /tmp/a.js:2:11,0x1899,*\n\
            code-source-info,0x7f3e9a7e5a40,81,68,99,C0O68C39O28I0,F0O81,S0x1899\r\n\
            bad-line-without-fields\n\n\
            code-creation,JS,13,1,zz,20,f\n\
            script-source,81,/tmp/a.js,function b() {}";
        let whole = format!("{:?}", CodeLog::parse(text));
        for block in [1, 2, 7, 64, 1 << 20] {
            let read = CodeLog::read_in_blocks(text, block).unwrap();
            assert_eq!(format!("{read:?}"), whole, "block {block}");
        }
        assert_eq!(CodeLog::read_in_blocks(&text[..0], 4).unwrap().line_count, 0);
    }
}
