//! `v8inline repair-jitdump JITDUMP -o OUT`: a copy of a jitdump with the
//! DEBUG_INFO records V8 mis-sized given their true size
//! ([`crate::formats::jitdump::repair`]), for perf inject and samply.

use std::path::{Path, PathBuf};

use crate::diagnostics::Diagnostics;
use crate::error::Error;
use crate::files::read_file;
use crate::formats::jitdump::repair;

/// What a repair did.
#[derive(Debug)]
pub struct Repaired {
    /// The input's warnings and the note on the records corrected.
    pub diagnostics: Diagnostics,
    /// The records corrected.
    pub corrected: usize,
    /// The bytes written.
    pub bytes_written: usize,
}

/// Why a jitdump could not be repaired.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RepairError {
    /// The output is the input.
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
/// to `output`, which must not be the input.
pub fn repair_jitdump(input: &Path, output: &Path) -> Result<Repaired, RepairError> {
    if let (Ok(input_path), Ok(output_path)) = (input.canonicalize(), output.canonicalize())
        && input_path == output_path
    {
        return Err(RepairError::WouldOverwriteInput(input.to_owned()));
    }
    let bytes = read_file(input)?;
    let repaired = repair(&bytes).map_err(Error::at(input))?;
    let mut diagnostics = Diagnostics::new();
    diagnostics.add_jitdump(input, &repaired.original);
    std::fs::write(output, &repaired.bytes)
        .map_err(|source| RepairError::Output { path: output.to_owned(), source })?;
    Ok(Repaired {
        diagnostics,
        corrected: repaired.original.mis_sized_debug_infos.len(),
        bytes_written: repaired.bytes.len(),
    })
}
