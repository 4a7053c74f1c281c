//! The tick-log source on arbitrary bytes: a `node --prof --log-code` log
//! read in memory (`TickLog::parse`), its ticks expanded and folded as
//! `v8inline --ticks` does (the pipeline's `SampleInput::Ticks`, without
//! touching the disk, native frames unnamed). Never panics, hangs or runs out of memory; every tick
//! becomes one sample; the counts written add up to the folder's total.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use v8inline::internals::pipeline::{ExpandingSinks, FoldOptions};
use v8inline::internals::sources::ticks::TickLog;
use v8inline::internals::symbols::SymbolCache;
use v8inline::internals::v8::expand::V8Expander;
use v8inline::internals::v8::inline_map::SourceOptions;

fuzz_target!(|bytes: &[u8]| {
    // The pid comes from the name, as from `prof-PID.log`.
    let Ok(mut log) = TickLog::parse(bytes, Path::new("prof-42.log"), SourceOptions::default()) else { return };
    let options = FoldOptions::default();
    let mut sink = ExpandingSinks::new(V8Expander::new(log.code_logs().clone(), options.expand), &options);
    // Native frames stay unnamed: reading the ELF files an input happens to
    // name (node's binary) would make such inputs 500 times slower.
    log.read_samples_with(&mut sink, SymbolCache::reading_no_files());
    let summary = sink.folder().summary();
    assert_eq!(summary.samples_kept + summary.samples_without_frames, log.tick_count() as u64);
    let mut folded = Vec::new();
    sink.folder().write_folded(&mut folded).expect("writing to memory cannot fail");
    let text = String::from_utf8(folded).expect("folded output is UTF-8");
    let mut total: u64 = 0;
    for line in text.lines() {
        let (_, count) = line.rsplit_once(' ').expect("a folded line ends in a count");
        total = total.wrapping_add(count.parse::<u64>().expect("a count"));
    }
    assert_eq!(total, summary.total_count);
});
