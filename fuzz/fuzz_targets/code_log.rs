//! The code-log reader on arbitrary bytes (in memory, streamed, and in place
//! as a memory-mapped log is read, which must agree), then the inline maps
//! built from what the in-memory and in-place reads read (no jitdump: the
//! log's own addresses), looked up at the start, middle and end of every
//! code object: the position tables the in-place read keeps as ranges of the
//! text are decoded on those lookups, and must describe what the copied ones
//! describe.
#![no_main]

use libfuzzer_sys::fuzz_target;
use v8inline::internals::diagnostics::Diagnostics;
use v8inline::internals::v8::inline_map::{InlineMap, SourceOptions};
use v8inline::internals::commands::lookup::{AddressQuery, describe_address};
use v8inline::internals::formats::v8log::{CodeLog, RetainedText};

/// The most code objects looked up per input, so that one input stays fast.
const MAX_LOOKED_UP_CODES: usize = 64;

fuzz_target!(|bytes: &[u8]| {
    let log = CodeLog::parse(bytes);
    let retained = CodeLog::parse_retained(bytes, RetainedText::new(std::sync::Arc::new(bytes.to_vec())), |_| {});
    assert_eq!(
        (retained.line_count, retained.warning_count, retained.code_objects.len(), retained.functions.len()),
        (log.line_count, log.warning_count, log.code_objects.len(), log.functions.len())
    );
    // Tables and sources read back from the retained text are those the
    // copying parse kept.
    let tables = |log: &CodeLog, index: usize| {
        log.source_tables(&log.code_objects[index])
            .map(|tables| (tables.positions.to_vec(), tables.inlining_positions.to_vec(), tables.inlined_functions.to_vec()))
    };
    for index in 0..log.code_objects.len().min(MAX_LOOKED_UP_CODES) {
        assert_eq!(tables(&log, index), tables(&retained, index));
    }
    for (id, script) in &log.scripts {
        assert_eq!(log.script_source(script), retained.script_source(&retained.scripts[id]));
    }
    // The streaming reader gives what the in-memory parser gives.
    let streamed = CodeLog::read(bytes).expect("reading memory cannot fail");
    assert_eq!(
        (streamed.line_count, streamed.warning_count, streamed.code_objects.len(), streamed.functions.len()),
        (log.line_count, log.warning_count, log.code_objects.len(), log.functions.len())
    );
    assert!(log.warnings.len() as u64 <= log.warning_count);
    assert!(log.line_count <= bytes.len() as u64 + 1);
    // Every warning is counted (those of a log several isolates wrote at
    // once as one), and the summary of them is written.
    let mut diagnostics = Diagnostics::new();
    diagnostics.add_code_log(&log);
    if log.is_shared_by_isolates() {
        assert!(diagnostics.total() >= 1);
    } else {
        assert!(diagnostics.total() >= log.warning_count);
    }
    let _ = diagnostics.to_string();
    // Never from disk: a fuzzed script name must not open files.
    let map = InlineMap::new(vec![log], None, SourceOptions::default());
    let retained_map = InlineMap::new(vec![retained], None, SourceOptions::default());
    let (mut text, mut retained_text) = (String::new(), String::new());
    for code in map.codes().iter().take(MAX_LOOKED_UP_CODES) {
        for address in
            [code.address, code.address.saturating_add(code.size / 2), code.address.saturating_add(code.size)]
        {
            text.clear();
            retained_text.clear();
            describe_address(&map, AddressQuery { address, time: None }, &mut text);
            describe_address(&retained_map, AddressQuery { address, time: None }, &mut retained_text);
            assert!(text.ends_with('\n'));
            assert_eq!(text, retained_text);
        }
    }
});
