//! Unit tests on hand-built jitdumps.

use object::Endianness;
use object::endian::{I32, U32, U64};
use object::pod::bytes_of;

use super::*;

const PID: u32 = 4242;

/// Builds jitdump files in either byte order.
struct Builder {
    endian: Endianness,
    bytes: Vec<u8>,
}

impl Builder {
    /// A file with a standard version-1, 40-byte header.
    fn new(endian: Endianness) -> Builder {
        Builder::with_header(endian, 1, 40)
    }

    /// A file with the given header version and size (extra header bytes are
    /// filled with 0xAB).
    fn with_header(endian: Endianness, version: u32, header_size: u32) -> Builder {
        let header = FileHeader {
            magic: U32::new(endian, MAGIC),
            version: U32::new(endian, version),
            total_size: U32::new(endian, header_size),
            elf_mach: U32::new(endian, 62),
            pad1: U32::new(endian, 0xDEAD_BEEF),
            pid: U32::new(endian, PID),
            timestamp: U64::new(endian, 1_700_000_000_000_000),
            flags: U64::new(endian, 0),
        };
        let mut bytes = bytes_of(&header).to_vec();
        bytes.resize(header_size.max(40) as usize, 0xAB);
        Builder { endian, bytes }
    }

    /// Appends a record with a correct `total_size`; returns its offset.
    fn record(&mut self, id: u32, timestamp: u64, body: &[u8]) -> usize {
        let total_size = u32::try_from(RECORD_PREFIX_SIZE + body.len()).unwrap();
        self.record_with_size(id, timestamp, total_size, body)
    }

    /// Appends a record prefix with any `total_size`, then `body`.
    fn record_with_size(&mut self, id: u32, timestamp: u64, total_size: u32, body: &[u8]) -> usize {
        let offset = self.bytes.len();
        let prefix = RecordPrefix {
            id: U32::new(self.endian, id),
            total_size: U32::new(self.endian, total_size),
            timestamp: U64::new(self.endian, timestamp),
        };
        self.bytes.extend_from_slice(bytes_of(&prefix));
        self.bytes.extend_from_slice(body);
        offset
    }

    /// Appends a CODE_LOAD with `code_size` bytes of 0xCC code.
    fn load(&mut self, index: u64, address: u64, code_size: u64, name: &str) -> usize {
        self.load_at(1000 + index, index, address, code_size, name)
    }

    /// [`Builder::load`] written at `timestamp`.
    fn load_at(&mut self, timestamp: u64, index: u64, address: u64, code_size: u64, name: &str) -> usize {
        let body = self.load_body(index, address, code_size, name.as_bytes(), true);
        self.record(0, timestamp, &body)
    }

    fn load_body(&self, index: u64, address: u64, code_size: u64, name: &[u8], nul: bool) -> Vec<u8> {
        let endian = self.endian;
        let fields = CodeLoadFields {
            pid: U32::new(endian, PID),
            tid: U32::new(endian, PID + 1),
            vma: U64::new(endian, address),
            code_addr: U64::new(endian, address),
            code_size: U64::new(endian, code_size),
            code_index: U64::new(endian, index),
        };
        let mut body = bytes_of(&fields).to_vec();
        body.extend_from_slice(name);
        if nul {
            body.push(0);
        }
        body.resize(body.len() + code_size as usize, 0xCC);
        body
    }

    fn move_body(&self, index: u64, old_address: u64, new_address: u64) -> Vec<u8> {
        let endian = self.endian;
        let fields = CodeMoveFields {
            pid: U32::new(endian, PID),
            tid: U32::new(endian, PID + 1),
            vma: U64::new(endian, new_address),
            old_code_addr: U64::new(endian, old_address),
            new_code_addr: U64::new(endian, new_address),
            code_size: U64::new(endian, 64),
            code_index: U64::new(endian, index),
        };
        bytes_of(&fields).to_vec()
    }

    /// A DEBUG_INFO body; each entry's name is written as given plus a NUL,
    /// then zero padding to a multiple of 8 (as V8 does).
    fn debug_body(&self, code_address: u64, declared: u64, entries: &[(u64, i32, i32, &[u8])]) -> Vec<u8> {
        let endian = self.endian;
        let fields =
            DebugInfoFields { code_addr: U64::new(endian, code_address), nr_entry: U64::new(endian, declared) };
        let mut body = bytes_of(&fields).to_vec();
        for (address, line, column, name) in entries {
            let entry = DebugEntryFields {
                addr: U64::new(endian, *address),
                lineno: I32::new(endian, *line),
                discrim: I32::new(endian, *column),
            };
            body.extend_from_slice(bytes_of(&entry));
            body.extend_from_slice(name);
            body.push(0);
        }
        let padded = (RECORD_PREFIX_SIZE + body.len()).div_ceil(8) * 8 - RECORD_PREFIX_SIZE;
        body.resize(padded, 0);
        body
    }
}

fn read_default(bytes: &[u8]) -> JitDump {
    read(bytes, &ReadOptions::default()).expect("header is valid")
}

fn read_debug(bytes: &[u8]) -> JitDump {
    read(bytes, &ReadOptions { debug_info: true }).expect("header is valid")
}

/// A small file with every record kind, in `endian`.
fn sample_file(endian: Endianness) -> Vec<u8> {
    let mut builder = Builder::new(endian);
    builder.load(0, 0x7f00_0000_1000, 32, "Builtin:ArgumentsAdaptorTrampoline");
    let debug = builder.debug_body(
        0x7f00_0000_2000,
        2,
        &[(0x7f00_0000_2040, 3, 5, b"/app/deep.js"), (0x7f00_0000_2048, 4, 7, b"\xff")],
    );
    builder.record(2, 1500, &debug);
    builder.record(4, 1501, &[0u8; 40]);
    builder.load(1, 0x7f00_0000_2000, 24, "JS:*kernel /app/deep.js:24:16");
    let code_move = builder.move_body(1, 0x7f00_0000_2000, 0x7f00_0000_3000);
    builder.record(1, 1600, &code_move);
    builder.record(99, 1700, b"future record type");
    builder.record(3, 1800, &[]);
    builder.bytes
}

#[test]
fn reads_every_record_kind_little_endian() {
    let dump = read_debug(&sample_file(Endianness::Little));
    assert_eq!(
        dump.header,
        Header {
            pid: PID,
            version: 1,
            elf_machine: 62,
            timestamp: 1_700_000_000_000_000,
            flags: 0,
            endianness: Endianness::Little,
            header_size: 40,
        }
    );
    assert_eq!(dump.warnings, []);
    assert_eq!(dump.loads.len(), 2);
    let load = &dump.loads[1];
    assert_eq!(&*load.name, "JS:*kernel /app/deep.js:24:16");
    assert_eq!(load.code_address, 0x7f00_0000_2000);
    assert_eq!(load.vma, 0x7f00_0000_2000);
    assert_eq!(load.code_size, 24);
    assert_eq!(load.code_index, 1);
    assert_eq!(load.pid, PID);
    assert_eq!(load.tid, PID + 1);
    assert_eq!(load.timestamp, 1001);
    assert_eq!(dump.loads[0].record_offset, 40);
    // CODE_MOVE is checked and dropped: V8 moves no code it reported (see JitDump).
    // UNWINDING_INFO, unknown id 99, CODE_CLOSE.
    assert_eq!(dump.skipped_records, 3);
    assert_eq!(dump.debug_infos.len(), 1);
    let debug = &dump.debug_infos[0];
    assert_eq!(debug.code_address, 0x7f00_0000_2000);
    assert_eq!(debug.timestamp, 1500);
    assert_eq!(debug.resyncs, 0);
    assert_eq!(
        debug.entries,
        [
            DebugEntry { address: 0x7f00_0000_2040, line: 3, column: 5, file_name: b"/app/deep.js".to_vec() },
            // "\xff" means: same file as the previous entry.
            DebugEntry { address: 0x7f00_0000_2048, line: 4, column: 7, file_name: b"/app/deep.js".to_vec() },
        ]
    );
    assert_eq!(debug.entries[0].code_offset(debug.code_address), Some(0));
    assert_eq!(debug.entries[1].code_offset(debug.code_address), Some(8));
}

#[test]
fn big_endian_file_reads_like_little_endian() {
    let little = read_debug(&sample_file(Endianness::Little));
    let big_endian = read_debug(&sample_file(Endianness::Big));
    assert_eq!(big_endian.header.endianness, Endianness::Big);
    assert_eq!(big_endian.header.pid, PID);
    assert_eq!(big_endian.loads, little.loads);
    assert_eq!(big_endian.debug_infos, little.debug_infos);
    assert_eq!(big_endian.skipped_records, little.skipped_records);
    assert_eq!(big_endian.warnings, []);
}

#[test]
fn debug_info_is_skipped_unless_asked_for() {
    let dump = read_default(&sample_file(Endianness::Little));
    assert!(dump.debug_infos.is_empty());
    assert_eq!(dump.skipped_records, 4);
    assert_eq!(dump.loads.len(), 2);
    assert_eq!(dump.warnings, []);
}

#[test]
fn header_larger_than_40_bytes_is_skipped() {
    let mut builder = Builder::with_header(Endianness::Little, 1, 64);
    builder.load(0, 0x1000, 4, "first");
    let dump = read_default(&builder.bytes);
    assert_eq!(dump.header.header_size, 64);
    assert_eq!(dump.loads.len(), 1);
    assert_eq!(&*dump.loads[0].name, "first");
    assert_eq!(dump.loads[0].record_offset, 64);
    assert_eq!(dump.warnings, []);
}

#[test]
fn version_2_is_accepted() {
    let mut builder = Builder::with_header(Endianness::Big, 2, 40);
    builder.load(0, 0x1000, 4, "first");
    let dump = read_default(&builder.bytes);
    assert_eq!(dump.header.version, 2);
    assert_eq!(dump.loads.len(), 1);
}

/// A file a killed writer left ends where its buffer was last flushed, a
/// multiple of 4 KiB, inside a record; a cut elsewhere is other damage.
#[test]
fn a_cut_at_a_flush_is_a_killed_writers() {
    let mut builder = Builder::new(Endianness::Little);
    for index in 0..100 {
        builder.load(index, 0x7f00_0000_1000 + index * 0x100, 32, "JS:*kernel /app/deep.js:24:16");
    }
    assert!(builder.bytes.len() > 4096);
    let cut = |length: usize| read_default(&builder.bytes[..length]).warnings;
    let [warning] = &cut(4096)[..] else { panic!("{:?}", cut(4096)) };
    assert!(matches!(warning, JitDumpWarning::Truncated { .. }) && warning.is_cut_by_writers_death());
    let [warning] = &cut(4095)[..] else { panic!("{:?}", cut(4095)) };
    assert!(matches!(warning, JitDumpWarning::Truncated { .. }) && !warning.is_cut_by_writers_death());
}

#[test]
fn header_only_file_has_no_records_and_no_warnings() {
    let dump = read_default(&Builder::new(Endianness::Little).bytes);
    assert!(dump.loads.is_empty());
    assert_eq!(dump.warnings, []);
}

fn header_error(bytes: &[u8]) -> (Option<u64>, HeaderProblem, String) {
    let error = read(bytes, &ReadOptions::default()).expect_err("header is unusable");
    let message = error.to_string();
    (Some(error.offset), error.expected, message)
}

#[test]
fn unusable_headers_are_errors_naming_the_offset() {
    let (offset, problem, message) = header_error(&[0x44, 0x54, 0x69]);
    assert_eq!(offset, Some(0));
    assert_eq!(problem, HeaderProblem::TooShort { length: 3 });
    assert_eq!(message, "byte offset 0: expected a 40-byte jitdump header, the file has only 3 bytes");

    let mut bad_magic = Builder::new(Endianness::Little).bytes;
    bad_magic[..4].copy_from_slice(b"ELF\x7f");
    let (offset, problem, message) = header_error(&bad_magic);
    assert_eq!(offset, Some(0));
    assert!(matches!(problem, HeaderProblem::BadMagic { found: 0x7F46_4C45 }));
    assert_eq!(message, "byte offset 0: expected magic 0x4A695444 (\"JiTD\") in either byte order, found 0x7F464C45");

    let (offset, problem, message) = header_error(&Builder::with_header(Endianness::Big, 3, 40).bytes);
    assert_eq!(offset, Some(4));
    assert_eq!(problem, HeaderProblem::UnsupportedVersion { version: 3 });
    assert_eq!(message, "byte offset 4: expected jitdump version 1 or 2, found 3");

    let mut small = Builder::new(Endianness::Little).bytes;
    small[8..12].copy_from_slice(&16u32.to_le_bytes());
    let (offset, problem, _) = header_error(&small);
    assert_eq!(offset, Some(8));
    assert_eq!(problem, HeaderProblem::SizeTooSmall { size: 16 });

    let mut past_end = Builder::new(Endianness::Little).bytes;
    past_end[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    let (offset, problem, _) = header_error(&past_end);
    assert_eq!(offset, Some(8));
    assert_eq!(problem, HeaderProblem::SizePastEnd { size: u32::MAX, length: 40 });
}

#[test]
fn read_path_prefixes_errors_with_the_path() {
    let path = std::env::temp_dir().join(format!("v8inline-jitdump-unit-{}.dump", std::process::id()));
    std::fs::write(&path, b"not a jitdump at all, but long enough for a header").unwrap();
    let error = read_path(&path, &ReadOptions::default()).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(error.cause, ReadPathCause::Header(JitDumpError { offset: 0, .. })), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "{}: byte offset 0: expected magic 0x4A695444 (\"JiTD\") in either byte order, found 0x20746F6E",
            path.display()
        )
    );

    let missing = std::env::temp_dir().join("v8inline-jitdump-unit-missing/jit-1.dump");
    let error = read_path(&missing, &ReadOptions::default()).unwrap_err();
    assert!(matches!(error.cause, ReadPathCause::Read(_)), "{error:?}");
    assert!(error.to_string().starts_with(&format!("{}: ", missing.display())));
}

#[test]
fn read_path_reads_a_file() {
    let path = std::env::temp_dir().join(format!("v8inline-jitdump-unit-ok-{}.dump", std::process::id()));
    std::fs::write(&path, sample_file(Endianness::Big)).unwrap();
    let dump = read_path(&path, &ReadOptions::default());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(dump.unwrap().loads.len(), 2);
}

#[test]
fn unknown_record_id_is_skipped_by_total_size() {
    let mut builder = Builder::new(Endianness::Little);
    builder.record(0x1234_5678, 5, &[0u8; 100]);
    builder.load(0, 0x1000, 8, "after unknown");
    let dump = read_default(&builder.bytes);
    assert_eq!(dump.skipped_records, 1);
    assert_eq!(dump.loads.len(), 1);
    assert_eq!(&*dump.loads[0].name, "after unknown");
    assert_eq!(dump.warnings, []);
}

#[test]
fn record_total_size_zero_stops_reading() {
    let mut builder = Builder::new(Endianness::Little);
    builder.load(0, 0x1000, 8, "kept");
    let bad_record = builder.record_with_size(0, 7, 0, &[0u8; 64]);
    builder.load(1, 0x2000, 8, "unreachable");
    let dump = read_default(&builder.bytes);
    assert_eq!(dump.loads.len(), 1);
    assert_eq!(dump.warnings, [JitDumpWarning::RecordSizeTooSmall { offset: bad_record as u64, total_size: 0 }]);
    assert_eq!(
        dump.warnings[0].to_string(),
        format!("byte offset {bad_record}: expected a record total_size of at least 16, found 0; reading stopped")
    );
}

#[test]
fn record_total_size_huge_is_reported_as_cut() {
    let mut builder = Builder::new(Endianness::Big);
    builder.load(0, 0x1000, 8, "kept");
    let bad_record = builder.record_with_size(0, 7, u32::MAX, &[0u8; 64]);
    let dump = read_default(&builder.bytes);
    assert_eq!(dump.loads.len(), 1);
    assert_eq!(
        dump.warnings,
        [JitDumpWarning::Truncated { offset: bad_record as u64, needed: u64::from(u32::MAX), available: 80 }]
    );
    assert_eq!(dump.warnings[0].offset(), bad_record as u64);
}

#[test]
fn name_without_nul_skips_the_record_only() {
    let mut builder = Builder::new(Endianness::Little);
    builder.load(0, 0x1000, 8, "kept");
    let body = builder.load_body(1, 0x2000, 0, b"no terminator", false);
    let bad_record = builder.record(0, 7, &body);
    builder.load(2, 0x3000, 8, "after");
    let dump = read_default(&builder.bytes);
    let names: Vec<&str> = dump.loads.iter().map(|load| &*load.name).collect();
    assert_eq!(names, ["kept", "after"]);
    let name_offset = (bad_record + 16 + 40) as u64;
    assert_eq!(
        dump.warnings,
        [JitDumpWarning::MalformedRecord {
            offset: name_offset,
            record_offset: bad_record as u64,
            kind: JitDumpRecordKind::CodeLoad,
            expected: RecordProblem::NameNotTerminated,
        }]
    );
    assert_eq!(
        dump.warnings[0].to_string(),
        format!(
            "byte offset {name_offset}: expected a NUL-terminated name in the CODE_LOAD record at byte offset {bad_record}; record skipped"
        )
    );
}

#[test]
fn code_size_past_the_record_and_short_bodies_are_malformed() {
    let mut builder = Builder::new(Endianness::Little);
    let mut body = builder.load_body(0, 0x1000, 8, b"too big", true);
    body[24..32].copy_from_slice(&9u64.to_le_bytes());
    let too_big = builder.record(0, 1, &body);
    let short_load = builder.record(0, 2, &[0u8; 39]);
    let short_move = builder.record(1, 3, &[0u8; 10]);
    let short_debug = builder.record(2, 4, &[0u8; 15]);
    builder.load(1, 0x2000, 8, "after");
    let dump = read_debug(&builder.bytes);
    assert_eq!(dump.loads.len(), 1);
    assert!(dump.debug_infos.is_empty());
    let problems: Vec<(u64, JitDumpRecordKind, RecordProblem)> = dump
        .warnings
        .iter()
        .map(|warning| match warning {
            JitDumpWarning::MalformedRecord { record_offset, kind, expected, .. } => (*record_offset, *kind, *expected),
            other => panic!("unexpected warning {other}"),
        })
        .collect();
    assert_eq!(
        problems,
        [
            (too_big as u64, JitDumpRecordKind::CodeLoad, RecordProblem::CodeOutsideRecord { code_size: 9, room: 8 }),
            (short_load as u64, JitDumpRecordKind::CodeLoad, RecordProblem::BodyTooShort { needed: 40, found: 39 }),
            (short_move as u64, JitDumpRecordKind::CodeMove, RecordProblem::BodyTooShort { needed: 48, found: 10 }),
            (short_debug as u64, JitDumpRecordKind::DebugInfo, RecordProblem::BodyTooShort { needed: 16, found: 15 }),
        ]
    );
}

#[test]
fn name_with_invalid_utf8_is_lossy() {
    let mut builder = Builder::new(Endianness::Little);
    let body = builder.load_body(0, 0x1000, 0, b"JS:\xffbad", true);
    builder.record(0, 1, &body);
    let dump = read_default(&builder.bytes);
    assert_eq!(&*dump.loads[0].name, "JS:\u{fffd}bad");
}

#[test]
fn every_cut_keeps_the_whole_records_before_it() {
    for endian in [Endianness::Little, Endianness::Big] {
        let file = sample_file(endian);
        let full = read_debug(&file);
        // Record boundaries, found by walking total_size.
        let mut boundaries = vec![40_usize];
        while let Some(&last) = boundaries.last()
            && last < file.len()
        {
            let size = match endian {
                Endianness::Little => u32::from_le_bytes(file[last + 4..last + 8].try_into().unwrap()),
                Endianness::Big => u32::from_be_bytes(file[last + 4..last + 8].try_into().unwrap()),
            };
            boundaries.push(last + size as usize);
        }
        for cut_at in 0..=file.len() {
            let Ok(dump) = read(&file[..cut_at], &ReadOptions { debug_info: true }) else {
                assert!(cut_at < 40, "cut at {cut_at}");
                continue;
            };
            let last_boundary = boundaries.iter().copied().filter(|&boundary| boundary <= cut_at).max().unwrap();
            let whole_loads = full
                .loads
                .iter()
                .filter(|load| {
                    boundaries.iter().any(|&boundary| boundary as u64 > load.record_offset && boundary <= cut_at)
                })
                .count();
            assert_eq!(dump.loads[..], full.loads[..whole_loads], "cut at {cut_at}");
            if cut_at == last_boundary {
                assert_eq!(dump.warnings, [], "cut at {cut_at}");
            } else {
                assert_eq!(dump.warnings.len(), 1, "cut at {cut_at}");
                let JitDumpWarning::Truncated { offset, available, .. } = dump.warnings[0] else {
                    panic!("cut at {cut_at}: {:?}", dump.warnings);
                };
                assert_eq!(offset, last_boundary as u64, "cut at {cut_at}");
                assert_eq!(available, (cut_at - last_boundary) as u64, "cut at {cut_at}");
            }
        }
    }
}

#[test]
fn debug_info_name_with_nul_garbage_is_resynchronized() {
    // What node 18-24 write when a script name is copied from freed memory:
    // the length is right but the first bytes are allocator garbage,
    // NULs included.
    let garbage_name: &[u8] = b"\xda\x2e\x01\x00\x00\x00\x00\x00X\xd6@\xd4\x89b-\xb2stdata/app/deep.js";
    let code = 0x7f5f_3802_88c0_u64;
    let mut builder = Builder::new(Endianness::Little);
    let body = builder.debug_body(
        code,
        3,
        &[
            (code + 0x40, 13, 15, garbage_name),
            (code + 0x42, 14, 19, garbage_name),
            (code + 0x44, 14, 27, garbage_name),
        ],
    );
    let record = builder.record(2, 9, &body);
    builder.load(0, code, 0x100, "JS:*kernel /tmp/app/deep.js:24:16");
    let dump = read_debug(&builder.bytes);
    assert_eq!(dump.loads.len(), 1);
    let debug = &dump.debug_infos[0];
    let addresses: Vec<u64> = debug.entries.iter().map(|entry| entry.address).collect();
    assert_eq!(addresses, [code + 0x40, code + 0x42, code + 0x44]);
    for entry in &debug.entries {
        assert_eq!(entry.file_name, garbage_name);
    }
    assert_eq!(debug.entries[2].line, 14);
    assert_eq!(debug.entries[2].column, 27);
    // Two between entries, one for the last name (found by the padding).
    assert_eq!(debug.resyncs, 3);
    // The first entry's name was read up to its first NUL (3 bytes in).
    let first_resync = (record + 16 + 16 + 16 + 4) as u64;
    assert_eq!(
        dump.warnings,
        [JitDumpWarning::DebugInfoResynced { offset: first_resync, record_offset: record as u64, resyncs: 3 }]
    );
}

#[test]
fn debug_info_garbage_in_first_name_only() {
    let code = 0x52c_db00_u64;
    let garbage_name: &[u8] = b"\xdc\xd3\xb7\x11\x00\x00\x00\x00\xe5$Z\xd2,\xe4\xb8\xe0stdata/app/deep.js";
    let mut builder = Builder::new(Endianness::Big);
    let body = builder.debug_body(
        code,
        3,
        &[(code + 0x40, 13, 15, garbage_name), (code + 0x42, 14, 19, b"\xff"), (code + 0x44, 14, 27, b"\xff")],
    );
    builder.record(2, 9, &body);
    let dump = read_debug(&builder.bytes);
    let debug = &dump.debug_infos[0];
    assert_eq!(debug.resyncs, 1);
    assert_eq!(debug.entries.len(), 3);
    // The "\xff" names take the previous name, as resynchronized.
    for entry in &debug.entries {
        assert_eq!(entry.file_name, garbage_name);
    }
}

#[test]
fn debug_info_with_fewer_entries_than_declared_keeps_what_it_read() {
    let code = 0x1000_u64;
    let mut builder = Builder::new(Endianness::Little);
    let body = builder.debug_body(code, u64::MAX, &[(code + 0x40, 1, 1, b"a.js"), (code + 0x50, 2, 1, b"a.js")]);
    let record = builder.record(2, 9, &body);
    builder.load(0, code, 0x100, "after");
    let dump = read_debug(&builder.bytes);
    assert_eq!(dump.loads.len(), 1);
    assert_eq!(dump.debug_infos[0].entries.len(), 2);
    assert_eq!(
        dump.warnings,
        [JitDumpWarning::DebugInfoIncomplete {
            offset: (record + 16 + 16 + 2 * 21) as u64,
            record_offset: record as u64,
            declared: u64::MAX,
            read: 2,
        }]
    );
}

#[test]
fn debug_info_without_plausible_next_entry_stops_the_record() {
    let code = 0x1000_u64;
    let mut builder = Builder::new(Endianness::Little);
    // Second entry goes backwards: implausible, and nothing plausible follows.
    let body = builder.debug_body(code, 2, &[(code + 0x50, 1, 1, b"a.js"), (code + 0x40, 2, 1, b"a.js")]);
    builder.record(2, 9, &body);
    let dump = read_debug(&builder.bytes);
    assert_eq!(dump.debug_infos[0].entries.len(), 1);
    assert!(matches!(dump.warnings[..], [JitDumpWarning::DebugInfoIncomplete { declared: 2, read: 1, .. }]));
}

#[test]
fn code_offset_removes_the_elf_header_bias() {
    let entry = DebugEntry { address: 0x1000 + 0x40 + 0x25, line: 1, column: 1, file_name: Vec::new() };
    assert_eq!(entry.code_offset(0x1000), Some(0x25));
    assert_eq!(entry.code_offset(0x1000 + 0x26), None);
    assert_eq!(entry.code_offset(u64::MAX), None);
}

#[test]
fn corrupted_files_never_panic() {
    // Deterministic xorshift so the test is reproducible.
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for endian in [Endianness::Little, Endianness::Big] {
        let file = sample_file(endian);
        for _ in 0..20_000 {
            let mut corrupted = file.clone();
            let flips = 1 + next() % 4;
            for _ in 0..flips {
                let position = (next() % corrupted.len() as u64) as usize;
                corrupted[position] = next() as u8;
            }
            let cut_at = (next() % (corrupted.len() as u64 + 1)) as usize;
            for options in [ReadOptions { debug_info: true }, ReadOptions::default()] {
                let _ = read(&corrupted[..cut_at], &options);
            }
        }
    }
    // Random bytes after a valid header.
    for _ in 0..2_000 {
        let mut bytes = Builder::new(Endianness::Little).bytes;
        let length = next() % 300;
        bytes.extend((0..length).map(|_| next() as u8));
        let _ = read(&bytes, &ReadOptions { debug_info: true });
    }
}

impl Builder {
    /// Appends a DEBUG_INFO as V8 14.6 and 15.0 write it
    /// (`LinuxPerfJitLogger::LogWriteDebugInfo`): its size counted with each
    /// entry's own script name, each entry written with the name of the
    /// script before it at every change of script, the padding computed from
    /// the counted size. Returns the record's offset.
    fn v8_debug_info(&mut self, timestamp: u64, code_address: u64, scripts: &[&str]) -> usize {
        let endian = self.endian;
        let mut script_names: Vec<&str> = Vec::new();
        let mut counted = RECORD_PREFIX_SIZE + size_of::<DebugInfoFields>();
        for (index, script) in scripts.iter().enumerate() {
            if index == 0 || scripts[index - 1] != *script {
                script_names.push(script);
            }
            counted += size_of::<DebugEntryFields>() + script.len() + 1;
        }
        let padding = counted.next_multiple_of(8) - counted;
        let fields = DebugInfoFields {
            code_addr: U64::new(endian, code_address),
            nr_entry: U64::new(endian, scripts.len() as u64),
        };
        let mut body = bytes_of(&fields).to_vec();
        let mut name_index = 0;
        for (index, script) in scripts.iter().enumerate() {
            let entry = DebugEntryFields {
                addr: U64::new(endian, code_address + 0x40 + 8 * index as u64),
                lineno: I32::new(endian, 10 + index as i32),
                discrim: I32::new(endian, 1),
            };
            body.extend_from_slice(bytes_of(&entry));
            body.extend_from_slice(script_names[name_index].as_bytes());
            body.push(0);
            if index > 0 && scripts[index - 1] != *script {
                name_index += 1;
            }
        }
        body.resize(body.len() + padding, 0);
        self.record_with_size(2, timestamp, (counted + padding) as u32, &body)
    }
}

const INDEX: &str = "/app/node_modules/prettier/index.mjs";
const ESTREE: &str = "/app/node_modules/prettier/plugins/estree.mjs";

/// A file in which V8 mis-sized the DEBUG_INFO of code object 1 (its first
/// entry in `first`, its last in `last`), and wrote the others right; returns
/// it with the offsets of its records.
fn cross_script_file(endian: Endianness, first: &str, last: &str) -> (Vec<u8>, Vec<usize>) {
    let mut builder = Builder::new(endian);
    let mut offsets = vec![builder.load_at(UPTIME, 0, 0x7f00_0000_1000, 32, "JS:*print index.mjs:1:1")];
    offsets.push(builder.v8_debug_info(UPTIME + 2000, 0x7f00_0000_2000, &[first, first, ESTREE, ESTREE, last]));
    offsets.push(builder.record(4, UPTIME + 2001, &[0u8; 24]));
    offsets.push(builder.load_at(UPTIME + 2002, 1, 0x7f00_0000_2000, 24, "JS:*printComments index.mjs:5:1"));
    offsets.push(builder.v8_debug_info(UPTIME + 3000, 0x7f00_0000_3000, &[INDEX, ESTREE, INDEX]));
    offsets.push(builder.record(4, UPTIME + 3001, &[0u8; 24]));
    offsets.push(builder.load_at(UPTIME + 3002, 2, 0x7f00_0000_3000, 24, "JS:*genericPrint index.mjs:9:1"));
    offsets.push(builder.record(3, UPTIME + 4000, &[]));
    (builder.bytes, offsets)
}

/// A CLOCK_MONOTONIC time as V8 writes it: nanoseconds since boot, here ten
/// minutes.
const UPTIME: u64 = 600_000_000_000;

#[test]
fn v8_mis_sized_debug_info_is_read_by_its_entries() {
    for endian in [Endianness::Little, Endianness::Big] {
        // The last name longer than the first: declared too long; shorter:
        // declared too short (it then ends inside the record).
        for (first, last) in [(INDEX, ESTREE), (ESTREE, INDEX)] {
            let (file, offsets) = cross_script_file(endian, first, last);
            for dump in [read_default(&file), read_debug(&file)] {
                assert_eq!(dump.warnings, [], "{endian:?} {first}");
                assert_eq!(dump.loads.len(), 3, "{endian:?} {first}");
                assert_eq!(dump.loads[2].record_offset, offsets[6] as u64);
                let [mis_sized] = dump.mis_sized_debug_infos[..] else {
                    panic!("{endian:?} {first}: {:?}", dump.mis_sized_debug_infos)
                };
                assert_eq!(mis_sized.record_offset, offsets[1] as u64);
                assert_eq!(mis_sized.written_size as usize, offsets[2] - offsets[1]);
                let mis_size = mis_sized.declared_size as i64 - mis_sized.written_size as i64;
                assert_eq!(mis_size, last.len() as i64 - first.len() as i64, "{endian:?} {first}");
                assert!(mis_sized.entries_size <= mis_sized.written_size);
                assert!(mis_sized.written_size < mis_sized.entries_size + 8);
            }
            // The entries as written: each name one entry late.
            let dump = read_debug(&file);
            let names: Vec<&[u8]> = dump.debug_infos[0].entries.iter().map(|entry| &entry.file_name[..]).collect();
            let expected: [&[u8]; 5] =
                [first.as_bytes(), first.as_bytes(), first.as_bytes(), ESTREE.as_bytes(), ESTREE.as_bytes()];
            assert_eq!(names, expected);
            assert_eq!(dump.debug_infos.len(), 2);
        }
    }
}

#[test]
fn v8_mis_sized_last_record_and_every_cut() {
    let (file, offsets) = cross_script_file(Endianness::Little, INDEX, ESTREE);
    let full = read_default(&file);
    let mut boundaries = offsets.clone();
    boundaries.push(file.len());
    for cut_at in 40..=file.len() {
        let dump = read_default(&file[..cut_at]);
        let whole_loads = full
            .loads
            .iter()
            .filter(|load| {
                boundaries.iter().any(|&boundary| boundary as u64 > load.record_offset && boundary <= cut_at)
            })
            .count();
        assert_eq!(dump.loads[..], full.loads[..whole_loads], "cut at {cut_at}");
        assert!(dump.mis_sized_debug_infos[..] == full.mis_sized_debug_infos[..dump.mis_sized_debug_infos.len()]);
        // A cut right after the mis-sized record cannot tell its size: it is
        // reported as cut, as is every cut inside a record. One exception: a
        // file that ends where the wrong size says reads as whole.
        let declared_end = offsets[1] + full.mis_sized_debug_infos[0].declared_size as usize;
        if cut_at == declared_end {
            assert_eq!((dump.loads.len(), &dump.warnings[..]), (1, &[][..]), "cut at {cut_at}");
        } else if boundaries.contains(&cut_at) && cut_at != offsets[2] {
            assert_eq!(dump.warnings, [], "cut at {cut_at}");
        } else {
            let [JitDumpWarning::Truncated { .. }] = dump.warnings[..] else {
                panic!("cut at {cut_at}: {:?}", dump.warnings);
            };
        }
    }
}

#[test]
fn debug_info_of_one_script_is_never_mis_sized() {
    // A record that leaves its script and comes back (first and last entries
    // in one script) is sized right even by V8 14.6.
    let mut builder = Builder::new(Endianness::Little);
    builder.v8_debug_info(UPTIME, 0x7f00_0000_2000, &[INDEX, ESTREE, ESTREE, INDEX]);
    builder.load_at(UPTIME + 1, 0, 0x7f00_0000_2000, 24, "JS:*f index.mjs:1:1");
    let dump = read_default(&builder.bytes);
    assert_eq!((dump.loads.len(), &dump.warnings[..], &dump.mis_sized_debug_infos[..]), (1, &[][..], &[][..]));
}

#[test]
fn damaged_debug_info_sizes_stay_damage() {
    // A size V8 never writes (not a multiple of 8), and one that lands on
    // nothing plausible either way: reported as before, not recovered.
    for damage in [3_i64, -5, 4104] {
        let (mut file, offsets) = cross_script_file(Endianness::Little, INDEX, INDEX);
        let size_field = offsets[4] + 4;
        let size = u32::from_le_bytes(file[size_field..size_field + 4].try_into().unwrap());
        file[size_field..size_field + 4].copy_from_slice(&((size as i64 + damage) as u32).to_le_bytes());
        let dump = read_default(&file);
        assert_eq!(dump.mis_sized_debug_infos, [], "damage {damage}");
        assert!(!dump.warnings.is_empty(), "damage {damage}");
        assert_eq!(dump.loads.len(), 2, "damage {damage}: the loads before the damaged record are read");
    }
    // The mis-sized record and a damaged one in the same file: the first is
    // recovered, the second reported.
    let (mut file, offsets) = cross_script_file(Endianness::Little, INDEX, ESTREE);
    let size_field = offsets[4] + 4;
    file[size_field..size_field + 4].copy_from_slice(&7_u32.to_le_bytes());
    let dump = read_default(&file);
    assert_eq!(dump.mis_sized_debug_infos.len(), 1);
    assert_eq!(dump.loads.len(), 2);
    let [JitDumpWarning::RecordSizeTooSmall { offset, total_size: 7 }] = dump.warnings[..] else {
        panic!("{:?}", dump.warnings)
    };
    assert_eq!(offset, offsets[4] as u64);
}

#[test]
fn repair_gives_mis_sized_records_their_true_size() {
    for endian in [Endianness::Little, Endianness::Big] {
        for (first, last) in [(INDEX, ESTREE), (ESTREE, INDEX)] {
            let (file, offsets) = cross_script_file(endian, first, last);
            let original = read_debug(&file);
            let repaired = repair(&file).unwrap();
            assert_eq!(repaired.original.mis_sized_debug_infos, original.mis_sized_debug_infos);
            assert_eq!(repaired.original.warnings, []);
            let dump = read_debug(&repaired.bytes);
            assert_eq!((&dump.warnings[..], &dump.mis_sized_debug_infos[..]), (&[][..], &[][..]), "{endian:?}");
            // Every record as it was, but the corrected one's size and
            // padding: the same loads and entries, each record after it moved
            // by the difference of the paddings.
            let corrected = repaired.original.mis_sized_debug_infos[0];
            let shift = corrected.repaired_size() as i64 - corrected.written_size as i64;
            assert_eq!(dump.debug_infos, original.debug_infos);
            for (load, before) in dump.loads.iter().zip(&original.loads) {
                let moved = if before.record_offset > corrected.record_offset { shift } else { 0 };
                assert_eq!(load.record_offset as i64, before.record_offset as i64 + moved);
                assert_eq!(CodeLoad { record_offset: before.record_offset, ..load.clone() }, *before);
            }
            assert_eq!(&repaired.bytes[..offsets[1] + 4], &file[..offsets[1] + 4]);
            assert_eq!(&repaired.bytes[(offsets[2] as i64 + shift) as usize..], &file[offsets[2]..]);
            assert_eq!(repaired.bytes.len() as i64, file.len() as i64 + shift);
            // Repairing again changes nothing.
            assert_eq!(repair(&repaired.bytes).unwrap().bytes, repaired.bytes);
        }
    }
}
