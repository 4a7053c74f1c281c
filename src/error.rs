//! The one error of the crate: an input that cannot be used at all, the
//! file it is about and a typed cause.
//!
//! Damage that still leaves something to read is not an error but a warning
//! ([`crate::diagnostics`]); an [`Error`] ends the job (the binary exits 1).
//! Every reader returns this type (or a cause that converts into it, the
//! path attached once where the file is named), so a message reads
//! `path: what` for a file, `path: byte offset N: expected ...` for a binary
//! header.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::formats::jitdump::{JitDumpError, ReadPathCause, ReadPathError};
use crate::formats::perf_data::PerfDataError;

/// An input that cannot be used at all: the file and why.
///
/// Displays as `path: cause`, or the cause alone when no file is involved
/// (an empty `path`, e.g. [`ErrorCause::NothingToFold`]).
#[derive(Debug)]
pub struct Error {
    /// The file (empty when the error is about no file).
    pub path: PathBuf,
    /// Why.
    pub cause: ErrorCause,
}

impl Error {
    /// The error `cause` about the file at `path`.
    pub fn new(path: impl Into<PathBuf>, cause: impl Into<ErrorCause>) -> Error {
        Error { path: path.into(), cause: cause.into() }
    }

    /// A closure attaching `path` to a cause, for `map_err`.
    pub fn at<Cause: Into<ErrorCause>>(path: &Path) -> impl Fn(Cause) -> Error + Copy + '_ {
        move |cause| Error::new(path, cause)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.as_os_str().is_empty() {
            write!(formatter, "{}", self.cause)
        } else {
            write!(formatter, "{}: {}", self.path.display(), self.cause)
        }
    }
}

impl From<ReadPathError> for Error {
    /// The error of a jitdump file read by path, with its path.
    fn from(error: ReadPathError) -> Error {
        let cause = match error.cause {
            ReadPathCause::Read(read) => ErrorCause::Read(read),
            ReadPathCause::Header(header) => ErrorCause::JitDump(header),
        };
        Error { path: error.path, cause }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

/// Why an input cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorCause {
    /// It could not be opened or read, or its compressed data is corrupt.
    #[error("{0}")]
    Read(#[from] io::Error),
    /// A jitdump whose header is unusable (byte offset and expectation).
    #[error("{0}")]
    JitDump(#[from] JitDumpError),
    /// A perf.data that is not one, or whose header or sections cannot be
    /// read.
    #[error("{0}")]
    PerfData(#[from] PerfDataError),
    /// A binary or library whose symbols cannot be read: not ELF, or
    /// damaged. The sample sources do not fail on it: they turn it into a
    /// [`crate::diagnostics::WarningKind::NoSymbols`] warning naming the
    /// file, and its frames stay unnamed.
    #[error("{0}")]
    Elf(#[from] object::read::Error),
    /// A `--ticks` log without a single `tick` record.
    #[error("no tick records: record with `node --prof --log-code`")]
    NoTicks,
    /// No input was given to fold.
    #[error("nothing to fold")]
    NothingToFold,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_their_file_before_the_cause() {
        let error = Error::new("prof-1.log", ErrorCause::NoTicks);
        assert_eq!(error.to_string(), "prof-1.log: no tick records: record with `node --prof --log-code`");
        let error = Error::new(PathBuf::new(), ErrorCause::NothingToFold);
        assert_eq!(error.to_string(), "nothing to fold");
        let error = Error::at(Path::new("x.log"))(io::Error::from(io::ErrorKind::NotFound));
        assert!(matches!(error.cause, ErrorCause::Read(_)));
        assert!(error.to_string().starts_with("x.log: "));
    }
}
