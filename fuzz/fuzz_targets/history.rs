//! `history report` on an arbitrary `history.jsonl`: read line by line
//! (damaged lines named and skipped), judged for change points, rendered as
//! JSON and as the page. An error is fine, a panic is not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use v8inline::internals::history::change_points::{ChangePointOptions, DEFAULT_OPTIONS};
use v8inline::internals::history::html::page;
use v8inline::internals::history::read_history_lines;
use v8inline::internals::history::report::build_report;

fuzz_target!(|bytes: &[u8]| {
    let work = std::env::temp_dir().join(format!("v8inline-fuzz-history-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let path = work.join("history.jsonl");
    std::fs::write(&path, bytes).unwrap();
    if let Ok(read) = read_history_lines(&path) {
        let history = read.entries;
        // Small windows and a loose significance: more splits, more of the search fuzzed.
        let options = ChangePointOptions { window: 6, significance: 0.1, ..DEFAULT_OPTIONS };
        let report = build_report(&history, &options);
        let _ = page(&history, &report);
    }
});
