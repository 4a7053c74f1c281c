//! `v8inline repair-jitdump JITDUMP -o OUT`: a copy of a jitdump with the
//! DEBUG_INFO records V8 mis-sized given their true size
//! ([`crate::formats::jitdump::repair`]), for perf inject and samply.

use std::path::{Path, PathBuf};

use crate::diagnostics::Diagnostics;
use crate::error::Error;
use crate::files::{read_file, replace_file};
use crate::formats::jitdump::repair;
use crate::v8::code_logs::{CodeLogOptions, CodeLogs};

/// What a repair did.
#[derive(Debug)]
pub struct Repaired {
    /// The input's warnings and the note on the records corrected.
    pub diagnostics: Diagnostics,
    /// The records corrected.
    pub corrected: usize,
    /// The bytes written.
    pub bytes_written: usize,
    /// Code objects a jitdump cut short lost that its process's code log
    /// (found next to it) still has: no record holds their code bytes, so
    /// perf inject can make no `jitted-PID-N.so` of them.
    pub only_in_code_log: usize,
}

/// Why a jitdump could not be repaired.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RepairError {
    /// The output is the input (the same path, or the same file by device
    /// and inode: a hard link to it).
    #[error("repair-jitdump does not overwrite its input {}: give another -o", .0.display())]
    WouldOverwriteInput(PathBuf),
    /// The input cannot be read or its header is unusable.
    #[error(transparent)]
    Input(#[from] Error),
    /// The output cannot be written.
    #[error("{}: {source}", path.display())]
    Output {
        /// The output file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Writes the repaired copy of the jitdump at `input` (`.gz` is read too)
/// to `output`, which must not be the input. The output is written whole
/// or not at all ([`replace_file`]): a failed repair leaves an existing
/// output as it was, and none where there was none.
pub fn repair_jitdump(input: &Path, output: &Path) -> Result<Repaired, RepairError> {
    if is_same_file(input, output) {
        return Err(RepairError::WouldOverwriteInput(input.to_owned()));
    }
    let bytes = read_file(input)?;
    let repaired = repair(&bytes).map_err(Error::at(input))?;
    let mut diagnostics = Diagnostics::new();
    diagnostics.add_jitdump(input, &repaired.original);
    replace_file(output, |writer| writer.write_all(&repaired.bytes))
        .map_err(|source| RepairError::Output { path: output.to_owned(), source })?;
    let only_in_code_log = if repaired.original.is_cut_short() { code_log_cover(input, &mut diagnostics) } else { 0 };
    Ok(Repaired {
        diagnostics,
        corrected: repaired.original.mis_sized_debug_infos.len(),
        bytes_written: repaired.bytes.len(),
        only_in_code_log,
    })
}

/// How many code objects the code log of a cut jitdump's process (found
/// next to it, as the main command finds it) has that the jitdump lost,
/// said in a note: a repair cannot give them back, the log can.
fn code_log_cover(jitdump: &Path, diagnostics: &mut Diagnostics) -> usize {
    let options = CodeLogOptions { jitdumps: vec![jitdump.to_owned()], ..CodeLogOptions::default() };
    // The jitdump's own warnings are said already; the log's are not this
    // command's business.
    let Ok(code_logs) = CodeLogs::load(options) else { return 0 };
    let [map] = code_logs.maps() else { return 0 };
    let lost = map.codes_only_in_code_log().len();
    if lost > 0 {
        diagnostics.note(format!(
            "{}: {lost} code object(s) created after the cut are only in its process's code log {}: no record of \
             the jitdump holds their code bytes, so perf inject makes no jitted-PID-N.so of them; v8inline reads \
             their samples from the code log",
            jitdump.display(),
            map.log_path().display()
        ));
    }
    lost
}

/// Whether the two paths name one file: the same device and inode (a hard
/// link, a symbolic link, another spelling of the path).
fn is_same_file(input: &Path, output: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (std::fs::metadata(input), std::fs::metadata(output)) {
        (Ok(input), Ok(output)) => input.dev() == output.dev() && input.ino() == output.ino(),
        _ => false,
    }
}
