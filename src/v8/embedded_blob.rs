//! Names for the builtins of a binary without symbols (Deno's is
//! stripped): where V8's embedded blob lies in the file, found from the
//! code log's builtins, so that a sample perf could only call `[deno]` gets
//! the symbol node's binary gives the same code (`Builtins_LoadIC_Megamorphic`).
//!
//! The code log gives each builtin's address and size, but at the copy V8
//! made of the blob in its code range (`CodeRange::RemapEmbeddedBuiltins`);
//! the samples run in the binary's own blob, whose place in the file no
//! record gives. V8 lays the builtins out one after another, each padded to
//! its code alignment with one filler byte (`int3`, 0xCC, on x64:
//! `EmbeddedData::FillPadding`), so the blob is where the file holds that
//! byte in every gap the log implies, and the builtins' first bytes are
//! mostly not that byte. Thousands of gaps make the place certain; more than one such
//! place, or none (the file on disk is not the one that ran), names nothing.

use std::path::Path;

use crate::formats::v8log::builtins::EmbeddedBuiltin;

/// The blob's builtins at their place in one file.
#[derive(Debug, Clone)]
pub struct EmbeddedBlobSymbols {
    /// The file offset of the first builtin.
    start: u64,
    /// The builtins in address order, their addresses the log's.
    builtins: Vec<EmbeddedBuiltin>,
}

/// The fewest padding gaps that make a place certain.
const MIN_GAPS: usize = 64;

/// Candidate places are tried at this alignment: V8 aligns the blob's code
/// to at least 32 bytes on every architecture.
const CANDIDATE_ALIGNMENT: u64 = 32;

/// One padding gap: its offset from the first builtin and its length.
#[derive(Debug, Clone, Copy)]
struct Gap {
    offset: usize,
    length: usize,
}

impl EmbeddedBlobSymbols {
    /// Finds the blob of `builtins` (in address order, from one code log)
    /// in the executable segments of the ELF file at `path`. `None` when
    /// the file cannot be read, or the blob is in none of its places or
    /// could be in more than one.
    pub fn locate(path: &Path, builtins: Vec<EmbeddedBuiltin>) -> Option<EmbeddedBlobSymbols> {
        // A recording may name any path: a FIFO would wait for a writer.
        if !std::fs::metadata(path).ok()?.is_file() {
            return None;
        }
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: read only, and only while this function runs. A binary
        // truncated under the mapping would fault as code logs read in
        // place would (files.rs); a binary rewritten in place gives other
        // bytes, where no place fits.
        let mapping = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let start = locate_in(&mapping, &builtins)?;
        Some(EmbeddedBlobSymbols { start, builtins })
    }

    /// The symbol of the builtin at `file_address` (an address in the file,
    /// as perf gives it).
    pub fn symbol_at(&self, file_address: u64) -> Option<&str> {
        let first = self.builtins.first()?.address;
        let address = first.checked_add(file_address.checked_sub(self.start)?)?;
        let index = self.builtins.partition_point(|builtin| builtin.address <= address).checked_sub(1)?;
        let builtin = &self.builtins[index];
        (address < builtin.address.saturating_add(builtin.size)).then_some(builtin.symbol.as_str())
    }
}

/// The file offset of the first builtin in `file`, an ELF image: the one
/// candidate in its executable segments where every gap holds one padding
/// byte and few builtins start with it.
fn locate_in(file: &[u8], builtins: &[EmbeddedBuiltin]) -> Option<u64> {
    use object::{Object, ObjectSegment, SegmentFlags};
    let first = builtins.first()?;
    let last = builtins.last()?;
    let blob_length = usize::try_from(last.address.checked_add(last.size)?.checked_sub(first.address)?).ok()?;
    let gaps: Vec<Gap> = builtins
        .windows(2)
        .filter_map(|pair| {
            let end = pair[0].address.checked_add(pair[0].size)?;
            let length = usize::try_from(pair[1].address.checked_sub(end)?).ok()?;
            let offset = usize::try_from(end - first.address).ok()?;
            (length > 0).then_some(Gap { offset, length })
        })
        .collect();
    if gaps.len() < MIN_GAPS {
        return None;
    }
    let starts: Vec<usize> =
        builtins.iter().filter_map(|builtin| usize::try_from(builtin.address - first.address).ok()).collect();
    let elf = object::File::parse(file).ok()?;
    let mut found = None;
    for segment in elf.segments() {
        let executable = match segment.flags() {
            SegmentFlags::Elf { p_flags, .. } => p_flags.0 & object::elf::PF_X.0 != 0,
            _ => false,
        };
        if !executable {
            continue;
        }
        let (segment_offset, segment_size) = segment.file_range();
        let Some(bytes) = usize::try_from(segment_offset)
            .ok()
            .zip(usize::try_from(segment_size).ok())
            .and_then(|(offset, size)| file.get(offset..offset.checked_add(size)?))
        else {
            continue;
        };
        // Candidates aligned in the file (segments are page aligned).
        let mut candidate = (CANDIDATE_ALIGNMENT - segment_offset % CANDIDATE_ALIGNMENT) % CANDIDATE_ALIGNMENT;
        while let Some(end) = (candidate as usize).checked_add(blob_length).filter(|&end| end <= bytes.len()) {
            let blob = &bytes[candidate as usize..end];
            if blob_fits(blob, &gaps, &starts) {
                if found.is_some() {
                    return None;
                }
                found = Some(segment_offset + candidate);
            }
            candidate += CANDIDATE_ALIGNMENT;
        }
    }
    found
}

/// Whether `blob` has one padding byte in every gap, and its builtins
/// mostly do not start with it: a few are a lone trap on this
/// architecture (Deno's `BigIntToI32Pair`, for 32-bit ones only, is an
/// `int3`), a region of one byte repeated is no blob.
fn blob_fits(blob: &[u8], gaps: &[Gap], starts: &[usize]) -> bool {
    let padding = blob[gaps[0].offset];
    gaps.iter().all(|gap| blob[gap.offset..gap.offset + gap.length].iter().all(|&byte| byte == padding))
        && starts.iter().filter(|&&start| blob.get(start) == Some(&padding)).count() <= starts.len() / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(address: u64, size: u64, symbol: &str) -> EmbeddedBuiltin {
        EmbeddedBuiltin { address, size, symbol: symbol.to_string() }
    }

    #[test]
    fn names_the_builtin_at_a_file_address() {
        let blob = EmbeddedBlobSymbols {
            start: 0x1000,
            builtins: vec![builtin(0x7f00, 0x30, "Builtins_A"), builtin(0x7f40, 0x10, "Builtins_B")],
        };
        assert_eq!(blob.symbol_at(0x1000), Some("Builtins_A"));
        assert_eq!(blob.symbol_at(0x102f), Some("Builtins_A"));
        assert_eq!(blob.symbol_at(0x1030), None, "padding");
        assert_eq!(blob.symbol_at(0x1045), Some("Builtins_B"));
        assert_eq!(blob.symbol_at(0x1050), None);
        assert_eq!(blob.symbol_at(0xfff), None);
    }

    #[test]
    fn a_blob_fits_where_every_gap_is_padding() {
        let gaps = [Gap { offset: 3, length: 2 }, Gap { offset: 7, length: 1 }];
        let starts = [0, 5, 8];
        assert!(blob_fits(&[1, 2, 3, 0xcc, 0xcc, 4, 5, 0xcc, 6], &gaps, &starts));
        let many_starts: Vec<usize> = (0..16).map(|index| index * 2).collect();
        let mut trapping = vec![0x55; 32];
        trapping[4] = 0xcc;
        let one_gap = [Gap { offset: 1, length: 1 }];
        trapping[1] = 0xcc;
        assert!(blob_fits(&trapping, &one_gap, &many_starts), "a builtin or two that are a trap");
        assert!(!blob_fits(&[1, 2, 3, 0xcc, 0xcc, 4, 5, 0x90, 6], &gaps, &starts));
        assert!(!blob_fits(&[0, 0, 0, 0, 0, 0, 0, 0, 0], &gaps, &starts), "zeros everywhere");
    }
}
