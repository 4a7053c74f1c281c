//! The `v8inline` command line: parses arguments and hands over to the library.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use v8inline::inline_map::SourceOptions;
use v8inline::lookup::{AddressQuery, describe_address};
use v8inline::profile::{ProfileOptions, Profiles};

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
    inputs: InputArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// addr2line for JIT code: print the inline stack at each address.
    Lookup(LookupArgs),
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
        None => Err(Failure::Usage("the main job is not wired up yet".to_string())),
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
