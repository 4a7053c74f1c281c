//! The main job: the arguments become a [`Job`], which the library runs;
//! what it tells on the way is printed on standard error.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use crate::args::{AnnotateFormat, FoldArgs, OutputArgs, ReportFormat, SummaryFormat};
use crate::failure::Failure;
use v8inline::CollapseOptions;
use v8inline::ExpandOptions;
use v8inline::ThreadSelection;
use v8inline::choose_input;
use v8inline::{Destination, Job, OutputRequest, RunEvent, check_outputs, run};
use v8inline::{FoldOptions, SampleInput};

pub(crate) fn fold(args: FoldArgs) -> Result<(), Failure> {
    let outputs = output_requests(&args)?;
    // Before the default input is chosen (and said).
    check_outputs(&outputs).map_err(|error| Failure::Usage(error.to_string()))?;
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

/// The outputs the arguments ask for, in the order they are written.
fn output_requests(args: &FoldArgs) -> Result<Vec<OutputRequest>, Failure> {
    let outputs = &args.outputs;
    if outputs.cpuprofile.is_none() {
        let shaping = [
            (outputs.js_only, "--js-only"),
            (outputs.cpuprofile_pid.is_some(), "--cpuprofile-pid"),
            (outputs.cpuprofile_tid.is_some(), "--cpuprofile-tid"),
        ];
        if let Some((_, flag)) = shaping.iter().find(|(given, _)| *given) {
            return Err(Failure::Usage(format!("{flag} shapes a .cpuprofile: give --cpuprofile <FILE>")));
        }
    }
    let mut requests = Vec::new();
    let others_on_standard_output = (outputs.report.is_some() && outputs.report_output.is_none())
        || (outputs.summary.is_some() && outputs.summary_output.is_none())
        || (outputs.annotate.is_some() && outputs.annotate_output.is_none());
    match &args.output {
        Some(path) => requests.push(OutputRequest::Folded(Destination::File(path.clone()))),
        None if !others_on_standard_output => requests.push(OutputRequest::Folded(Destination::StandardOutput)),
        None => {}
    }
    if let Some(path) = &args.flamegraph {
        requests.push(OutputRequest::FlameGraph { path: path.clone(), style: outputs.flamegraph_style.into() });
    }
    requests.extend(requests_beside_folded(outputs, outputs.cpuprofile.clone(), outputs.firefox_profile.clone()));
    if args.folding.stats {
        requests.push(OutputRequest::Stats);
    }
    Ok(requests)
}

/// pprof, the report, the summary, the annotations, the `.cpuprofile` and
/// the Firefox profile (at these paths, if any): the outputs the main job
/// and `record` share.
pub(crate) fn requests_beside_folded(
    outputs: &OutputArgs,
    cpuprofile: Option<PathBuf>,
    firefox_profile: Option<PathBuf>,
) -> Vec<OutputRequest> {
    let to = |path: &Option<PathBuf>| match path {
        Some(path) => Destination::File(path.clone()),
        None => Destination::StandardOutput,
    };
    let mut requests = Vec::new();
    if let Some(path) = &outputs.pprof {
        requests.push(OutputRequest::Pprof(path.clone()));
    }
    if outputs.report == Some(ReportFormat::Json) {
        requests.push(OutputRequest::ReportJson(to(&outputs.report_output)));
    }
    if outputs.summary == Some(SummaryFormat::Markdown) {
        // Appended to: $GITHUB_STEP_SUMMARY collects every step's summary.
        let to = match &outputs.summary_output {
            Some(path) => Destination::AppendTo(path.clone()),
            None => Destination::StandardOutput,
        };
        requests.push(OutputRequest::SummaryMarkdown {
            to,
            top: outputs.top,
            source_root: outputs.source_root.clone(),
        });
    }
    if outputs.annotate == Some(AnnotateFormat::Github) {
        requests.push(OutputRequest::GithubAnnotations {
            to: to(&outputs.annotate_output),
            top: outputs.annotate_top,
            source_root: outputs.source_root.clone(),
        });
    }
    if let Some(path) = cpuprofile {
        requests.push(OutputRequest::CpuProfile {
            path,
            thread: ThreadSelection { pid: outputs.cpuprofile_pid, tid: outputs.cpuprofile_tid },
            javascript_only: outputs.js_only,
        });
    }
    if let Some(path) = firefox_profile {
        requests.push(OutputRequest::FirefoxProfile(path));
    }
    requests
}
