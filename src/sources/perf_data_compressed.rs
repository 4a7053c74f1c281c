//! How much the compressed records of a perf.data (`perf record -z`:
//! `PERF_RECORD_COMPRESSED` and `PERF_RECORD_COMPRESSED2`, zstd) expand to,
//! measured before `linux-perf-data` reads them: the crate decompresses each
//! such record whole into memory and keeps the records it holds until their
//! round is sorted, so 64 KB of crafted zstd (RLE blocks) would make it
//! allocate about 2 GB (a decompression bomb).
//!
//! [`ExpansionCheck`] decompresses the records in file order with the same
//! zstd library and one stream, as the crate does (perf writes one zstd
//! frame across many records), discards the output and counts its bytes and
//! the records in it. The estimate of the memory the crate needs for them is
//! their bytes plus [`RECORD_OVERHEAD`] per record. The reading ends before a
//! compressed record that takes it past either limit:
//!
//! * [`ROUND_LIMIT`] per round: the records between two `FINISHED_ROUND`
//!   records, which the crate holds to sort them by time. perf ends a round
//!   after each pass over its ring buffers and a pass takes at most one
//!   buffer per CPU (516 KiB by default, `perf record -m`), so the rounds of
//!   a real recording stay far below it: 256 MiB are a pass over 500 full
//!   default buffers.
//! * [`EXPANSION_RATIO`] times the compressed bytes read so far, plus
//!   [`EXPANSION_FLOOR`] (the first records of a small file): zstd makes
//!   perf data about 10 times smaller (perf prints the ratio: 11 for
//!   `testdata/perf-data-z`, 6.9 for `perf record -z -g -F 20000` of a shell
//!   loop; the estimate, with the per-record overhead, about 1.5 times
//!   that), a crafted stream up to 32,000 times (RLE blocks of 128 KiB in 4
//!   bytes).
//!
//! A stream zstd cannot decompress stops the check: the crate fails on the
//! same record, and the reading ends there anyway.

use zstd_safe::{DCtx, InBuffer, OutBuffer};

/// `PERF_RECORD_FINISHED_ROUND`.
const RECORD_FINISHED_ROUND: u32 = 68;
/// `PERF_RECORD_COMPRESSED` (Linux 5.2): the body is zstd data.
const RECORD_COMPRESSED: u32 = 81;
/// `PERF_RECORD_COMPRESSED2` (Linux 6.16): the body is the size of the zstd
/// data (`u64`), the data, then padding to 8 bytes.
const RECORD_COMPRESSED2: u32 = 83;

/// The most memory the decompressed records of one round may take (by the
/// estimate of [`ExpansionCheck`]).
pub(crate) const ROUND_LIMIT: u64 = 256 << 20;
/// How many times their compressed size the decompressed records may take
/// in memory (by the estimate), over all compressed records read so far...
pub(crate) const EXPANSION_RATIO: u64 = 1000;
/// ...plus this much.
pub(crate) const EXPANSION_FLOOR: u64 = 1 << 20;
/// What `linux-perf-data` 0.13 keeps per record besides its bytes while it
/// sorts a round (its sort key, the record and its buffer in a `VecDeque`):
/// about 150 bytes, measured on crafted rounds of empty records.
const RECORD_OVERHEAD: u64 = 160;
/// The output buffer of one decompression step (`ZSTD_DStreamOutSize`).
const SCRATCH_BYTES: usize = 128 << 10;

/// A limit a compressed record took the reading past (see the module
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expansion {
    /// The round's records would take more than [`ROUND_LIMIT`] bytes.
    Round { estimate: u64 },
    /// The compressed records so far, `compressed` bytes, would take more
    /// than [`EXPANSION_RATIO`] times that plus [`EXPANSION_FLOOR`].
    Ratio { estimate: u64, compressed: u64 },
}

impl std::fmt::Display for Expansion {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expansion::Round { estimate } => write!(
                formatter,
                "expected compressed records whose records take at most {ROUND_LIMIT} bytes in memory per round \
                 (between FINISHED_ROUND records), this one takes its round past {estimate} bytes"
            ),
            Expansion::Ratio { estimate, compressed } => write!(
                formatter,
                "expected compressed records whose records take at most {EXPANSION_RATIO} times their size in \
                 memory (plus {EXPANSION_FLOOR} bytes), the {compressed} bytes of compressed data up to this one's \
                 end take more than {estimate} bytes (a decompression bomb?)"
            ),
        }
    }
}

/// Decompresses the compressed records of a data section in file order,
/// counting what they hold (see the module documentation).
pub(crate) struct ExpansionCheck {
    little_endian: bool,
    /// The stream, once a compressed record was seen.
    stream: Option<(DCtx<'static>, Vec<u8>)>,
    /// zstd failed: the crate stops at the same record.
    failed: bool,
    /// The estimate for the records decompressed in this round.
    round_estimate: u64,
    /// The estimate for all records decompressed, and the compressed bytes.
    total_estimate: u64,
    total_compressed: u64,
    /// The header of the next decompressed record, as far as it came.
    header: [u8; 8],
    header_length: usize,
    /// What is left of the body of the decompressed record being passed.
    body_left: u64,
}

impl ExpansionCheck {
    pub(crate) fn new(little_endian: bool) -> ExpansionCheck {
        ExpansionCheck {
            little_endian,
            stream: None,
            failed: false,
            round_estimate: 0,
            total_estimate: 0,
            total_compressed: 0,
            header: [0; 8],
            header_length: 0,
            body_left: 0,
        }
    }

    /// Takes the next record of the data section (in file order): its type
    /// and body. A compressed record is decompressed as far as the limits
    /// allow; the limit it passes, if it does.
    pub(crate) fn visit(&mut self, record_type: u32, body: &[u8]) -> Result<(), Expansion> {
        let compressed = match record_type {
            RECORD_FINISHED_ROUND => {
                self.round_estimate = 0;
                return Ok(());
            }
            RECORD_COMPRESSED => body,
            RECORD_COMPRESSED2 => {
                let Some(size) = body.get(..8) else { return self.fail() };
                let size: [u8; 8] = size.try_into().unwrap_or_default();
                let size = if self.little_endian { u64::from_le_bytes(size) } else { u64::from_be_bytes(size) };
                match usize::try_from(size).ok().and_then(|size| body[8..].get(..size)) {
                    Some(data) => data,
                    None => return self.fail(),
                }
            }
            _ => return Ok(()),
        };
        if self.failed {
            return Ok(());
        }
        self.total_compressed += compressed.len() as u64;
        let (context, scratch) = self.stream.get_or_insert_with(|| (DCtx::create(), vec![0; SCRATCH_BYTES]));
        let mut input = InBuffer::around(compressed);
        // As linux-perf-data's ZstdDecompressor::decompress_into: until the
        // input is used and the output buffer is not filled.
        loop {
            let mut output = OutBuffer::around(&mut scratch[..]);
            if context.decompress_stream(&mut output, &mut input).is_err() {
                return self.fail();
            }
            let produced = output.pos();
            let records = count_records(
                &scratch[..produced],
                self.little_endian,
                &mut self.header,
                &mut self.header_length,
                &mut self.body_left,
            );
            let Some(records) = records else { return self.fail() };
            let estimate = produced as u64 + RECORD_OVERHEAD * records;
            self.round_estimate += estimate;
            self.total_estimate += estimate;
            if self.round_estimate > ROUND_LIMIT {
                return Err(Expansion::Round { estimate: self.round_estimate });
            }
            if self.total_estimate > EXPANSION_FLOOR + EXPANSION_RATIO * self.total_compressed {
                return Err(Expansion::Ratio { estimate: self.total_estimate, compressed: self.total_compressed });
            }
            if produced < scratch.len() && input.pos() == compressed.len() {
                return Ok(());
            }
        }
    }

    /// zstd or the records in its output failed where the crate fails: no
    /// more to check.
    fn fail(&mut self) -> Result<(), Expansion> {
        self.failed = true;
        self.stream = None;
        Ok(())
    }
}

/// Counts the record headers that start in `bytes`, the decompressed data
/// going on from where the last call stopped (`header`, `header_length`,
/// `body_left`); `None` at a record smaller than its header, where the crate
/// stops (`InvalidPerfEventSize`).
fn count_records(
    mut bytes: &[u8],
    little_endian: bool,
    header: &mut [u8; 8],
    header_length: &mut usize,
    body_left: &mut u64,
) -> Option<u64> {
    let mut records = 0;
    while !bytes.is_empty() {
        if *body_left > 0 {
            let passed = bytes.len().min(usize::try_from(*body_left).unwrap_or(usize::MAX));
            bytes = &bytes[passed..];
            *body_left -= passed as u64;
            continue;
        }
        let taken = bytes.len().min(8 - *header_length);
        header[*header_length..*header_length + taken].copy_from_slice(&bytes[..taken]);
        *header_length += taken;
        bytes = &bytes[taken..];
        if *header_length == 8 {
            *header_length = 0;
            let size = [header[6], header[7]];
            let size = if little_endian { u16::from_le_bytes(size) } else { u16::from_be_bytes(size) };
            *body_left = u64::from(size).checked_sub(8)?;
            records += 1;
        }
    }
    Some(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `PERF_RECORD_COMPRESSED`'s zstd data of `content` in raw blocks (of at
    /// most 128 KiB), one frame; `last` ends the frame.
    fn raw_blocks(content: &[u8], frame_start: bool, last: bool) -> Vec<u8> {
        let mut data = Vec::new();
        if frame_start {
            // Magic, no content size, no checksum, window 128 KiB.
            data.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38]);
        }
        let chunks: Vec<&[u8]> = content.chunks(128 << 10).collect();
        for (index, chunk) in chunks.iter().enumerate() {
            let is_last = last && index + 1 == chunks.len();
            let header = (chunk.len() as u32) << 3 | u32::from(is_last);
            data.extend_from_slice(&header.to_le_bytes()[..3]);
            data.extend_from_slice(chunk);
        }
        data
    }

    /// `count` RLE blocks of 128 KiB of `byte`, after a frame header.
    fn rle_blocks(byte: u8, count: usize) -> Vec<u8> {
        let mut data = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38];
        for _ in 0..count {
            let header = (128u32 << 10) << 3 | 1 << 1;
            data.extend_from_slice(&header.to_le_bytes()[..3]);
            data.push(byte);
        }
        data
    }

    fn records(count: usize, size: u16) -> Vec<u8> {
        let mut record = vec![0; usize::from(size)];
        record[..4].copy_from_slice(&9u32.to_le_bytes());
        record[6..8].copy_from_slice(&size.to_le_bytes());
        record.repeat(count)
    }

    #[test]
    fn counts_the_records_of_a_frame_across_compressed_records() {
        let content = records(1000, 64);
        let mut check = ExpansionCheck::new(true);
        // One frame in three records, as perf writes it; a header and a
        // record cut by the record boundaries.
        let (first, rest) = content.split_at(1000 * 64 / 3 + 5);
        let (second, third) = rest.split_at(1000 * 64 / 3);
        check.visit(RECORD_COMPRESSED, &raw_blocks(first, true, false)).unwrap();
        check.visit(RECORD_FINISHED_ROUND, &[]).unwrap();
        let mut compressed2 = Vec::new();
        let data = raw_blocks(second, false, false);
        compressed2.extend_from_slice(&(data.len() as u64).to_le_bytes());
        compressed2.extend_from_slice(&data);
        compressed2.resize(compressed2.len().next_multiple_of(8), 0);
        check.visit(RECORD_COMPRESSED2, &compressed2).unwrap();
        check.visit(RECORD_COMPRESSED, &raw_blocks(third, false, true)).unwrap();
        assert!(!check.failed);
        assert_eq!(check.total_estimate, 1000 * (64 + RECORD_OVERHEAD));
        assert_eq!(check.round_estimate, check.total_estimate - (first.len() as u64 + RECORD_OVERHEAD * 334));
    }

    #[test]
    fn rle_blocks_expanding_a_thousand_times_past_1_mib_end_the_reading() {
        // 16 Ki blocks of 128 KiB: 2 GiB from 64 KiB. The check stops after
        // 1 MiB and a thousand times the compressed size.
        let bomb = rle_blocks(0x10, 16 << 10);
        let mut check = ExpansionCheck::new(true);
        let expansion = check.visit(RECORD_COMPRESSED, &bomb).unwrap_err();
        let Expansion::Ratio { estimate, compressed } = expansion else { panic!("{expansion:?}") };
        assert_eq!(compressed, bomb.len() as u64);
        assert!(estimate > EXPANSION_FLOOR + EXPANSION_RATIO * compressed);
        assert!(estimate < EXPANSION_FLOOR + EXPANSION_RATIO * compressed + 2 * (SCRATCH_BYTES as u64));
        // Below the ratio: a round of 300 MiB in many records of 1 MiB.
        let mut check = ExpansionCheck::new(true);
        check.total_compressed = 1 << 40;
        let expansion = (0..300)
            .map(|index| check.visit(RECORD_COMPRESSED, &rle_blocks(0x10, 8)[if index == 0 { 0 } else { 6 }..]))
            .find_map(Result::err);
        assert!(matches!(expansion, Some(Expansion::Round { estimate }) if estimate > ROUND_LIMIT), "{expansion:?}");
        // A FINISHED_ROUND starts a new round.
        let mut check = ExpansionCheck::new(true);
        check.total_compressed = 1 << 40;
        for index in 0..300 {
            check.visit(RECORD_COMPRESSED, &rle_blocks(0x10, 8)[if index == 0 { 0 } else { 6 }..]).unwrap();
            check.visit(RECORD_FINISHED_ROUND, &[]).unwrap();
        }
    }

    #[test]
    fn what_zstd_cannot_decompress_ends_the_check() {
        let mut check = ExpansionCheck::new(true);
        check.visit(RECORD_COMPRESSED, b"not zstd").unwrap();
        assert!(check.failed);
        check.visit(RECORD_COMPRESSED, &rle_blocks(0x10, 16 << 10)).unwrap();
        // A record smaller than its header in the decompressed data.
        let mut check = ExpansionCheck::new(true);
        check.visit(RECORD_COMPRESSED, &raw_blocks(&[0, 0, 0, 0, 0, 0, 4, 0], true, false)).unwrap();
        assert!(check.failed);
    }
}
