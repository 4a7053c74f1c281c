//! The jitdump reader on real `node --perf-prof` jitdumps
//! (`testdata/node*/jit-PID.dump.gz`), checked against an independent,
//! deliberately simple walk of the same bytes.

use std::io::Read;
use std::path::{Path, PathBuf};

use v8inline::internals::formats::jitdump::{self, JitDump, JitDumpWarning, ReadOptions};

/// One real jitdump, decompressed.
struct RealDump {
    /// e.g. `node20`.
    version: String,
    /// The pid in the file name `jit-PID.dump.gz`.
    pid: u32,
    bytes: Vec<u8>,
}

fn real_dumps() -> Vec<RealDump> {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&testdata)
        .expect("testdata directory")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("node")))
        .flat_map(|directory| std::fs::read_dir(directory).into_iter().flatten())
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("jit-") && name.ends_with(".dump.gz"))
        })
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no testdata/node*/jit-*.dump.gz");
    paths
        .iter()
        .map(|path| {
            let file_name = path.file_name().unwrap().to_str().unwrap();
            let file_pid = file_name
                .strip_prefix("jit-")
                .and_then(|rest| rest.strip_suffix(".dump.gz"))
                .and_then(|pid| pid.parse().ok())
                .expect("jit-PID.dump.gz");
            let version = path.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
            let mut bytes = Vec::new();
            flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut bytes).unwrap();
            RealDump { version, pid: file_pid, bytes }
        })
        .collect()
}

/// A record as found by the independent walk.
#[derive(Debug, Clone, Copy)]
struct RawRecord {
    offset: usize,
    id: u32,
    size: usize,
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap())
}

fn u64_at(bytes: &[u8], offset: usize) -> u64 {
    u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap())
}

/// Walks a little-endian jitdump by `total_size`, asserting it is well framed.
fn walk(bytes: &[u8]) -> Vec<RawRecord> {
    assert_eq!(u32_at(bytes, 0), 0x4A69_5444);
    let mut offset = u32_at(bytes, 8) as usize;
    let mut records = Vec::new();
    while offset < bytes.len() {
        let record_id = u32_at(bytes, offset);
        let size = u32_at(bytes, offset + 4) as usize;
        assert!(size >= 16 && offset + size <= bytes.len(), "record at {offset}");
        records.push(RawRecord { offset, id: record_id, size });
        offset += size;
    }
    records
}

/// V8 marks TurboFan code with `*` after the code kind (`JS:*f`,
/// `LazyCompile:*f`; node 26 also writes `JS:o*f`).
fn is_turbofan(name: &str) -> bool {
    name.split_once(':').is_some_and(|(_, rest)| rest.trim_start_matches('o').starts_with('*'))
}

#[test]
fn real_jitdumps_read_without_warnings() {
    for dump in real_dumps() {
        let version = &dump.version;
        let records = walk(&dump.bytes);
        let read = jitdump::read(&dump.bytes, &ReadOptions::default()).unwrap();
        assert_eq!(read.warnings, [], "{version}");
        assert_eq!(read.header.pid, dump.pid, "{version}");
        assert_eq!(read.header.version, 1, "{version}");
        assert_eq!(read.header.header_size, 40, "{version}");
        assert_eq!(read.header.endianness, object::Endianness::Little, "{version}");
        assert!(read.debug_infos.is_empty());

        let load_records: Vec<&RawRecord> = records.iter().filter(|record| record.id == 0).collect();
        assert_eq!(read.loads.len(), load_records.len(), "{version}");
        assert!(read.loads.len() > 1000, "{version}: {} loads", read.loads.len());
        assert_eq!(read.skipped_records, (records.len() - load_records.len()) as u64, "{version}");
        for (index, (load, record)) in read.loads.iter().zip(&load_records).enumerate() {
            // V8 numbers code objects 0, 1, 2, ... in the order it writes them.
            assert_eq!(load.code_index, index as u64, "{version}");
            assert_eq!(load.pid, dump.pid, "{version}");
            assert_eq!(load.record_offset, record.offset as u64, "{version}");
            assert_eq!(load.vma, load.code_address, "{version}");
            assert_eq!(load.code_address, u64_at(&dump.bytes, record.offset + 32), "{version}");
            // V8 writes exactly prefix + fields + name + NUL + code.
            assert!(!load.name.is_empty() && !load.name.contains('\u{fffd}'), "{version}");
            assert_eq!(
                16 + 40 + load.name.len() as u64 + 1 + load.code_size,
                record.size as u64,
                "{version}: {}",
                load.name
            );
        }
        assert!(read.loads.windows(2).all(|pair| pair[0].timestamp <= pair[1].timestamp));
        let turbofan = read.loads.iter().filter(|load| is_turbofan(&load.name)).count();
        eprintln!(
            "{version}: {} records, {} loads ({turbofan} TurboFan), {} skipped",
            records.len(),
            read.loads.len(),
            read.skipped_records
        );
    }
}

/// Rewrites a little-endian jitdump with every header and record field
/// big-endian; names, code and unwinding data stay as they are.
fn byte_swapped(bytes: &[u8], records: &[RawRecord]) -> Vec<u8> {
    let mut swapped = bytes.to_vec();
    let mut swap = |offset: usize, width: usize| swapped[offset..offset + width].reverse();
    for field in [0, 4, 8, 12, 16, 20] {
        swap(field, 4);
    }
    swap(24, 8);
    swap(32, 8);
    for (position, record) in records.iter().enumerate() {
        let start = record.offset;
        let body = start + 16;
        let record_end = start + record.size;
        swap(start, 4);
        swap(start + 4, 4);
        swap(start + 8, 8);
        match record.id {
            // CODE_LOAD: pid, tid, vma, code_addr, code_size, code_index.
            0 => {
                swap(body, 4);
                swap(body + 4, 4);
                for field in 0..4 {
                    swap(body + 8 + 8 * field, 8);
                }
            }
            // CODE_MOVE: pid, tid, vma, old, new, size, index.
            1 => {
                swap(body, 4);
                swap(body + 4, 4);
                for field in 0..5 {
                    swap(body + 8 + 8 * field, 8);
                }
            }
            // DEBUG_INFO: code_addr, nr_entry, entries.
            2 => {
                for entry in debug_entry_offsets(bytes, records, position) {
                    swap(entry, 8);
                    swap(entry + 8, 4);
                    swap(entry + 12, 4);
                }
                swap(body, 8);
                swap(body + 8, 8);
            }
            // UNWINDING_INFO: unwinding_size, eh_frame_hdr_size, mapped_size.
            4 => {
                for field in 0..3 {
                    swap(body + 8 * field, 8);
                }
            }
            _ => {}
        }
        assert!(record_end <= bytes.len());
    }
    swapped
}

/// Offsets of the entries of the DEBUG_INFO record `records[position]`, found
/// independently of the reader: the first entry starts right after
/// `nr_entry`; each later one starts right after a NUL, at the first place
/// where the address lies between the previous entry's and the end of the code
/// (size from the matching CODE_LOAD) plus V8's 0x40.
fn debug_entry_offsets(bytes: &[u8], records: &[RawRecord], position: usize) -> Vec<usize> {
    let record = records[position];
    let code_address = u64_at(bytes, record.offset + 16);
    let declared = u64_at(bytes, record.offset + 24) as usize;
    let load = records[position..]
        .iter()
        .find(|later| later.id == 0 && u64_at(bytes, later.offset + 32) == code_address)
        .expect("a CODE_LOAD follows every DEBUG_INFO");
    let code_end = code_address + 0x40 + u64_at(bytes, load.offset + 40);
    let record_end = record.offset + record.size;
    let mut offsets = vec![record.offset + 32];
    let mut previous = u64_at(bytes, record.offset + 32);
    while offsets.len() < declared {
        let last = *offsets.last().unwrap();
        let next = (last + 17..=record_end - 16)
            .find(|&candidate| bytes[candidate - 1] == 0 && (previous..=code_end).contains(&u64_at(bytes, candidate)))
            .expect("every declared entry is there");
        previous = u64_at(bytes, next);
        offsets.push(next);
    }
    offsets
}

#[test]
fn byte_swapped_real_jitdumps_read_the_same() {
    for dump in real_dumps() {
        let version = &dump.version;
        let records = walk(&dump.bytes);
        let big_endian = byte_swapped(&dump.bytes, &records);
        assert_ne!(big_endian, dump.bytes);
        for options in [ReadOptions::default(), ReadOptions { debug_info: true }] {
            let little = jitdump::read(&dump.bytes, &options).unwrap();
            let swapped = jitdump::read(&big_endian, &options).unwrap();
            assert_eq!(swapped.header.endianness, object::Endianness::Big, "{version}");
            assert_eq!(
                jitdump::Header { endianness: object::Endianness::Little, ..swapped.header },
                little.header,
                "{version}"
            );
            assert_eq!(swapped.loads, little.loads, "{version}");
            assert_eq!(swapped.debug_infos, little.debug_infos, "{version}");
            assert_eq!(swapped.warnings, little.warnings, "{version}");
            assert_eq!(swapped.skipped_records, little.skipped_records, "{version}");
        }
    }
}

/// Checks one truncated read against the full read.
fn check_cut(full: &JitDump, boundaries: &[usize], bytes: &[u8], cut_at: usize, options: &ReadOptions) {
    let result = jitdump::read(&bytes[..cut_at], options);
    if cut_at < 40 {
        assert!(result.is_err(), "cut at {cut_at}");
        return;
    }
    let read = result.unwrap_or_else(|error| panic!("cut at {cut_at}: {error}"));
    // The last record boundary at or before the cut_at.
    let last_boundary = boundaries[boundaries.partition_point(|&boundary| boundary <= cut_at) - 1];
    // Loads whose whole record is before the cut_at.
    let whole_loads = full.loads.partition_point(|load| load.record_offset < last_boundary as u64);
    assert_eq!(read.loads.len(), whole_loads, "cut at {cut_at}");
    assert!(read.loads == full.loads[..whole_loads], "cut at {cut_at}");
    if options.debug_info {
        assert!(read.debug_infos[..] == full.debug_infos[..read.debug_infos.len()], "cut at {cut_at}");
    }
    let cut_warnings: Vec<&JitDumpWarning> =
        read.warnings.iter().filter(|warning| !matches!(warning, JitDumpWarning::DebugInfoResynced { .. })).collect();
    if cut_at == last_boundary {
        assert_eq!(cut_warnings, Vec::<&JitDumpWarning>::new(), "cut at {cut_at}");
    } else {
        assert_eq!(
            cut_warnings,
            [&JitDumpWarning::Truncated {
                offset: last_boundary as u64,
                needed: if cut_at - last_boundary < 16 {
                    16
                } else {
                    u64::from(u32::from_le_bytes(bytes[last_boundary + 4..last_boundary + 8].try_into().unwrap()))
                },
                available: (cut_at - last_boundary) as u64,
            }],
            "cut at {cut_at}"
        );
        assert!(
            cut_warnings[0].to_string().starts_with(&format!("byte offset {last_boundary}: ")),
            "{}",
            cut_warnings[0]
        );
    }
}

/// Record boundaries of a well-framed file: the header end, then each record end.
fn boundaries_of(records: &[RawRecord]) -> Vec<usize> {
    let mut boundaries = vec![40];
    boundaries.extend(records.iter().map(|record| record.offset + record.size));
    boundaries
}

#[test]
fn truncated_real_jitdumps_keep_the_whole_records_before_the_cut() {
    for dump in real_dumps() {
        let records = walk(&dump.bytes);
        let boundaries = boundaries_of(&records);
        let options = ReadOptions::default();
        let full = jitdump::read(&dump.bytes, &options).unwrap();
        // Cuts of the whole file: every header length, the neighbourhood of
        // the first and last 32 record boundaries and of every 8th one between,
        // and a dense sample of lengths. (Every boundary of every file would
        // take over a minute in a debug build; the windows below cover every
        // byte of many records.)
        let mut cuts: Vec<usize> = (0..=64).collect();
        for (index, &boundary) in boundaries.iter().enumerate() {
            if index < 32 || index + 32 >= boundaries.len() || index % 8 == 0 {
                cuts.extend([boundary - 1, boundary, boundary + 1]);
            }
        }
        cuts.extend((0..dump.bytes.len()).step_by(1999));
        cuts.push(dump.bytes.len());
        cuts.retain(|&cut_at| cut_at <= dump.bytes.len());
        for &cut_at in &cuts {
            check_cut(&full, &boundaries, &dump.bytes, cut_at, &options);
        }

        // Windows around each DEBUG_INFO record, read with DEBUG_INFO decoding:
        // the header, the record before, the DEBUG_INFO, and the records up to
        // its CODE_LOAD.
        let options = ReadOptions { debug_info: true };
        let mut window_cuts = 0;
        for (debug_index, (position, record)) in
            records.iter().enumerate().filter(|(_, record)| record.id == 2).enumerate()
        {
            let first = position.saturating_sub(1);
            let load = position + records[position..].iter().position(|later| later.id == 0).unwrap();
            let mut window = dump.bytes[..40].to_vec();
            window.extend_from_slice(&dump.bytes[records[first].offset..records[load].offset + records[load].size]);
            let window_records = walk(&window);
            assert_eq!(window_records.len(), load - first + 1);
            let window_boundaries = boundaries_of(&window_records);
            let window_full = jitdump::read(&window, &options).unwrap();
            assert_eq!(window_full.loads.last().unwrap().code_address, u64_at(&dump.bytes, record.offset + 16));
            // Every byte of the first DEBUG_INFO records and of those that
            // needed a resync, the fixed fields of the others, the
            // neighbourhood of every boundary, and a sample of the rest
            // (mostly code bytes).
            let debug_start = 40 + record.offset - records[first].offset;
            let resynced = window_full.debug_infos.last().unwrap().resyncs > 0;
            let mut cuts: Vec<usize> = if debug_index < 4 || resynced {
                (debug_start..=debug_start + record.size).collect()
            } else {
                [1, 15, 16, 17, 31, 32, 33, 47, 48, 49].iter().map(|&offset| debug_start + offset).collect()
            };
            cuts.extend(window_boundaries.iter().flat_map(|&boundary| [boundary - 1, boundary + 1]));
            cuts.extend((0..window.len()).step_by(97));
            cuts.retain(|&cut_at| cut_at <= window.len());
            for &cut_at in &cuts {
                check_cut(&window_full, &window_boundaries, &window, cut_at, &options);
            }
            window_cuts += cuts.len();
        }
        eprintln!("{}: {} whole-file cuts, {window_cuts} DEBUG_INFO window cuts checked", dump.version, cuts.len());
    }
}

#[test]
fn real_debug_infos_cover_turbofan_code() {
    for dump in real_dumps() {
        let version = &dump.version;
        let records = walk(&dump.bytes);
        let read = jitdump::read(&dump.bytes, &ReadOptions { debug_info: true }).unwrap();
        let debug_records: Vec<(usize, &RawRecord)> =
            records.iter().enumerate().filter(|(_, record)| record.id == 2).collect();
        assert_eq!(read.debug_infos.len(), debug_records.len(), "{version}");
        assert_eq!(read.skipped_records, (records.len() - read.loads.len() - debug_records.len()) as u64);

        let mut resyncs = 0_u32;
        let mut resynced_records = 0;
        let mut entries = 0;
        for (debug, &(position, record)) in read.debug_infos.iter().zip(&debug_records) {
            // Matching LOAD: the next LOAD after the DEBUG_INFO record with the
            // same code address.
            let load = read
                .loads
                .iter()
                .find(|load| load.record_offset > record.offset as u64 && load.code_address == debug.code_address)
                .unwrap_or_else(|| panic!("{version}: no CODE_LOAD after DEBUG_INFO at {}", record.offset));
            // All declared entries were recovered.
            let declared = u64_at(&dump.bytes, record.offset + 24);
            assert_eq!(debug.entries.len() as u64, declared, "{version}: {}", load.name);
            assert_eq!(debug_entry_offsets(&dump.bytes, &records, position).len() as u64, declared);
            for pair in debug.entries.windows(2) {
                assert!(pair[0].address <= pair[1].address, "{version}: {}", load.name);
            }
            for entry in &debug.entries {
                let offset = entry.code_offset(debug.code_address);
                assert!(
                    offset.is_some_and(|offset| offset < load.code_size),
                    "{version}: {} entry {entry:?} vs code size {}",
                    load.name,
                    load.code_size
                );
                assert!(entry.line >= 1 && entry.column >= 1, "{version}: {entry:?}");
                // Resynchronized names end like the real name.
                let name = String::from_utf8_lossy(&entry.file_name);
                assert!(name.ends_with(".js") || name.starts_with("node:"), "{version}: {name:?}");
            }
            resyncs += debug.resyncs;
            resynced_records += usize::from(debug.resyncs > 0);
            entries += debug.entries.len();
        }
        // Every resynchronized record is reported once, nothing else.
        let reported: u32 = read
            .warnings
            .iter()
            .map(|warning| match warning {
                JitDumpWarning::DebugInfoResynced { resyncs, .. } => *resyncs,
                other => panic!("{version}: unexpected warning {other}"),
            })
            .sum();
        assert_eq!(reported, resyncs, "{version}");
        assert_eq!(read.warnings.len(), resynced_records, "{version}");

        // Every TurboFan code object has its DEBUG_INFO right before it.
        let mut turbofan = 0;
        for load in read.loads.iter().filter(|load| is_turbofan(&load.name)) {
            turbofan += 1;
            let preceding = debug_records
                .iter()
                .zip(&read.debug_infos)
                .rfind(|((_, record), _)| (record.offset as u64) < load.record_offset)
                .map(|(_, debug)| debug);
            assert!(
                preceding.is_some_and(|debug| debug.code_address == load.code_address && !debug.entries.is_empty()),
                "{version}: {} has no DEBUG_INFO",
                load.name
            );
        }
        assert!(turbofan > 0, "{version}");
        eprintln!(
            "{version}: {} loads, {turbofan} TurboFan, {} DEBUG_INFO with {entries} entries, {resyncs} resyncs in {resynced_records} records",
            read.loads.len(),
            read.debug_infos.len()
        );
    }
}

#[test]
fn code_bytes_and_skipped_bodies_are_not_read() {
    for dump in real_dumps() {
        let records = walk(&dump.bytes);
        let full = jitdump::read(&dump.bytes, &ReadOptions::default()).unwrap();
        // Overwrite everything the reader must not depend on: code bytes after
        // each name, and the bodies of DEBUG_INFO and UNWINDING_INFO records.
        let mut scrambled = dump.bytes.clone();
        for record in &records {
            let body = record.offset + 16;
            let record_end = record.offset + record.size;
            let start = match record.id {
                0 => {
                    let name = body + 40;
                    name + scrambled[name..record_end].iter().position(|&byte| byte == 0).unwrap() + 1
                }
                _ => body,
            };
            if record.id != 1 {
                scrambled[start..record_end].fill(0xA5);
            }
        }
        let read = jitdump::read(&scrambled, &ReadOptions::default()).unwrap();
        assert_eq!(read, full, "{}", dump.version);
    }
}

#[test]
fn read_path_reads_a_real_file_and_names_it_in_errors() {
    let dump = real_dumps().into_iter().next().unwrap();
    let directory = std::env::temp_dir().join(format!("v8inline-jitdump-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join(format!("jit-{}.dump", dump.pid));
    std::fs::write(&path, &dump.bytes).unwrap();
    let read = jitdump::read_path(&path, &ReadOptions::default()).unwrap();
    assert_eq!(read.header.pid, dump.pid);

    let cut_path = directory.join("cut.dump");
    std::fs::write(&cut_path, &dump.bytes[..20]).unwrap();
    let error = jitdump::read_path(&cut_path, &ReadOptions::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("{}: byte offset 0: expected a 40-byte jitdump header, the file has only 20 bytes", cut_path.display())
    );
    std::fs::remove_dir_all(&directory).unwrap();
}
