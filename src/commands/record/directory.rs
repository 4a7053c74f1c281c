//! Where a recording goes. A recording is never lost: by default each goes
//! into a directory of its own (`v8inline-profile`, then
//! `v8inline-profile-2`, ...); a directory the user names is refused when
//! it holds a recording, unless `--force` replaces it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::RecordError;
use crate::v8::code_logs::IsolateLogName;

/// The default output directory, numbered past those that hold a recording.
pub const DEFAULT_OUTPUT_DIRECTORY: &str = "v8inline-profile";

/// The directory a new recording goes to, created: `requested`, which must
/// not hold a recording unless `force` (its recording files are removed,
/// so that logs of old pids are not mixed in); by default the first of
/// `v8inline-profile`, `v8inline-profile-2`, ... that does not exist.
pub fn prepare_output_directory(requested: Option<&Path>, force: bool) -> Result<PathBuf, RecordError> {
    let directory = match requested {
        Some(requested) => {
            if holds_recording(requested) {
                if !force {
                    return Err(RecordError::WouldReplace { directory: requested.to_owned() });
                }
                clear_previous_recording(requested)?;
            }
            requested.to_owned()
        }
        None => {
            // Made here, by a `mkdir` that fails when it exists: two records
            // started at once in one directory each get their own.
            for number in 1.. {
                let candidate = match number {
                    1 => PathBuf::from(DEFAULT_OUTPUT_DIRECTORY),
                    _ => PathBuf::from(format!("{DEFAULT_OUTPUT_DIRECTORY}-{number}")),
                };
                match std::fs::create_dir(&candidate) {
                    Ok(()) => return Ok(candidate),
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
                    Err(source) => return Err(RecordError::Output { path: candidate.display().to_string(), source }),
                }
            }
            unreachable!("some number is free")
        }
    };
    std::fs::create_dir_all(&directory)
        .map_err(|source| RecordError::Output { path: directory.display().to_string(), source })?;
    Ok(directory)
}

/// Whether `directory` holds a recording's files (or its folded stacks).
pub(crate) fn holds_recording(directory: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(directory) else { return false };
    entries.flatten().any(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        is_recording_file(&name) || name == super::FOLDED_FILE
    })
}

/// A file that `record` makes and an earlier recording's would be mixed
/// with: code logs, `--prof` logs, jitdumps, perf.data.
fn is_recording_file(name: &str) -> bool {
    // With per-isolate logs, V8 prefixes each name with `isolate-0x<address>-<pid>-`.
    let log_name = isolate_log_file_name(name);
    (log_name.starts_with("codspeed-v8-") && name.ends_with(".log"))
        || (log_name.starts_with("prof-") && name.ends_with(".log"))
        || (name.starts_with("jit-") && name.ends_with(".dump"))
        || name == "perf.data"
        || name == "perf.data.old"
        || name == super::benchmarks::RECORDING_FILE
        || name == super::benchmarks::BENCHMARKS_FILE
}

/// Removes the recording files of an earlier recording.
fn clear_previous_recording(output_dir: &Path) -> Result<(), RecordError> {
    let entries = std::fs::read_dir(output_dir)
        .map_err(|source| RecordError::Output { path: output_dir.display().to_string(), source })?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = is_recording_file(&name) || name == super::FOLDED_FILE;
        // The benchmarks' outputs: a benchmarks.json of the new recording
        // must not sit beside directories of the old one's. A directory,
        // not a link to one.
        if name == super::benchmarks::BENCHMARKS_DIRECTORY && entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            let path = entry.path();
            std::fs::remove_dir_all(&path)
                .map_err(|source| RecordError::Output { path: path.display().to_string(), source })?;
            continue;
        }
        if ours {
            let path = entry.path();
            std::fs::remove_file(&path)
                .map_err(|source| RecordError::Output { path: path.display().to_string(), source })?;
        }
    }
    Ok(())
}

/// Moves `jit-PID.dump` of the recorded processes (those with a code log
/// in `output_dir`) from the command's working directory into `output_dir`.
pub(crate) fn move_jitdumps_here(working_directory: &Path, output_dir: &Path, notes: &mut Vec<String>) {
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
        let source = working_directory.join(&jitdump_name);
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
pub(crate) fn find_files(directory: &Path, prefix: &str, suffix: &str) -> Vec<PathBuf> {
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
pub(crate) fn isolate_log_file_name(name: &str) -> &str {
    IsolateLogName::parse(name).map_or(name, |isolate| isolate.logfile)
}
