//! Reading input files, transparently decompressing `.gz` ones (code logs
//! and jitdumps compress 3-10x, and the bundled examples are compressed).

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

/// An input file that could not be opened or read.
#[derive(Debug)]
pub struct InputError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub source: io::Error,
}

impl fmt::Display for InputError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for InputError {}

fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension == "gz")
}

/// Reads a whole file, gunzipping it when its name ends in `.gz`.
pub fn read_file(path: &Path) -> Result<Vec<u8>, InputError> {
    let error = |source| InputError { path: path.to_owned(), source };
    let file = File::open(path).map_err(error)?;
    let mut bytes = Vec::new();
    if is_gzip(path) {
        MultiGzDecoder::new(BufReader::new(file)).read_to_end(&mut bytes).map_err(error)?;
    } else {
        BufReader::new(file).read_to_end(&mut bytes).map_err(error)?;
    }
    Ok(bytes)
}

/// Opens a file for reading in large blocks, gunzipping `.gz`. Plain files
/// are not buffered: their readers ask for megabytes at a time.
pub fn open_file(path: &Path) -> Result<Box<dyn Read + Send>, InputError> {
    let file = File::open(path).map_err(|source| InputError { path: path.to_owned(), source })?;
    if is_gzip(path) { Ok(Box::new(MultiGzDecoder::new(BufReader::new(file)))) } else { Ok(Box::new(file)) }
}

/// Opens a file for streaming (`-` = standard input), gunzipping `.gz`.
pub fn open_stream(path: &Path) -> Result<Box<dyn BufRead>, InputError> {
    const BUFFER_SIZE: usize = 256 * 1024;
    if path == Path::new("-") {
        return Ok(Box::new(BufReader::with_capacity(BUFFER_SIZE, io::stdin())));
    }
    let file = File::open(path).map_err(|source| InputError { path: path.to_owned(), source })?;
    if is_gzip(path) {
        Ok(Box::new(BufReader::with_capacity(BUFFER_SIZE, MultiGzDecoder::new(BufReader::new(file)))))
    } else {
        Ok(Box::new(BufReader::with_capacity(BUFFER_SIZE, file)))
    }
}
