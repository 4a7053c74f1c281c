//! The main job: the arguments become a [`Job`], which the library runs;
//! what it tells on the way is printed on standard error.

use std::io::IsTerminal;
use std::path::Path;

use crate::args::FoldArgs;
use crate::failure::Failure;
use v8inline::{CollapseOptions, ExpandOptions, FoldOptions, SampleInput};
use v8inline::{Job, RunEvent, choose_input, run};

pub(crate) fn fold(args: FoldArgs) -> Result<(), Failure> {
    let mut choices = args.outputs.choices(args.folding.stats);
    choices.folded = args.output.clone();
    choices.flamegraph = args.flamegraph.clone();
    // Checked before the default input is chosen (and said).
    let outputs = choices.main_job_requests().map_err(|error| Failure::Usage(error.to_string()))?;
    let mut job = Job::new(inputs(&args)?, fold_options(&args), outputs);
    job.strict = args.inputs.reading.strict;
    run(&job, &mut print_event)?;
    Ok(())
}

/// Prints what the job tells on standard error.
pub(crate) fn print_event(event: RunEvent<'_>) {
    match event {
        RunEvent::Warnings(diagnostics) => eprint!("{diagnostics}"),
        RunEvent::CpuProfileThread { path, thread, more_threads } => {
            let choose = if more_threads { " (another with --cpuprofile-tid TID)" } else { "" };
            eprintln!("v8inline: {}: {thread}{choose}", path.display());
        }
        RunEvent::Stats(text) => eprint!("{text}"),
    }
}

/// The samples the arguments name: a perf script (default), `--ticks` or
/// `--perf-data`.
fn inputs(args: &FoldArgs) -> Result<Vec<SampleInput>, Failure> {
    if !args.ticks.is_empty() {
        // Each log is the code log of its own ticks: one fold each, merged.
        return Ok(args.ticks.iter().cloned().map(SampleInput::Ticks).collect());
    }
    if let Some(perf_data) = &args.perf_data {
        return Ok(vec![SampleInput::PerfData(perf_data.clone())]);
    }
    let standard_input_is_terminal = std::io::stdin().is_terminal();
    let chosen = choose_input(args.perf_script.as_deref(), standard_input_is_terminal, Path::new("."))
        .map_err(|error| Failure::Usage(error.to_string()))?;
    if let Some(note) = &chosen.note {
        eprintln!("v8inline: {note}");
    }
    Ok(vec![chosen.input])
}

/// How to fold (the outputs turn on what they need: [`Job::fold_options`]).
fn fold_options(args: &FoldArgs) -> FoldOptions {
    let mut collapse = CollapseOptions::default();
    collapse.include_pid = args.pid;
    collapse.include_tid = args.folding.tid;
    // inferno's roots unless asked (issue 45): --pid alone stays a drop-in.
    collapse.one_root_per_process = args.one_root_per_process;
    collapse.include_addrs = args.addrs;
    collapse.annotate_kernel = args.annotate_kernel || args.all;
    collapse.annotate_jit = args.annotate_jit || args.all;
    collapse.annotate_inline = args.annotate_inline || args.all;
    collapse.event_filter = args.event_filter.clone();
    collapse.skip_after = args.folding.skip_after.clone();
    let mut expand = ExpandOptions::default();
    expand.exact_pc = args.exact_pc;
    let mut options = FoldOptions::default();
    options.collapse = collapse;
    options.code_logs = args.inputs.code_log_options();
    options.expand = expand;
    options.threads = args.threads;
    options
}
