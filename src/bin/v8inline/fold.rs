//! The main job: fold the samples of one source, then write every output asked for.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::args::{AnnotateFormat, FoldArgs, OutputArgs, ReportFormat, SummaryFormat};
use crate::failure::{Failure, load_profiles, report_warnings, standard_output_failure, write_file, write_output};
use v8inline::collapse::parallel::collapse_parallel;
use v8inline::collapse::{CollapseOptions, CollapseSummary, Folder, fold_samples};
use v8inline::diagnostics::Diagnostics;
use v8inline::expand::{ExpandOptions, ExpansionStats, V8Expander};
use v8inline::flamegraph::SvgOptions;
use v8inline::input::open_stream_allowing_cut;
use v8inline::output::annotations::{SourceRoot, github_annotations, markdown_summary};
use v8inline::output::json::JsonReport;
use v8inline::output::pprof::write_pprof;
use v8inline::output::report::{Report, WeightUnit};
use v8inline::output::stack_profile::StackProfile;
use v8inline::perf_data::{PerfDataOptions, fold_perf_data};
use v8inline::profile::Profiles;
use v8inline::ticks::{TickOptions, fold_ticks};

pub(crate) fn fold(args: FoldArgs) -> Result<(), Failure> {
    let outputs_on_stdout = args.outputs.on_standard_output();
    if outputs_on_stdout.len() > 1 {
        return Err(Failure::Usage(format!(
            "{} would all write to standard output: give all but one a file (--report-output, --summary-output, \
             --annotate-output)",
            outputs_on_stdout.join(" and ")
        )));
    }
    // The flame graph colors frames by their annotations.
    let annotate_all = args.all || args.flamegraph.is_some();
    let options = CollapseOptions {
        include_pid: args.pid,
        include_tid: args.tid,
        include_addrs: args.addrs,
        annotate_kernel: args.annotate_kernel || annotate_all,
        annotate_jit: args.annotate_jit || annotate_all,
        annotate_inline: args.annotate_inline || annotate_all,
        event_filter: args.event_filter.clone(),
        skip_after: args.skip_after.clone(),
    };
    let FoldedSamples { folded, folder, expanders, summary, input_name, diagnostics } = fold_source(&args, options)?;
    // Checked before writing: a strict run that fails leaves no output.
    report_warnings(&diagnostics, args.inputs.strict)?;
    let mut stats = ExpansionStats::default();
    for expander in &expanders {
        stats.add(&expander.stats);
    }
    match &args.output {
        Some(path) => write_file(path, &folded)?,
        None if outputs_on_stdout.is_empty() => {
            std::io::stdout().lock().write_all(&folded).map_err(standard_output_failure)?
        }
        None => {}
    }
    if let Some(svg_path) = &args.flamegraph {
        let text = String::from_utf8_lossy(&folded);
        let svg_options = SvgOptions {
            title: format!("v8inline: {input_name}"),
            // V8's ticks carry no perf event; each counts 1.
            event: summary.event.clone().or_else(|| args.ticks.is_some().then(|| "V8 ticks".to_string())),
            samples: summary.samples_kept,
            total_count: summary.total_count,
        };
        let mut svg = Vec::new();
        v8inline::flamegraph::write_svg(text.lines(), &svg_options, &mut svg)?;
        write_file(svg_path, &svg)?;
    }
    if args.outputs.needs_details() {
        let profile = StackProfile::from_folder(&folder, &expanders[0], summary.event.clone());
        write_detailed_outputs(&args.outputs, &profile)?;
    }
    if args.stats {
        eprint!("{}", stats_report(&summary, &stats));
    }
    Ok(())
}

/// Samples of one source folded, before any output is written.
pub(crate) struct FoldedSamples {
    /// The folded stacks.
    folded: Vec<u8>,
    /// The folder, with the detailed stacks if outputs need them (not
    /// filled by a parallel fold).
    folder: Folder,
    /// The expanders used (one per thread).
    expanders: Vec<V8Expander>,
    summary: CollapseSummary,
    /// The input, for titles and messages.
    input_name: String,
    /// Warnings about every input: profiles, samples.
    diagnostics: Diagnostics,
}

/// Folds the samples of the source the arguments name: a perf script
/// (default), `--ticks` or `--perf-data`. Prints the notes of loading.
pub(crate) fn fold_source(args: &FoldArgs, options: CollapseOptions) -> Result<FoldedSamples, Failure> {
    let expand_options = ExpandOptions { exact_pc: args.exact_pc };
    let record_details = args.outputs.needs_details();
    let print_notes = |notes: &[String]| notes.iter().for_each(|note| eprintln!("v8inline: {note}"));
    // The one-threaded sources hand back a folder to render.
    let rendered = |folder: Folder, expander: V8Expander, mut summary: CollapseSummary, input_name: String| {
        let mut folded = Vec::new();
        summary.distinct_stacks = folder.write_folded(&mut folded)?;
        let diagnostics = expander.profiles().diagnostics.clone();
        Ok::<_, Failure>(FoldedSamples { folded, folder, expanders: vec![expander], summary, input_name, diagnostics })
    };
    if let Some(log_path) = &args.ticks {
        let sources = args.inputs.profile_options().sources;
        let tick_options = TickOptions { collapse: options, sources, expand: expand_options, record_details };
        let report = fold_ticks(log_path, &tick_options).map_err(|error| Failure::Input(error.to_string()))?;
        print_notes(&report.notes);
        if args.stats {
            let native = &report.native;
            eprintln!(
                "v8inline: native frames: {} named by ELF symbols, {} in a library without a symbol there, {} outside libraries",
                native.symbolized, native.in_library_without_symbol, native.outside_libraries
            );
        }
        let input_name = format!("ticks of {}", log_path.display());
        return rendered(report.folder, report.expander, report.summary, input_name);
    }
    if let Some(perf_data_path) = &args.perf_data {
        let perf_data_options = PerfDataOptions {
            collapse: options,
            profiles: args.inputs.profile_options(),
            expand: expand_options,
            record_details,
        };
        let report =
            fold_perf_data(perf_data_path, &perf_data_options).map_err(|error| Failure::Input(error.to_string()))?;
        print_notes(&report.notes);
        let input_name = perf_data_path.display().to_string();
        return rendered(report.folder, report.expander, report.summary, input_name);
    }
    let profiles = load_profiles(&args.inputs)?;
    let input_path = args.perf_script.clone().unwrap_or_else(|| PathBuf::from("-"));
    let (input, input_cut_short) =
        open_stream_allowing_cut(&input_path).map_err(|error| Failure::Input(error.to_string()))?;
    let input_name = input_path.display().to_string();
    let read_failure =
        |error: std::io::Error| Failure::Input(format!("{input_name}: cannot read perf script: {error}"));
    // The perf script's own warnings join those of the profiles.
    let sample_diagnostics = |profiles: &Profiles, summary: &CollapseSummary| {
        let mut diagnostics = profiles.diagnostics.clone();
        let name = if input_path == Path::new("-") { Path::new("<stdin>") } else { input_path.as_path() };
        diagnostics.add_perf_script(name, &summary.warnings);
        if input_cut_short.is_set() {
            diagnostics.add_compressed_cut(name, &format!("{} samples", summary.samples_read));
        }
        diagnostics
    };
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    // Detailed outputs read one folder and its expander; a process discovered
    // on the way would be seen by one thread only.
    let parallel = threads > 1 && !record_details && !profiles.discovers_processes();
    let mut folder = Folder::new(&options);
    if parallel {
        // Folded stacks are one line per distinct stack: small enough to
        // keep for the flame graph.
        let mut folded = Vec::new();
        let expanders = (0..threads).map(|_| V8Expander::new(profiles.clone(), expand_options)).collect();
        let outcome = collapse_parallel(input, &options, expanders, &mut folded).map_err(read_failure)?;
        print_notes(&outcome.expanders[0].profiles().notes);
        let diagnostics = sample_diagnostics(outcome.expanders[0].profiles(), &outcome.summary);
        return Ok(FoldedSamples {
            folded,
            folder,
            expanders: outcome.expanders,
            summary: outcome.summary,
            input_name,
            diagnostics,
        });
    }
    let mut expander = V8Expander::new(profiles, expand_options);
    if record_details {
        folder.record_details();
    }
    let summary = fold_samples(input, &options, &mut expander, &mut folder).map_err(read_failure)?;
    print_notes(&expander.profiles().notes);
    let diagnostics = sample_diagnostics(expander.profiles(), &summary);
    let mut samples = rendered(folder, expander, summary, input_name)?;
    samples.diagnostics = diagnostics;
    Ok(samples)
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
