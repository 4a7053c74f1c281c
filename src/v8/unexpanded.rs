//! After the fold: when most samples of a V8 process that ran JavaScript did
//! not expand, one warning ([`WarningKind::UnexpandedJavaScript`]) names the
//! likely cause from what was seen.
//!
//! A sample counts by its innermost JavaScript frame, the function running
//! when it was taken ([`ProcessSamples`]), not by all its JIT frames: most
//! JIT frames of a healthy recording are interpreted callers of optimized
//! code (on the bundled node 18 recording, 91% of the JIT frames ran
//! interpreted or Sparkplug code, but the innermost JavaScript frame of only
//! 24% of the samples). The causes, in the order they are considered (the
//! first that applies is named):
//!
//! 1. the samples are of another pid than the jitdump and code log;
//! 2. the code log has no code record at all (node without `--log-code`
//!    still writes `isolate-*-v8.log`, with its default events only), no
//!    record of JavaScript code (V8's CPU profiler ran: `--cpu-prof`), or no
//!    `code-source-info` record;
//! 3. then the most common reason among the samples that did not expand:
//!    the log and the jitdump do not join (different runs), the sample times
//!    precede every load of the code at their address (perf recorded
//!    without `-k mono`), the code is interpreted or Sparkplug code, the
//!    address is in no code object, the code-creation has no
//!    `code-source-info`, the `jitted-PID-N.so` code index is not in the
//!    jitdump.
//!
//! Samples of pids with no jitdump at all, when jitdumps of other pids were
//! given, are named the same way. A process that ran no script of the
//! user's (npm's own node, [`crate::v8::tool_code`]) gets no warning; its
//! line is kept for `--stats`. Nor does a process whose JavaScript was only
//! never optimized while the rest of the profile's expanded: a note when it
//! holds at least [`MINOR_SHARE`] of the profile's JavaScript, else `--stats`
//! only (a launcher, a parent that forks and waits). Its frames are exact
//! (nothing was inlined); there is nothing in the recording to fix.

use std::fmt::Write as _;
use std::path::Path;

use crate::diagnostics::{CutCoverage, Diagnostics, WarningKind};
use crate::v8::code_logs::{CodeLogs, IsolateLogName, pid_in_file_name};
use crate::v8::expand::{ExpansionStats, PidCounts, ProcessSamples, TimeSpan};
use crate::v8::inline_map::InlineMap;
use crate::v8::tool_code::tool_process;

/// Why most samples of a process that ran JavaScript did not expand.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cause {
    /// The samples are of other pids than the process's jitdump and log.
    OtherPids {
        /// The pid of the jitdump (or of the log's name).
        profiled: u32,
        /// The pids of the samples.
        sampled: PidCounts,
    },
    /// The code log has no `code-creation` record at all: node wrote it
    /// without `--log-code`.
    NoCodeRecords,
    /// The code log has code records, but none of JavaScript: V8's CPU
    /// profiler ran (node's `--cpu-prof`), and V8 writes nothing to its log
    /// while it profiles (`V8FileLogger::is_logging` in V8's
    /// src/logging/log.cc: "Disable logging while the CPU profiler is
    /// running"), builtins logged before it started aside.
    CpuProfilerRan,
    /// The code log has no `code-source-info` record at all.
    NoSourcePositionRecords,
    /// Most jitdump code loads have no code-creation of the same address
    /// and size in the code log.
    LogAndJitDumpDoNotJoin {
        /// Loads without a code-creation.
        unmatched_loads: usize,
        /// All loads.
        loads: usize,
    },
    /// The samples were taken before any code at their address was loaded.
    SamplesBeforeLoads {
        /// The first and last sample time.
        samples: Option<TimeSpan>,
        /// The first and last code load of the jitdump.
        loads: Option<TimeSpan>,
    },
    /// The code is interpreted or Sparkplug code.
    Unoptimized,
    /// The addresses are in no code object of the jitdump.
    UnknownAddresses,
    /// The code-creation records have no `code-source-info`.
    CodeWithoutSourcePositions,
    /// The `jitted-PID-N.so` code indexes are not in the jitdump.
    UnknownCodeIndexes,
}

/// Says each jitdump cut where its killed writer last flushed it: a note
/// when every sampled frame of its process resolved, from the jitdump or
/// the code log (`expansion` counts them, of the process's own pid; without
/// samples, as `lookup` reads, nothing was lost), else a warning. After the
/// samples are expanded.
pub fn add_jitdump_cuts(code_logs: &CodeLogs, expansion: Option<&ExpansionStats>, diagnostics: &mut Diagnostics) {
    for (index, map) in code_logs.maps().iter().enumerate() {
        let Some(cut) = &map.jitdump_cut_by_writers_death else { continue };
        let samples = expansion.and_then(|expansion| expansion.processes.get(index));
        let unresolved = samples.map_or(0, |samples| samples.own_unresolved);
        let covered = CutCoverage {
            code_objects: map.codes_only_in_code_log().len(),
            samples: expansion.map(|_| samples.map_or(0, |samples| samples.from_code_log)),
        };
        diagnostics.add_jitdump_cut_by_writers_death(cut.clone(), unresolved, covered);
    }
}

/// Below this share of the profile's samples that ran JavaScript, a
/// process whose JavaScript never got optimized, in a profile whose other
/// JavaScript expanded, is told under `--stats` only: a launcher (`npx`,
/// tsx's `node_modules/.bin/tsx`) or a parent that forks and waits. Measured
/// on such profiles: 1.5 % (a parent of deep.js) and 2 % (tsx's launcher).
pub const MINOR_SHARE: f64 = 0.10;

/// How a process whose JavaScript mostly did not expand is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Telling {
    /// A warning: the recording can be fixed ([`Cause`] other than
    /// [`Cause::Unoptimized`]), or nothing in the profile was optimized
    /// (profile a longer run).
    Warning,
    /// A note: its code never got optimized while the profile's other
    /// JavaScript did, and it holds at least [`MINOR_SHARE`] of the
    /// profile's JavaScript. Its frames are exact (nothing was inlined), but
    /// its time is of unoptimized code.
    Note,
    /// `--stats` only: as [`Telling::Note`], under [`MINOR_SHARE`].
    StatsOnly,
}

/// How to tell that `samples` (of a process whose JavaScript mostly did
/// not expand, for `cause`) did not expand, given every process's samples.
fn telling(
    cause: &Cause,
    samples: &ProcessSamples,
    processes: &[ProcessSamples],
    pids_without_jitdump: u64,
) -> Telling {
    if *cause != Cause::Unoptimized {
        return Telling::Warning;
    }
    let mostly_expanded = |other: &ProcessSamples| other.total() > 0 && other.not_expanded() * 2 <= other.total();
    if !processes.iter().any(mostly_expanded) {
        return Telling::Warning;
    }
    if share_of_javascript(samples, processes, pids_without_jitdump) < MINOR_SHARE {
        Telling::StatsOnly
    } else {
        Telling::Note
    }
}

/// A process's share of the profile's samples that ran JavaScript (of
/// every loaded process, and of pids without a jitdump).
fn share_of_javascript(samples: &ProcessSamples, processes: &[ProcessSamples], pids_without_jitdump: u64) -> f64 {
    let all = processes.iter().map(ProcessSamples::total).sum::<u64>() + pids_without_jitdump;
    if all == 0 { 0.0 } else { samples.total() as f64 / all as f64 }
}

/// Tells each process whose samples that ran JavaScript mostly (over half)
/// did not expand: a [`WarningKind::UnexpandedJavaScript`] warning, a note
/// or `--stats` only, by its cause and its share of the profile
/// ([`Telling`]); and warns once of the samples of pids without a jitdump
/// when they are most of all such samples. Processes without a code log are
/// left to [`WarningKind::NoCodeLog`], those with a log several isolates
/// wrote at once to [`WarningKind::LogSharedByIsolates`].
pub fn warn_unexpanded(stats: &ExpansionStats, code_logs: &CodeLogs, diagnostics: &mut Diagnostics) {
    let maps = code_logs.maps();
    for (map, samples) in maps.iter().zip(&stats.processes) {
        let total = samples.total();
        if total == 0 || samples.not_expanded() * 2 <= total || map.log_path().as_os_str().is_empty() {
            continue;
        }
        // A log several isolates wrote at once has its own warning, which
        // names the cause and the fix (LogSharedByIsolates).
        if map.logs().iter().any(|log| log.is_shared_by_isolates()) {
            continue;
        }
        let cause = cause(map, samples);
        // npm's own node, an idle worker: nothing the user can act on.
        if let Some(tool) = tool_process(map) {
            diagnostics.not_the_users(format!("{}: {}", tool.describe(), describe(map, samples, &cause)));
            continue;
        }
        let pids_without_jitdump = stats.pids_without_jitdump.total();
        let share = share_of_javascript(samples, &stats.processes, pids_without_jitdump) * 100.0;
        match telling(&cause, samples, &stats.processes, pids_without_jitdump) {
            Telling::Warning => diagnostics.warn(WarningKind::UnexpandedJavaScript, || describe(map, samples, &cause)),
            Telling::Note => diagnostics.note(format!(
                "{}: {} of {} samples that ran JavaScript ran interpreted or Sparkplug code, which inlines nothing \
                 ({share:.1} % of the profile's JavaScript, whose rest expanded): its frames are as V8 ran them, \
                 its time that of code never optimized",
                files(map),
                samples.unoptimized,
                total
            )),
            Telling::StatsOnly => diagnostics.minor(format!(
                "{share:.1} % of the profile's JavaScript, never optimized (a launcher, or a parent that waits): {}",
                describe(map, samples, &cause)
            )),
        }
    }
    let without_jitdump = stats.pids_without_jitdump.total();
    let with_jitdump: u64 = stats.processes.iter().map(ProcessSamples::total).sum();
    if !maps.is_empty() && without_jitdump * 2 > without_jitdump + with_jitdump {
        diagnostics.warn(WarningKind::UnexpandedJavaScript, || {
            let loaded: Vec<String> = maps
                .iter()
                .map(|map| {
                    let pid = map.pid.or_else(|| pid_in_file_name(map.log_path()));
                    let pid = pid.map_or_else(|| "no pid".to_string(), |pid| format!("pid {pid}"));
                    format!("{} ({pid})", files(map))
                })
                .collect();
            format!(
                "{} of {} samples that ran JIT code are of {}, for which no jitdump was given or found: the \
                 jitdumps and code logs are {}; give {}",
                without_jitdump,
                without_jitdump + with_jitdump,
                pid_list(&stats.pids_without_jitdump),
                loaded.join(", "),
                files_of(&stats.pids_without_jitdump, maps.first().map(|map| map.log_path())),
            )
        });
    }
}

/// The likely cause for a process most of whose samples did not expand.
fn cause(map: &InlineMap, samples: &ProcessSamples) -> Cause {
    if let Some(profiled) = samples.pid
        && samples.other_pids.total() * 2 > samples.total()
    {
        return Cause::OtherPids { profiled, sampled: samples.other_pids.clone() };
    }
    let mut code_objects = map.logs().iter().flat_map(|log| &log.code_objects).peekable();
    if code_objects.peek().is_none() {
        return Cause::NoCodeRecords;
    }
    let javascript = map.logs().iter().flat_map(|log| &log.code_objects).any(|object| object.function.is_some());
    if !javascript {
        return Cause::CpuProfilerRan;
    }
    if code_objects.all(|object| object.source_info.is_none()) {
        return Cause::NoSourcePositionRecords;
    }
    // The most common reason; on a tie, the earlier one.
    let reasons = [
        Cause::LogAndJitDumpDoNotJoin { unmatched_loads: map.unmatched_loads, loads: map.codes().len() },
        Cause::SamplesBeforeLoads { samples: samples.sample_times, loads: load_times(map) },
        Cause::Unoptimized,
        Cause::UnknownAddresses,
        Cause::CodeWithoutSourcePositions,
        Cause::UnknownCodeIndexes,
    ];
    reasons.into_iter().rev().max_by_key(|reason| reason.samples(samples)).unwrap_or(Cause::UnknownAddresses)
}

impl Cause {
    /// How many of the process's samples that did not expand this explains.
    fn samples(&self, samples: &ProcessSamples) -> u64 {
        match self {
            Cause::OtherPids { .. } | Cause::NoCodeRecords | Cause::CpuProfilerRan | Cause::NoSourcePositionRecords => {
                samples.not_expanded()
            }
            Cause::LogAndJitDumpDoNotJoin { .. } => samples.not_in_log,
            Cause::SamplesBeforeLoads { .. } => samples.before_any_load,
            Cause::Unoptimized => samples.unoptimized,
            Cause::UnknownAddresses => samples.unknown_address,
            Cause::CodeWithoutSourcePositions => samples.without_source_positions,
            Cause::UnknownCodeIndexes => samples.unknown_code_index,
        }
    }
}

/// The first and last code load of the process's jitdump.
fn load_times(map: &InlineMap) -> Option<TimeSpan> {
    let mut times = map.codes().iter().filter_map(|code| code.load_time());
    let first = times.next()?;
    Some(times.fold(TimeSpan { first, last: first }, |span, time| TimeSpan {
        first: span.first.min(time),
        last: span.last.max(time),
    }))
}

/// The warning's text: the files, the count, the cause and what to do.
fn describe(map: &InlineMap, samples: &ProcessSamples, cause: &Cause) -> String {
    let mut text = String::new();
    let subject = match cause {
        Cause::NoCodeRecords
        | Cause::CpuProfilerRan
        | Cause::NoSourcePositionRecords
        | Cause::CodeWithoutSourcePositions => map.log_path().display().to_string(),
        _ => files(map),
    };
    let _ = write!(
        text,
        "{subject}: {} of {} samples that ran JavaScript did not expand: ",
        samples.not_expanded(),
        samples.total()
    );
    let _ = match cause {
        Cause::OtherPids { profiled, sampled } => {
            write!(
                text,
                "the samples are of {}, {}; give {}",
                pid_list(sampled),
                profiled_pids(map, *profiled),
                files_of(sampled, Some(map.log_path()))
            )
        }
        Cause::NoCodeRecords => write!(
            text,
            "the code log has no code records: node was run without --log-code (it writes this log with its \
             default events all the same); run node with --log-code beside --perf-prof (Deno: \
             --v8-flags=--log-code,--perf-prof), or record with `v8inline record -- node ...`"
        ),
        Cause::CpuProfilerRan => write!(
            text,
            "the code log has code records, but none of JavaScript: V8's CPU profiler ran (node --cpu-prof, or an \
             inspector's Profiler.start), and V8 writes nothing to its code log while it profiles; record without \
             --cpu-prof (v8inline record writes a .cpuprofile itself, with the inlined functions)"
        ),
        Cause::NoSourcePositionRecords => write!(
            text,
            "the code log has no code-source-info records (recorded without --log-code?); record with node \
             --log-code, which logs the source positions and inlined functions"
        ),
        Cause::LogAndJitDumpDoNotJoin { unmatched_loads, loads } => {
            let _ = write!(
                text,
                "the code log and the jitdump do not join: {unmatched_loads} of {loads} code loads of the jitdump \
                 have no code-creation of the same address and size in the log (different runs?"
            );
            let log_pid = pid_in_file_name(map.log_path());
            if let (Some(log_pid), Some(jitdump_pid)) = (log_pid, map.pid)
                && log_pid != jitdump_pid
            {
                let _ = write!(text, " the log's name says pid {log_pid}, the jitdump is of pid {jitdump_pid}");
            }
            write!(text, "); give the code log and jitdump of the same run")
        }
        Cause::SamplesBeforeLoads { samples: sample_times, loads } => {
            let _ =
                write!(text, "{} were taken before any code at their address was loaded: ", samples.before_any_load);
            let _ = match sample_times {
                Some(span) => write!(text, "the samples span {}, ", seconds(*span)),
                None => Ok(()),
            };
            let _ = match loads {
                Some(span) => write!(text, "the jitdump's code loads {}", seconds(*span)),
                None => write!(text, "the jitdump has no code load"),
            };
            write!(
                text,
                " (perf recorded without -k mono, on another clock than the jitdump's CLOCK_MONOTONIC?); record \
                 with perf record -k mono"
            )
        }
        Cause::Unoptimized => write!(
            text,
            "{} ran interpreted or Sparkplug code, which inlines nothing (the hot functions were never optimized: \
             a short run, or a flag like --max-opt or --no-opt?); profile a longer run",
            samples.unoptimized
        ),
        Cause::UnknownAddresses => {
            let covered_by =
                if map.codes_only_in_code_log().len() > 0 { "the jitdump or its code log" } else { "the jitdump" };
            let _ = write!(text, "{} are at addresses no code object of {covered_by} covers", samples.unknown_address);
            match (map.jitdump_cut_short, load_times(map)) {
                (true, Some(loads)) => {
                    let _ = write!(
                        text,
                        ": the jitdump is cut short, after a code load at {:.3} s",
                        loads.last as f64 / 1e9
                    );
                    match samples.sample_times {
                        Some(span) => write!(text, ", and the samples span {}", seconds(span)),
                        None => Ok(()),
                    }
                }
                (true, None) => write!(text, ": the jitdump is cut short, before any code load"),
                (false, _) => write!(text, " (a jitdump of another run?)"),
            }
        }
        Cause::CodeWithoutSourcePositions => write!(
            text,
            "{} ran code whose code-creation has no code-source-info in the code log",
            samples.without_source_positions
        ),
        Cause::UnknownCodeIndexes => write!(
            text,
            "{} are in jitted-PID-N.so code whose index N is not in the jitdump (perf inject -j with another \
             jitdump?)",
            samples.unknown_code_index
        ),
    };
    text
}

/// The process's files: `JITDUMP and LOG`, or the one there is.
fn files(map: &InlineMap) -> String {
    match (&map.jitdump_path, map.log_path().as_os_str().is_empty()) {
        (Some(jitdump), false) => format!("{} and {}", jitdump.display(), map.log_path().display()),
        (Some(jitdump), true) => jitdump.display().to_string(),
        (None, _) => map.log_path().display().to_string(),
    }
}

/// Whose the process's files are: `the jitdump and code log are of pid 1`,
/// `the jitdump is of pid 1, the code log's name says pid 2`, `the code log
/// is of pid 1`.
fn profiled_pids(map: &InlineMap, pid: u32) -> String {
    let log_pid = pid_in_file_name(map.log_path());
    match (&map.jitdump_path, log_pid) {
        (Some(_), Some(log_pid)) if log_pid != pid => {
            format!("the jitdump is of pid {pid}, the code log's name says pid {log_pid}")
        }
        (Some(_), _) => format!("the jitdump and code log are of pid {pid}"),
        (None, _) => format!("the code log is of pid {pid}"),
    }
}

/// What to give instead: `the jitdump and code log of pid 1 (jit-1.dump,
/// codspeed-v8-1.log)`, or of several pids. The code log is named as the
/// one that was given is (`loaded_log`): V8's per-isolate names
/// (`isolate-0x*-1-codspeed-v8-1.log`), or any name with its pid.
fn files_of(pids: &PidCounts, loaded_log: Option<&Path>) -> String {
    match pids.listed.as_slice() {
        [one] if pids.unlisted == 0 => {
            format!(
                "the jitdump and code log of pid {0} (jit-{0}.dump, {1})",
                one.pid,
                log_name_of(one.pid, loaded_log)
            )
        }
        _ => format!("the jitdumps and code logs of {}", pid_list(pids)),
    }
}

/// The name of `pid`'s code log, after the loaded one's.
fn log_name_of(pid: u32, loaded_log: Option<&Path>) -> String {
    let Some(name) = loaded_log.and_then(Path::file_name).and_then(|name| name.to_str()) else {
        return format!("codspeed-v8-{pid}.log");
    };
    let name = name.strip_suffix(".gz").unwrap_or(name);
    match (IsolateLogName::parse(name), loaded_log.and_then(pid_in_file_name)) {
        (Some(isolate), _) => {
            let logfile = isolate.logfile.replace(&isolate.pid.to_string(), &pid.to_string());
            format!("isolate-0x*-{pid}-{logfile}")
        }
        (None, Some(loaded_pid)) => name.replace(&loaded_pid.to_string(), &pid.to_string()),
        (None, None) => format!("codspeed-v8-{pid}.log"),
    }
}

/// `pid 1`, `pids 1 and 2`, `pids 1, 2 and 3`, `pids 1, 2, 3, 4 and others`.
fn pid_list(pids: &PidCounts) -> String {
    let mut names: Vec<String> = pids.listed.iter().map(|entry| entry.pid.to_string()).collect();
    if pids.unlisted > 0 {
        names.push("others".to_string());
    }
    match names.as_slice() {
        [] => "no pid".to_string(),
        [one] => format!("pid {one}"),
        [rest @ .., last] => format!("pids {} and {last}", rest.join(", ")),
    }
}

/// A time span in seconds of its clock, to the millisecond.
fn seconds(span: TimeSpan) -> String {
    format!("{:.3} s to {:.3} s", span.first as f64 / 1e9, span.last as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never_optimized(samples: u64) -> ProcessSamples {
        ProcessSamples { unoptimized: samples, ..ProcessSamples::default() }
    }

    /// The rule of [`Telling`], at its edges: under a tenth of the
    /// profile's JavaScript beside expanded JavaScript, `--stats` only; at a
    /// tenth, a note; a cause in the recording, or nothing expanded at all,
    /// a warning whatever the share.
    #[test]
    fn a_never_optimized_process_is_told_by_its_share_beside_expanded_javascript() {
        let expanded = ProcessSamples { expandable: 899, unoptimized: 1, ..ProcessSamples::default() };
        let (under_a_tenth, a_tenth) = (never_optimized(99), never_optimized(100));
        let beside = |process: &ProcessSamples| [expanded.clone(), process.clone()];
        assert_eq!(telling(&Cause::Unoptimized, &under_a_tenth, &beside(&under_a_tenth), 0), Telling::StatsOnly);
        assert_eq!(telling(&Cause::Unoptimized, &a_tenth, &beside(&a_tenth), 0), Telling::Note);
        // Samples of pids without a jitdump are of the profile's JavaScript too.
        assert_eq!(telling(&Cause::Unoptimized, &a_tenth, &beside(&a_tenth), 100), Telling::StatsOnly);
        assert_eq!(telling(&Cause::UnknownAddresses, &under_a_tenth, &beside(&under_a_tenth), 0), Telling::Warning);
        let two_never_optimized = [never_optimized(5), never_optimized(2000)];
        assert_eq!(telling(&Cause::Unoptimized, &two_never_optimized[0], &two_never_optimized, 0), Telling::Warning);
        let alone = [never_optimized(99)];
        assert_eq!(telling(&Cause::Unoptimized, &alone[0], &alone, 0), Telling::Warning);
    }

    #[test]
    fn the_code_log_to_give_is_named_as_the_one_given() {
        let isolate = Path::new("/r/isolate-0x5e1cc00-17279-codspeed-v8-17279.log.gz");
        assert_eq!(log_name_of(42, Some(isolate)), "isolate-0x*-42-codspeed-v8-42.log");
        assert_eq!(log_name_of(42, Some(Path::new("isolate-0x378aaea0-25931-v8.log"))), "isolate-0x*-42-v8.log");
        assert_eq!(log_name_of(42, Some(Path::new("/r/codspeed-v8-17279.log"))), "codspeed-v8-42.log");
        assert_eq!(log_name_of(42, Some(Path::new("/r/app.log"))), "codspeed-v8-42.log");
        assert_eq!(log_name_of(42, None), "codspeed-v8-42.log");
    }
}
