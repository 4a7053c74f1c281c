//! `v8inline record -- node app.js` (or `-- deno run app.js`): from a slow
//! script to a flame graph with inlined frames in one command.
//!
//! Runs the command under `perf record -e cpu-clock -k mono -g` with the V8
//! flags the expansion needs (`--perf-prof --log-code
//! --interpreted-frames-native-stack`, the code log and jitdump written into
//! the output directory), then reads the perf.data directly
//! ([`crate::sources::perf_data`]) and writes the folded stacks and the flame graph.
//! Only flags that this runtime's V8 knows (`node --v8-options`, `deno run
//! --v8-flags=--help`) are added, so node 18 to 26 and Deno 2 all work.
//! node takes them among its own flags; Deno in one `--v8-flags=a,b,c`
//! after its subcommand, merged with the user's own ([`Runtime`]).
//!
//! When perf is missing or may not profile (`perf_event_paranoid`, no
//! permission in a container), it says so and falls back to V8's own
//! sampler: `--prof --log-code`, folded from the `tick` records
//! ([`crate::sources::ticks`]).

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::collapse::{CollapseOptions, CollapseSummary};
use crate::diagnostics::Diagnostics;
use crate::output::cpuprofile::ThreadSelection;
use crate::pipeline::outputs::{Destination, Job, OutputRequest, RunError, RunEvent, run};
use crate::pipeline::{FoldOptions, SampleInput};
use crate::v8::inline_map::SourceOptions;
use crate::v8::profile::{IsolateLogName, ProfileOptions};

/// The folded stacks' file name in the output directory.
pub const FOLDED_FILE: &str = "profile.folded";
/// The flame graph's file name in the output directory.
pub const FLAMEGRAPH_FILE: &str = "flamegraph.svg";
/// The `.cpuprofile`'s file name in the output directory.
pub const CPUPROFILE_FILE: &str = "profile.cpuprofile";
/// The Firefox Profiler profile's file name in the output directory.
pub const FIREFOX_PROFILE_FILE: &str = "profile.firefox.json.gz";

/// What to record and where.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Samples per second (perf's `-F`; the `--prof` interval otherwise).
    pub frequency: u32,
    /// Where the recording and the outputs go (created if missing).
    pub output_dir: PathBuf,
    /// The runtime's binary (node or deno), then its arguments (its flags,
    /// the script and the script's arguments; for deno a subcommand first).
    pub command: Vec<OsString>,
    /// The perf binary (default `perf`, found on `PATH`).
    pub perf: OsString,
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

/// The JavaScript runtime of a command: how it takes V8 flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// node: V8 flags among its own flags, before the script.
    Node,
    /// Deno: V8 flags in one `--v8-flags=a,b,c` after the subcommands that
    /// take it (`run`, `test`, `bench`, ...), merged with the user's own;
    /// for the others (`deno task`, whose tasks start deno again) in
    /// `DENO_V8_FLAGS`, which every deno reads before its `--v8-flags`.
    Deno,
}

/// Deno's subcommands that take `--v8-flags=` and run JavaScript.
const DENO_V8_FLAG_SUBCOMMANDS: [&str; 6] = ["run", "serve", "test", "bench", "eval", "repl"];

impl Runtime {
    /// The runtime of a command's program: Deno if the binary is named
    /// `deno`, node otherwise.
    pub fn of(program: &OsStr) -> Runtime {
        let file_name = Path::new(program).file_stem().and_then(OsStr::to_str);
        if file_name == Some("deno") { Runtime::Deno } else { Runtime::Node }
    }

    /// `node` or `deno`.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Node => "node",
            Runtime::Deno => "deno",
        }
    }

    /// How to pass `--prof`, for messages.
    fn prof_command(self) -> &'static str {
        match self {
            Runtime::Node => "node --prof",
            Runtime::Deno => "deno --v8-flags=--prof",
        }
    }

    /// The runtime's arguments with `v8_flags` added, and the environment
    /// variables to set. `user_environment` is `DENO_V8_FLAGS` as the user
    /// set it.
    fn invocation(
        self,
        arguments: &[OsString],
        v8_flags: &[OsString],
        user_environment: Option<&OsStr>,
    ) -> Result<Invocation, RecordError> {
        match self {
            Runtime::Node => Ok(Invocation {
                arguments: v8_flags.iter().chain(arguments).cloned().collect(),
                environment: Vec::new(),
            }),
            Runtime::Deno => deno_invocation(arguments, v8_flags, user_environment),
        }
    }
}

/// A command line's arguments after the program, and environment variables.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Invocation {
    arguments: Vec<OsString>,
    environment: Vec<(OsString, OsString)>,
}

/// Deno's arguments with `v8_flags` in its `--v8-flags=` after the
/// subcommand, after the user's own `--v8-flags=` values (those before the
/// script: later arguments are the script's), or, for subcommands without
/// `--v8-flags` (`task`), in `DENO_V8_FLAGS` after the user's.
fn deno_invocation(
    arguments: &[OsString],
    v8_flags: &[OsString],
    user_environment: Option<&OsStr>,
) -> Result<Invocation, RecordError> {
    // Deno splits the flags at commas.
    let ours = v8_flags
        .iter()
        .map(|flag| {
            flag.to_str()
                .filter(|flag| !flag.contains(','))
                .map(str::to_string)
                .ok_or_else(|| RecordError::DenoFlag { flag: flag.to_string_lossy().into_owned() })
        })
        .collect::<Result<Vec<String>, RecordError>>()?;
    let subcommand = arguments.iter().position(|argument| !argument.to_string_lossy().starts_with('-'));
    let takes_v8_flags = subcommand
        .and_then(|index| arguments[index].to_str())
        .is_some_and(|subcommand| DENO_V8_FLAG_SUBCOMMANDS.contains(&subcommand));
    let Some(subcommand) = subcommand.filter(|_| takes_v8_flags) else {
        let mut value = OsString::new();
        if let Some(user) = user_environment.filter(|user| !user.is_empty()) {
            value.push(user);
            value.push(",");
        }
        value.push(ours.join(","));
        return Ok(Invocation { arguments: arguments.to_vec(), environment: vec![("DENO_V8_FLAGS".into(), value)] });
    };
    let mut merged = Vec::new();
    let mut rest = Vec::new();
    let mut before_script = true;
    for argument in &arguments[subcommand + 1..] {
        let text = argument.to_str();
        if before_script && (argument == "--" || !text.is_some_and(|text| text.starts_with('-'))) {
            before_script = false;
        }
        match text.and_then(|text| text.strip_prefix("--v8-flags=")) {
            Some(user_flags) if before_script => {
                merged.extend(user_flags.split(',').filter(|flag| !flag.is_empty()).map(str::to_string))
            }
            _ => rest.push(argument.clone()),
        }
    }
    merged.extend(ours);
    let mut result: Vec<OsString> = arguments[..=subcommand].to_vec();
    result.push(format!("--v8-flags={}", merged.join(",")).into());
    result.extend(rest);
    Ok(Invocation { arguments: result, environment: Vec::new() })
}

/// What a recording produced.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The runtime recorded.
    pub runtime: Runtime,
    /// The sampler used.
    pub sampler: Sampler,
    /// How the profiled command exited.
    pub exit_status: ExitStatus,
    /// The folded stacks file.
    pub folded_path: PathBuf,
    /// The flame graph file.
    pub flamegraph_path: PathBuf,
    /// The `.cpuprofile` file (of the thread with the most samples).
    pub cpuprofile_path: PathBuf,
    /// Which thread the `.cpuprofile` holds, described.
    pub cpuprofile_thread: String,
    /// The Firefox Profiler profile (every thread).
    pub firefox_profile_path: PathBuf,
    /// The folder's summary.
    pub summary: CollapseSummary,
    /// JIT frames expanded into inlined functions.
    pub expanded_frames: u64,
    /// V8 flags that were wanted but this runtime's V8 does not know.
    pub unsupported_flags: Vec<String>,
    /// Messages for the user that are not about damaged inputs.
    pub notes: Vec<String>,
    /// What was wrong with the inputs (the recording, the code logs and
    /// jitdumps, the native files), as the main job reports it.
    pub diagnostics: Diagnostics,
}

impl Recording {
    /// What to tell the user, one `v8inline:` line each; the warnings as
    /// the main job's summary.
    pub fn report(&self) -> String {
        let mut lines = Vec::new();
        if let Sampler::V8Ticks { reason } = &self.sampler {
            lines.push(format!("perf is not usable: {reason}"));
            lines.push(format!(
                "recorded with V8's own sampler instead ({}): counts are ticks",
                self.runtime.prof_command()
            ));
        }
        if !self.unsupported_flags.is_empty() {
            lines.push(format!(
                "this {} does not know --{}: not passed",
                self.runtime.name(),
                self.unsupported_flags.join(", --")
            ));
        }
        lines.extend(self.notes.iter().cloned());
        let mut report: String = lines.drain(..).map(|line| format!("v8inline: {line}\n")).collect();
        report.push_str(&self.diagnostics.to_string());
        if !self.exit_status.success() {
            lines.push(format!("the command exited with {}", self.exit_status));
        }
        lines.push(format!(
            "{} samples, {} JIT frames expanded into inlined functions",
            self.summary.samples_kept, self.expanded_frames
        ));
        lines.push(format!(
            "wrote {}, {}, {} ({}) and {}",
            self.folded_path.display(),
            self.flamegraph_path.display(),
            self.cpuprofile_path.display(),
            self.cpuprofile_thread,
            self.firefox_profile_path.display()
        ));
        report.extend(lines.iter().map(|line| format!("v8inline: {line}\n")));
        report
    }
}

/// A recording that failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// No command was given.
    #[error("record needs a command: v8inline record -- node app.js")]
    NoCommand,
    /// A V8 flag that Deno would split (it splits `--v8-flags=` and
    /// `DENO_V8_FLAGS` at commas): a path with a comma.
    #[error("deno splits V8 flags at commas: {flag} cannot be passed (use an --output-dir without a comma)")]
    DenoFlag {
        /// The flag.
        flag: String,
    },
    /// The output directory could not be made or written.
    #[error("{path}: {source}")]
    Output {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The command could not be started.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The runtime wrote no `prof-PID.log` (the fallback without perf).
    #[error("{}: {runtime} wrote no prof-PID.log", directory.display())]
    NoTickLog {
        /// The output directory.
        directory: PathBuf,
        /// The runtime's name.
        runtime: &'static str,
    },
    /// The recording could not be folded or its outputs written.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// Flags whose absence is handled: without `--perf-prof-path` (node 18,
/// 20) the jitdump is moved from the working directory afterwards.
const OPTIONAL_FLAGS: [&str; 1] = ["perf-prof-path"];

/// The node flags the perf path wants, as (V8 flag name, argument).
fn perf_flags(output_dir: &Path) -> Vec<(&'static str, OsString)> {
    vec![
        ("perf-prof", "--perf-prof".into()),
        ("log-code", "--log-code".into()),
        ("interpreted-frames-native-stack", "--interpreted-frames-native-stack".into()),
        ("logfile", flag_with_path("--logfile=", &output_dir.join("codspeed-v8-%p.log"))),
        // One log per isolate (`isolate-0x<address>-<pid>-codspeed-v8-<pid>.log`):
        // worker threads sharing one file would overwrite each other's records.
        ("logfile-per-isolate", "--logfile-per-isolate".into()),
        // Node 20+: the jitdump goes to the output directory, not the
        // working directory.
        ("perf-prof-path", flag_with_path("--perf-prof-path=", output_dir)),
    ]
}

/// The node flags the `--prof` fallback wants.
fn prof_flags(output_dir: &Path, frequency: u32) -> Vec<(&'static str, OsString)> {
    let interval_micros = 1_000_000 / frequency.max(1);
    vec![
        ("prof", "--prof".into()),
        ("log-code", "--log-code".into()),
        ("logfile", flag_with_path("--logfile=", &output_dir.join("prof-%p.log"))),
        ("logfile-per-isolate", "--logfile-per-isolate".into()),
        ("prof-sampling-interval", format!("--prof-sampling-interval={interval_micros}").into()),
    ]
}

fn flag_with_path(prefix: &str, path: &Path) -> OsString {
    let mut flag = OsString::from(prefix);
    flag.push(path.as_os_str());
    flag
}

/// The V8 flag names the runtime's V8 lists (`  --perf-prof (...)`):
/// `node --v8-options`, `deno run --v8-flags=--help`.
pub fn known_v8_flags(program: &OsStr, runtime: Runtime) -> Result<HashSet<String>, RecordError> {
    let mut command = Command::new(program);
    match runtime {
        Runtime::Node => command.arg("--v8-options"),
        Runtime::Deno => command.args(["run", "--v8-flags=--help"]).env_remove("DENO_V8_FLAGS"),
    };
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|source| RecordError::Spawn { program: program.to_string_lossy().into_owned(), source })?;
    Ok(parse_v8_options(&String::from_utf8_lossy(&output.stdout)))
}

/// Parses V8's flag list (`--v8-options`, `--help`; names with `-`, as V8
/// prints them).
fn parse_v8_options(text: &str) -> HashSet<String> {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("--"))
        .filter_map(|rest| rest.split([' ', '(']).next())
        .filter(|name| !name.is_empty())
        .map(|name| name.replace('_', "-"))
        .collect()
}

/// Keeps the flags this node knows; returns them and the names of the others.
fn supported(flags: Vec<(&'static str, OsString)>, known: &HashSet<String>) -> (Vec<OsString>, Vec<String>) {
    let mut kept = Vec::new();
    let mut unsupported = Vec::new();
    for (name, argument) in flags {
        if known.contains(name) {
            kept.push(argument);
        } else if !OPTIONAL_FLAGS.contains(&name) {
            unsupported.push(name.to_string());
        }
    }
    (kept, unsupported)
}

/// Why perf cannot record here, if it cannot: it is not installed, or a
/// trial `perf record` of `true` fails (permissions, no perf events).
pub fn perf_unavailable_reason(perf: &OsStr) -> Option<String> {
    let trial = Command::new(perf)
        .args(["record", "-q", "-e", "cpu-clock", "-k", "mono", "-g", "-o", "/dev/null", "--", "true"])
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
            Some(format!("`perf record` failed ({}): {}", output.status, first_line.trim()))
        }
        Ok(_) => None,
    }
}

/// Records the command and writes the folded stacks and flame graph.
/// `announce` hears at once what the user should know before the command
/// runs (that perf is not usable and V8's sampler is used instead).
pub fn record(options: &RecordOptions, announce: &mut dyn FnMut(&str)) -> Result<Recording, RecordError> {
    let Some((node, node_arguments)) = options.command.split_first() else { return Err(RecordError::NoCommand) };
    let output_dir = absolute(&options.output_dir);
    std::fs::create_dir_all(&output_dir)
        .map_err(|source| RecordError::Output { path: output_dir.display().to_string(), source })?;
    clear_previous_recording(&output_dir)?;
    let runtime = Runtime::of(node);
    let known = known_v8_flags(node, runtime)?;
    let user_deno_v8_flags = std::env::var_os("DENO_V8_FLAGS");
    let mut notes = Vec::new();
    let mut diagnostics = Diagnostics::new();
    let sampler = match perf_unavailable_reason(&options.perf) {
        None => Sampler::Perf,
        Some(reason) => {
            announce(&format!(
                "perf is not usable: {reason}; recording with V8's own sampler ({}) instead",
                runtime.prof_command()
            ));
            Sampler::V8Ticks { reason }
        }
    };
    let collapse = CollapseOptions {
        annotate_inline: true,
        annotate_jit: true,
        annotate_kernel: true,
        ..CollapseOptions::default()
    };
    let sources = SourceOptions { read_from_disk: true, ..SourceOptions::default() };
    let (exit_status, unsupported_flags, inputs, fold_options) = match &sampler {
        Sampler::Perf => {
            let (flags, unsupported) = supported(perf_flags(&output_dir), &known);
            let invocation = runtime.invocation(node_arguments, &flags, user_deno_v8_flags.as_deref())?;
            let perf_data = output_dir.join("perf.data");
            let mut command = Command::new(&options.perf);
            command
                .args(["record", "-q", "-e", "cpu-clock", "-k", "mono", "-g", "-F"])
                .arg(options.frequency.to_string())
                .arg("-o")
                .arg(&perf_data)
                .arg("--")
                .arg(node)
                .args(&invocation.arguments)
                .envs(invocation.environment);
            let exit_status = command.status().map_err(|source| RecordError::Spawn {
                program: options.perf.to_string_lossy().into_owned(),
                source,
            })?;
            // Node 18 knows no --perf-prof-path: its jitdump is in the
            // working directory.
            move_jitdumps_here(&output_dir, &mut notes);
            let fold_options = FoldOptions {
                collapse,
                profiles: ProfileOptions {
                    jitdump_dir: Some(output_dir.clone()),
                    codspeed_log_dir: Some(output_dir.clone()),
                    sources,
                    ..ProfileOptions::default()
                },
                timeline: true,
                ..FoldOptions::default()
            };
            (exit_status, unsupported, vec![SampleInput::PerfData(perf_data)], fold_options)
        }
        Sampler::V8Ticks { .. } => {
            let (flags, unsupported) = supported(prof_flags(&output_dir, options.frequency), &known);
            let invocation = runtime.invocation(node_arguments, &flags, user_deno_v8_flags.as_deref())?;
            let exit_status = Command::new(node)
                .args(&invocation.arguments)
                .envs(invocation.environment)
                .status()
                .map_err(|source| RecordError::Spawn { program: node.to_string_lossy().into_owned(), source })?;
            // One log per isolate, each the code log of its own ticks.
            let logs = find_files(&output_dir, "prof-", ".log");
            if logs.is_empty() {
                return Err(RecordError::NoTickLog { directory: output_dir.clone(), runtime: runtime.name() });
            }
            let fold_options = FoldOptions {
                collapse,
                profiles: ProfileOptions { sources, ..ProfileOptions::default() },
                timeline: true,
                ..FoldOptions::default()
            };
            (exit_status, unsupported, logs.into_iter().map(SampleInput::Ticks).collect(), fold_options)
        }
    };
    let folded_path = output_dir.join(FOLDED_FILE);
    let flamegraph_path = output_dir.join(FLAMEGRAPH_FILE);
    let cpuprofile_path = output_dir.join(CPUPROFILE_FILE);
    let firefox_profile_path = output_dir.join(FIREFOX_PROFILE_FILE);
    // The outputs of the main job's `-o`, `--flamegraph`, `--cpuprofile` and
    // `--firefox-profile`, written by the same code.
    let job = Job {
        inputs,
        fold: fold_options,
        outputs: vec![
            OutputRequest::Folded(Destination::File(folded_path.clone())),
            OutputRequest::FlameGraph { path: flamegraph_path.clone(), style: Default::default() },
            OutputRequest::CpuProfile {
                path: cpuprofile_path.clone(),
                thread: ThreadSelection::default(),
                javascript_only: false,
            },
            OutputRequest::FirefoxProfile(firefox_profile_path.clone()),
        ],
        title: Some(format!("v8inline record: {}", display_command(&options.command))),
        strict: false,
    };
    let mut cpuprofile_thread = String::new();
    let run = run(&job, &mut |event| {
        if let RunEvent::CpuProfileThread { thread, .. } = event {
            cpuprofile_thread = thread;
        }
    })?;
    diagnostics.merge(&run.diagnostics);
    Ok(Recording {
        runtime,
        sampler,
        exit_status,
        folded_path,
        flamegraph_path,
        cpuprofile_path,
        cpuprofile_thread,
        firefox_profile_path,
        summary: run.summary,
        expanded_frames: run.expansion.expanded,
        unsupported_flags,
        notes,
        diagnostics,
    })
}

/// `path` made absolute against the working directory (node runs there
/// too, and must write its files here whatever it does with its own).
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_owned();
    }
    std::env::current_dir().map(|directory| directory.join(path)).unwrap_or_else(|_| path.to_owned())
}

/// Removes the files of an earlier recording into the same directory, so
/// that logs and jitdumps of old pids are not mixed in.
fn clear_previous_recording(output_dir: &Path) -> Result<(), RecordError> {
    let entries = std::fs::read_dir(output_dir)
        .map_err(|source| RecordError::Output { path: output_dir.display().to_string(), source })?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // With per-isolate logs, V8 prefixes each name with `isolate-0x<address>-<pid>-`.
        let log_name = isolate_log_file_name(&name);
        let ours = (log_name.starts_with("codspeed-v8-") && name.ends_with(".log"))
            || (log_name.starts_with("prof-") && name.ends_with(".log"))
            || (name.starts_with("jit-") && name.ends_with(".dump"))
            || name == "perf.data"
            || name == "perf.data.old";
        if ours {
            let path = entry.path();
            std::fs::remove_file(&path)
                .map_err(|source| RecordError::Output { path: path.display().to_string(), source })?;
        }
    }
    Ok(())
}

/// Moves `jit-PID.dump` of the recorded processes (those with a code log
/// in `output_dir`) from the working directory into `output_dir`.
fn move_jitdumps_here(output_dir: &Path, notes: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(output_dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) =
            isolate_log_file_name(&name).strip_prefix("codspeed-v8-").and_then(|rest| rest.strip_suffix(".log"))
        else {
            continue;
        };
        let jitdump_name = format!("jit-{pid}.dump");
        let target = output_dir.join(&jitdump_name);
        let source = PathBuf::from(&jitdump_name);
        if !target.exists() && source.exists() {
            // A rename fails across file systems: copy then.
            if std::fs::rename(&source, &target).is_err() {
                match std::fs::copy(&source, &target) {
                    Ok(_) => {
                        let _ = std::fs::remove_file(&source);
                    }
                    Err(error) => notes.push(format!("{}: cannot move it: {error}", source.display())),
                }
            }
        }
    }
}

/// The files in `directory` named `PREFIX...SUFFIX`, also with V8's
/// per-isolate prefix `isolate-0x<address>-<pid>-`, sorted.
fn find_files(directory: &Path, prefix: &str, suffix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(directory) else { return Vec::new() };
    let mut matches: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|name| isolate_log_file_name(name).starts_with(prefix) && name.ends_with(suffix))
        })
        .collect();
    matches.sort();
    matches
}

/// The `--logfile` part of a per-isolate log name
/// (`isolate-0x5a1c0-42-prof-42.log` -> `prof-42.log`); other names as they are.
fn isolate_log_file_name(name: &str) -> &str {
    IsolateLogName::parse(name).map_or(name, |isolate| isolate.logfile)
}

fn display_command(command: &[OsString]) -> String {
    command.iter().map(|argument| argument.to_string_lossy()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_carries_the_warning_summary() {
        use std::os::unix::process::ExitStatusExt;
        let mut diagnostics = Diagnostics::new();
        diagnostics.warn(crate::diagnostics::WarningKind::NoSymbols, || "/usr/bin/node: not ELF".to_string());
        let recording = Recording {
            runtime: Runtime::Node,
            sampler: Sampler::Perf,
            exit_status: ExitStatus::from_raw(0),
            folded_path: "out/profile.folded".into(),
            flamegraph_path: "out/flamegraph.svg".into(),
            cpuprofile_path: "out/profile.cpuprofile".into(),
            cpuprofile_thread: "thread MainThread (pid 7, tid 7): 6 of 7 samples, 1 other thread".to_string(),
            firefox_profile_path: "out/profile.firefox.json.gz".into(),
            summary: CollapseSummary { samples_kept: 7, ..CollapseSummary::default() },
            expanded_frames: 3,
            unsupported_flags: Vec::new(),
            notes: vec!["a note".to_string()],
            diagnostics,
        };
        assert_eq!(
            recording.report(),
            "v8inline: a note\n\
             v8inline: warning: 1 input problem(s); the rest of the input was used:\n\
             v8inline:   1 native file(s) with no symbols (missing, unreadable or not ELF): their frames are not symbolized\n\
             v8inline:     /usr/bin/node: not ELF\n\
             v8inline: 7 samples, 3 JIT frames expanded into inlined functions\n\
             v8inline: wrote out/profile.folded, out/flamegraph.svg, out/profile.cpuprofile (thread MainThread (pid 7, tid 7): 6 of 7 samples, 1 other thread) and out/profile.firefox.json.gz\n"
        );
    }

    #[test]
    fn reads_flag_names_from_v8_options() {
        let text = "Synopsis:\n  shell [options] [--shell] [<file>...]\n\nOptions:\n  --perf-prof (Enable perf linux profiler (experimental annotate support).)\n        type: bool  default: --no-perf-prof\n  --logfile-per-isolate (Separate log files for each isolate.)\n  --log_code (old style)\n";
        let known = parse_v8_options(text);
        assert!(known.contains("perf-prof"));
        assert!(known.contains("logfile-per-isolate"));
        assert!(known.contains("log-code"));
        assert!(!known.contains("no-perf-prof"));
        let (kept, unsupported) = supported(perf_flags(Path::new("/out")), &known);
        assert_eq!(kept, ["--perf-prof", "--log-code", "--logfile-per-isolate"]);
        assert_eq!(unsupported, vec!["interpreted-frames-native-stack", "logfile"]);
    }

    fn strings(arguments: &[OsString]) -> Vec<String> {
        arguments.iter().map(|argument| argument.to_string_lossy().into_owned()).collect()
    }

    fn os(arguments: &[&str]) -> Vec<OsString> {
        arguments.iter().map(OsString::from).collect()
    }

    #[test]
    fn runtime_is_told_by_the_binary_name() {
        assert_eq!(Runtime::of("deno".as_ref()), Runtime::Deno);
        assert_eq!(Runtime::of("/opt/deno/node_modules/@deno/linux-x64-glibc/deno".as_ref()), Runtime::Deno);
        assert_eq!(Runtime::of("node".as_ref()), Runtime::Node);
        assert_eq!(Runtime::of("/opt/nodes/node20/bin/node".as_ref()), Runtime::Node);
    }

    #[test]
    fn node_takes_v8_flags_before_the_script() {
        let invocation = Runtime::Node
            .invocation(
                &os(&["--max-old-space-size=100", "app.js", "--v8-flags=x"]),
                &os(&["--perf-prof", "--log-code"]),
                None,
            )
            .unwrap();
        assert_eq!(
            strings(&invocation.arguments),
            ["--perf-prof", "--log-code", "--max-old-space-size=100", "app.js", "--v8-flags=x"]
        );
        assert!(invocation.environment.is_empty());
    }

    #[test]
    fn deno_takes_v8_flags_after_the_subcommand_merged_with_the_users() {
        let ours = os(&["--perf-prof", "--logfile=/out/codspeed-v8-%p.log"]);
        // The user's --v8-flags before the script are merged, theirs first;
        // after the script they are the script's arguments.
        let invocation = Runtime::Deno
            .invocation(
                &os(&["run", "-A", "--v8-flags=--max-old-space-size=100,--stack-size=2000", "app.js", "--v8-flags=x"]),
                &ours,
                None,
            )
            .unwrap();
        assert_eq!(
            strings(&invocation.arguments),
            [
                "run",
                "--v8-flags=--max-old-space-size=100,--stack-size=2000,--perf-prof,--logfile=/out/codspeed-v8-%p.log",
                "-A",
                "app.js",
                "--v8-flags=x"
            ]
        );
        assert!(invocation.environment.is_empty());
        for subcommand in ["test", "bench"] {
            let invocation = Runtime::Deno
                .invocation(&os(&[subcommand, "--v8-flags=--a", "bench.js", "--", "--v8-flags=y"]), &ours, None)
                .unwrap();
            assert_eq!(
                strings(&invocation.arguments),
                [
                    subcommand,
                    "--v8-flags=--a,--perf-prof,--logfile=/out/codspeed-v8-%p.log",
                    "bench.js",
                    "--",
                    "--v8-flags=y"
                ]
            );
        }
        // Global flags before the subcommand stay there.
        let invocation = Runtime::Deno.invocation(&os(&["-q", "run", "app.js"]), &ours, None).unwrap();
        assert_eq!(
            strings(&invocation.arguments),
            ["-q", "run", "--v8-flags=--perf-prof,--logfile=/out/codspeed-v8-%p.log", "app.js"]
        );
    }

    #[test]
    fn deno_task_takes_v8_flags_from_the_environment() {
        let ours = os(&["--perf-prof", "--log-code"]);
        let invocation = Runtime::Deno.invocation(&os(&["task", "bench"]), &ours, None).unwrap();
        assert_eq!(strings(&invocation.arguments), ["task", "bench"]);
        assert_eq!(invocation.environment, [("DENO_V8_FLAGS".into(), "--perf-prof,--log-code".into())]);
        // After the user's own, as deno puts --v8-flags after them.
        let invocation =
            Runtime::Deno.invocation(&os(&["task", "bench"]), &ours, Some("--stack-size=2000".as_ref())).unwrap();
        assert_eq!(
            invocation.environment,
            [("DENO_V8_FLAGS".into(), "--stack-size=2000,--perf-prof,--log-code".into())]
        );
        // `deno app.js` runs the script: deno reads the environment there too.
        let invocation = Runtime::Deno.invocation(&os(&["app.js"]), &ours, None).unwrap();
        assert_eq!(strings(&invocation.arguments), ["app.js"]);
        assert_eq!(invocation.environment.len(), 1);
    }

    #[test]
    fn deno_flags_with_commas_are_refused() {
        let error =
            Runtime::Deno.invocation(&os(&["run", "app.js"]), &os(&["--logfile=/a,b/x.log"]), None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "deno splits V8 flags at commas: --logfile=/a,b/x.log cannot be passed (use an --output-dir without a comma)"
        );
        // node takes them as they are.
        assert!(Runtime::Node.invocation(&os(&["app.js"]), &os(&["--logfile=/a,b/x.log"]), None).is_ok());
    }
}
