//! The `v8inline` command line: parses arguments and hands over to the library.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use v8inline::collapse::parallel::collapse_parallel;
use v8inline::collapse::{CollapseOptions, CollapseSummary, Folder, fold_samples};
use v8inline::diagnostics::{Diagnostics, strict_failure};
use v8inline::expand::{ExpandOptions, ExpansionStats, V8Expander};
use v8inline::inline_map::SourceOptions;
use v8inline::input::{open_stream_allowing_cut, read_file};
use v8inline::lookup::{AddressQuery, describe_address};
use v8inline::output::annotations::{SourceRoot, github_annotations, markdown_summary};
use v8inline::output::compare::{
    Shares, github_annotations as compare_annotations, markdown_table, text_table, write_differential_svg,
};
use v8inline::output::json::JsonReport;
use v8inline::output::pprof::write_pprof;
use v8inline::output::report::{Report, WeightUnit};
use v8inline::output::stack_profile::StackProfile;
use v8inline::perf_data::{PerfDataOptions, fold_perf_data};
use v8inline::profile::{ProfileOptions, Profiles};
use v8inline::record::RecordOptions;
use v8inline::ticks::{TickOptions, fold_ticks};

/// Expand V8's inlined JavaScript frames in perf profiles.
///
/// Reads `perf script` output and writes folded stacks (as
/// inferno-collapse-perf does) in which each optimized V8 code object is
/// replaced by the JavaScript functions inlined into it.
#[derive(Parser, Debug)]
#[command(name = "v8inline", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    fold: FoldArgs,
}

/// The main job: perf script in, folded stacks out.
#[derive(Args, Debug)]
struct FoldArgs {
    /// `perf script` output to read; standard input when absent or `-`.
    #[arg(value_name = "PERF_SCRIPT")]
    perf_script: Option<PathBuf>,
    /// Write the folded stacks here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    inputs: InputArgs,
    /// Take the source position at the sampled PC itself rather than the
    /// instruction before it (what `lookup` prints for an address).
    #[arg(long)]
    exact_pc: bool,
    /// Append `_[i]` to inlined frames (inferno colors them).
    #[arg(long)]
    annotate_inline: bool,
    /// Append `_[j]` to JIT frames (inferno colors them).
    #[arg(long, alias = "jit")]
    annotate_jit: bool,
    /// Append `_[k]` to kernel frames (inferno-collapse-perf's --kernel).
    #[arg(long, alias = "kernel")]
    annotate_kernel: bool,
    /// All annotations: --annotate-inline --annotate-jit --annotate-kernel.
    #[arg(long)]
    all: bool,
    /// Include the PID in the root frame (inferno-collapse-perf's --pid).
    #[arg(long)]
    pid: bool,
    /// Include the PID and TID in the root frame (implies --pid).
    #[arg(long)]
    tid: bool,
    /// Include raw addresses where symbols cannot be found (inferno's --addrs).
    #[arg(long)]
    addrs: bool,
    /// Only fold samples of this event (default: the first event seen).
    #[arg(long, value_name = "EVENT")]
    event_filter: Option<String>,
    /// Drop the frames below (callers of) a function of this name; repeatable.
    #[arg(long, value_name = "FUNCTION")]
    skip_after: Vec<String>,
    /// Also render a flame graph SVG here. Turns on the inline, JIT and
    /// kernel annotations (in the folded output too), which color the frames.
    #[arg(long, value_name = "FILE.svg")]
    flamegraph: Option<PathBuf>,
    /// Fold on this many threads (default: one per core). Output is the
    /// same; without --jitdump (pids looked up as samples come) it is 1.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Print to standard error how many samples and frames were expanded,
    /// passed through or unresolved, and why.
    #[arg(long)]
    stats: bool,
    /// Fold V8's own samples instead of perf's: the `tick` records of this
    /// `node --prof --log-code` log (no perf needed; counts are ticks).
    #[arg(long, value_name = "LOG", conflicts_with_all = ["perf_script", "perf_data"])]
    ticks: Option<PathBuf>,
    /// Read perf's samples from this perf.data directly (no `perf script`).
    #[arg(long, value_name = "PERF_DATA", conflicts_with = "perf_script")]
    perf_data: Option<PathBuf>,
    #[command(flatten)]
    outputs: OutputArgs,
}

/// Outputs beside the folded stacks.
#[derive(Args, Debug)]
struct OutputArgs {
    /// Also write a pprof profile (gzipped profile.proto): one location per
    /// sampled PC, its inlined functions as lines.
    #[arg(long, value_name = "FILE.pb.gz")]
    pprof: Option<PathBuf>,
    /// Write a report per function and source line (self and inclusive
    /// samples and shares, by tier); see --report-output.
    #[arg(long, value_name = "FORMAT")]
    report: Option<ReportFormat>,
    /// Where --report goes (default: standard output, instead of the folded stacks).
    #[arg(long, value_name = "FILE", requires = "report")]
    report_output: Option<PathBuf>,
    /// Write a summary of the top functions by self and inclusive time; see --summary-output.
    #[arg(long, value_name = "FORMAT")]
    summary: Option<SummaryFormat>,
    /// Where --summary goes (default: standard output, instead of the folded
    /// stacks); e.g. "$GITHUB_STEP_SUMMARY" (appended to).
    #[arg(long, value_name = "FILE", requires = "summary")]
    summary_output: Option<PathBuf>,
    /// Rows per table of --summary.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// Write CI annotations on the hottest functions and source lines; see --annotate-output.
    #[arg(long, value_name = "FORMAT")]
    annotate: Option<AnnotateFormat>,
    /// Where --annotate goes (default: standard output, instead of the folded stacks).
    #[arg(long, value_name = "FILE", requires = "annotate")]
    annotate_output: Option<PathBuf>,
    /// At most this many annotations.
    #[arg(long, value_name = "N", default_value_t = 10)]
    annotate_top: usize,
    /// Annotate only files under this directory, with paths relative to it
    /// (also shortens paths in summaries). Default: the current directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    source_root: PathBuf,
}

/// Formats of --report.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ReportFormat {
    /// JSON, schema `v8inline-report/1` (see the README).
    Json,
}

/// Formats of --summary.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum SummaryFormat {
    /// A markdown table, e.g. for $GITHUB_STEP_SUMMARY.
    Markdown,
}

/// Formats of --annotate.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum AnnotateFormat {
    /// GitHub Actions workflow commands (`::notice file=...,line=...`).
    Github,
}

impl OutputArgs {
    /// Whether an output needs the detailed stacks.
    fn needs_details(&self) -> bool {
        self.pprof.is_some() || self.report.is_some() || self.summary.is_some() || self.annotate.is_some()
    }

    /// The outputs that write to standard output instead of a file.
    fn on_standard_output(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.report.is_some() && self.report_output.is_none() {
            names.push("--report");
        }
        if self.summary.is_some() && self.summary_output.is_none() {
            names.push("--summary");
        }
        if self.annotate.is_some() && self.annotate_output.is_none() {
            names.push("--annotate");
        }
        names
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// addr2line for JIT code: print the inline stack at each address.
    Lookup(LookupArgs),
    /// Compare two profiles (folded stacks or JSON reports): each function's
    /// change of self and inclusive share, worst regression first.
    Compare(CompareArgs),
    /// Profile a node command and write folded stacks and a flame graph
    /// with inlined frames: `v8inline record -- node app.js`.
    Record(RecordArgs),
}

#[derive(Args, Debug)]
struct RecordArgs {
    /// Samples per second.
    #[arg(long, default_value_t = 997, value_name = "HZ")]
    frequency: u32,
    /// Where the recording, profile.folded and flamegraph.svg go.
    #[arg(long, default_value = "v8inline-profile", value_name = "DIR")]
    output_dir: PathBuf,
    /// The node command: the node binary, node flags, script and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<std::ffi::OsString>,
}

#[derive(Args, Debug)]
struct CompareArgs {
    /// The profile before: folded stacks or a `--report json` file.
    #[arg(value_name = "BASE")]
    base: PathBuf,
    /// The profile after, of the same kind.
    #[arg(value_name = "HEAD")]
    head: PathBuf,
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    format: CompareFormat,
    /// Rows (or annotations) at most.
    #[arg(long, value_name = "N", default_value_t = 20)]
    top: usize,
    /// With --format github: annotate functions whose self or inclusive share
    /// grew by at least this many percentage points.
    #[arg(long, value_name = "POINTS", default_value_t = 0.5)]
    threshold: f64,
    /// Paths relative to this directory; --format github annotates only files under it.
    #[arg(long, value_name = "DIR", default_value = ".")]
    source_root: PathBuf,
    /// Write the comparison here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also render a differential flame graph (needs folded stacks): HEAD's
    /// stacks, red where they grew, blue where they shrank.
    #[arg(long, value_name = "FILE.svg")]
    flamegraph: Option<PathBuf>,
}

/// Formats of `compare`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CompareFormat {
    /// An aligned text table.
    Text,
    /// A markdown table.
    Markdown,
    /// GitHub Actions warnings on regressed functions.
    Github,
}

/// Where the code logs, jitdumps and scripts are.
#[derive(Args, Debug, Clone)]
struct InputArgs {
    /// V8 code log (`node --log-code --logfile=...`); once per process. `.gz` is read too.
    #[arg(long = "log", value_name = "LOG")]
    logs: Vec<PathBuf>,
    /// V8 jitdump (`node --perf-prof` writes jit-PID.dump); once per process.
    #[arg(long = "jitdump", value_name = "DUMP")]
    jitdumps: Vec<PathBuf>,
    /// Without --jitdump, look for jit-PID.dump of each sampled pid here.
    #[arg(long, value_name = "DIR")]
    jitdump_dir: Option<PathBuf>,
    /// Do not read scripts from disk when the log carries no source.
    #[arg(long)]
    no_disk_sources: bool,
    /// Replace a path prefix of script names before reading them from disk (FROM=TO).
    #[arg(long = "substitute-path", value_name = "FROM=TO", value_parser = parse_substitution)]
    substitutions: Vec<(String, String)>,
    /// Fail (exit 1, no output) when any input line or record had to be
    /// skipped, instead of warning and using the rest.
    #[arg(long)]
    strict: bool,
}

#[derive(Args, Debug)]
struct LookupArgs {
    #[command(flatten)]
    inputs: InputArgs,
    /// Time of the addresses (jitdump clock, CLOCK_MONOTONIC ns): picks the
    /// code object live then. `ADDRESS@NS` sets it per address.
    #[arg(long, value_name = "NS")]
    time: Option<u64>,
    /// Addresses in hexadecimal, optionally `ADDRESS@NS`.
    #[arg(required = true, value_name = "ADDRESS")]
    addresses: Vec<String>,
}

fn parse_substitution(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(from, to)| (from.to_string(), to.to_string()))
        .ok_or_else(|| format!("expected FROM=TO, got {text:?}"))
}

impl InputArgs {
    fn profile_options(&self) -> ProfileOptions {
        ProfileOptions {
            logs: self.logs.clone(),
            jitdumps: self.jitdumps.clone(),
            jitdump_dir: self.jitdump_dir.clone(),
            codspeed_log_dir: std::env::var_os("CODSPEED_V8_LOG").map(PathBuf::from),
            sources: SourceOptions {
                read_from_disk: !self.no_disk_sources,
                path_substitutions: self.substitutions.clone(),
            },
        }
    }
}

/// Exit codes: 0 success, 1 input that made the job impossible, 2 usage.
const EXIT_INPUT_ERROR: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Lookup(args)) => lookup(args),
        Some(Command::Compare(args)) => compare(args),
        Some(Command::Record(args)) => record(args),
        None => fold(cli.fold),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
        Err(Failure::Input(message)) => {
            eprintln!("v8inline: {message}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
        Err(Failure::Usage(message)) => {
            eprintln!("v8inline: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Why a run failed.
enum Failure {
    /// The reader of our output went away: not an error.
    BrokenPipe,
    /// An input made the job impossible.
    Input(String),
    /// The arguments are wrong.
    Usage(String),
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::Input(error.to_string())
        }
    }
}

/// A failed write to standard output (reads and file writes name their file
/// where they happen).
fn standard_output_failure(error: std::io::Error) -> Failure {
    match Failure::from(error) {
        Failure::Input(message) => Failure::Input(format!("standard output: {message}")),
        other => other,
    }
}

fn load_profiles(inputs: &InputArgs) -> Result<Profiles, Failure> {
    let profiles = Profiles::load(inputs.profile_options()).map_err(|error| Failure::Input(error.to_string()))?;
    for note in &profiles.notes {
        eprintln!("v8inline: {note}");
    }
    Ok(profiles)
}

/// Prints the warning summary; with `--strict`, any warning fails the run.
fn report_warnings(diagnostics: &Diagnostics, strict: bool) -> Result<(), Failure> {
    eprint!("{diagnostics}");
    match strict_failure(diagnostics, strict) {
        Some(message) => Err(Failure::Input(message)),
        None => Ok(()),
    }
}

fn lookup(args: LookupArgs) -> Result<(), Failure> {
    if args.inputs.logs.is_empty() && args.inputs.jitdumps.is_empty() {
        return Err(Failure::Usage("lookup needs --log and/or --jitdump".to_string()));
    }
    let queries = args
        .addresses
        .iter()
        .map(|text| AddressQuery::parse(text, args.time))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::Usage)?;
    let profiles = load_profiles(&args.inputs)?;
    report_warnings(&profiles.diagnostics, args.inputs.strict)?;
    let [map] = profiles.maps() else {
        return Err(Failure::Usage(format!(
            "lookup takes one process, got {}: give one --log/--jitdump pair",
            profiles.maps().len()
        )));
    };
    let mut text = String::new();
    for query in queries {
        describe_address(map, query, &mut text);
    }
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(standard_output_failure)?;
    Ok(())
}

fn fold(args: FoldArgs) -> Result<(), Failure> {
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
        let title = format!("v8inline: {input_name}");
        let mut svg = Vec::new();
        v8inline::flamegraph::write_svg(text.lines(), &title, &mut svg)?;
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
struct FoldedSamples {
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
fn fold_source(args: &FoldArgs, options: CollapseOptions) -> Result<FoldedSamples, Failure> {
    let expand_options = ExpandOptions { exact_pc: args.exact_pc };
    let record_details = args.outputs.needs_details();
    let print_notes = |notes: &[String]| notes.iter().for_each(|note| eprintln!("v8inline: {note}"));
    // The one-threaded sources hand back a folder to render.
    let rendered = |folder: Folder, expander: V8Expander, mut summary: CollapseSummary, input_name: String| {
        let rendered = folder.render();
        summary.distinct_stacks = rendered.len() as u64;
        let mut folded = Vec::new();
        rendered.write_to(&mut folded)?;
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

fn record(args: RecordArgs) -> Result<(), Failure> {
    let options = RecordOptions {
        frequency: args.frequency,
        output_dir: args.output_dir,
        command: args.command,
        perf: "perf".into(),
    };
    let mut announce = |message: &str| eprintln!("v8inline: {message}");
    let recording =
        v8inline::record::record(&options, &mut announce).map_err(|error| Failure::Input(error.to_string()))?;
    eprint!("{}", recording.report());
    Ok(())
}

/// Writes `bytes` to `path`, naming the path in an error.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes).map_err(|error| Failure::Input(format!("{}: {error}", path.display())))
}

/// Writes `bytes` to `path`, or to standard output without a path.
/// `append` adds to an existing file (as $GITHUB_STEP_SUMMARY wants).
fn write_output(path: Option<&Path>, bytes: &[u8], append: bool) -> Result<(), Failure> {
    match path {
        None => std::io::stdout().lock().write_all(bytes).map_err(standard_output_failure),
        Some(path) if append => std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(bytes))
            .map_err(|error| Failure::Input(format!("{}: {error}", path.display()))),
        Some(path) => write_file(path, bytes),
    }
}

/// The outputs built on the detailed stacks: pprof, report, summary, annotations.
fn write_detailed_outputs(outputs: &OutputArgs, profile: &StackProfile) -> Result<(), Failure> {
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

fn compare(args: CompareArgs) -> Result<(), Failure> {
    let read = |path: &Path| -> Result<(String, Shares), Failure> {
        let bytes = read_file(path).map_err(|error| Failure::Input(error.to_string()))?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let shares = Shares::parse(&text, &path.display().to_string()).map_err(Failure::Input)?;
        Ok((text, shares))
    };
    let (base_text, base) = read(&args.base)?;
    let (head_text, head) = read(&args.head)?;
    let changes = v8inline::output::compare::compare(&base, &head);
    let root = SourceRoot::new(&args.source_root);
    let text = match args.format {
        CompareFormat::Text => text_table(&changes, &root, args.top),
        CompareFormat::Markdown => markdown_table(&changes, &root, args.top),
        CompareFormat::Github => compare_annotations(&changes, &root, args.threshold / 100.0, args.top)
            .iter()
            .map(|annotation| annotation.command() + "\n")
            .collect(),
    };
    write_output(args.output.as_deref(), text.as_bytes(), false)?;
    if let Some(svg_path) = &args.flamegraph {
        if [&base_text, &head_text].iter().any(|text| text.trim_start().starts_with('{')) {
            return Err(Failure::Usage(
                "a differential flame graph needs two folded files, not JSON reports".to_string(),
            ));
        }
        let title = format!("v8inline: {} → {}", args.base.display(), args.head.display());
        let mut svg = Vec::new();
        write_differential_svg(&base_text, &head_text, &title, &mut svg)?;
        write_file(svg_path, &svg)?;
    }
    Ok(())
}

/// The `--stats` report.
fn stats_report(summary: &CollapseSummary, stats: &ExpansionStats) -> String {
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
