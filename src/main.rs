//! The `v8inline` command line: parses arguments and hands over to the library.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use v8inline::collapse::{CollapseOptions, CollapseSummary, collapse};
use v8inline::expand::{ExpandOptions, ExpansionStats, V8Expander};
use v8inline::inline_map::SourceOptions;
use v8inline::input::open_stream;
use v8inline::lookup::{AddressQuery, describe_address};
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
}

#[derive(Subcommand, Debug)]
enum Command {
    /// addr2line for JIT code: print the inline stack at each address.
    Lookup(LookupArgs),
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

fn load_profiles(inputs: &InputArgs) -> Result<Profiles, Failure> {
    let profiles = Profiles::load(inputs.profile_options()).map_err(|error| Failure::Input(error.to_string()))?;
    for note in &profiles.notes {
        eprintln!("v8inline: {note}");
    }
    Ok(profiles)
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
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
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

fn fold(args: FoldArgs) -> Result<(), Failure> {
    let options = CollapseOptions {
        include_pid: args.pid,
        include_tid: args.tid,
        include_addrs: args.addrs,
        annotate_kernel: args.annotate_kernel || args.all,
        annotate_jit: args.annotate_jit || args.all,
        annotate_inline: args.annotate_inline || args.all,
        event_filter: args.event_filter.clone(),
        skip_after: args.skip_after.clone(),
    };
    let annotate_all = args.all || args.flamegraph.is_some();
    let options = CollapseOptions {
        annotate_kernel: options.annotate_kernel || annotate_all,
        annotate_jit: options.annotate_jit || annotate_all,
        annotate_inline: options.annotate_inline || annotate_all,
        ..options
    };
    let expand_options = ExpandOptions { exact_pc: args.exact_pc };
    if let Some(log_path) = &args.ticks {
        let tick_options =
            TickOptions { collapse: options, sources: args.inputs.profile_options().sources, expand: expand_options };
        let report = fold_ticks(log_path, &tick_options).map_err(|error| Failure::Input(error.to_string()))?;
        for note in &report.notes {
            eprintln!("v8inline: {note}");
        }
        write_outputs(&args, &report.folded, &format!("v8inline: ticks of {}", log_path.display()))?;
        if args.stats {
            eprint!("{}", stats_report(&report.summary, &report.expansion));
            eprintln!("v8inline: native frames: {:?}", report.native);
        }
        return Ok(());
    }
    if let Some(perf_data_path) = &args.perf_data {
        let perf_data_options =
            PerfDataOptions { collapse: options, profiles: args.inputs.profile_options(), expand: expand_options };
        let report =
            fold_perf_data(perf_data_path, &perf_data_options).map_err(|error| Failure::Input(error.to_string()))?;
        for note in &report.notes {
            eprintln!("v8inline: {note}");
        }
        write_outputs(&args, &report.folded, &format!("v8inline: {}", perf_data_path.display()))?;
        if args.stats {
            eprint!("{}", stats_report(&report.summary, &report.expansion));
        }
        return Ok(());
    }
    let profiles = load_profiles(&args.inputs)?;
    let mut expander = V8Expander::new(profiles, expand_options);
    let input_path = args.perf_script.clone().unwrap_or_else(|| PathBuf::from("-"));
    let input = open_stream(&input_path).map_err(|error| Failure::Input(error.to_string()))?;
    // Folded stacks are one line per distinct stack: small enough to keep
    // for the flame graph.
    let mut folded = Vec::new();
    let summary = collapse(input, &options, &mut expander, &mut folded)?;
    write_outputs(&args, &folded, &format!("v8inline: {}", input_path.display()))?;
    for note in expander.profiles().notes.iter() {
        eprintln!("v8inline: {note}");
    }
    if !summary.warnings.is_empty() {
        eprintln!("v8inline: {}: skipped {}", input_path.display(), summary.warnings);
    }
    if args.stats {
        eprint!("{}", stats_report(&summary, &expander.stats));
    }
    Ok(())
}

/// Writes the folded stacks (to `--output` or standard output) and the
/// flame graph if asked for.
fn write_outputs(args: &FoldArgs, folded: &[u8], title: &str) -> Result<(), Failure> {
    match &args.output {
        Some(path) => {
            std::fs::write(path, folded).map_err(|error| Failure::Input(format!("{}: {error}", path.display())))?
        }
        None => std::io::stdout().lock().write_all(folded)?,
    }
    if let Some(svg_path) = &args.flamegraph {
        let text = String::from_utf8_lossy(folded);
        let file = std::fs::File::create(svg_path)
            .map_err(|error| Failure::Input(format!("{}: {error}", svg_path.display())))?;
        v8inline::flamegraph::write_svg(text.lines(), title, std::io::BufWriter::new(file))
            .map_err(|error| Failure::Input(format!("{}: {error}", svg_path.display())))?;
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
