//! `v8inline record --inject`: after a perf recording, perf's own view of it
//! with the inlined JavaScript frames. Repairs each jitdump where V8
//! mis-sized records ([`crate::formats::jitdump::repair`]: `perf inject`
//! stops at the first), runs `perf inject -j` (one `jitted-PID-N.so` per
//! code object, and `perf.jit.data` naming them), gives those files their
//! DWARF ([`crate::commands::debuginfo`]) and says which `perf report
//! --inline` to run.
//!
//! perf inject reads each jitdump where perf.data says the process mapped
//! it, and writes the jitted files beside it: the output directory where
//! the runtime wrote its jitdump there (`--perf-prof-path`), the working
//! directory for node 18 and 20, whose jitdump `record` moved: a repaired
//! copy is put back there while perf inject runs.

use std::ffi::OsString;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Command;

use linux_perf_data::linux_perf_event_reader::RecordType;
use linux_perf_data::{PerfFileReader, PerfFileRecord};

use crate::commands::debuginfo::{
    DebugInfoCommandError, DebugInfoOptions, DebugInfoSummary, debuginfo, default_buildid_dir,
};
use crate::error::Error;
use crate::files::{read_file, replace_file};
use crate::formats::jitdump;
use crate::v8::code_logs::CodeLogOptions;
use crate::v8::inline_map::SourceOptions;

/// The file perf inject writes, in the output directory.
pub const PERF_JIT_DATA_FILE: &str = "perf.jit.data";

/// How to inject.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct InjectOptions {
    /// The perf binary.
    pub perf: OsString,
    /// perf's build-id cache (`None`: perf's default, `~/.debug`).
    pub buildid_dir: Option<PathBuf>,
    /// Threads for debuginfo.
    pub threads: usize,
}

impl InjectOptions {
    /// perf found on `PATH`, its default build-id cache, one thread per core.
    pub fn new() -> InjectOptions {
        InjectOptions { perf: "perf".into(), buildid_dir: None, threads: crate::pipeline::thread_count(None) }
    }
}

impl Default for InjectOptions {
    fn default() -> InjectOptions {
        InjectOptions::new()
    }
}

/// What [`inject`] did.
pub struct Injection {
    /// The recording's directory.
    pub output_dir: PathBuf,
    /// perf inject's output.
    pub perf_jit_data: PathBuf,
    /// Each jitdump perf.data names, with what became of it.
    pub processes: Vec<InjectedProcess>,
    /// Jitdumps perf.data names that could not be repaired or read, and why.
    pub notes: Vec<String>,
}

/// One process's jitdump through perf inject and debuginfo.
pub struct InjectedProcess {
    /// Where perf inject read it: where the process mapped it.
    pub jitdump: PathBuf,
    /// Its DEBUG_INFO records V8 mis-sized, corrected before perf inject.
    pub corrected: usize,
    /// What debuginfo did with its jitted files, or why it could not.
    pub debuginfo: Result<DebugInfoSummary, DebugInfoCommandError>,
}

/// Why [`inject`] could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InjectError {
    /// perf.data or a jitdump cannot be read.
    #[error(transparent)]
    Input(#[from] Error),
    /// perf.data's records cannot be read.
    #[error("{}: {message}", path.display())]
    PerfData {
        /// perf.data.
        path: PathBuf,
        /// The reader's message.
        message: String,
    },
    /// A repaired jitdump cannot be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The jitdump.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// perf cannot be started.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// perf.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// perf inject failed.
    #[error("perf inject -j failed ({status}): {message}")]
    PerfInject {
        /// Its exit status.
        status: std::process::ExitStatus,
        /// Its first line of error output.
        message: String,
    },
}

impl Injection {
    /// What to tell the user, one `v8inline:` line each.
    pub fn report(&self) -> String {
        let mut report: String = self.notes.iter().map(|note| format!("v8inline: warning: {note}\n")).collect();
        for process in &self.processes {
            if process.corrected > 0 {
                report.push_str(&format!(
                    "v8inline: {}: corrected {} DEBUG_INFO record(s) mis-sized by V8 before perf inject\n",
                    process.jitdump.display(),
                    process.corrected
                ));
            }
            if let Some(directory) = process.jitdump.parent().filter(|directory| *directory != self.output_dir) {
                report.push_str(&format!(
                    "v8inline: perf inject wrote the jitted files where the runtime wrote its jitdump, {} (node 18 and 20 have no --perf-prof-path)\n",
                    directory.display()
                ));
            }
            match &process.debuginfo {
                Ok(summary) => report.push_str(&summary.report()),
                Err(error) => report.push_str(&format!("v8inline: warning: {error}\n")),
            }
        }
        report.push_str(&format!(
            "v8inline: inlined JavaScript frames for perf (a build that shows inlined frames), samply and hotspot: perf report --inline -i {}\n",
            self.perf_jit_data.display()
        ));
        report
    }
}

/// Repairs the jitdumps of the recording in `output_dir`, runs perf inject
/// and debuginfo on them.
pub fn inject(output_dir: &Path, options: &InjectOptions) -> Result<Injection, InjectError> {
    let perf_data = output_dir.join("perf.data");
    let perf_jit_data = output_dir.join(PERF_JIT_DATA_FILE);
    let mut placed = Vec::new();
    let mut jitdumps = Vec::new();
    let mut notes = Vec::new();
    for mapped in mapped_jitdumps(&perf_data)? {
        let Some(name) = mapped.file_name() else { continue };
        // record keeps every jitdump in the output directory.
        let kept = output_dir.join(name);
        let source = if kept.is_file() { kept } else { mapped.clone() };
        let repaired = match read_file(&source).and_then(|bytes| jitdump::repair(&bytes).map_err(Error::at(&source))) {
            Ok(repaired) => repaired,
            Err(error) => {
                notes.push(format!("{error}: left to perf inject as it is, no debuginfo for it"));
                continue;
            }
        };
        let corrected = repaired.original.mis_sized_debug_infos.len();
        if corrected > 0 || source != mapped {
            write_replacing(&mapped, &repaired.bytes)?;
            if source != mapped {
                placed.push(mapped.clone());
            }
        }
        jitdumps.push((mapped, corrected));
    }
    let result = run_perf_inject(options, &perf_data, &perf_jit_data).map(|()| {
        let processes = jitdumps
            .into_iter()
            .map(|(jitdump, corrected)| {
                let debuginfo = debuginfo(DebugInfoOptions {
                    code_logs: CodeLogOptions {
                        jitdumps: vec![jitdump.clone()],
                        jitdump_dir: Some(output_dir.to_owned()),
                        codspeed_log_dir: Some(output_dir.to_owned()),
                        sources: SourceOptions { read_from_disk: true, ..SourceOptions::default() },
                        read_threads: options.threads,
                        ..CodeLogOptions::default()
                    },
                    directory: jitdump.parent().map(Path::to_owned),
                    buildid_dir: options.buildid_dir.clone().or_else(default_buildid_dir),
                    threads: options.threads,
                    strict: false,
                });
                InjectedProcess { jitdump, corrected, debuginfo }
            })
            .collect();
        Injection { output_dir: output_dir.to_owned(), perf_jit_data, processes, notes }
    });
    // The copies put back for perf inject are not the recording's.
    for path in placed {
        let _ = std::fs::remove_file(path);
    }
    result
}

/// `perf [--buildid-dir DIR] inject -j -i perf.data -o perf.jit.data`.
fn run_perf_inject(options: &InjectOptions, perf_data: &Path, perf_jit_data: &Path) -> Result<(), InjectError> {
    let mut command = Command::new(&options.perf);
    if let Some(buildid_dir) = &options.buildid_dir {
        command.arg("--buildid-dir").arg(buildid_dir);
    }
    command.args(["inject", "-j", "-i"]).arg(perf_data).arg("-o").arg(perf_jit_data);
    let output = command
        .output()
        .map_err(|source| InjectError::Spawn { program: options.perf.to_string_lossy().into_owned(), source })?;
    if !output.status.success() {
        let message = String::from_utf8_lossy(&output.stderr);
        let first_line = message.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("no message");
        return Err(InjectError::PerfInject { status: output.status, message: first_line.to_string() });
    }
    Ok(())
}

/// Writes `bytes` to `path` whole ([`replace_file`]): a reader never sees
/// half a jitdump, and a failed write leaves no file behind.
fn write_replacing(path: &Path, bytes: &[u8]) -> Result<(), InjectError> {
    replace_file(path, |output| output.write_all(bytes))
        .map_err(|source| InjectError::Write { path: path.to_owned(), source })
}

/// Where MMAP and MMAP2 records put a mapping's file name: after pid, tid,
/// address, length and page offset; MMAP2 then has 24 bytes of device and
/// inode (or a build id) and the protection and flags.
const MMAP_FILE_NAME_OFFSET: usize = 32;
const MMAP2_FILE_NAME_OFFSET: usize = 64;

/// The jitdumps (`jit-PID.dump`) the processes of `perf_data` mapped, by
/// the path they mapped them at, as perf inject finds them. Names are read
/// from the records' bytes: the crate's MMAP2 parser asserts on a damaged
/// build id length.
fn mapped_jitdumps(perf_data: &Path) -> Result<Vec<PathBuf>, InjectError> {
    let file = std::fs::File::open(perf_data).map_err(Error::at(perf_data))?;
    let problem = |message: String| InjectError::PerfData { path: perf_data.to_owned(), message };
    let PerfFileReader { mut perf_file, mut record_iter } =
        PerfFileReader::parse_file(BufReader::new(file)).map_err(|error| problem(error.to_string()))?;
    let mut jitdumps: Vec<PathBuf> = Vec::new();
    loop {
        let record = match record_iter.next_record(&mut perf_file) {
            Ok(Some(record)) => record,
            Ok(None) => break,
            // What was read is what perf inject reads too.
            Err(_) => break,
        };
        let PerfFileRecord::EventRecord { record, .. } = record else { continue };
        let offset = match record.record_type {
            RecordType::MMAP => MMAP_FILE_NAME_OFFSET,
            RecordType::MMAP2 => MMAP2_FILE_NAME_OFFSET,
            _ => continue,
        };
        let body = record.data.as_slice();
        let Some(name) = body.get(offset..).map(|rest| rest.split(|&byte| byte == 0).next().unwrap_or(rest)) else {
            continue;
        };
        let path = PathBuf::from(String::from_utf8_lossy(name).into_owned());
        if is_jitdump_name(&path) && !jitdumps.contains(&path) {
            jitdumps.push(path);
        }
    }
    Ok(jitdumps)
}

/// `jit-PID.dump`, as V8 names its jitdumps.
fn is_jitdump_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_prefix("jit-"))
        .and_then(|rest| rest.strip_suffix(".dump"))
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|byte| byte.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitdump_names() {
        assert!(is_jitdump_name(Path::new("/tmp/out/jit-1234.dump")));
        assert!(!is_jitdump_name(Path::new("/tmp/out/jit-.dump")));
        assert!(!is_jitdump_name(Path::new("/tmp/out/jit-12x.dump")));
        assert!(!is_jitdump_name(Path::new("/tmp/out/perf-1234.map")));
    }
}
