//! Reading input files, transparently decompressing `.gz` ones (code logs
//! and jitdumps compress 3-10x, and the bundled examples are compressed).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use flate2::read::MultiGzDecoder;

use crate::error::Error;

fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension == "gz")
}

/// The most read whole from an input that is no regular file (a pipe, as
/// `<(zcat jit.dump.gz)` gives): its size is not known before, and an
/// endless one (`<(cat /dev/zero)`) must end in an error, not in memory
/// exhaustion. Regular files are read whole whatever their size.
pub const STREAM_READ_LIMIT: u64 = 256 << 20;

/// Opens an input, refusing devices (`/dev/zero`, `/dev/urandom`: they
/// never end), directories and sockets: inputs are files or pipes.
pub fn open_input(path: &Path) -> io::Result<File> {
    let file = File::open(path)?;
    refuse_devices(&file)?;
    Ok(file)
}

/// An error unless `file` is a regular file or a pipe.
pub fn refuse_devices(file: &File) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = file.metadata()?.file_type();
    let refused = if kind.is_char_device() {
        "a character device (such as /dev/zero)"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_socket() {
        "a socket"
    } else {
        return Ok(());
    };
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{refused}, not a file or a pipe")))
}

/// Reads `reader` to its end, but at most [`STREAM_READ_LIMIT`] bytes when
/// `bounded`: past them, an error.
fn read_to_end_bounded(reader: impl Read, bounded: bool) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if !bounded {
        BufReader::new(reader).read_to_end(&mut bytes)?;
        return Ok(bytes);
    }
    // Grown by doubling up to the limit, never past it: memory stays
    // about the limit however much the stream holds.
    let mut reader = BufReader::new(reader).take(STREAM_READ_LIMIT + 1);
    let most = STREAM_READ_LIMIT as usize + 1;
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            let more = bytes.len().clamp(1 << 20, most).min(most - bytes.len());
            if more == 0 {
                break;
            }
            bytes.reserve_exact(more);
            bytes.resize(bytes.len() + more, 0);
        }
        match reader.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    bytes.truncate(filled);
    if bytes.len() as u64 > STREAM_READ_LIMIT {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "no regular file, and more than {} MiB read from it (an endless stream?): give a file",
                STREAM_READ_LIMIT >> 20
            ),
        ));
    }
    Ok(bytes)
}

/// Whether `file` is a regular file (its size known, its end certain).
fn is_regular(file: &File) -> bool {
    file.metadata().is_ok_and(|metadata| metadata.is_file())
}

/// Reads a whole file, gunzipping it when its name ends in `.gz`. A pipe
/// (or a compressed file) is read up to [`STREAM_READ_LIMIT`] bytes.
pub fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    let error = Error::at(path);
    let file = open_input(path).map_err(error)?;
    let bounded = !is_regular(&file);
    if is_gzip(path) {
        read_to_end_bounded(MultiGzDecoder::new(BufReader::new(file)), bounded).map_err(error)
    } else {
        read_to_end_bounded(file, bounded).map_err(error)
    }
}

/// Opens a file for reading in large blocks, gunzipping `.gz`. Plain files
/// are not buffered: their readers ask for megabytes at a time.
pub fn open_file(path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    let file = open_input(path).map_err(Error::at(path))?;
    if is_gzip(path) { Ok(Box::new(MultiGzDecoder::new(BufReader::new(file)))) } else { Ok(Box::new(file)) }
}

/// Opens a file for streaming (`-` = standard input), gunzipping `.gz`.
pub fn open_stream(path: &Path) -> Result<Box<dyn BufRead>, Error> {
    const BUFFER_SIZE: usize = 256 * 1024;
    if path == Path::new("-") {
        return Ok(Box::new(BufReader::with_capacity(BUFFER_SIZE, io::stdin())));
    }
    let file = open_input(path).map_err(Error::at(path))?;
    if is_gzip(path) {
        Ok(Box::new(BufReader::with_capacity(BUFFER_SIZE, MultiGzDecoder::new(BufReader::new(file)))))
    } else {
        Ok(Box::new(BufReader::with_capacity(BUFFER_SIZE, file)))
    }
}

/// Set when a compressed input was cut short (its gzip stream stops early):
/// reading then ends at the cut instead of failing, so the data before it is
/// used, and the caller warns. A corrupt stream is still an error.
#[derive(Debug, Clone, Default)]
pub struct CutShort(Arc<AtomicBool>);

impl CutShort {
    /// Whether the stream was cut short.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A reader that ends where its inner reader reports an unexpected end of
/// file (flate2's "incomplete deflate stream"), setting `cut_short`.
struct EndAtCut<R> {
    inner: R,
    cut_short: CutShort,
}

impl<R: Read> Read for EndAtCut<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buffer) {
            Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => {
                self.cut_short.0.store(true, Ordering::Relaxed);
                Ok(0)
            }
            other => other,
        }
    }
}

/// [`read_file`], but a `.gz` file cut short gives the bytes before the cut
/// and `true`.
pub fn read_file_allowing_cut(path: &Path) -> Result<(Vec<u8>, bool), Error> {
    let error = Error::at(path);
    let file = open_input(path).map_err(error)?;
    let bounded = !is_regular(&file);
    if !is_gzip(path) {
        return Ok((read_to_end_bounded(file, bounded).map_err(error)?, false));
    }
    let cut_short = CutShort::default();
    let reader = EndAtCut { inner: MultiGzDecoder::new(BufReader::new(file)), cut_short: cut_short.clone() };
    let bytes = read_to_end_bounded(reader, bounded).map_err(error)?;
    Ok((bytes, cut_short.is_set()))
}

/// A plain file mapped into memory, to be read front to back without
/// copying it (a code log or jitdump of gigabytes is read at memory speed).
///
/// Pages of a mapping count in the resident memory once touched; the reader
/// hands back what it has read with [`MappedFile::release_before`], so the
/// mapping stays a window of a few megabytes, as reading in blocks would.
/// A file truncated while it is mapped makes reading its lost end fail with
/// SIGBUS, as for any program that maps its input (ripgrep does for large
/// files); `v8inline` reads the files of a finished recording. A code log
/// reads the tables and sources it decodes later from the file
/// ([`crate::formats::v8log::RetainedText::in_file`]).
pub struct MappedFile {
    map: memmap2::Mmap,
    file: File,
    /// The bytes before this were handed back.
    released: std::cell::Cell<usize>,
}

impl MappedFile {
    /// Maps `path` when it is a non-empty regular file whose name does not end
    /// in `.gz`; `Ok(None)` for anything else (read it as a stream instead).
    pub fn open(path: &Path) -> Result<Option<MappedFile>, Error> {
        if is_gzip(path) || path == Path::new("-") {
            return Ok(None);
        }
        let error = Error::at(path);
        let file = File::open(path).map_err(error)?;
        let metadata = file.metadata().map_err(error)?;
        if !metadata.is_file() || metadata.len() == 0 {
            return Ok(None);
        }
        // SAFETY: the mapping is read-only and private; a file changed while
        // mapped is the caveat above.
        let map = unsafe { memmap2::MmapOptions::new().map(&file) }.map_err(error)?;
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Some(MappedFile { map, file, released: std::cell::Cell::new(0) }))
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The file mapped (to read parts of it again once the mapping is gone).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Hands the pages before `offset` back to the kernel: they leave the
    /// resident memory (the file stays in the page cache, and a later read
    /// of them maps them again).
    pub fn release_before(&self, offset: usize) {
        let end = self.release_range(self.released.get(), offset);
        self.released.set(end.max(self.released.get()));
    }

    /// Hands back the whole pages from `start` (rounded up) to `end`
    /// (rounded down); returns where they end.
    fn release_range(&self, start: usize, end: usize) -> usize {
        release_pages(&self.map, start..end)
    }
}

/// Hands back the whole pages of `map` from `range.start` (rounded up) to
/// `range.end` (rounded down); returns where they end.
fn release_pages(map: &memmap2::Mmap, range: std::ops::Range<usize>) -> usize {
    let page = 4096;
    let start = range.start.div_ceil(page) * page;
    let end = range.end.min(map.len()) / page * page;
    if end > start {
        // SAFETY: dropping the pages of a read-only file mapping loses
        // nothing; they read the same when touched again.
        let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
    }
    end
}

/// A [`MappedFile`] read as a stream (`Read` and `Seek`), in place: every
/// few megabytes the pages before the position are handed back, so that a
/// large file read once costs no more resident memory than reading it in
/// blocks would.
pub struct MappedReader {
    file: MappedFile,
    position: usize,
    /// The pages of this run of reads (since the last seek) before this
    /// were handed back. Per run, not per file: a reader that reads the
    /// end first (a perf.data's feature sections) must still hand back
    /// the data it then reads from the start.
    released_until: usize,
}

/// How far a [`MappedReader`] reads between two hand-backs.
const RELEASE_EVERY: usize = 1 << 20;

impl MappedReader {
    /// A reader at the start of `file`.
    pub fn new(file: MappedFile) -> MappedReader {
        MappedReader { file, position: 0, released_until: 0 }
    }
}

impl Read for MappedReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let bytes = self.file.bytes();
        let start = self.position.min(bytes.len());
        let count = buffer.len().min(bytes.len() - start);
        buffer[..count].copy_from_slice(&bytes[start..start + count]);
        self.position = start + count;
        if self.position >= self.released_until + 2 * RELEASE_EVERY {
            self.released_until = self.file.release_range(self.released_until, self.position - RELEASE_EVERY);
        }
        Ok(count)
    }
}

impl io::Seek for MappedReader {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        let length = self.file.bytes().len() as i128;
        let target = match to {
            io::SeekFrom::Start(offset) => i128::from(offset),
            io::SeekFrom::End(offset) => length + i128::from(offset),
            io::SeekFrom::Current(offset) => self.position as i128 + i128::from(offset),
        };
        let target = usize::try_from(target)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the file"))?;
        if target != self.position {
            self.released_until = target;
        }
        self.position = target;
        Ok(target as u64)
    }
}

/// [`open_file`], but a `.gz` file cut short ends at the cut and sets the
/// returned [`CutShort`].
pub fn open_file_allowing_cut(path: &Path) -> Result<(Box<dyn Read + Send>, CutShort), Error> {
    let cut_short = CutShort::default();
    if !is_gzip(path) {
        return Ok((open_file(path)?, cut_short));
    }
    let file = open_input(path).map_err(Error::at(path))?;
    let reader = EndAtCut { inner: MultiGzDecoder::new(BufReader::new(file)), cut_short: cut_short.clone() };
    Ok((Box::new(reader), cut_short))
}

/// [`open_stream`], but a `.gz` file cut short ends at the cut and sets the
/// returned [`CutShort`].
pub fn open_stream_allowing_cut(path: &Path) -> Result<(Box<dyn BufRead>, CutShort), Error> {
    const BUFFER_SIZE: usize = 256 * 1024;
    let cut_short = CutShort::default();
    if path == Path::new("-") || !is_gzip(path) {
        return Ok((open_stream(path)?, cut_short));
    }
    let file = open_input(path).map_err(Error::at(path))?;
    let reader = EndAtCut { inner: MultiGzDecoder::new(BufReader::new(file)), cut_short: cut_short.clone() };
    Ok((Box::new(BufReader::with_capacity(BUFFER_SIZE, reader)), cut_short))
}

/// Writes the file at `path` whole or not at all: `write` fills a temporary
/// file beside it (same directory, so the rename cannot cross file
/// systems), which is then renamed over `path`. On any error (a full disk,
/// a write refused) the temporary file is removed and `path` keeps what it
/// held. A symbolic link at `path` to a file is replaced by the file, never
/// written through; a file that was there keeps its permission bits, a new
/// one gets those the umask allows.
///
/// A path that is no file but a stream (`/dev/null`, `/dev/stdout`, a FIFO,
/// a terminal; through links too) is written as it is: it has nothing to
/// keep, and replacing it would put a file where the device was.
pub fn replace_file<T>(path: &Path, write: impl FnOnce(&mut dyn io::Write) -> io::Result<T>) -> io::Result<T> {
    use std::os::unix::fs::PermissionsExt as _;
    let followed = std::fs::metadata(path);
    if let Ok(metadata) = &followed
        && !metadata.is_file()
        && !metadata.is_dir()
    {
        let mut output = io::BufWriter::new(std::fs::OpenOptions::new().write(true).truncate(true).open(path)?);
        let result = write(&mut output)?;
        output.flush()?;
        return Ok(result);
    }
    let mode = match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_file() => metadata.permissions().mode() & 0o7777,
        _ => 0o666,
    };
    let mut temporary = TemporaryFile::beside(path, mode)?;
    let mut output = io::BufWriter::with_capacity(256 * 1024, temporary.file.take().expect("just opened"));
    let result = write(&mut output)?;
    output.into_inner().map_err(io::IntoInnerError::into_error)?;
    std::fs::rename(&temporary.path, path)?;
    temporary.path = PathBuf::new();
    Ok(result)
}

/// A file `.NAME.PID-N.v8inline-tmp` beside the file `NAME` it will
/// replace, created exclusively (never an existing file or a link planted
/// there) and removed when dropped unless renamed (its path emptied).
struct TemporaryFile {
    path: PathBuf,
    file: Option<File>,
}

impl TemporaryFile {
    fn beside(target: &Path, mode: u32) -> io::Result<TemporaryFile> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let (path, file) = create_beside(target, |path| {
            std::fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(path)
        })?;
        Ok(TemporaryFile { path, file: Some(file) })
    }
}

/// Creates something with `create` at a new name beside `target`,
/// `.NAME.PID-N.v8inline-tmp`, trying the next name while `create` finds
/// one taken (left by a run that was killed, or planted there).
fn create_beside<T>(target: &Path, create: impl Fn(&Path) -> io::Result<T>) -> io::Result<(PathBuf, T)> {
    static CREATED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let directory = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    loop {
        let mut name = std::ffi::OsString::from(".");
        name.push(target.file_name().unwrap_or_default());
        let number = CREATED.fetch_add(1, Ordering::Relaxed);
        name.push(format!(".{}-{number}.v8inline-tmp", std::process::id()));
        let path = directory.join(name);
        match create(&path) {
            Ok(created) => return Ok((path, created)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
}

/// Puts a hard link to the file at `existing` in the place of `path`, whole
/// or not at all: the link is made at a temporary name beside `path`, then
/// renamed over it (a symbolic link at `path` is replaced, not followed).
/// Fails with `EXDEV` when the two are on different file systems.
pub fn replace_with_link(existing: &Path, path: &Path) -> io::Result<()> {
    let (link, ()) = create_beside(path, |temporary| std::fs::hard_link(existing, temporary))?;
    // Owned like a temporary file: removed unless renamed into place.
    let mut temporary = TemporaryFile { path: link, file: None };
    std::fs::rename(&temporary.path, path)?;
    temporary.path = PathBuf::new();
    Ok(())
}

impl Drop for TemporaryFile {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_file_is_whole_or_the_old_one() {
        use std::os::unix::fs::PermissionsExt as _;
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("out.txt");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let failed = replace_file(&path, |output| {
            output.write_all(b"half")?;
            Err::<(), _>(io::Error::other("the disk is full"))
        });
        assert_eq!(failed.unwrap_err().to_string(), "the disk is full");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(directory.path()).unwrap().count(), 1, "the temporary file is removed");
        replace_file(&path, |output| output.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(std::fs::read_dir(directory.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_stream_is_written_not_replaced() {
        use std::os::unix::fs::FileTypeExt as _;
        replace_file(Path::new("/dev/null"), |output| output.write_all(b"nothing")).unwrap();
        assert!(std::fs::symlink_metadata("/dev/null").unwrap().file_type().is_char_device());
        // A FIFO, and a link to it: the reader gets the bytes, the FIFO stays.
        let directory = tempfile::tempdir().unwrap();
        let fifo = directory.path().join("fifo");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        let link = directory.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let reader = std::thread::spawn({
            let fifo = fifo.clone();
            move || std::fs::read(fifo).unwrap()
        });
        replace_file(&link, |output| output.write_all(b"through the pipe")).unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_symbolic_link_is_replaced_not_written_through() {
        let directory = tempfile::tempdir().unwrap();
        let outside = directory.path().join("outside.so");
        std::fs::write(&outside, "someone else's").unwrap();
        let link = directory.path().join("out.svg");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        replace_file(&link, |output| output.write_all(b"<svg/>")).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "someone else's");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "<svg/>");
    }

    #[test]
    fn compressed_files_cut_short_give_what_was_before_the_cut() {
        let directory = std::env::temp_dir().join(format!("v8inline-input-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let text: String = (0..20_000).map(|number| format!("line {number}\n")).collect();
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        io::Write::write_all(&mut encoder, text.as_bytes()).unwrap();
        let compressed = encoder.finish().unwrap();
        let whole = directory.join("whole.gz");
        std::fs::write(&whole, &compressed).unwrap();
        assert_eq!(read_file_allowing_cut(&whole).unwrap(), (text.clone().into_bytes(), false));
        let cut = directory.join("cut.gz");
        std::fs::write(&cut, &compressed[..compressed.len() / 2]).unwrap();
        assert!(read_file(&cut).is_err());
        let (bytes, cut_short) = read_file_allowing_cut(&cut).unwrap();
        assert!(cut_short);
        assert!(!bytes.is_empty() && text.as_bytes().starts_with(&bytes), "{}", bytes.len());
        let (mut stream, flag) = open_stream_allowing_cut(&cut).unwrap();
        let mut streamed = Vec::new();
        stream.read_to_end(&mut streamed).unwrap();
        assert_eq!((streamed, flag.is_set()), (bytes, true));
        // Corrupt data is still an error.
        let corrupt = directory.join("corrupt.gz");
        let mut damaged = compressed.clone();
        damaged[20..60].fill(0xff);
        std::fs::write(&corrupt, damaged).unwrap();
        assert!(read_file_allowing_cut(&corrupt).is_err());
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
