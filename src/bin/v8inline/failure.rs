//! Why a run fails, and the small I/O helpers that say where.

use std::io::Write;
use std::path::Path;

use v8inline::RunError;
use v8inline::{Diagnostics, strict_failure};

/// Why a run failed.
pub(crate) enum Failure {
    /// The reader of our output went away: not an error.
    BrokenPipe,
    /// An input made the job impossible.
    Input(String),
    /// The arguments are wrong.
    Usage(String),
    /// `record`'s command cannot be run: the exit code a shell gives (127
    /// not found, 126 not executable).
    Command { message: String, code: u8 },
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

impl From<RunError> for Failure {
    fn from(error: RunError) -> Self {
        match error {
            _ if error.is_broken_pipe() => Failure::BrokenPipe,
            RunError::Usage(usage) => Failure::Usage(usage.to_string()),
            _ => Failure::Input(error.to_string()),
        }
    }
}

impl From<v8inline::Error> for Failure {
    fn from(error: v8inline::Error) -> Self {
        Failure::Input(error.to_string())
    }
}

/// A failed write to standard output (reads and file writes name their file
/// where they happen).
pub(crate) fn standard_output_failure(error: std::io::Error) -> Failure {
    match Failure::from(error) {
        Failure::Input(message) => Failure::Input(format!("standard output: {message}")),
        other => other,
    }
}

/// Prints the warning summary; with `--strict`, any warning fails the run.
pub(crate) fn report_warnings(diagnostics: &Diagnostics, strict: bool) -> Result<(), Failure> {
    eprint!("{diagnostics}");
    match strict_failure(diagnostics, strict) {
        Some(message) => Err(Failure::Input(message)),
        None => Ok(()),
    }
}

/// Replaces the file at `path` by `bytes` (whole or not at all), naming
/// the path in an error.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    v8inline::replace_file(path, |output| output.write_all(bytes))
        .map_err(|error| Failure::Input(format!("{}: {error}", path.display())))
}

/// Writes `bytes` to `path`, or to standard output without a path.
pub(crate) fn write_output(path: Option<&Path>, bytes: &[u8]) -> Result<(), Failure> {
    match path {
        None => std::io::stdout().lock().write_all(bytes).map_err(standard_output_failure),
        Some(path) => write_file(path, bytes),
    }
}
