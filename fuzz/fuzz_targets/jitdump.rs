//! The jitdump reader on arbitrary bytes, with and without DEBUG_INFO
//! decoding and streamed: it never panics, decoding DEBUG_INFO changes
//! nothing else, and the streamed read equals the in-memory one. And
//! `repair`: the repaired file reads as the input did (the same loads, as
//! many warnings, and the same debug infos where they decode cleanly) with
//! no record left mis-sized, and repairing it again changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use v8inline::internals::formats::jitdump::{self, JitDumpWarning, ReadOptions};

fuzz_target!(|bytes: &[u8]| {
    let plain = jitdump::read(bytes, &ReadOptions::default());
    // The streaming reader gives what the in-memory reader gives.
    let streamed = jitdump::read_stream(bytes, &ReadOptions::default()).expect("reading memory cannot fail");
    match (&plain, &streamed) {
        (Ok(plain), Ok(streamed)) => assert_eq!(plain, streamed),
        (Err(plain), Err(streamed)) => assert_eq!(plain.to_string(), streamed.to_string()),
        _ => panic!("streamed and in-memory reads disagree on the header"),
    }
    if let Ok(plain) = &plain {
        check_repair(bytes, plain);
    }
    let with_debug_info = jitdump::read(bytes, &ReadOptions { debug_info: true });
    match (plain, with_debug_info) {
        (Ok(plain), Ok(with_debug_info)) => {
            assert_eq!(plain.header, with_debug_info.header);
            assert_eq!(plain.loads, with_debug_info.loads);
            for warning in plain.warnings.iter().chain(&with_debug_info.warnings) {
                // Every warning points into the file.
                assert!(warning.offset() <= bytes.len() as u64, "{warning}");
                let _ = warning.to_string();
            }
        }
        (Err(plain), Err(with_debug_info)) => {
            assert_eq!(plain.to_string(), with_debug_info.to_string());
            assert!(plain.offset < 40);
        }
        (plain, with_debug_info) => panic!("header accepted by one read only: {plain:?} / {with_debug_info:?}"),
    }
});

fn check_repair(bytes: &[u8], plain: &jitdump::JitDump) {
    let repaired = jitdump::repair(bytes).expect("the header was read");
    assert_eq!(repaired.original, *plain);
    let again = jitdump::read(&repaired.bytes, &ReadOptions::default()).expect("the header is kept");
    assert_eq!(again.mis_sized_debug_infos, []);
    assert_eq!(again.warnings.len(), plain.warnings.len());
    let without_offsets = |dump: &jitdump::JitDump| {
        dump.loads.iter().map(|load| jitdump::CodeLoad { record_offset: 0, ..load.clone() }).collect::<Vec<_>>()
    };
    assert_eq!(without_offsets(&again), without_offsets(plain));
    // Where every DEBUG_INFO decodes cleanly, the repaired file's decode the
    // same (garbled entries are searched for in the padding, which the
    // repair changes).
    let with_debug_info = |bytes: &[u8]| jitdump::read(bytes, &ReadOptions { debug_info: true }).unwrap();
    let original = with_debug_info(bytes);
    let clean = !original.warnings.iter().any(|warning| {
        matches!(warning, JitDumpWarning::DebugInfoResynced { .. } | JitDumpWarning::DebugInfoIncomplete { .. })
    });
    if !plain.mis_sized_debug_infos.is_empty() && clean {
        assert_eq!(with_debug_info(&repaired.bytes).debug_infos, original.debug_infos);
    }
    assert_eq!(jitdump::repair(&repaired.bytes).unwrap().bytes, repaired.bytes);
}
