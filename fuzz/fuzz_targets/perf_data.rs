//! The perf.data reader on arbitrary bytes, read in memory
//! (`PerfDataSource::read_bytes`) and folded as `v8inline --perf-data` folds
//! it (no code log or jitdump: JIT frames pass through). The first byte
//! chooses the options (pid and tid in the root, addresses, an event filter);
//! the rest is the perf.data. Never panics, hangs or runs out of memory; a
//! damaged file is read as far as it goes; the counts written add up to the
//! folder's total, which no more samples than were read make up; every
//! warning names the file.
#![no_main]

use std::cell::RefCell;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use v8inline::internals::collapse::CollapseOptions;
use v8inline::internals::pipeline::{ExpandingSinks, FoldOptions};
use v8inline::internals::sources::perf_data::PerfDataSource;
use v8inline::internals::v8::code_logs::CodeLogs;
use v8inline::internals::v8::expand::V8Expander;

/// The name the input goes by in warnings.
const NAME: &str = "fuzz.perf.data";

thread_local! {
    /// Kernel and ELF symbols, loaded once for all inputs (as the
    /// benchmarks read one file many times).
    static SOURCE: RefCell<PerfDataSource> = RefCell::new(PerfDataSource::new().on_one_thread());
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&flags, perf_data)) = bytes.split_first() else { return };
    let options = {
        let mut fold_options = FoldOptions::default();
        fold_options.collapse = {
            let mut collapse_options = CollapseOptions::default();
            collapse_options.include_pid = flags & 1 != 0;
            collapse_options.include_tid = flags & 2 != 0;
            collapse_options.include_addrs = flags & 4 != 0;
            collapse_options.annotate_kernel = flags & 8 != 0;
            collapse_options
        };
        fold_options
    };
    let event = (flags & 16 != 0).then_some("cpu-clock");
    let mut sink = ExpandingSinks::new(V8Expander::new(CodeLogs::from_maps(Vec::new()), options.expand), &options);
    let read = SOURCE.with(|source| source.borrow_mut().read_bytes(perf_data, Path::new(NAME), event, &mut sink));
    let Ok(summary) = read else { return };
    let folded_summary = sink.folder().summary();
    assert!(folded_summary.samples_kept + folded_summary.samples_without_frames <= summary.samples_read);
    assert!(summary.samples_filtered_out <= summary.samples_read);
    let mut folded = Vec::new();
    sink.folder().write_folded(&mut folded).expect("writing to memory cannot fail");
    let text = String::from_utf8(folded).expect("folded output is UTF-8");
    let mut total: u64 = 0;
    for line in text.lines() {
        let (_, count) = line.rsplit_once(' ').expect("a folded line ends in a count");
        total = total.wrapping_add(count.parse::<u64>().expect("a count"));
    }
    assert_eq!(total, folded_summary.total_count);
    assert_eq!(text.lines().count() as u64, folded_summary.distinct_stacks);
});
