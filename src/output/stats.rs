//! The `--stats` text: what happened to the samples and their JIT frames,
//! and per process with several code logs (one per isolate) how each joined
//! the jitdump.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::collapse::CollapseSummary;
use crate::sources::ticks::NativeFrameStats;
use crate::v8::expand::ExpansionStats;
use crate::v8::inline_map::{InlineMap, LogId};

/// The line on how the native frames of V8 ticks were named.
pub fn native_frames_line(native: &NativeFrameStats) -> String {
    format!(
        "v8inline: native frames: {} named by ELF symbols, {} in a library without a symbol there, {} outside libraries\n",
        native.symbolized, native.in_library_without_symbol, native.outside_libraries
    )
}

/// The `--stats` lines on processes with several code logs (one per
/// isolate): per log, its code objects, the LOADs joined with them and its
/// clock against the jitdump's.
pub fn code_log_report(maps: &[Arc<InlineMap>]) -> String {
    let mut report = String::new();
    for map in maps.iter().filter(|map| map.logs().len() > 1) {
        let mut joined = vec![0usize; map.logs().len()];
        for object in map.codes().iter().filter_map(|code| code.log_object()) {
            joined[object.log.index()] += 1;
        }
        let pid = map.pid.map_or_else(|| "?".to_string(), |pid| pid.to_string());
        let _ = writeln!(report, "v8inline: code logs of pid {pid}: {} isolates", map.logs().len());
        for (index, log) in map.logs().iter().enumerate() {
            let clock = match map.clock_alignment(LogId(index as u32)) {
                Some(clock) => format!(
                    "clock {:+.6} s from the jitdump's (median of {} code objects, 95 % within {:.1} µs)",
                    clock.offset_nanoseconds as f64 / 1e9,
                    clock.pair_count,
                    clock.spread_nanoseconds as f64 / 1e3
                ),
                None => "clock not aligned (no code object only it created)".to_string(),
            };
            let _ = writeln!(
                report,
                "v8inline:   {}: {} code objects, {} jitdump loads joined, {clock}",
                log.path.display(),
                log.code_objects.len(),
                joined[index]
            );
        }
    }
    report
}

/// The `--stats` report.
pub fn stats_report(summary: &CollapseSummary, stats: &ExpansionStats) -> String {
    let jit_frames = stats.expanded
        + stats.resolved_without_inlining
        + stats.resolved_without_positions
        + stats.unresolved_no_jitdump
        + stats.unresolved_unknown_address
        + stats.unresolved_unknown_code_index;
    let mut report = String::new();
    let mut line = |text: String| {
        report.push_str("v8inline: ");
        report.push_str(&text);
        report.push('\n');
    };
    line(format!(
        "samples: {} read, {} folded, {} filtered out by event, {} without frames",
        summary.samples_read, summary.samples_kept, summary.samples_filtered_out, summary.samples_without_frames
    ));
    line(format!("total count written: {} in {} distinct stacks", summary.total_count, summary.distinct_stacks));
    line(format!("JIT frames: {jit_frames}"));
    line(format!("  expanded into inlined functions: {}", stats.expanded));
    line(format!("  resolved, no inlining at that offset: {}", stats.resolved_without_inlining));
    line(format!(
        "  resolved, no source positions (interpreted, Sparkplug, builtins or no log): {}",
        stats.resolved_without_positions
    ));
    line(format!("  passed through, no jitdump for the process: {}", stats.unresolved_no_jitdump));
    line(format!("  passed through, address in no code object: {}", stats.unresolved_unknown_address));
    line(format!("  passed through, code index not in the jitdump: {}", stats.unresolved_unknown_code_index));
    if stats.clock_mismatches > 0 {
        line(format!(
            "  resolved although loaded after the sample time (record with perf -k mono): {}",
            stats.clock_mismatches
        ));
    }
    if stats.builtins_named > 0 {
        line(format!(
            "native frames named from the code log (builtins of a binary without symbols): {}",
            stats.builtins_named
        ));
    }
    line(format!("other frames passed through: {}", stats.not_jit));
    line(format!("frames written by expansion: {}", summary.expanded_frames));
    report
}
