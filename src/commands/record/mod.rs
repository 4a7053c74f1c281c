//! `v8inline record -- node app.js` (or `-- deno run app.js`, `-- npm run
//! bench`, `-- npx ...`, `-- sh -c '...'`): from a slow program to a flame
//! graph with inlined frames in one command.
//!
//! Runs the command under `perf record -e cpu-clock -k mono -g` with the V8
//! flags the expansion needs (`--perf-prof --log-code
//! --interpreted-frames-native-stack`, the code logs and jitdumps written
//! into the output directory) given to every node and Deno process it
//! starts ([`children`]), then reads the perf.data directly
//! ([`crate::sources::perf_data`]) and writes the outputs the caller asks
//! for through [`crate::pipeline::outputs::run`], as the main job does.
//! Only flags that a runtime's V8 knows (`node --v8-options`, `deno run
//! --v8-flags=--help`) are added, so node 18 to 26 and Deno 2 all work
//! ([`runtime`]). Each recording goes to a directory of its own
//! ([`directory`]).
//!
//! When perf is missing or may not profile (`perf_event_paranoid`, no
//! permission in a container), it says so and falls back to V8's own
//! sampler: `--prof --log-code`, folded from the `tick` records
//! ([`crate::sources::ticks`]).

pub mod benchmarks;
pub mod children;
mod deno;
pub mod directory;
mod interrupt;
mod private;
pub mod runtime;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::collapse::{CollapseOptions, CollapseSummary};
use crate::diagnostics::Diagnostics;
use crate::pipeline::outputs::{Job, OutputRequest, RunError, RunEvent, run};
use crate::pipeline::{FoldOptions, SampleInput};
use crate::sources::perf_data::{ProcessActivity, recorded_processes};
use crate::v8::code_logs::{CodeLogOptions, pid_in_file_name};
use crate::v8::inline_map::SourceOptions;
pub use directory::{DEFAULT_OUTPUT_DIRECTORY, prepare_output_directory};
use directory::{find_files, holds_recording, move_jitdumps_here};
use private::PrivateDirectory;
pub use private::UnsafeDirectory;
pub use runtime::{Runtime, known_v8_flags};
use runtime::{perf_flags, prof_flags, supported};

/// The folded stacks' file name in the output directory.
pub const FOLDED_FILE: &str = "profile.folded";
/// The flame graph's file name in the output directory.
pub const FLAMEGRAPH_FILE: &str = "flamegraph.svg";
/// The `.cpuprofile`'s file name in the output directory.
pub const CPUPROFILE_FILE: &str = "profile.cpuprofile";
/// The Firefox Profiler profile's file name in the output directory.
pub const FIREFOX_PROFILE_FILE: &str = "profile.firefox.json.gz";

/// What to record, where, and what to write.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecordOptions {
    /// Samples per second (perf's `-F`; the `--prof` interval otherwise).
    pub frequency: u32,
    /// Where the recording goes: a directory that holds no recording
    /// ([`prepare_output_directory`] chooses one).
    pub output_dir: PathBuf,
    /// The command: a runtime's binary (node or deno) and its arguments, or
    /// any program that starts them (npm, npx, a shell, a test runner).
    pub command: Vec<OsString>,
    /// The perf binary (default `perf`, found on `PATH`).
    pub perf: OsString,
    /// The outputs, written as the main job writes them.
    pub outputs: Vec<OutputRequest>,
    /// Where scripts are read and how their source maps are found (the
    /// main job's `--no-disk-sources`, `--substitute-path`, `--source-map`,
    /// `--no-source-maps`). Default: scripts read from disk, maps used.
    pub sources: SourceOptions,
    /// Write no output when an input had problems (`--strict`): the
    /// recording stays, and [`RecordError::Run`] names the problems' count.
    pub strict: bool,
    /// A root frame per thread (`--tid`), not only per process.
    pub include_tid: bool,
    /// Functions whose callers are dropped (`--skip-after`).
    pub skip_after: Vec<String>,
    /// Where the command runs, and where the recording's project root is
    /// looked for (default: this process's working directory). `bench`
    /// records two trees at once, so it cannot move the process there.
    pub working_directory: Option<PathBuf>,
    /// Where the command's standard output goes.
    pub command_stdout: CommandStdout,
}

/// Where a recorded command's standard output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CommandStdout {
    /// To `record`'s own standard output.
    #[default]
    Inherited,
    /// To `record`'s standard error: `bench` keeps standard output for the
    /// comparison alone, as `compare` writes it.
    ToStandardError,
}

impl RecordOptions {
    /// Records `command` into `output_dir` under perf (found on `PATH`) at
    /// 997 Hz, writing no output until some are added to `outputs`.
    pub fn new(command: Vec<OsString>, output_dir: PathBuf) -> RecordOptions {
        RecordOptions {
            frequency: 997,
            output_dir,
            command,
            perf: "perf".into(),
            outputs: Vec::new(),
            sources: SourceOptions { read_from_disk: true, ..SourceOptions::default() },
            strict: false,
            include_tid: false,
            skip_after: Vec::new(),
            working_directory: None,
            command_stdout: CommandStdout::Inherited,
        }
    }
}

/// Which sampler recorded the profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sampler {
    /// perf, with the jitdump and code log.
    Perf,
    /// V8's `--prof` ticks, because perf could not be used (the reason).
    V8Ticks {
        /// Why perf was not used.
        reason: String,
    },
}

/// A node or Deno process of the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeProcess {
    /// Its pid.
    pub pid: u32,
    /// What it ran, as far as known: its arguments, else its program.
    pub command: String,
    /// Its samples (0 when V8's own sampler recorded).
    pub samples: u64,
    /// The node that ran it again with the flags, when it was started
    /// without them by a path of its own.
    pub rerun_of: Option<RerunNode>,
}

/// A node started without the flags that ran itself again with them
/// (`npm exec -- node`, `npx node@VERSION`), and waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RerunNode {
    /// Its pid.
    pub pid: u32,
    /// Its samples: its start, before it ran again.
    pub samples: u64,
}

/// V8 flags that a runtime's V8 does not know, so not passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagsNotKnown {
    /// The runtime.
    pub runtime: Runtime,
    /// Its binary.
    pub program: PathBuf,
    /// The flags' names.
    pub flags: Vec<String>,
}

/// What a recording produced.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The command's runtime, if it is one (not a launcher such as npm).
    pub runtime: Option<Runtime>,
    /// The sampler used.
    pub sampler: Sampler,
    /// How the profiled command exited.
    pub exit_status: ExitStatus,
    /// The signal (SIGINT, SIGTERM) that interrupted the recording, if one
    /// did: the command stopped, and what perf wrote was folded.
    pub interrupted: Option<i32>,
    /// Where the recording is (absolute).
    pub output_dir: PathBuf,
    /// The node and Deno processes that ran with the expansion flags.
    pub recorded: Vec<RuntimeProcess>,
    /// Those that ran without them (the preload did not reach them) and
    /// were sampled: their JavaScript is not expanded.
    pub not_reached: Vec<RuntimeProcess>,
    /// The files written, each with what the user should know of it.
    pub written: Vec<String>,
    /// The folder's summary.
    pub summary: CollapseSummary,
    /// JIT frames expanded into inlined functions.
    pub expanded_frames: u64,
    /// V8 flags that were wanted but a runtime's V8 does not know.
    pub unsupported_flags: Vec<FlagsNotKnown>,
    /// Messages for the user that are not about damaged inputs.
    pub notes: Vec<String>,
    /// The benchmarks the command ran, each profiled on its own
    /// (`DIR/benchmarks.json`).
    pub benchmarks: Vec<benchmarks::BenchmarkSummary>,
    /// What was wrong with the inputs (the recording, the code logs and
    /// jitdumps, the native files), as the main job reports it.
    pub diagnostics: Diagnostics,
    /// The counts `--stats` prints (an [`OutputRequest::Stats`] asked for
    /// them), else empty.
    pub stats: String,
}

impl Recording {
    /// What to tell the user, one `v8inline:` line each; the warnings as
    /// the main job's summary.
    pub fn report(&self) -> String {
        let mut lines = Vec::new();
        if let Sampler::V8Ticks { reason } = &self.sampler {
            lines.push(format!("perf is not usable: {reason}"));
            lines.push(format!("recorded with V8's own sampler instead ({}): counts are ticks", self.prof_command()));
        }
        for unknown in &self.unsupported_flags {
            lines.push(format!(
                "this {} ({}) does not know --{}: not passed",
                unknown.runtime.name(),
                unknown.program.display(),
                unknown.flags.join(", --")
            ));
        }
        lines.extend(self.notes.iter().cloned());
        let mut report: String = lines.drain(..).map(|line| format!("v8inline: {line}\n")).collect();
        report.push_str(&self.diagnostics.to_string());
        if let Some(signal) = self.interrupted {
            lines.push(format!("interrupted (signal {signal}): the command stopped; writing what was recorded"));
        } else if !self.exit_status.success() {
            lines.push(format!("the command exited with {}", self.exit_status));
        }
        lines.push(format!("recorded {}", describe_processes(&self.recorded)));
        if !self.not_reached.is_empty() {
            lines.push(format!(
                "not expanded: {} ran without the flags: given a NODE_OPTIONS of its own, forked with an IPC \
                 channel by such a node, or ended before it ran JavaScript; record that node directly: v8inline \
                 record -- /path/to/node app.js",
                describe_processes(&self.not_reached)
            ));
        }
        lines.push(format!(
            "{} samples, {} JIT frames expanded into inlined functions",
            self.summary.samples_kept, self.expanded_frames
        ));
        lines.extend(self.benchmarks.iter().map(benchmarks::BenchmarkSummary::describe));
        lines.push(format!("wrote {}", join_as_list(&self.written)));
        report.extend(lines.iter().map(|line| format!("v8inline: {line}\n")));
        report
    }
}

impl Recording {
    /// The status `record` exits with: 128 + the signal that interrupted
    /// it, else the command's (its exit code, or 128 + the signal that
    /// ended it).
    pub fn exit_code(&self) -> u8 {
        use std::os::unix::process::ExitStatusExt as _;
        let by_signal = |signal: i32| u8::try_from(128 + signal).unwrap_or(u8::MAX);
        match (self.interrupted, self.exit_status.code(), self.exit_status.signal()) {
            (Some(signal), _, _) => by_signal(signal),
            (None, Some(code), _) => u8::try_from(code).unwrap_or(u8::MAX),
            (None, None, Some(signal)) => by_signal(signal),
            (None, None, None) => u8::MAX,
        }
    }

    /// How the runtime was given `--prof`: the command's, else node's.
    fn prof_command(&self) -> &'static str {
        self.runtime.unwrap_or(Runtime::Node).prof_command()
    }
}

/// `3 processes: pid 7 (node app.js, 120 samples), ...`.
fn describe_processes(processes: &[RuntimeProcess]) -> String {
    let described: Vec<String> = processes
        .iter()
        .map(|process| {
            let mut described = format!("pid {} ({}", process.pid, process.command);
            if process.samples > 0 {
                described.push_str(&format!(", {}", count_samples(process.samples)));
            }
            if let Some(runner) = process.rerun_of {
                described.push_str(&format!(", run again with the flags by pid {}", runner.pid));
                if runner.samples > 0 {
                    described.push_str(&format!(" ({})", count_samples(runner.samples)));
                }
            }
            described.push(')');
            described
        })
        .collect();
    match described.len() {
        0 => "no node or Deno process".to_string(),
        1 => format!("1 process: {}", described[0]),
        count => format!("{count} processes: {}", described.join(", ")),
    }
}

/// `1 sample`, `2 samples`.
fn count_samples(samples: u64) -> String {
    match samples {
        1 => "1 sample".to_string(),
        samples => format!("{samples} samples"),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join_as_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A recording that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// No command was given.
    #[error("record needs a command: v8inline record -- node app.js")]
    NoCommand,
    /// The output directory holds an earlier recording.
    #[error(
        "{}: holds a recording already: give another --output-dir, or --force to replace it",
        directory.display()
    )]
    WouldReplace {
        /// The directory.
        directory: PathBuf,
    },
    /// A V8 flag that Deno would split (it splits `--v8-flags=` and
    /// `DENO_V8_FLAGS` at commas): a path with a comma.
    #[error("deno splits V8 flags at commas: {flag} cannot be passed (use an --output-dir without a comma)")]
    DenoFlag {
        /// The flag.
        flag: String,
    },
    /// No directory only the user can write, for the scripts nodes run.
    #[error(transparent)]
    UnsafeDirectory(#[from] UnsafeDirectory),
    /// The output directory could not be made or written.
    #[error("{path}: {source}")]
    Output {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The command's program is not on PATH, or its path names no file
    /// (exit 127, as a shell's).
    #[error("{program}: command not found")]
    CommandNotFound {
        /// The program.
        program: String,
    },
    /// The command's program is not an executable file (exit 126, as a
    /// shell's).
    #[error("{program}: not an executable file")]
    NotExecutable {
        /// The program.
        program: String,
    },
    /// The command could not be started.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// No runtime wrote a `prof-PID.log` (the fallback without perf).
    #[error("{}: no node or deno wrote a prof-PID.log", directory.display())]
    NoTickLog {
        /// The output directory.
        directory: PathBuf,
    },
    /// The recording could not be folded or its outputs written.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// Checks that the command's program can be run, as a shell finds it: by
/// its path when it has a `/`, else on PATH; before perf would start it
/// and hide its failure.
pub fn check_command(command: &[OsString]) -> Result<(), RecordError> {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(program) = command.first() else { return Err(RecordError::NoCommand) };
    let name = program.to_string_lossy().into_owned();
    if program.as_encoded_bytes().contains(&b'/') {
        return match std::fs::metadata(program) {
            Err(_) => Err(RecordError::CommandNotFound { program: name }),
            Ok(metadata) if metadata.is_file() && metadata.permissions().mode() & 0o111 != 0 => Ok(()),
            Ok(_) => Err(RecordError::NotExecutable { program: name }),
        };
    }
    match std::env::var_os("PATH").and_then(|path| children::find_on_path(&name, &path)) {
        Some(_) => Ok(()),
        None => Err(RecordError::CommandNotFound { program: name }),
    }
}

/// Why perf cannot record here, if it cannot: it is not installed, or a
/// trial of the event on `true` fails (permissions, no perf events). The
/// trial is `perf stat`, which opens the same event: a `perf record` of
/// `true` takes a second however short the command (it polls once a second).
pub fn perf_unavailable_reason(perf: &OsStr) -> Option<String> {
    let trial = Command::new(perf)
        .args(["stat", "-e", "cpu-clock", "-x", ",", "-o", "/dev/null", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match trial {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("{} is not installed (not on PATH)", perf.to_string_lossy()))
        }
        Err(error) => Some(format!("{} cannot be run: {error}", perf.to_string_lossy())),
        Ok(output) if !output.status.success() => {
            let message = String::from_utf8_lossy(&output.stderr);
            // perf prints `Error:` on a line of its own before the reason.
            let first_line = message
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty() && *line != "Error:")
                .unwrap_or("no message");
            Some(format!("`perf stat -e cpu-clock` failed ({}): {}", output.status, first_line.trim()))
        }
        Ok(_) => None,
    }
}

/// perf's option not to synthesize an event for every BPF program loaded
/// on the machine at its start (and record those loaded later): that took
/// 0.6-1.1 s of each `perf record -- true` here (1.1-1.3 s against
/// 0.14-0.58 s), a third of a `bench` round, and BPF programs are not what
/// v8inline profiles. perf 5.1 and later.
const NO_BPF_EVENT: &str = "--no-bpf-event";

/// Whether `perf record` lists `option` in its help (`perf record -h`
/// prints its options and exits, in about 20 ms).
fn perf_record_knows(perf: &OsStr, option: &str) -> bool {
    Command::new(perf).args(["record", "-h"]).stdin(Stdio::null()).output().is_ok_and(|output| {
        let listed = |text: &[u8]| String::from_utf8_lossy(text).split_whitespace().any(|word| word == option);
        listed(&output.stdout) || listed(&output.stderr)
    })
}

/// How the command is started: its program, arguments and environment.
struct Launch {
    program: OsString,
    arguments: Vec<OsString>,
    environment: Vec<(OsString, OsString)>,
    unsupported_flags: Vec<FlagsNotKnown>,
}

/// The command with the flags `wanted` (by the runtime's V8) given to its
/// runtime, if it is one, and to every node and Deno it starts.
fn launch(
    command: &[OsString],
    private: &PrivateDirectory,
    wanted: &[(&'static str, OsString)],
    notes: &mut Vec<String>,
) -> Result<Launch, RecordError> {
    let Some((program, arguments)) = command.split_first() else { return Err(RecordError::NoCommand) };
    let path = std::env::var_os("PATH");
    let user_deno_v8_flags = std::env::var_os("DENO_V8_FLAGS");
    let mut unsupported_flags = Vec::new();
    // The command's node is often PATH's too: asked once.
    let mut known_by_binary = BTreeMap::new();
    let mut flags_for = |runtime: Runtime, binary: &Path| -> Result<Vec<OsString>, RecordError> {
        let known = match known_by_binary.entry(binary.to_owned()) {
            std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::btree_map::Entry::Vacant(entry) => {
                entry.insert(known_v8_flags(binary.as_os_str(), runtime)?)
            }
        };
        let (flags, unknown) = supported(wanted.to_vec(), known);
        if !unknown.is_empty() && !unsupported_flags.iter().any(|seen: &FlagsNotKnown| seen.program == binary) {
            unsupported_flags.push(FlagsNotKnown { runtime, program: binary.to_owned(), flags: unknown });
        }
        Ok(flags)
    };
    let mut launch = Launch {
        program: program.clone(),
        arguments: arguments.to_vec(),
        environment: Vec::new(),
        unsupported_flags: Vec::new(),
    };
    // The node binaries asked, with the flags they take, for the preload.
    let mut known_nodes: Vec<(PathBuf, Vec<OsString>)> = Vec::new();
    let top_runtime = Runtime::of(program);
    if let Some(runtime) = top_runtime {
        // By its path: perf would find `node` on the PATH given to the
        // command, the script that adds the flags again.
        let binary = match path.as_deref() {
            Some(path) if !program.as_encoded_bytes().contains(&b'/') => {
                children::find_on_path(&program.to_string_lossy(), path).unwrap_or_else(|| PathBuf::from(program))
            }
            _ => PathBuf::from(program),
        };
        let flags = flags_for(runtime, &binary)?;
        let invocation = runtime.invocation(arguments, &flags, user_deno_v8_flags.as_deref())?;
        launch.program = binary.clone().into_os_string();
        launch.arguments = match runtime {
            // What the preload needs to write the benchmarks' windows there.
            Runtime::Deno => runtime::deno_grants(&invocation.arguments, private.path()),
            Runtime::Node => invocation.arguments,
        };
        launch.environment = invocation.environment;
        if runtime == Runtime::Node {
            known_nodes.push((binary, flags));
        }
    }
    let shim_directory = private.path();
    let shim_error = |source| RecordError::Output { path: shim_directory.display().to_string(), source };
    launch.environment.push((private::RECORD_VARIABLE.into(), shim_directory.as_os_str().to_owned()));
    // The nodes the command starts through PATH.
    match path.as_deref().and_then(|path| children::find_on_path("node", path)) {
        Some(_) if shim_directory.as_os_str().as_encoded_bytes().contains(&b':') => {
            notes.push(format!(
                "{}: a directory with `:` cannot be on PATH: nodes the command starts through PATH are run again \
                 with the flags, one more process each",
                shim_directory.display()
            ));
        }
        Some(node) => {
            let flags = flags_for(Runtime::Node, &node)?;
            children::write_node_shim(shim_directory, &node, &flags).map_err(shim_error)?;
            launch.environment.push(("PATH".into(), children::path_with_first(shim_directory, path.as_deref())));
            known_nodes.push((node, flags));
        }
        None => {}
    }
    // Every node: written down, and run again with the flags when started
    // without them by a path of its own.
    let known: Vec<children::KnownNode> =
        known_nodes.iter().map(|(binary, flags)| children::KnownNode { binary, flags }).collect();
    match children::write_preload(private, wanted, &known).map_err(shim_error)? {
        Some(option) => launch.environment.push((
            "NODE_OPTIONS".into(),
            children::node_options_with_first(&option, std::env::var_os("NODE_OPTIONS").as_deref()),
        )),
        None => notes.push(format!(
            "{}: a path that is not UTF-8: nodes the command starts by a path of their own get no flags",
            shim_directory.display()
        )),
    }
    // Every deno reads DENO_V8_FLAGS (the top one has them already when it
    // takes --v8-flags).
    let deno = match top_runtime {
        Some(Runtime::Deno) => Some(PathBuf::from(program)),
        _ => path.as_deref().and_then(|path| children::find_on_path("deno", path)),
    };
    if let Some(deno) = deno
        && !launch.environment.iter().any(|(name, _)| name == "DENO_V8_FLAGS")
    {
        let flags = flags_for(Runtime::Deno, &deno)?;
        let invocation = runtime::deno_invocation(&[], &flags, user_deno_v8_flags.as_deref())?;
        launch.environment.extend(invocation.environment);
    }
    launch.unsupported_flags = unsupported_flags;
    Ok(launch)
}

/// Records the command and writes the outputs `options` asks for.
/// `announce` hears at once what the user should know before the command
/// runs (that perf is not usable and V8's sampler is used instead).
pub fn record(options: &RecordOptions, announce: &mut dyn FnMut(&str)) -> Result<Recording, RecordError> {
    check_command(&options.command)?;
    let output_dir = absolute(&options.output_dir);
    let working_directory = match &options.working_directory {
        Some(directory) => absolute(directory),
        None => std::env::current_dir().unwrap_or_else(|_| output_dir.clone()),
    };
    if holds_recording(&output_dir) {
        return Err(RecordError::WouldReplace { directory: options.output_dir.clone() });
    }
    std::fs::create_dir_all(&output_dir)
        .map_err(|source| RecordError::Output { path: output_dir.display().to_string(), source })?;
    let mut notes = Vec::new();
    let sampler = match perf_unavailable_reason(&options.perf) {
        None => Sampler::Perf,
        Some(reason) => {
            let prof_command = Runtime::of(&options.command[0]).unwrap_or(Runtime::Node).prof_command();
            announce(&format!(
                "perf is not usable: {reason}; recording with V8's own sampler ({prof_command}) instead"
            ));
            Sampler::V8Ticks { reason }
        }
    };
    let wanted = match sampler {
        Sampler::Perf => perf_flags(&output_dir),
        Sampler::V8Ticks { .. } => prof_flags(&output_dir, options.frequency),
    };
    // What nodes execute (the `node` script, the preload) is kept out of the
    // output directory, which another user may write.
    let private = PrivateDirectory::create()?;
    let launch = launch(&options.command, &private, &wanted, &mut notes)?;
    if let Some(warning) = profiler_flag_warning(&options.command, std::env::var_os("NODE_OPTIONS").as_deref()) {
        announce(&warning);
    }
    let launch_program = launch.program.clone();
    let sources = options.sources.clone();
    let mut interrupted = None;
    let (exit_status, inputs, code_logs, activity) = match &sampler {
        Sampler::Perf => {
            let perf_data = output_dir.join("perf.data");
            let mut command = Command::new(&options.perf);
            command.args(["record", "-q", "-e", "cpu-clock", "-k", "mono", "-g"]);
            if perf_record_knows(&options.perf, NO_BPF_EVENT) {
                command.arg(NO_BPF_EVENT);
            }
            command
                .arg("-F")
                .arg(options.frequency.to_string())
                .arg("-o")
                .arg(&perf_data)
                .arg("--")
                .arg(&launch.program)
                .args(&launch.arguments)
                .envs(launch.environment);
            let exit_status = run_uninterrupted(&mut command, options, &working_directory, &mut interrupted)?;
            // Node 18 knows no --perf-prof-path: its jitdump is in the
            // working directory.
            move_jitdumps_here(&working_directory, &output_dir, &mut notes);
            let code_logs = CodeLogOptions {
                jitdump_dir: Some(output_dir.clone()),
                codspeed_log_dir: Some(output_dir.clone()),
                sources,
                ..CodeLogOptions::default()
            };
            let activity = recorded_processes(&perf_data).unwrap_or_default();
            (exit_status, vec![SampleInput::PerfData(perf_data)], code_logs, activity)
        }
        Sampler::V8Ticks { .. } => {
            let mut command = Command::new(&launch.program);
            command.args(&launch.arguments).envs(launch.environment);
            let exit_status = run_uninterrupted(&mut command, options, &working_directory, &mut interrupted)?;
            // One log per isolate, each the code log of its own ticks.
            let logs = find_files(&output_dir, "prof-", ".log");
            if logs.is_empty() {
                return Err(RecordError::NoTickLog { directory: output_dir.clone() });
            }
            let code_logs = CodeLogOptions { sources, ..CodeLogOptions::default() };
            (exit_status, logs.into_iter().map(SampleInput::Ticks).collect(), code_logs, Vec::new())
        }
    };
    let threadless = deno::find_bench_threads(private.path(), &output_dir);
    if threadless > 0 {
        notes.push(format!(
            "{threadless} Deno benchmark window(s) left out: their thread is not known (run deno with -A to let it tell)"
        ));
    }
    let (found_benchmarks, unreadable_windows) = benchmarks::read_benchmarks(private.path());
    let started = StartedNodes {
        started: children::started_nodes(private.path()),
        rerun: children::rerun_nodes(private.path()),
        asked: children::asked_nodes(private.path()),
    };
    // The script leaves PATH, the preload does nothing from now on: a node
    // the command left running or starts later runs unrecorded.
    drop(private);
    let (recorded, not_reached) = processes(&output_dir, &options.command, &started, &activity);
    // Several processes: each its own root (`node-PID`), as inferno's --pid
    // names them, rather than all merged under one `node`.
    let collapse = CollapseOptions {
        include_pid: recorded.len()
            + not_reached.len()
            + recorded.iter().filter(|process| process.rerun_of.is_some()).count()
            > 1,
        annotate_inline: true,
        annotate_jit: true,
        annotate_kernel: true,
        include_tid: options.include_tid,
        skip_after: options.skip_after.clone(),
        // npm retitles itself, vitest renames its workers: a process is
        // one root, named once.
        one_root_per_process: true,
        ..CollapseOptions::default()
    };
    let split = split_by_benchmarks(&sampler, &found_benchmarks, unreadable_windows, &mut notes);
    let title = format!("v8inline record: {}", display_command(&options.command));
    // Each benchmark's outputs, written by the same writer as the run's.
    let (benchmark_directories, benchmark_outputs) = match &split {
        Some(_) => benchmarks::benchmark_outputs(&output_dir, &found_benchmarks, &options.outputs, &title)
            .map_err(|(path, source)| RecordError::Output { path: path.display().to_string(), source })?,
        None => (Vec::new(), Vec::new()),
    };
    let job = Job {
        inputs,
        fold: FoldOptions { collapse, code_logs, timeline: true, benchmarks: split, ..FoldOptions::default() },
        outputs: options.outputs.clone(),
        title: Some(title),
        strict: options.strict,
        benchmarks: benchmark_outputs,
    };
    let mut cpuprofile_threads = BTreeMap::new();
    let mut stats = String::new();
    let run = run(&job, &mut |event| match event {
        RunEvent::CpuProfileThread { path, thread, .. } => {
            cpuprofile_threads.insert(path.to_owned(), thread);
        }
        RunEvent::Stats(text) => stats = text,
        // Told before the error that refuses them; otherwise in the report.
        RunEvent::Warnings(diagnostics) if options.strict && !diagnostics.is_empty() => {
            announce_lines(&mut *announce, &diagnostics.to_string());
        }
        RunEvent::Warnings(_) => {}
    });
    let run = run.inspect_err(|_| benchmarks::remove_empty_directories(&output_dir, &benchmark_directories))?;
    let runtime_binary = Runtime::of(&options.command[0]).map(|runtime| (runtime, PathBuf::from(&launch_program)));
    let benchmark_summaries = write_benchmark_files(
        &output_dir,
        &working_directory,
        &options.command,
        runtime_binary,
        &found_benchmarks,
        &benchmark_directories,
        &run,
    )?;
    let written = options
        .outputs
        .iter()
        .filter_map(|output| {
            let path = output.path()?;
            Some(match cpuprofile_threads.get(path) {
                Some(thread) => format!("{} ({thread})", path.display()),
                None => path.display().to_string(),
            })
        })
        .collect();
    Ok(Recording {
        runtime: Runtime::of(&options.command[0]),
        sampler,
        exit_status,
        interrupted,
        output_dir: output_dir.clone(),
        recorded,
        not_reached,
        written,
        summary: run.summary,
        expanded_frames: run.expansion.expanded,
        unsupported_flags: launch.unsupported_flags,
        notes,
        benchmarks: benchmark_summaries,
        diagnostics: run.diagnostics,
        stats,
    })
}

/// Tells `announce` each line of `text` (lines that start `v8inline: `, as
/// [`Diagnostics`] writes them), without that start, which it adds.
fn announce_lines(announce: &mut dyn FnMut(&str), text: &str) {
    for line in text.lines() {
        announce(line.strip_prefix("v8inline: ").unwrap_or(line));
    }
}

/// What to tell before the command runs when it or `NODE_OPTIONS` turns on
/// a V8 profiler of its own. node's `--cpu-prof` starts V8's CPU profiler,
/// and V8 writes nothing to its code log while it profiles
/// (`V8FileLogger::is_logging` in V8's src/logging/log.cc: "Disable logging
/// while the CPU profiler is running"; no flag turns that off): measured on
/// node 20 and 26, 0 JavaScript code-creations where there were 249 and 85,
/// only the builtins logged before it started; the jitdump is not affected.
/// So nothing can be expanded.
/// `--prof` runs V8's tick sampler beside perf; its ticks go into the code
/// logs record writes, not `isolate-*-v8.log`. Either way record writes a
/// `.cpuprofile` itself, with the inlined functions.
pub fn profiler_flag_warning(command: &[OsString], node_options: Option<&OsStr>) -> Option<String> {
    let node_options = node_options.map(|options| options.to_string_lossy().into_owned()).unwrap_or_default();
    let from_options = node_options.split_ascii_whitespace().map(|flag| (flag.to_string(), "NODE_OPTIONS"));
    let from_command = node_flags(command).map(|flag| (flag, "the command"));
    let (flag, place) = from_command.chain(from_options).find(|(flag, _)| flag == "--cpu-prof" || flag == "--prof")?;
    let why = if flag == "--cpu-prof" {
        "node's --cpu-prof runs V8's CPU profiler, and V8 writes nothing to its code log while it profiles: no frame \
         will be expanded"
    } else {
        "node's --prof runs V8's own sampler beside perf (its ticks go into the code logs record writes, not \
         isolate-*-v8.log)"
    };
    Some(format!(
        "warning: {place} holds {flag}: {why}; drop it: record writes a .cpuprofile itself ({CPUPROFILE_FILE} in \
         the output directory), with the inlined functions"
    ))
}

/// The arguments of `command` that may be node's flags: a node's before
/// its script (those after it are the script's), any other program's all
/// (`npx --node-options=...`, `sh -c 'node --cpu-prof ...'`: each word).
fn node_flags(command: &[OsString]) -> impl Iterator<Item = String> + '_ {
    let is_node = command.first().is_some_and(|program| Runtime::of(program) == Some(Runtime::Node));
    let arguments = command.iter().skip(1).map(|argument| argument.to_string_lossy().into_owned());
    let mut script_seen = false;
    arguments
        .take_while(move |argument| {
            let before_script = !script_seen;
            script_seen |= is_node && !argument.starts_with('-');
            before_script
        })
        .flat_map(|argument| argument.split_ascii_whitespace().map(str::to_string).collect::<Vec<_>>())
}

/// The windows to split the samples by: none when there are no benchmarks,
/// nor with V8's ticks, whose times are not on perf's clock (`notes` says
/// so).
fn split_by_benchmarks(
    sampler: &Sampler,
    found: &[crate::model::benchmarks::Benchmark],
    unreadable_windows: usize,
    notes: &mut Vec<String>,
) -> Option<std::sync::Arc<crate::model::benchmarks::BenchmarkWindows>> {
    if unreadable_windows > 0 {
        notes.push(format!(
            "{unreadable_windows} benchmark window(s) could not be read (a process ended while writing)"
        ));
    }
    if found.is_empty() {
        return None;
    }
    if let Sampler::V8Ticks { .. } = sampler {
        notes.push(format!(
            "{} benchmark(s) found, not profiled one by one: V8's own sampler's ticks are not on perf's clock",
            found.len()
        ));
        return None;
    }
    Some(std::sync::Arc::new(crate::model::benchmarks::BenchmarkWindows::new(found.to_vec())))
}

/// Writes recording.json, and benchmarks.json when the run split the
/// samples by benchmark (into `directories`).
fn write_benchmark_files(
    output_dir: &Path,
    working_directory: &Path,
    command: &[OsString],
    runtime_binary: Option<(Runtime, PathBuf)>,
    found: &[crate::model::benchmarks::Benchmark],
    directories: &[String],
    run: &crate::pipeline::outputs::RunSummary,
) -> Result<Vec<benchmarks::BenchmarkSummary>, RecordError> {
    let output_error =
        |(path, source): (PathBuf, std::io::Error)| RecordError::Output { path: path.display().to_string(), source };
    // The runtime of the command, else the node first on PATH that the
    // command's scripts ran.
    let runtime_binary = runtime_binary.or_else(|| {
        let path = std::env::var_os("PATH")?;
        Some((Runtime::Node, children::find_on_path("node", &path)?))
    });
    let runtime = runtime_binary.and_then(|(runtime, binary)| benchmarks::runtime_version(runtime, &binary));
    benchmarks::write_recording_file(
        output_dir,
        &benchmarks::project_root(working_directory),
        command,
        runtime.as_deref(),
    )
    .map_err(output_error)?;
    if found.is_empty() || directories.is_empty() {
        return Ok(Vec::new());
    }
    benchmarks::write_benchmarks_file(output_dir, found, directories, &run.benchmarks, &run.benchmark_roots)
        .map_err(output_error)
}

/// What the `node` script and the preload wrote down of the nodes they saw.
struct StartedNodes {
    /// Command lines by pid.
    started: BTreeMap<u32, String>,
    /// The pid of each re-run, with that of the node that ran it.
    rerun: BTreeMap<u32, u32>,
    /// The nodes asked for their flags.
    asked: std::collections::BTreeSet<u32>,
}

/// Runs `command` in `working_directory` to its end, its standard output
/// where `options` says; a first SIGINT or SIGTERM meanwhile stops it
/// (as it stops the whole process group) but not `record`, which notes it
/// in `interrupted` ([`interrupt`]).
fn run_uninterrupted(
    command: &mut Command,
    options: &RecordOptions,
    working_directory: &Path,
    interrupted: &mut Option<i32>,
) -> Result<ExitStatus, RecordError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let spawn_error = |source| RecordError::Spawn { program: program.clone(), source };
    command.current_dir(working_directory);
    if options.command_stdout == CommandStdout::ToStandardError {
        let standard_error = std::io::stderr().as_fd().try_clone_to_owned().map_err(spawn_error)?;
        command.stdout(Stdio::from(standard_error));
    }
    let guard = interrupt::InterruptGuard::install();
    let mut child = command.spawn().map_err(spawn_error)?;
    let _watched = guard.watch(child.id());
    let status = child.wait().map_err(spawn_error)?;
    *interrupted = guard.received();
    Ok(status)
}

/// The node and Deno processes that wrote a code log into `output_dir`
/// (with what they ran: the shim wrote it down, or the command itself), and
/// those of `activity` that ran a runtime without one and were sampled.
fn processes(
    output_dir: &Path,
    command: &[OsString],
    nodes: &StartedNodes,
    activity: &[ProcessActivity],
) -> (Vec<RuntimeProcess>, Vec<RuntimeProcess>) {
    let StartedNodes { started, rerun, asked } = nodes;
    let mut logged: Vec<u32> = find_files(output_dir, "codspeed-v8-", ".log")
        .into_iter()
        .chain(find_files(output_dir, "prof-", ".log"))
        .filter_map(|path| pid_in_file_name(&path))
        .collect();
    logged.sort_unstable();
    logged.dedup();
    let samples_of = |pid: u32| activity.iter().find(|process| process.pid == pid).map_or(0, |process| process.samples);
    let recorded = logged
        .iter()
        .map(|&pid| RuntimeProcess {
            pid,
            command: match started.get(&pid) {
                Some(started_command) => started_command.clone(),
                None => display_command(command),
            },
            samples: samples_of(pid),
            rerun_of: rerun.get(&pid).map(|&runner| RerunNode { pid: runner, samples: samples_of(runner) }),
        })
        .collect();
    let not_reached = activity
        .iter()
        .filter(|process| process.samples > 0 && !logged.contains(&process.pid))
        .filter(|process| !asked.contains(&process.pid) && !rerun.values().any(|&runner| runner == process.pid))
        .filter(|process| process.programs.last().is_some_and(|program| Runtime::of(OsStr::new(program)).is_some()))
        .map(|process| RuntimeProcess {
            pid: process.pid,
            command: process.executable.clone().or_else(|| process.programs.last().cloned()).unwrap_or_default(),
            samples: process.samples,
            rerun_of: None,
        })
        .collect();
    (recorded, not_reached)
}

/// `path` made absolute against the working directory (node runs there
/// too, and must write its files here whatever it does with its own).
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_owned();
    }
    std::env::current_dir().map(|directory| directory.join(path)).unwrap_or_else(|_| path.to_owned())
}

fn display_command(command: &[OsString]) -> String {
    command.iter().map(|argument| argument.to_string_lossy()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profiler_flag_is_found_where_node_takes_it() {
        let command = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
        let found = |words: &[&str], options: Option<&str>| {
            profiler_flag_warning(&command(words), options.map(OsStr::new))
                .map(|warning| warning.split(':').next().unwrap().to_string())
        };
        assert_eq!(found(&["node", "--cpu-prof", "app.js"], None).as_deref(), Some("warning"));
        assert!(found(&["node", "--cpu-prof", "app.js"], None).is_some());
        assert!(profiler_flag_warning(&command(&["node", "--prof", "app.js"]), None).unwrap().contains("holds --prof"));
        // The script's own arguments are not node's.
        assert_eq!(found(&["node", "app.js", "--cpu-prof"], None), None);
        assert!(found(&["sh", "-c", "node --cpu-prof app.js"], None).is_some());
        assert!(found(&["npm", "run", "bench"], Some("--max-old-space-size=100 --cpu-prof")).is_some());
        assert_eq!(found(&["node", "--cpu-prof-dir=x", "app.js"], Some("--prof-process")), None);
    }

    #[test]
    fn the_report_carries_the_warning_summary() {
        use std::os::unix::process::ExitStatusExt;
        let mut diagnostics = Diagnostics::new();
        diagnostics.warn(crate::diagnostics::WarningKind::NoSymbols, || "/usr/bin/node: not ELF".to_string());
        let recording = Recording {
            runtime: Some(Runtime::Node),
            sampler: Sampler::Perf,
            exit_status: ExitStatus::from_raw(0),
            interrupted: None,
            output_dir: "out".into(),
            recorded: vec![
                RuntimeProcess { pid: 7, command: "npm run bench".to_string(), samples: 2, rerun_of: None },
                RuntimeProcess {
                    pid: 9,
                    command: "node bench.js".to_string(),
                    samples: 5,
                    rerun_of: Some(RerunNode { pid: 8, samples: 1 }),
                },
            ],
            not_reached: vec![RuntimeProcess { pid: 11, command: "/x/node".to_string(), samples: 3, rerun_of: None }],
            written: vec![
                "out/profile.folded".to_string(),
                "out/flamegraph.svg".to_string(),
                "out/profile.cpuprofile (thread MainThread (pid 9, tid 9): 5 of 7 samples, 1 other thread)".to_string(),
            ],
            summary: CollapseSummary { samples_kept: 7, ..CollapseSummary::default() },
            expanded_frames: 3,
            unsupported_flags: Vec::new(),
            notes: vec!["a note".to_string()],
            benchmarks: Vec::new(),
            diagnostics,
            stats: String::new(),
        };
        assert_eq!(
            recording.report(),
            "v8inline: a note\n\
             v8inline: warning: 1 input problem(s); the rest of the input was used:\n\
             v8inline:   1 native file(s) with no symbols (missing, unreadable or not ELF): their frames are not symbolized\n\
             v8inline:     /usr/bin/node: not ELF\n\
             v8inline: recorded 2 processes: pid 7 (npm run bench, 2 samples), pid 9 (node bench.js, 5 samples, run again with the flags by pid 8 (1 sample))\n\
             v8inline: not expanded: 1 process: pid 11 (/x/node, 3 samples) ran without the flags: given a NODE_OPTIONS of its own, forked with an IPC channel by such a node, or ended before it ran JavaScript; record that node directly: v8inline record -- /path/to/node app.js\n\
             v8inline: 7 samples, 3 JIT frames expanded into inlined functions\n\
             v8inline: wrote out/profile.folded, out/flamegraph.svg and out/profile.cpuprofile (thread MainThread (pid 9, tid 9): 5 of 7 samples, 1 other thread)\n"
        );
    }
}
