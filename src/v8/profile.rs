//! Finding and loading the code log and jitdump of each sampled process.
//!
//! Explicit `--log`/`--jitdump` files pair up by process id (the jitdump
//! header's pid, the digits in the log's name). Missing halves are looked for
//! where V8 and CodSpeed put them: `codspeed-v8-PID.log` in `$CODSPEED_V8_LOG`
//! or next to the jitdump, and `jit-PID.dump` in the jitdump directory, the
//! latter lazily, when a sample of that pid first shows up.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fxhash::{FxHashMap, FxHashSet};

use crate::diagnostics::{Diagnostics, WarningKind};
use crate::formats::jitdump::{self, JitDump, JitDumpWarning, ReadOptions};
use crate::formats::v8log::CodeLog;
use crate::input::{InputError, open_file_allowing_cut};
use crate::v8::inline_map::{InlineMap, SourceOptions};

/// Where to find inputs.
#[derive(Debug, Clone, Default)]
pub struct ProfileOptions {
    /// Code logs given on the command line.
    pub logs: Vec<PathBuf>,
    /// Jitdumps given on the command line.
    pub jitdumps: Vec<PathBuf>,
    /// Where to look for `jit-PID.dump` when no jitdump is given
    /// (default: the current directory).
    pub jitdump_dir: Option<PathBuf>,
    /// Where CodSpeed writes `codspeed-v8-PID.log` (`$CODSPEED_V8_LOG`).
    pub codspeed_log_dir: Option<PathBuf>,
    /// How to find script sources.
    pub sources: SourceOptions,
}

/// An input that could not be used at all.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// A file could not be read.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A jitdump's header is unusable.
    #[error("{path}: {error}")]
    JitDump {
        /// The jitdump.
        path: String,
        /// Why.
        error: jitdump::JitDumpError,
    },
}

/// The inline maps of the profiled processes, by pid.
///
/// Cloning is cheap (the maps are shared), for one expander per thread; a
/// process discovered later is added to that clone only.
#[derive(Clone)]
pub struct Profiles {
    maps: Vec<Arc<InlineMap>>,
    by_pid: FxHashMap<u32, usize>,
    looked_up_pids: FxHashSet<u32>,
    options: ProfileOptions,
    /// What was odd in the inputs (skipped lines and records, missing logs).
    pub diagnostics: Diagnostics,
}

impl Profiles {
    /// Loads every explicitly given file and pairs them up.
    pub fn load(options: ProfileOptions) -> Result<Profiles, ProfileError> {
        let mut profiles = Profiles {
            maps: Vec::new(),
            by_pid: FxHashMap::default(),
            looked_up_pids: FxHashSet::default(),
            options,
            diagnostics: Diagnostics::new(),
        };
        let mut jitdumps = Vec::new();
        for path in profiles.options.jitdumps.clone() {
            jitdumps.push((read_jitdump(&path, &mut profiles.diagnostics)?, path));
        }
        let mut logs: Vec<(Option<u32>, PathBuf)> =
            profiles.options.logs.iter().map(|path| (pid_in_file_name(path), path.clone())).collect();
        // A lone log and a lone jitdump belong together whatever their names.
        if logs.len() == 1 && jitdumps.len() == 1 {
            logs[0].0 = Some(jitdumps[0].0.header.pid);
        }
        for (jitdump, jitdump_path) in jitdumps {
            let pid = jitdump.header.pid;
            let log_path = match logs.iter().position(|(log_pid, _)| *log_pid == Some(pid)) {
                Some(index) => Some(logs.remove(index).1),
                None => profiles.find_log(pid, Some(&jitdump_path)),
            };
            profiles.add(pid, log_path.as_deref(), Some((jitdump, &jitdump_path)))?;
        }
        for (pid, log_path) in logs {
            // A log without a jitdump: the log's own addresses, no times.
            let pid = pid.unwrap_or(0);
            profiles.add(pid, Some(&log_path), None)?;
        }
        Ok(profiles)
    }

    /// Profiles made of inline maps built by the caller (e.g. from a `--prof`
    /// log alone), one per process id. Samples of other pids may make it
    /// look for `jit-PID.dump` in the current directory, as [`Profiles::load`]
    /// without jitdumps does.
    pub fn from_maps(maps: Vec<(u32, InlineMap)>) -> Profiles {
        let mut profiles = Profiles {
            maps: Vec::new(),
            by_pid: FxHashMap::default(),
            looked_up_pids: FxHashSet::default(),
            options: ProfileOptions::default(),
            diagnostics: Diagnostics::new(),
        };
        for (pid, map) in maps {
            profiles.by_pid.insert(pid, profiles.maps.len());
            profiles.maps.push(Arc::new(map));
        }
        profiles
    }

    /// The index (into [`Profiles::maps`]) of the process for samples of
    /// `pid`, loading `jit-PID.dump` from the jitdump directory on first
    /// sight when no jitdump was given. When exactly one process is loaded,
    /// every pid maps to it: its threads have their own ids.
    pub fn process_for_pid(&mut self, pid: u32) -> Option<usize> {
        if !self.by_pid.contains_key(&pid) && self.options.jitdumps.is_empty() && self.looked_up_pids.insert(pid) {
            self.discover(pid);
        }
        match self.by_pid.get(&pid) {
            Some(&index) => Some(index),
            None if self.maps.len() == 1 => Some(0),
            None => None,
        }
    }

    /// Whether [`Profiles::process_for_pid`] may still load files (no
    /// jitdump was given, so each new pid is looked for): then every expander
    /// should see every sample.
    pub fn discovers_processes(&self) -> bool {
        self.options.jitdumps.is_empty()
    }

    /// All loaded processes.
    pub fn maps(&self) -> &[Arc<InlineMap>] {
        &self.maps
    }

    fn discover(&mut self, pid: u32) {
        let directory = self.options.jitdump_dir.clone().unwrap_or_else(|| PathBuf::from("."));
        let Some(jitdump_path) = existing(&directory, &format!("jit-{pid}.dump")) else { return };
        let jitdump = match read_jitdump(&jitdump_path, &mut self.diagnostics) {
            Ok(jitdump) => jitdump,
            Err(error) => {
                self.diagnostics.warn(WarningKind::UnreadableDiscoveredJitDump, || error.to_string());
                return;
            }
        };
        let log_path = self.find_log(pid, Some(&jitdump_path));
        if let Err(error) = self.add(pid, log_path.as_deref(), Some((jitdump, &jitdump_path))) {
            self.diagnostics.warn(WarningKind::UnreadableDiscoveredJitDump, || error.to_string());
        }
    }

    fn find_log(&self, pid: u32, jitdump_path: Option<&Path>) -> Option<PathBuf> {
        let name = format!("codspeed-v8-{pid}.log");
        let mut directories: Vec<PathBuf> = self.options.codspeed_log_dir.iter().cloned().collect();
        if let Some(parent) = jitdump_path.and_then(Path::parent) {
            directories.push(if parent.as_os_str().is_empty() { PathBuf::from(".") } else { parent.to_owned() });
        }
        directories.iter().find_map(|directory| existing(directory, &name))
    }

    fn add(
        &mut self,
        pid: u32,
        log_path: Option<&Path>,
        jitdump: Option<(JitDump, &Path)>,
    ) -> Result<(), ProfileError> {
        let log = match log_path {
            Some(path) => {
                let (input, cut_short) = open_file_allowing_cut(path)?;
                let mut log = CodeLog::read(input).map_err(|source| InputError { path: path.to_owned(), source })?;
                log.path = path.to_owned();
                if cut_short.is_set() {
                    self.diagnostics.add_compressed_cut(path, &format!("{} lines", log.line_count));
                }
                self.diagnostics.add_code_log(&log);
                log
            }
            None => {
                if let Some((_, jitdump_path)) = &jitdump {
                    self.diagnostics.warn(WarningKind::NoCodeLog, || {
                        format!(
                            "{}: no code log found for pid {pid} (looked for codspeed-v8-{pid}.log in $CODSPEED_V8_LOG and next to the jitdump)",
                            jitdump_path.display()
                        )
                    });
                }
                CodeLog::default()
            }
        };
        if let Some((jitdump, path)) = &jitdump {
            self.diagnostics.add_jitdump(path, jitdump);
        }
        let mut map = InlineMap::new(log, jitdump.as_ref().map(|(jitdump, _)| jitdump), self.options.sources.clone());
        if let Some((jitdump, path)) = &jitdump {
            map.jitdump_path = Some(path.to_path_buf());
            map.jitdump_cut_short = jitdump.warnings.iter().any(|warning| {
                matches!(warning, JitDumpWarning::Truncated { .. } | JitDumpWarning::RecordSizeTooSmall { .. })
            });
        }
        self.by_pid.insert(pid, self.maps.len());
        self.maps.push(Arc::new(map));
        Ok(())
    }
}

/// Reads a jitdump; a `.gz` cut short gives what was before the cut, with a
/// warning.
fn read_jitdump(path: &Path, diagnostics: &mut Diagnostics) -> Result<JitDump, ProfileError> {
    // Streamed: a jitdump is mostly code bytes, which are not needed.
    let (input, cut_short) = open_file_allowing_cut(path)?;
    let jitdump = jitdump::read_stream(input, &ReadOptions::default())
        .map_err(|source| InputError { path: path.to_owned(), source })?
        .map_err(|error| ProfileError::JitDump { path: path.display().to_string(), error })?;
    if cut_short.is_set() {
        diagnostics.add_compressed_cut(path, &format!("{} code loads", jitdump.loads.len()));
    }
    Ok(jitdump)
}

/// `DIR/NAME` or `DIR/NAME.gz`, whichever exists.
fn existing(directory: &Path, name: &str) -> Option<PathBuf> {
    let plain = directory.join(name);
    if plain.is_file() {
        return Some(plain);
    }
    let compressed = directory.join(format!("{name}.gz"));
    compressed.is_file().then_some(compressed)
}

/// The last run of digits after a `-` or `_` in a file name
/// (`codspeed-v8-2696.log` -> 2696).
pub fn pid_in_file_name(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let digits_end = name.rfind(|character: char| character.is_ascii_digit())? + 1;
    let separator = name[..digits_end].rfind(|character: char| !character.is_ascii_digit())?;
    // `codspeed-v8-2696.log`, `jit_2696.dump`: a pid follows a separator.
    if !matches!(name.as_bytes()[separator], b'-' | b'_') {
        return None;
    }
    name[separator + 1..digits_end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_in_names() {
        assert_eq!(pid_in_file_name(Path::new("/x/codspeed-v8-2696.log")), Some(2696));
        assert_eq!(pid_in_file_name(Path::new("codspeed-v8-2696.log.gz")), Some(2696));
        assert_eq!(pid_in_file_name(Path::new("v8.log")), None);
        assert_eq!(pid_in_file_name(Path::new("log")), None);
    }
}
