//! The perf-script reader and collapser on arbitrary bytes, with every
//! option on or off (chosen by the first byte): never panics, the counts
//! written add up to the summary's total, and folding on two threads in
//! small chunks (8 to 71 bytes, by the input's length) writes the same bytes
//! and summary.
#![no_main]

use libfuzzer_sys::fuzz_target;
use v8inline::collapse;
use v8inline::internals::collapse::CollapseOptions;
use v8inline::internals::expansion::NoExpansion;
use v8inline::internals::pipeline::parallel::fold_in_chunks;

fuzz_target!(|bytes: &[u8]| {
    let Some((&flags, script)) = bytes.split_first() else { return };
    let options = {
        let mut collapse_options = CollapseOptions::default();
        collapse_options.include_pid = flags & 1 != 0;
        collapse_options.include_tid = flags & 2 != 0;
        collapse_options.include_addrs = flags & 4 != 0;
        collapse_options.annotate_kernel = flags & 8 != 0;
        collapse_options.annotate_jit = flags & 16 != 0;
        collapse_options.annotate_inline = flags & 32 != 0;
        collapse_options.event_filter = (flags & 64 != 0).then(|| "cycles".to_string());
        collapse_options.skip_after = if flags & 128 != 0 { vec!["main".to_string()] } else { Vec::new() };
        collapse_options
    };
    let mut folded = Vec::new();
    let summary = collapse(script, &options, &mut folded).expect("reading memory cannot fail");
    let mut folded_in_chunks = Vec::new();
    let chunk_bytes = 8 + script.len() % 64;
    let mut outcome =
        fold_in_chunks(script, &options, vec![NoExpansion; 2], chunk_bytes).expect("reading memory cannot fail");
    outcome.summary.distinct_stacks =
        outcome.folder.write_folded(&mut folded_in_chunks).expect("writing to memory cannot fail");
    assert!(folded_in_chunks == folded, "two threads in chunks of {chunk_bytes} bytes fold differently");
    assert_eq!(outcome.summary, summary);
    let text = String::from_utf8(folded).expect("folded output is UTF-8");
    let mut total: u64 = 0;
    for line in text.lines() {
        let (_, count) = line.rsplit_once(' ').expect("a folded line ends in a count");
        total = total.wrapping_add(count.parse::<u64>().expect("a count"));
    }
    assert_eq!(total, summary.total_count);
    assert_eq!(text.lines().count() as u64, summary.distinct_stacks);
    assert!(
        summary.samples_kept + summary.samples_without_frames + summary.samples_filtered_out <= summary.samples_read
    );
});
