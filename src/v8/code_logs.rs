//! Finding and loading the code logs and jitdump of each sampled process.
//!
//! A process has one jitdump and one code log per isolate: V8's default
//! `--logfile-per-isolate` names them `isolate-0x<address>-<pid>-<logfile>`
//! (the main thread and each worker thread has its isolate); with
//! `--no-logfile-per-isolate` there is one, `<logfile>` itself.
//!
//! Explicit `--log`/`--jitdump` files pair up by process id (the jitdump
//! header's pid, the pid in the log's name); every log of a pid goes with
//! its jitdump. Missing halves are looked for where V8 and CodSpeed put them:
//! every `isolate-0x*-PID-*.log` and `*-PID.log` in `$CODSPEED_V8_LOG` and next
//! to the jitdump, and `jit-PID.dump` in the jitdump directory, the latter
//! lazily, when a sample of that pid first shows up.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::diagnostics::{Diagnostics, WarningKind};
use crate::error::Error;
use crate::files::{CutShort, MappedFile, open_file_allowing_cut};
use crate::formats::jitdump::{self, JitDump, ReadOptions};
use crate::formats::v8log::{CodeLog, RetainedText};
use crate::v8::inline_map::{InlineMap, JitCodes, SourceOptions};

/// Where to find inputs.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CodeLogOptions {
    /// Code logs given on the command line.
    pub logs: Vec<PathBuf>,
    /// Jitdumps given on the command line.
    pub jitdumps: Vec<PathBuf>,
    /// Where to look for `jit-PID.dump` when no jitdump is given
    /// (default: the current directory).
    pub jitdump_dir: Option<PathBuf>,
    /// Where CodSpeed writes its code logs (`$CODSPEED_V8_LOG`): every log of
    /// a process found there is read, as next to its jitdump.
    pub codspeed_log_dir: Option<PathBuf>,
    /// How to find script sources.
    pub sources: SourceOptions,
    /// Threads that read the files: with 2 or more, the jitdumps are read
    /// on another thread while the code logs are read (0 and 1: one after
    /// the other, on the calling thread).
    pub read_threads: usize,
}

/// The inline maps of the profiled processes, by pid.
///
/// Cloning is cheap (the maps are shared), for one expander per thread; a
/// process discovered later is added to that clone only.
#[derive(Clone)]
pub struct CodeLogs {
    maps: Vec<Arc<InlineMap>>,
    by_pid: FxHashMap<u32, usize>,
    looked_up_pids: FxHashSet<u32>,
    options: CodeLogOptions,
    /// What was odd in the inputs (skipped lines and records, missing logs).
    pub diagnostics: Diagnostics,
}

impl CodeLogs {
    /// Loads every explicitly given file and pairs them up. A file that
    /// cannot be read, or a jitdump whose header is unusable, is an error
    /// naming it.
    pub fn load(options: CodeLogOptions) -> Result<CodeLogs, Error> {
        let mut code_logs = CodeLogs {
            maps: Vec::new(),
            by_pid: FxHashMap::default(),
            looked_up_pids: FxHashSet::default(),
            options,
            diagnostics: Diagnostics::new(),
        };
        let jitdump_paths = code_logs.options.jitdumps.clone();
        // Which logs go with a jitdump depends on its pid alone, in its
        // header: with the pids peeked first, the logs and the jitdumps can be
        // read side by side (on 100 TypeScript-compiler runs, 0.4 s for the
        // 1 GB log, 0.1 s for the 1.2 GB jitdump).
        let peeked_pids: Option<Vec<u32>> = (code_logs.options.read_threads > 1)
            .then(|| jitdump_paths.iter().map(|path| peek_jitdump_pid(path)).collect())
            .flatten();
        let (jitdumps, pairing, mut logs_read_beside) = match peeked_pids {
            Some(pids) => {
                let pairing = code_logs.pair_up(&pids, &jitdump_paths);
                let log_paths: Vec<&PathBuf> = pairing.log_paths().collect();
                let FilesRead { jitdumps, logs } = read_side_by_side(&jitdump_paths, &log_paths);
                let mut loaded = Vec::with_capacity(jitdumps.len());
                for read in jitdumps {
                    let JitDumpRead { jitdump, diagnostics } = read?;
                    code_logs.diagnostics.merge(&diagnostics);
                    loaded.push(jitdump);
                }
                (loaded, pairing, Some(logs.into_iter()))
            }
            None => {
                let mut loaded = Vec::with_capacity(jitdump_paths.len());
                for path in &jitdump_paths {
                    loaded.push(read_jitdump(path, &mut code_logs.diagnostics)?);
                }
                let pids: Vec<u32> = loaded.iter().map(|jitdump| jitdump.dump.header.pid).collect();
                (loaded, code_logs.pair_up(&pids, &jitdump_paths), None)
            }
        };
        // The logs of some paths: read beside the jitdumps, in this order, or now.
        let mut logs_of = |paths: &[PathBuf]| -> Vec<Result<LogRead, Error>> {
            match &mut logs_read_beside {
                Some(read) => paths.iter().map(|_| read.next().expect("a log read per path")).collect(),
                None => paths.iter().map(|path| read_code_log(path)).collect(),
            }
        };
        for ((jitdump, path), log_paths) in jitdumps.into_iter().zip(&jitdump_paths).zip(&pairing.of_jitdumps) {
            let pid = jitdump.dump.header.pid;
            code_logs.add(pid, log_paths, logs_of(log_paths), Some((jitdump, path)))?;
        }
        for (pid, log_paths) in &pairing.without_jitdump {
            // Logs without a jitdump: their own addresses, no times.
            code_logs.add(pid.unwrap_or(0), log_paths, logs_of(log_paths), None)?;
        }
        Ok(code_logs)
    }

    /// Pairs the given logs with the jitdumps of `pids` (one per path of
    /// `jitdump_paths`) by the pid in their names; a jitdump no log names
    /// takes the logs found for its pid ([`CodeLogs::find_logs`]).
    fn pair_up(&self, pids: &[u32], jitdump_paths: &[PathBuf]) -> Pairing {
        // The logs of each pid (`None`: no pid in the name), in the order given.
        let mut logs_by_pid: BTreeMap<Option<u32>, Vec<PathBuf>> = BTreeMap::new();
        for path in &self.options.logs {
            logs_by_pid.entry(pid_in_file_name(path)).or_default().push(path.clone());
        }
        // A lone jitdump takes the logs whose name has no pid, and a lone
        // log whatever its name.
        if let [pid] = pids {
            let lone_log = self.options.logs.len() == 1;
            let adopted: Vec<Option<u32>> =
                logs_by_pid.keys().copied().filter(|&key| key.is_none() || lone_log).collect();
            for key in adopted {
                let paths = logs_by_pid.remove(&key).unwrap_or_default();
                logs_by_pid.entry(Some(*pid)).or_default().extend(paths);
            }
        }
        let of_jitdumps = pids
            .iter()
            .zip(jitdump_paths)
            .map(|(&pid, path)| match logs_by_pid.remove(&Some(pid)) {
                Some(paths) => paths,
                None => self.find_logs(pid, Some(path)),
            })
            .collect();
        Pairing { of_jitdumps, without_jitdump: logs_by_pid }
    }

    /// CodeLogs made of inline maps built by the caller (e.g. from a `--prof`
    /// log alone), one per process id. Samples of other pids may make it
    /// look for `jit-PID.dump` in the current directory, as [`CodeLogs::load`]
    /// without jitdumps does.
    pub fn from_maps(maps: Vec<(u32, InlineMap)>) -> CodeLogs {
        let mut code_logs = CodeLogs {
            maps: Vec::new(),
            by_pid: FxHashMap::default(),
            looked_up_pids: FxHashSet::default(),
            options: CodeLogOptions::default(),
            diagnostics: Diagnostics::new(),
        };
        for (pid, map) in maps {
            code_logs.by_pid.insert(pid, code_logs.maps.len());
            code_logs.maps.push(Arc::new(map));
        }
        code_logs
    }

    /// The index (into [`CodeLogs::maps`]) of the process for samples of
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

    /// Whether [`CodeLogs::process_for_pid`] may still load files (no
    /// jitdump was given, so each new pid is looked for): then every expander
    /// should see every sample.
    pub fn discovers_processes(&self) -> bool {
        self.options.jitdumps.is_empty()
    }

    /// All loaded processes.
    pub fn maps(&self) -> &[Arc<InlineMap>] {
        &self.maps
    }

    /// Adds the problems of the code-log tables decoded so far (the tables
    /// of the code that was looked up: [`CodeLog::table_problems`]).
    pub fn add_table_problems(&self, diagnostics: &mut Diagnostics) {
        for map in &self.maps {
            for log in map.logs() {
                diagnostics.add_table_problems(log);
            }
        }
    }

    fn discover(&mut self, pid: u32) {
        let directory = self.options.jitdump_dir.clone().unwrap_or_else(|| PathBuf::from("."));
        let Some(jitdump_path) = existing(&directory, &format!("jit-{pid}.dump")) else { return };
        let log_paths = self.find_logs(pid, Some(&jitdump_path));
        let added = if self.options.read_threads > 1 {
            let FilesRead { mut jitdumps, logs } = read_side_by_side(std::slice::from_ref(&jitdump_path), &log_paths);
            jitdumps.pop().expect("one jitdump read").and_then(|JitDumpRead { jitdump, diagnostics }| {
                self.diagnostics.merge(&diagnostics);
                self.add(pid, &log_paths, logs, Some((jitdump, &jitdump_path)))
            })
        } else {
            read_jitdump(&jitdump_path, &mut self.diagnostics).and_then(|jitdump| {
                let logs = log_paths.iter().map(|path| read_code_log(path)).collect();
                self.add(pid, &log_paths, logs, Some((jitdump, &jitdump_path)))
            })
        };
        if let Err(error) = added {
            self.diagnostics.warn(WarningKind::UnreadableDiscoveredJitDump, || error.to_string());
        }
    }

    /// Every code log of `pid` in `$CODSPEED_V8_LOG` and next to the
    /// jitdump: one per isolate, `isolate-0x*-PID-*.log`, or `*-PID.log`
    /// (`.gz` too), sorted by name. A name found in both directories, or
    /// both plain and compressed, is read once: the first directory's, the
    /// plain one.
    fn find_logs(&self, pid: u32, jitdump_path: Option<&Path>) -> Vec<PathBuf> {
        let mut directories: Vec<PathBuf> = self.options.codspeed_log_dir.iter().cloned().collect();
        if let Some(parent) = jitdump_path.and_then(Path::parent) {
            directories.push(if parent.as_os_str().is_empty() { PathBuf::from(".") } else { parent.to_owned() });
        }
        let mut found: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut seen_directories: Vec<PathBuf> = Vec::new();
        for directory in directories {
            let canonical = directory.canonicalize().unwrap_or_else(|_| directory.clone());
            if seen_directories.contains(&canonical) {
                continue;
            }
            seen_directories.push(canonical);
            let Ok(entries) = std::fs::read_dir(&directory) else { continue };
            let mut names: Vec<String> = entries
                .flatten()
                .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file() || kind.is_symlink()))
                .filter_map(|entry| entry.file_name().into_string().ok())
                .filter(|name| is_log_of(name, pid))
                .collect();
            // `x.log` before `x.log.gz`.
            names.sort();
            for name in names {
                let plain = name.strip_suffix(".gz").unwrap_or(&name).to_string();
                found.entry(plain).or_insert_with(|| directory.join(&name));
            }
        }
        found.into_values().collect()
    }

    /// Adds the process `pid`: its code logs, read from `log_paths` (`read`,
    /// in the same order; the first error is returned), joined to its
    /// jitdump when it has one.
    fn add(
        &mut self,
        pid: u32,
        log_paths: &[PathBuf],
        read: Vec<Result<LogRead, Error>>,
        jitdump: Option<(LoadedJitDump, &Path)>,
    ) -> Result<(), Error> {
        let mut logs = Vec::with_capacity(log_paths.len());
        for (path, read) in log_paths.iter().zip(read) {
            let LogRead { mut log, cut_short } = read?;
            log.path = path.to_owned();
            if cut_short.is_set() {
                self.diagnostics.add_compressed_cut(path, &format!("{} lines", log.line_count));
            }
            self.diagnostics.add_code_log(&log);
            logs.push(log);
        }
        if let (true, Some((_, jitdump_path))) = (logs.is_empty(), &jitdump) {
            self.diagnostics.warn(WarningKind::NoCodeLog, || {
                format!(
                    "{}: no code log found for pid {pid} (looked for isolate-0x*-{pid}-*.log and *-{pid}.log in \
                     $CODSPEED_V8_LOG and next to the jitdump)",
                    jitdump_path.display()
                )
            });
        }
        let sources = self.options.sources.clone();
        let map = match jitdump {
            Some((jitdump, path)) => {
                let cut_by_writers_death = self.diagnostics.add_jitdump_of_process(path, &jitdump.dump);
                let cut_short = jitdump.dump.is_cut_short();
                // What the jitdump lost after its cut, its code logs have.
                let mut map = if cut_short {
                    InlineMap::join_cut_jitdump(logs, jitdump.codes, Some(pid), sources)
                } else {
                    InlineMap::join(logs, jitdump.codes, Some(pid), sources)
                };
                map.jitdump_path = Some(path.to_path_buf());
                map.jitdump_cut_by_writers_death = cut_by_writers_death;
                map.jitdump_cut_short = cut_short;
                map
            }
            None => InlineMap::new(logs, None, sources),
        };
        self.by_pid.insert(pid, self.maps.len());
        self.maps.push(Arc::new(map));
        Ok(())
    }
}

/// The logs [`CodeLogs::pair_up`] gave each jitdump and the rest.
struct Pairing {
    /// The logs of each jitdump, in the order of the jitdumps.
    of_jitdumps: Vec<Vec<PathBuf>>,
    /// Logs of no jitdump, by the pid in their names.
    without_jitdump: BTreeMap<Option<u32>, Vec<PathBuf>>,
}

impl Pairing {
    /// Every log path, in the order [`CodeLogs::load`] adds them.
    fn log_paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.of_jitdumps.iter().flatten().chain(self.without_jitdump.values().flatten())
    }
}

/// A jitdump as read on another thread, with what its reading reported.
struct JitDumpRead {
    jitdump: LoadedJitDump,
    diagnostics: Diagnostics,
}

/// A code log as read, and whether its `.gz` was cut short.
struct LogRead {
    log: CodeLog,
    cut_short: CutShort,
}

/// What [`read_side_by_side`] read, each in the order given.
struct FilesRead {
    jitdumps: Vec<Result<JitDumpRead, Error>>,
    logs: Vec<Result<LogRead, Error>>,
}

/// Reads the jitdumps on another thread while the code logs are read on
/// this one.
fn read_side_by_side<LogPath: AsRef<Path> + Sync>(jitdump_paths: &[PathBuf], log_paths: &[LogPath]) -> FilesRead {
    if jitdump_paths.is_empty() {
        let logs = log_paths.iter().map(|path| read_code_log(path.as_ref())).collect();
        return FilesRead { jitdumps: Vec::new(), logs };
    }
    std::thread::scope(|scope| {
        let jitdump_reader = scope.spawn(|| {
            jitdump_paths
                .iter()
                .map(|path| {
                    let mut diagnostics = Diagnostics::new();
                    read_jitdump(path, &mut diagnostics).map(|jitdump| JitDumpRead { jitdump, diagnostics })
                })
                .collect::<Vec<_>>()
        });
        let logs = log_paths.iter().map(|path| read_code_log(path.as_ref())).collect();
        let jitdumps = jitdump_reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        FilesRead { jitdumps, logs }
    })
}

/// The pid in the header of the jitdump at `path`; `None` when it cannot be
/// read (reading the whole file then says why).
fn peek_jitdump_pid(path: &Path) -> Option<u32> {
    let (input, _) = open_file_allowing_cut(path).ok()?;
    let mut start = Vec::with_capacity(PEEKED_JITDUMP_BYTES);
    input.take(PEEKED_JITDUMP_BYTES as u64).read_to_end(&mut start).ok()?;
    jitdump::Header::parse(&start).ok().map(|header| header.pid)
}

/// What [`peek_jitdump_pid`] reads: V8 writes a header of 40 bytes.
const PEEKED_JITDUMP_BYTES: usize = 4096;

/// Reads a code log: a plain file memory-mapped, a `.gz` streamed (then
/// [`CutShort`] says whether it was cut short).
fn read_code_log(path: &Path) -> Result<LogRead, Error> {
    if let Some(mapped) = MappedFile::open(path)? {
        // Read through, the mapping goes: later lookups read the few
        // ranges they need (the tables of sampled code, the sources of
        // their scripts) from the file, which stays open.
        let progress = |offset| mapped.release_before(offset);
        let log = match mapped.file().try_clone() {
            Ok(file) => CodeLog::parse_retained(mapped.bytes(), RetainedText::in_file(file), progress),
            // Out of file descriptors (hundreds of logs open): the tables
            // and sources are copied out instead.
            Err(_) => CodeLog::parse_with_progress(mapped.bytes(), progress),
        };
        return Ok(LogRead { log, cut_short: CutShort::default() });
    }
    let (input, cut_short) = open_file_allowing_cut(path)?;
    let log = CodeLog::read(input).map_err(Error::at::<std::io::Error>(path))?;
    Ok(LogRead { log, cut_short })
}

/// A jitdump read: its loads as code objects, in file order, and the rest.
struct LoadedJitDump {
    /// Header and warnings ([`JitDump::loads`] is empty: they are `codes`).
    dump: JitDump,
    /// The code objects it loads, not yet joined to a log.
    codes: JitCodes,
}

/// Reads a jitdump; a `.gz` cut short gives what was before the cut, with a
/// warning.
fn read_jitdump(path: &Path, diagnostics: &mut Diagnostics) -> Result<LoadedJitDump, Error> {
    let jitdump_error = Error::at::<jitdump::JitDumpError>(path);
    // A plain file mapped, a `.gz` streamed: a jitdump is mostly code bytes,
    // which are not needed, and neither way holds more than a window of it.
    // Loads go straight into code objects.
    if let Some(mapped) = MappedFile::open(path)? {
        let mut codes = JitCodes::default();
        let dump = jitdump::read_loads_with_progress(
            mapped.bytes(),
            &ReadOptions::default(),
            |offset| mapped.release_before(offset),
            &mut |load| codes.push_load(&load),
        )
        .map_err(jitdump_error)?;
        return Ok(LoadedJitDump { dump, codes });
    }
    let (input, cut_short) = open_file_allowing_cut(path)?;
    let mut dump = jitdump::read_stream(input, &ReadOptions::default())
        .map_err(Error::at::<std::io::Error>(path))?
        .map_err(jitdump_error)?;
    if cut_short.is_set() {
        diagnostics.add_compressed_cut(path, &format!("{} code loads", dump.loads.len()));
    }
    let mut codes = JitCodes::default();
    for load in std::mem::take(&mut dump.loads) {
        codes.push_load(&load);
    }
    Ok(LoadedJitDump { dump, codes })
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

/// The process id in a code log's or jitdump's file name: the one after the
/// isolate address in V8's per-isolate names
/// (`isolate-0x378aaea0-25931-v8.log` -> 25931), else the last run of digits
/// after a `-` or `_` (`codspeed-v8-2696.log` -> 2696).
pub fn pid_in_file_name(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    if let Some(isolate) = IsolateLogName::parse(name) {
        return Some(isolate.pid);
    }
    let digits_end = name.rfind(|character: char| character.is_ascii_digit())? + 1;
    let separator = name[..digits_end].rfind(|character: char| !character.is_ascii_digit())?;
    // `codspeed-v8-2696.log`, `jit_2696.dump`: a pid follows a separator.
    if !matches!(name.as_bytes()[separator], b'-' | b'_') {
        return None;
    }
    name[separator + 1..digits_end].parse().ok()
}

/// The parts of V8's per-isolate log name `isolate-0x<address>-<pid>-<logfile>`
/// ([`LogFile::GetLogFileName`](https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/logging/log-file.cc)
/// prefixes `--logfile` with them under `--logfile-per-isolate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsolateLogName<'name> {
    /// The isolate's address.
    pub isolate_address: u64,
    /// The process id.
    pub pid: u32,
    /// The `--logfile` name after the prefix.
    pub logfile: &'name str,
}

impl IsolateLogName<'_> {
    /// The parts of a file name, if it has V8's per-isolate prefix.
    pub fn parse(name: &str) -> Option<IsolateLogName<'_>> {
        let rest = name.strip_prefix("isolate-0x")?;
        let (address, rest) = rest.split_once('-')?;
        let (pid, logfile) = rest.split_once('-')?;
        Some(IsolateLogName {
            isolate_address: u64::from_str_radix(address, 16).ok()?,
            pid: pid.parse().ok()?,
            logfile,
        })
    }
}

/// Whether a file name is a code log of `pid`: `isolate-0x*-PID-*.log` or
/// `*-PID.log`, maybe `.gz`.
fn is_log_of(name: &str, pid: u32) -> bool {
    let plain = name.strip_suffix(".gz").unwrap_or(name);
    let Some(stem) = plain.strip_suffix(".log") else { return false };
    match IsolateLogName::parse(plain) {
        Some(isolate) => isolate.pid == pid && !isolate.logfile.is_empty(),
        None => stem.strip_suffix(&pid.to_string()).is_some_and(|before| before.ends_with('-')),
    }
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
        assert_eq!(pid_in_file_name(Path::new("isolate-0x378aaea0-25931-v8.log")), Some(25931));
        assert_eq!(
            pid_in_file_name(Path::new("/x/isolate-0x7f9584000f00-25931-codspeed-v8-25931.log.gz")),
            Some(25931)
        );
    }

    #[test]
    fn isolate_log_names() {
        assert_eq!(
            IsolateLogName::parse("isolate-0x7f9584000f00-25931-codspeed-v8-25931.log"),
            Some(IsolateLogName { isolate_address: 0x7f95_8400_0f00, pid: 25931, logfile: "codspeed-v8-25931.log" })
        );
        assert_eq!(IsolateLogName::parse("isolate-0xzz-25931-v8.log"), None);
        assert_eq!(IsolateLogName::parse("isolate-0x10-v8.log"), None);
    }

    #[test]
    fn logs_of_a_pid() {
        for name in [
            "isolate-0x378aaea0-25931-codspeed-v8-25931.log",
            "isolate-0x378aaea0-25931-v8.log.gz",
            "codspeed-v8-25931.log",
            "prof-25931.log.gz",
        ] {
            assert!(is_log_of(name, 25931), "{name}");
        }
        for name in [
            "isolate-0x378aaea0-25932-codspeed-v8-25931.log",
            "codspeed-v8-125931.log",
            "codspeed-v8-25931.log.txt",
            "jit-25931.dump",
            "v8.log",
            "25931.log",
        ] {
            assert!(!is_log_of(name, 25931), "{name}");
        }
    }
}
