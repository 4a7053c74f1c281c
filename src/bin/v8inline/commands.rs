//! The subcommands: `lookup`, `compare`, `record`, `repair-jitdump`, `debuginfo`, `history`.

use std::io::Write;

use crate::args::{BenchArgs, CompareArgs, CompareFormat, DebuginfoArgs, LookupArgs, RecordArgs, RepairJitDumpArgs};
use crate::failure::{Failure, report_warnings, standard_output_failure, write_file, write_output};
use v8inline::{AddressQuery, LookupError};
use v8inline::{CompareCommandError, CompareOptions, ComparisonFormat, compare_files};

use v8inline::RepairError;
use v8inline::thread_count;
use v8inline::{RecordError, RecordOptions, prepare_output_directory};

pub(crate) fn lookup(args: LookupArgs) -> Result<(), Failure> {
    let queries = args
        .addresses
        .iter()
        .map(|text| AddressQuery::parse(text, args.time))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| Failure::Usage(error.to_string()))?;
    let read_threads = thread_count(args.threads);
    let mut options = args.inputs.code_log_options();
    options.read_threads = read_threads;
    let answer = match v8inline::lookup(options, &queries) {
        Ok(answer) => answer,
        Err(LookupError::NotOneProcess { diagnostics, processes }) => {
            report_warnings(&diagnostics, args.inputs.reading.strict)?;
            return Err(Failure::Usage(LookupError::NotOneProcess { diagnostics, processes }.to_string()));
        }
        Err(LookupError::NoInputs) => return Err(Failure::Usage(LookupError::NoInputs.to_string())),
        Err(LookupError::Input(error)) => return Err(error.into()),
        Err(other) => return Err(Failure::Input(other.to_string())),
    };
    report_warnings(&answer.diagnostics, args.inputs.reading.strict)?;
    std::io::stdout().lock().write_all(answer.text.as_bytes()).map_err(standard_output_failure)?;
    // Millions of code objects: the process's exit frees them at once,
    // faster than dropping them one by one.
    std::mem::forget(answer);
    Ok(())
}

/// `compare`: returns the status to exit with: 1 when asked to fail on a
/// regression and one was found.
pub(crate) fn compare(args: CompareArgs) -> Result<u8, Failure> {
    let mut options = match (args.base, args.head) {
        (Some(base), Some(head)) => CompareOptions::new(base, head),
        // clap requires BASE and HEAD unless --merge gives two outputs or more.
        _ => CompareOptions::merging(&args.merge)
            .ok_or_else(|| Failure::Usage("give BASE and HEAD, or --merge OUT OUT...".to_string()))?,
    };
    options.format = args.report.format.into();
    options.top = args.report.top;
    options.least_growth = args.least_growth / 100.0;
    options.threshold = args.threshold / 100.0;
    options.source_root = args.report.source_root;
    options.base_root = args.base_root;
    options.head_root = args.head_root;
    options.separate_native = args.separate_native;
    options.flame_graph = args.flamegraph.is_some();
    options.flame_graph_style = args.flamegraph_style.into();
    options.flame_graph_path = args.flamegraph.clone();
    options.html = args.html.clone();
    let comparison = match compare_files(&options) {
        Ok(comparison) => comparison,
        Err(CompareCommandError::FlameGraphOfReports) => {
            return Err(Failure::Usage(CompareCommandError::FlameGraphOfReports.to_string()));
        }
        Err(error) => return Err(Failure::Input(error.to_string())),
    };
    write_output(args.report.output.as_deref(), comparison.text.as_bytes())?;
    if let (Some(svg_path), Some(svg)) = (&args.flamegraph, &comparison.svg) {
        write_file(svg_path, svg)?;
        for benchmark in &comparison.benchmark_svgs {
            write_file(&v8inline::benchmark_svg_path(svg_path, &benchmark.slug), &benchmark.svg)?;
        }
    }
    if let (Some(html_path), Some(html)) = (&args.html, &comparison.html) {
        write_file(html_path, html.as_bytes())?;
    }
    Ok(u8::from(args.report.fail_on_regression && comparison.regressed))
}

/// `bench`: returns the status to exit with: 1 on a regression with
/// --fail-on-regression (or an undecided benchmark with --fail-on-undecided),
/// the command's when it failed in a tree.
pub(crate) fn bench(args: BenchArgs) -> Result<u8, Failure> {
    let mut options = v8inline::BenchOptions::new(args.base, args.head, args.output_dir, args.command);
    options.threshold = args.threshold / 100.0;
    (options.min_rounds, options.max_rounds, options.max_time) = (args.min_rounds, args.max_rounds, args.max_time);
    options.seed = args.seed;
    if let Some(schedule) = args.schedule {
        options.schedule = schedule.into();
    }
    options.frequency = args.frequency;
    options.keep_recordings = args.keep_recordings;
    let bench = v8inline::bench(&options, &mut |line| eprintln!("v8inline: {line}")).map_err(|error| match error {
        v8inline::BenchError::Usage(_) => Failure::Usage(error.to_string()),
        v8inline::BenchError::CommandFailed { code, .. } => Failure::Command { message: error.to_string(), code },
        error => Failure::Input(error.to_string()),
    })?;
    let mut compare = CompareOptions::new(bench.output_dir.join("base"), bench.output_dir.join("head"));
    compare.format = args.report.format.into();
    (compare.top, compare.source_root, compare.threshold) =
        (args.report.top, args.report.source_root, options.threshold);
    if !bench.rounds.is_empty() {
        compare.seconds_per_round = Some(bench.elapsed.as_secs_f64() / bench.rounds.len() as f64);
    }
    // The page and the differential flame graphs it shows, in the output
    // directory.
    let svg_path = bench.output_dir.join(v8inline::BENCH_FLAME_GRAPH_FILE);
    compare.flame_graph = true;
    compare.flame_graph_path = Some(svg_path.clone());
    compare.html = Some(bench.output_dir.join(v8inline::BENCH_REPORT_FILE));
    compare.html_files = vec![bench.output_dir.join(v8inline::BENCH_FILE)];
    let comparison = compare_files(&compare).map_err(|error| Failure::Input(error.to_string()))?;
    write_output(args.report.output.as_deref(), comparison.text.as_bytes())?;
    if let Some(svg) = &comparison.svg {
        write_file(&svg_path, svg)?;
        for benchmark in &comparison.benchmark_svgs {
            write_file(&v8inline::benchmark_svg_path(&svg_path, &benchmark.slug), &benchmark.svg)?;
        }
    }
    if let (Some(html_path), Some(html)) = (&compare.html, &comparison.html) {
        write_file(html_path, html.as_bytes())?;
    }
    let regressed = comparison.regressed;
    Ok(u8::from((args.report.fail_on_regression && regressed) || (args.fail_on_undecided && comparison.undecided)))
}

impl From<CompareFormat> for ComparisonFormat {
    fn from(format: CompareFormat) -> ComparisonFormat {
        match format {
            CompareFormat::Text => ComparisonFormat::Text,
            CompareFormat::Markdown => ComparisonFormat::Markdown,
            CompareFormat::Github => ComparisonFormat::Github,
        }
    }
}

/// `record`: returns the status to exit with, the command's.
pub(crate) fn record(args: RecordArgs) -> Result<u8, Failure> {
    let record_failure = |error: RecordError| match error {
        RecordError::WouldReplace { .. } | RecordError::NoCommand => Failure::Usage(error.to_string()),
        RecordError::CommandNotFound { .. } => Failure::Command { message: error.to_string(), code: 127 },
        RecordError::NotExecutable { .. } => Failure::Command { message: error.to_string(), code: 126 },
        error => Failure::Input(error.to_string()),
    };
    // Before the output directory is made: nothing to leave behind.
    v8inline::check_command(&args.command).map_err(record_failure)?;
    let output_dir = prepare_output_directory(args.output_dir.as_deref(), args.force).map_err(record_failure)?;
    let outputs = args.outputs.choices(args.folding.stats).record_requests(&output_dir);
    let outputs = outputs.map_err(|error| Failure::Usage(error.to_string()))?;
    let mut options = RecordOptions::new(args.command, output_dir);
    options.frequency = args.frequency;
    options.outputs = outputs;
    options.sources = args.reading.source_options();
    options.strict = args.reading.strict;
    options.include_tid = args.folding.tid;
    options.skip_after = args.folding.skip_after;
    let mut announce = |message: &str| eprintln!("v8inline: {message}");
    let recording = v8inline::record(&options, &mut announce).map_err(record_failure)?;
    eprint!("{}{}", recording.report(), recording.stats);
    if args.inject {
        inject(&recording, options.perf)?;
    }
    Ok(recording.exit_code())
}

pub(crate) fn repair_jitdump(args: RepairJitDumpArgs) -> Result<(), Failure> {
    let repaired = match v8inline::repair_jitdump(&args.jitdump, &args.output) {
        Ok(repaired) => repaired,
        Err(error @ RepairError::WouldOverwriteInput(_)) => return Err(Failure::Usage(error.to_string())),
        Err(error) => return Err(Failure::Input(error.to_string())),
    };
    eprint!("{}", repaired.diagnostics);
    eprintln!(
        "v8inline: {}: corrected {} DEBUG_INFO record(s) mis-sized by V8; wrote {} ({} bytes)",
        args.jitdump.display(),
        repaired.corrected,
        args.output.display(),
        repaired.bytes_written
    );
    Ok(())
}

pub(crate) fn debuginfo(args: DebuginfoArgs) -> Result<(), Failure> {
    use v8inline::{DebugInfoCommandError, DebugInfoOptions, default_buildid_dir};
    let threads = thread_count(args.threads);
    let strict = args.inputs.reading.strict;
    let mut options = DebugInfoOptions::default();
    options.code_logs = args.inputs.code_log_options();
    options.code_logs.read_threads = threads;
    options.directory = args.directory;
    options.buildid_dir = args.buildid_dir.or_else(default_buildid_dir);
    options.threads = threads;
    options.strict = strict;
    let summary = match v8inline::debuginfo(options) {
        Ok(summary) => summary,
        Err(DebugInfoCommandError::NotOneProcess { diagnostics, processes }) => {
            report_warnings(&diagnostics, strict)?;
            let error = DebugInfoCommandError::NotOneProcess { diagnostics, processes };
            return Err(Failure::Usage(error.to_string()));
        }
        Err(DebugInfoCommandError::Strict(refusal)) => {
            eprint!("{}", refusal.diagnostics);
            for path in &refusal.skipped {
                eprintln!("v8inline: warning: {}: no regular file (a symbolic link?): skipped", path.display());
            }
            for problem in &refusal.problems {
                eprintln!("v8inline: warning: {problem}");
            }
            for entry in &refusal.cache_entries_left {
                eprintln!("v8inline: warning: {entry}");
            }
            return Err(Failure::Input(refusal.to_string()));
        }
        Err(error @ DebugInfoCommandError::NoJitdump) => return Err(Failure::Usage(error.to_string())),
        Err(error) => return Err(Failure::Input(error.to_string())),
    };
    report_warnings(&summary.diagnostics, false)?;
    eprint!("{}", summary.report());
    if !summary.not_written.is_empty() {
        return Err(Failure::Input(format!(
            "{} jitted file(s) or cache entries not rewritten (listed above), each left whole as it was: run again once there is room",
            summary.not_written.len()
        )));
    }
    // Millions of code objects: the process's exit frees them at once.
    std::mem::forget(summary);
    Ok(())
}

/// `record --inject`: perf inject and debuginfo on the recording.
fn inject(recording: &v8inline::Recording, perf: std::ffi::OsString) -> Result<(), Failure> {
    use v8inline::Sampler;
    use v8inline::{InjectOptions, inject};
    if recording.sampler != Sampler::Perf {
        eprintln!("v8inline: --inject needs a perf recording: nothing to inject");
        return Ok(());
    }
    let mut options = InjectOptions::new();
    options.perf = perf;
    let injection = inject(&recording.output_dir, &options).map_err(|error| Failure::Input(error.to_string()))?;
    eprint!("{}", injection.report());
    std::mem::forget(injection);
    Ok(())
}

/// `history add` and `history report`.
pub(crate) fn history(command: crate::args::HistoryCommand) -> Result<(), Failure> {
    use crate::args::{HistoryCommand, HistoryFormat};
    let failure = |error: v8inline::HistoryCommandError| match error {
        v8inline::HistoryCommandError::NoCommit => Failure::Usage(error.to_string()),
        error => Failure::Input(error.to_string()),
    };
    match command {
        HistoryCommand::Add(args) => {
            let mut options = v8inline::HistoryAddOptions::new(args.history, args.result);
            (options.commit, options.date) = (args.commit, args.date);
            let added = v8inline::history_add(&options).map_err(failure)?;
            let verb = match added.added {
                v8inline::Added::Appended => "added",
                v8inline::Added::Replaced => "replaced",
            };
            eprintln!(
                "v8inline: {verb} {} ({} benchmarks, {} runs) in {}",
                added.entry.commit,
                added.entry.benchmarks.len(),
                added.entry.runs,
                added.path.display()
            );
            Ok(())
        }
        HistoryCommand::Report(args) => {
            let mut options = v8inline::HistoryReportOptions::new(args.history);
            options.change_points.significance = args.significance;
            let reported = v8inline::history_report(&options).map_err(failure)?;
            report_warnings(&reported.diagnostics, args.strict)?;
            let text = match args.format {
                HistoryFormat::Json => reported.json(),
                HistoryFormat::Html => reported.html(),
            };
            write_output(args.output.as_deref(), text.as_bytes())
        }
    }
}
