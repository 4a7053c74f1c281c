//! The whole main job on arbitrary inputs: a code log, a jitdump and a perf
//! script are joined and folded with expansion by the pipeline's own path
//! (`pipeline::fold_perf_script_from`, what `v8inline --log L --jitdump D S`
//! runs once it has read the files), without touching the disk.
//!
//! Input layout (what `fuzz/build-seed-corpus.py` writes): a little-endian
//! `u32` log length, a `u32` jitdump length, one byte of flags (exact PC,
//! pid in the root, JIT and inline annotations; 0x10 and 0x20 together build
//! the pprof profile and JSON report too; 0x40 splits the log after its
//! middle line into two isolates' logs of the process; 0x80 folds the script
//! on two threads in chunks of 8 to 71 bytes too, which must give the same
//! stacks), then the log, the jitdump and the perf script. Lengths past the
//! end are clamped.
//!
//! The pprof profile is encoded and decoded again, which must give it back;
//! it is not gzipped as `write_pprof` does (that is flate2's code, and
//! setting up a compressor for every input took a sixth of the time).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

use prost::Message;
use v8inline::internals::collapse::CollapseOptions;
use v8inline::internals::formats::jitdump::{self, ReadOptions};
use v8inline::internals::formats::v8log::CodeLog;
use v8inline::internals::output::json::JsonReport;
use v8inline::internals::output::pprof::{read_pprof, to_pprof};
use v8inline::internals::output::report::{Report, WeightUnit};
use v8inline::internals::pipeline::parallel::fold_in_chunks;
use v8inline::internals::pipeline::{FoldOptions, fold_perf_script_from};
use v8inline::internals::v8::code_logs::CodeLogs;
use v8inline::internals::v8::expand::{ExpandOptions, V8Expander};
use v8inline::internals::v8::inline_map::{InlineMap, SourceOptions};

/// Splits off the first `length` bytes (all of them if fewer).
fn take<'a>(bytes: &mut &'a [u8], length: usize) -> &'a [u8] {
    let (taken, rest) = bytes.split_at(length.min(bytes.len()));
    *bytes = rest;
    taken
}

fn length(bytes: &mut &[u8]) -> usize {
    let field = take(bytes, 4);
    let mut little_endian = [0u8; 4];
    little_endian[..field.len()].copy_from_slice(field);
    u32::from_le_bytes(little_endian) as usize
}

fuzz_target!(|bytes: &[u8]| {
    let mut rest = bytes;
    let log_length = length(&mut rest);
    let jitdump_length = length(&mut rest);
    let flags = take(&mut rest, 1).first().copied().unwrap_or(0);
    let log_bytes = take(&mut rest, log_length);
    let logs = if flags & 0x40 != 0 {
        // Two isolates' logs, joined with one jitdump by their own clocks.
        let middle = log_bytes.len() / 2;
        let cut = log_bytes[middle..]
            .iter()
            .position(|&byte| byte == b'\n')
            .map_or(log_bytes.len(), |position| middle + position + 1);
        vec![CodeLog::parse(&log_bytes[..cut]), CodeLog::parse(&log_bytes[cut..])]
    } else {
        vec![CodeLog::parse(log_bytes)]
    };
    let jitdump = jitdump::read(take(&mut rest, jitdump_length), &ReadOptions::default()).ok();
    let script = rest;

    let map = InlineMap::new(logs, jitdump.as_ref(), SourceOptions::default());
    let profiles = CodeLogs::from_maps(vec![(map.pid.unwrap_or(0), map)]);
    let expand_options = {
        let mut expand_options = ExpandOptions::default();
        expand_options.exact_pc = flags & 1 != 0;
        expand_options
    };
    let collapse = {
        let mut collapse_options = CollapseOptions::default();
        collapse_options.include_pid = flags & 2 != 0;
        collapse_options.annotate_jit = flags & 4 != 0;
        collapse_options.annotate_inline = flags & 8 != 0;
        collapse_options
    };
    // Rarer than the other options: building the outputs is slow.
    let detailed = flags & 0x30 == 0x30;
    // The main job's path after it has opened the script and loaded the
    // code logs: expansion, folding, the warnings of the whole fold.
    let options = {
        let mut fold_options = FoldOptions::default();
        fold_options.collapse = collapse.clone();
        fold_options.expand = expand_options;
        fold_options.record_details = detailed;
        fold_options.threads = Some(1);
        fold_options
    };
    let profile = fold_perf_script_from(script, Path::new("fuzz.script"), profiles.clone(), &options)
        .expect("reading memory cannot fail");
    let summary = profile.summary();
    let mut folded = Vec::new();
    profile.write_folded(&mut folded).expect("writing to memory cannot fail");
    if let Some(details) = profile.details() {
        // The outputs built on the detailed stacks: pprof and the JSON report.
        let pprof = to_pprof(details);
        let decoded = read_pprof(&pprof.encode_to_vec()).expect("an encoded profile decodes");
        assert_eq!(decoded, pprof);
        let report = Report::new(details, WeightUnit::Samples);
        JsonReport::new(&report).write(&mut Vec::new()).expect("writing to memory cannot fail");
    }
    if flags & 0x80 != 0 {
        // Two threads, each with its own expander, in chunks of 8 to 71
        // bytes: the same stacks.
        let expanders =
            vec![V8Expander::new(profiles.clone(), expand_options), V8Expander::new(profiles, expand_options)];
        let chunk_bytes = 8 + script.len() % 64;
        let mut folded_in_chunks = Vec::new();
        let outcome = fold_in_chunks(script, &collapse, expanders, chunk_bytes).expect("reading memory cannot fail");
        outcome.folder.write_folded(&mut folded_in_chunks).expect("writing to memory cannot fail");
        assert!(folded_in_chunks == folded, "two threads in chunks of {chunk_bytes} bytes fold differently");
        assert_eq!(outcome.summary.total_count, summary.total_count);
        assert_eq!(outcome.summary.samples_kept, summary.samples_kept);
    }
    let text = String::from_utf8(folded).expect("folded output is UTF-8");
    let mut total: u64 = 0;
    for line in text.lines() {
        let (_, count) = line.rsplit_once(' ').expect("a folded line ends in a count");
        total = total.wrapping_add(count.parse::<u64>().expect("a count"));
    }
    assert_eq!(total, summary.total_count);
});
