//! The jitdump reader on arbitrary bytes, with and without DEBUG_INFO
//! decoding and streamed: it never panics, decoding DEBUG_INFO changes
//! nothing else, and the streamed read equals the in-memory one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use v8inline::formats::jitdump::{self, ReadOptions};

fuzz_target!(|bytes: &[u8]| {
    let plain = jitdump::read(bytes, &ReadOptions::default());
    // The streaming reader gives what the in-memory reader gives.
    let streamed = jitdump::read_stream(bytes, &ReadOptions::default()).expect("reading memory cannot fail");
    match (&plain, &streamed) {
        (Ok(plain), Ok(streamed)) => assert_eq!(plain, streamed),
        (Err(plain), Err(streamed)) => assert_eq!(plain.to_string(), streamed.to_string()),
        _ => panic!("streamed and in-memory reads disagree on the header"),
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
