//! The main job: the arguments become a [`pipeline::fold`] of one input,
//! then every output asked for is written.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::args::{AnnotateFormat, FoldArgs, OutputArgs, ReportFormat, SummaryFormat};
use crate::failure::{Failure, report_warnings, standard_output_failure, write_file, write_output};
use v8inline::collapse::{CollapseOptions, CollapseSummary};
use v8inline::default_input::choose_input;
use v8inline::output::annotations::{SourceRoot, github_annotations, markdown_summary};
use v8inline::output::cpuprofile::{CpuProfile, CpuProfileOptions, ThreadSelection};
use v8inline::output::firefox::{firefox_profile, write_firefox_profile};
use v8inline::output::flamegraph::SvgOptions;
use v8inline::output::json::JsonReport;
use v8inline::output::pprof::write_pprof;
use v8inline::output::report::{Report, WeightUnit};
use v8inline::output::stack_profile::StackProfile;
use v8inline::output::timeline::Timeline;
use v8inline::pipeline::{self, FoldOptions, FoldedProfile, SampleInput};
use v8inline::v8::expand::{ExpandOptions, ExpansionStats};
use v8inline::v8::inline_map::{InlineMap, LogId};

pub(crate) fn fold(args: FoldArgs) -> Result<(), Failure> {
    let outputs_on_stdout = args.outputs.on_standard_output();
    if outputs_on_stdout.len() > 1 {
        return Err(Failure::Usage(format!(
            "{} would all write to standard output: give all but one a file (--report-output, --summary-output, \
             --annotate-output)",
            outputs_on_stdout.join(" and ")
        )));
    }
    let profile = fold_input(&args)?;
    // Checked before writing: a strict run that fails leaves no output.
    report_warnings(&profile.diagnostics, args.inputs.strict)?;
    // Built before writing too: a thread that was not sampled leaves no output.
    let timeline_outputs = match &profile.timeline {
        Some(timeline) => timeline_outputs(&args.outputs, timeline, &profile.input_name)?,
        None => Vec::new(),
    };
    let mut summary = profile.summary.clone();
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|error| file_failure(path, error))?;
            summary.distinct_stacks =
                profile.write_folded(std::io::BufWriter::new(file)).map_err(|error| file_failure(path, error))?;
        }
        None if outputs_on_stdout.is_empty() => {
            summary.distinct_stacks =
                profile.write_folded(std::io::stdout().lock()).map_err(standard_output_failure)?;
        }
        None => {}
    }
    if let Some(svg_path) = &args.flamegraph {
        let mut folded = Vec::new();
        profile.write_folded(&mut folded)?;
        let text = String::from_utf8_lossy(&folded);
        let svg_options = SvgOptions {
            title: format!("v8inline: {}", profile.input_name),
            // V8's ticks carry no perf event; each counts 1.
            event: summary.event.clone().or_else(|| (!args.ticks.is_empty()).then(|| "V8 ticks".to_string())),
            samples: summary.samples_kept,
            total_count: summary.total_count,
        };
        let mut svg = Vec::new();
        v8inline::output::flamegraph::write_svg(text.lines(), &svg_options, &mut svg)?;
        write_file(svg_path, &svg)?;
    }
    if args.outputs.needs_details() {
        write_detailed_outputs(&args.outputs, &profile.stack_profile())?;
    }
    for output in &timeline_outputs {
        write_file(&output.path, &output.bytes)?;
    }
    if args.stats {
        if let Some(native) = &profile.native {
            eprintln!(
                "v8inline: native frames: {} named by ELF symbols, {} in a library without a symbol there, {} outside libraries",
                native.symbolized, native.in_library_without_symbol, native.outside_libraries
            );
        }
        eprint!("{}", stats_report(&summary, &profile.expansion));
        eprint!("{}", code_log_report(profile.expanders[0].profiles().maps()));
    }
    Ok(())
}

/// A file that could not be written, named.
fn file_failure(path: &Path, error: std::io::Error) -> Failure {
    match Failure::from(error) {
        Failure::Input(message) => Failure::Input(format!("{}: {message}", path.display())),
        other => other,
    }
}

/// Folds the input the arguments name: a perf script (default), `--ticks`
/// or `--perf-data`. The warnings are returned in the profile, for
/// [`report_warnings`].
pub(crate) fn fold_input(args: &FoldArgs) -> Result<FoldedProfile, Failure> {
    // The flame graph colors frames by their annotations.
    let annotate_all = args.all || args.flamegraph.is_some();
    let collapse = CollapseOptions {
        include_pid: args.pid,
        include_tid: args.tid,
        include_addrs: args.addrs,
        annotate_kernel: args.annotate_kernel || annotate_all,
        annotate_jit: args.annotate_jit || annotate_all,
        annotate_inline: args.annotate_inline || annotate_all,
        event_filter: args.event_filter.clone(),
        skip_after: args.skip_after.clone(),
    };
    let options = FoldOptions {
        collapse,
        profiles: args.inputs.profile_options(),
        expand: ExpandOptions { exact_pc: args.exact_pc },
        record_details: args.outputs.needs_details(),
        timeline: args.outputs.needs_timeline(),
        threads: args.threads,
    };
    if args.ticks.len() > 1 {
        // Each log is the code log of its own ticks: one fold each, merged.
        if options.record_details {
            return Err(Failure::Usage("--pprof, --report, --summary and --annotate take one --ticks log".to_string()));
        }
        let inputs: Vec<SampleInput> = args.ticks.iter().cloned().map(SampleInput::Ticks).collect();
        return Ok(pipeline::fold_all(&inputs, &options)?);
    }
    let input = match (args.ticks.first(), &args.perf_data) {
        (Some(log), _) => SampleInput::Ticks(log.clone()),
        (None, Some(perf_data)) => SampleInput::PerfData(perf_data.clone()),
        (None, None) => {
            let standard_input_is_terminal = std::io::stdin().is_terminal();
            let chosen = choose_input(args.perf_script.as_deref(), standard_input_is_terminal, Path::new("."))
                .map_err(|error| Failure::Usage(error.to_string()))?;
            if let Some(note) = &chosen.note {
                eprintln!("v8inline: {note}");
            }
            chosen.input
        }
    };
    Ok(pipeline::fold(&input, &options)?)
}

/// The outputs built on the detailed stacks: pprof, report, summary, annotations.
pub(crate) fn write_detailed_outputs(outputs: &OutputArgs, profile: &StackProfile) -> Result<(), Failure> {
    if let Some(path) = &outputs.pprof {
        let mut bytes = Vec::new();
        write_pprof(profile, &mut bytes)?;
        write_file(path, &bytes)?;
    }
    let report = Report::new(profile, WeightUnit::Samples);
    let root = SourceRoot::new(&outputs.source_root);
    if outputs.report == Some(ReportFormat::Json) {
        let mut bytes = Vec::new();
        JsonReport::new(&report).write(&mut bytes)?;
        write_output(outputs.report_output.as_deref(), &bytes, false)?;
    }
    if outputs.summary == Some(SummaryFormat::Markdown) {
        let text = markdown_summary(&report, &root, outputs.top);
        write_output(outputs.summary_output.as_deref(), text.as_bytes(), true)?;
    }
    if outputs.annotate == Some(AnnotateFormat::Github) {
        let mut text = String::new();
        for annotation in github_annotations(&report, &root, outputs.annotate_top) {
            text.push_str(&annotation.command());
            text.push('\n');
        }
        write_output(outputs.annotate_output.as_deref(), text.as_bytes(), false)?;
    }
    Ok(())
}

/// A file to write.
pub(crate) struct OutputFile {
    /// Where.
    pub(crate) path: PathBuf,
    /// What.
    pub(crate) bytes: Vec<u8>,
}

/// The timeline outputs asked for: `--cpuprofile` (with a note on standard
/// error saying which thread it holds) and `--firefox-profile`.
pub(crate) fn timeline_outputs(
    outputs: &OutputArgs,
    timeline: &Timeline,
    input_name: &str,
) -> Result<Vec<OutputFile>, Failure> {
    let mut files = Vec::new();
    if let Some(path) = &outputs.cpuprofile {
        let options = CpuProfileOptions {
            thread: ThreadSelection { pid: outputs.cpuprofile_pid, tid: outputs.cpuprofile_tid },
            javascript_only: outputs.js_only,
        };
        let (cpuprofile, summary) = CpuProfile::from_timeline(timeline, &options)
            .map_err(|error| Failure::Usage(format!("--cpuprofile {}: {error}", path.display())))?;
        let choose = if summary.threads > 1 && options.thread == ThreadSelection::default() {
            " (another with --cpuprofile-tid TID)"
        } else {
            ""
        };
        eprintln!("v8inline: {}: {}{choose}", path.display(), summary.describe());
        let mut bytes = Vec::new();
        cpuprofile.write(&mut bytes)?;
        files.push(OutputFile { path: path.clone(), bytes });
    }
    if let Some(path) = &outputs.firefox_profile {
        let profile = firefox_profile(timeline, &format!("v8inline: {input_name}"));
        let gzip = path.extension().is_some_and(|extension| extension == "gz");
        let mut bytes = Vec::new();
        write_firefox_profile(&profile, &mut bytes, gzip)?;
        files.push(OutputFile { path: path.clone(), bytes });
    }
    Ok(files)
}

/// The `--stats` lines on processes with several code logs (one per
/// isolate): per log, its code objects, the LOADs joined with them and its
/// clock against the jitdump's.
pub(crate) fn code_log_report(maps: &[Arc<InlineMap>]) -> String {
    let mut report = String::new();
    for map in maps.iter().filter(|map| map.logs().len() > 1) {
        let mut joined = vec![0usize; map.logs().len()];
        for object in map.codes().iter().filter_map(|code| code.log_object()) {
            joined[object.log.0 as usize] += 1;
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
pub(crate) fn stats_report(summary: &CollapseSummary, stats: &ExpansionStats) -> String {
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
    line(format!("other frames passed through: {}", stats.not_jit));
    line(format!("frames written by expansion: {}", summary.expanded_frames));
    report
}
