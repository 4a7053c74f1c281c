//! The 40-byte file header at the start of every jitdump.

use object::Endianness;
use object::endian::{U32, U64};
use object::pod::Pod;

use super::error::{HeaderProblem, JitDumpError};

/// `"JiTD"` read as a `u32` in the byte order of the writer.
pub const MAGIC: u32 = 0x4A69_5444;

/// Size of [`FileHeader`]: the header as written by V8 and perf (version 1).
pub const FILE_HEADER_SIZE: usize = size_of::<FileHeader>();

/// The jitdump file header exactly as laid out on disk (`struct jitheader` of
/// the perf jitdump specification). Fields keep the specification's names.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct FileHeader {
    /// [`MAGIC`] in the byte order of the writer.
    pub magic: U32<Endianness>,
    /// Format version: 1 (V8, perf) or 2.
    pub version: U32<Endianness>,
    /// Size of the header in bytes: the first record starts here.
    pub total_size: U32<Endianness>,
    /// ELF `e_machine` of the jitted code (62 = x86-64).
    pub elf_mach: U32<Endianness>,
    /// Padding; V8 writes `0xDEADBEEF`.
    pub pad1: U32<Endianness>,
    /// Process id of the writer.
    pub pid: U32<Endianness>,
    /// Creation time of the file (V8: wall clock in microseconds).
    pub timestamp: U64<Endianness>,
    /// Bit field; bit 0 = `JITDUMP_FLAGS_ARCH_TIMESTAMP`.
    pub flags: U64<Endianness>,
}

// SAFETY: `repr(C)` struct made only of byte arrays (alignment 1, no padding),
// so every bit pattern is valid.
unsafe impl Pod for FileHeader {}

/// The decoded file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Process id of the writer (also in the file name `jit-PID.dump`).
    pub pid: u32,
    /// Format version (1 or 2).
    pub version: u32,
    /// ELF `e_machine` of the jitted code (62 = x86-64, 183 = AArch64).
    pub elf_machine: u32,
    /// Creation time of the file as written (V8: wall clock microseconds).
    pub timestamp: u64,
    /// Header flags as written.
    pub flags: u64,
    /// Byte order of every field of the file, found from the magic.
    pub endianness: Endianness,
    /// Header size in bytes: records start at this offset (at least 40).
    pub header_size: u32,
}

impl Header {
    /// Decodes and checks the header at the start of `bytes`.
    ///
    /// Fails if the file is shorter than the header, the magic is neither
    /// `"JiTD"` nor its byte swap, the version is not 1 or 2, or the header
    /// size is below 40 or past the end of the file.
    pub fn parse(bytes: &[u8]) -> Result<Header, JitDumpError> {
        let file_length = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        let Ok((fields, _)) = object::pod::from_bytes::<FileHeader>(bytes) else {
            return Err(header_error(0, HeaderProblem::TooShort { length: file_length }));
        };
        let endianness = if fields.magic.get(Endianness::Little) == MAGIC {
            Endianness::Little
        } else if fields.magic.get(Endianness::Big) == MAGIC {
            Endianness::Big
        } else {
            return Err(header_error(0, HeaderProblem::BadMagic { found: fields.magic.get(Endianness::Little) }));
        };
        let version = fields.version.get(endianness);
        if !(1..=2).contains(&version) {
            return Err(header_error(4, HeaderProblem::UnsupportedVersion { version }));
        }
        let header_size = fields.total_size.get(endianness);
        if usize::try_from(header_size).map_or(true, |size| size < FILE_HEADER_SIZE) {
            return Err(header_error(8, HeaderProblem::SizeTooSmall { size: header_size }));
        }
        if u64::from(header_size) > file_length {
            return Err(header_error(8, HeaderProblem::SizePastEnd { size: header_size, length: file_length }));
        }
        Ok(Header {
            pid: fields.pid.get(endianness),
            version,
            elf_machine: fields.elf_mach.get(endianness),
            timestamp: fields.timestamp.get(endianness),
            flags: fields.flags.get(endianness),
            endianness,
            header_size,
        })
    }
}

fn header_error(offset: u64, problem: HeaderProblem) -> JitDumpError {
    JitDumpError { offset, expected: problem }
}
