//! `v8inline debuginfo --log LOG --jitdump JITDUMP [DIR]`: after
//! `perf inject -j`, gives each `jitted-PID-N.so` it wrote (N the jitdump's
//! code index) the DWARF of its code object's inlining
//! ([`crate::output::debuginfo`]): the stacks `v8inline lookup` prints, in
//! the form perf, addr2line, llvm-symbolizer, samply and hotspot read.
//!
//! Each file is replaced whole ([`crate::files::replace_file`]: written
//! beside it, renamed over it), so that a full disk, an error or a signal
//! leaves it either as it was or rewritten; a symbolic link or anything
//! else that is no regular file is skipped, never written through. perf's
//! build-id cache (`~/.debug`) holds a hard link to each file when it is on
//! the same file system, and perf reads the cache before the file: an
//! entry that is this very file (same device and inode) is linked to the
//! new file, an entry that is a copy of it (another file system, or an
//! earlier run stopped between the two) is replaced by it, and any other
//! entry with the same build id is left alone and named. With `strict`,
//! everything is checked before anything is written. The build id and
//! `.text` stay as perf inject wrote them.

use std::borrow::Cow;
use std::io::Read as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rustc_hash::FxHashMap;

use crate::commands::lookup::function_label;
use crate::diagnostics::Diagnostics;
use crate::error::Error;
use crate::files::{replace_file, replace_with_link};
use crate::formats::v8log::LineColumn;
use crate::output::debuginfo::{
    CodeDebugInfo, CodeRange, DebugFunction, DebugInfoError, FileIndex, FunctionIndex, InlinedCallInfo, LineRow,
    SourceLocation, rewrite_jitted_elf,
};
use crate::v8::code_logs::{CodeLogOptions, CodeLogs};
use crate::v8::inline_map::{CodeId, InlineMap};
use crate::v8::inline_stack::{FrameFunction, InlineFrame};
use crate::v8::inline_tree::{CodeInlining, code_inlining};

/// What to rewrite.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DebugInfoOptions {
    /// The code log(s) and the jitdump of one process.
    pub code_logs: CodeLogOptions,
    /// Where perf inject wrote the `jitted-PID-N.so` files (default: the
    /// jitdump's directory, where perf inject puts them).
    pub directory: Option<PathBuf>,
    /// perf's build-id cache, whose copies of the files are rewritten too
    /// (`None`: leave it alone).
    pub buildid_dir: Option<PathBuf>,
    /// Files rewritten at once.
    pub threads: usize,
    /// Check every file and the inputs' warnings first, and write nothing
    /// if any: [`DebugInfoCommandError::Strict`].
    pub strict: bool,
}

/// What [`debuginfo`] did.
pub struct DebugInfoSummary {
    /// The directory of the jitted files.
    pub directory: PathBuf,
    /// Files given DWARF (already holding the same: counted, not written).
    pub rewritten: usize,
    /// Of those, files that already held exactly this DWARF.
    pub unchanged: usize,
    /// Build-id cache entries that were copies, rewritten too.
    pub cache_entries_rewritten: usize,
    /// Build-id cache entries with a rewritten file's build id that are
    /// neither that file nor a copy of it: left alone.
    pub cache_entries_left: Vec<ForeignCacheEntry>,
    /// Entries named as jitted files that are no regular file (a symbolic
    /// link, a FIFO, a directory): skipped, never written through.
    pub skipped: Vec<PathBuf>,
    /// Jitted files of code that is no JavaScript function of the log
    /// (builtins, stubs, regexps; code the log does not have): left as perf
    /// inject wrote them.
    pub left_alone: usize,
    /// Code objects of the jitdump with no jitted file in the directory
    /// (perf inject stops at a record V8 mis-sized: `repair-jitdump` first).
    pub without_file: usize,
    /// Code objects only the code log knew: created after the jitdump's cut
    /// (its process killed), so no record holds their code bytes and perf
    /// inject made no jitted file of them. v8inline reads their samples from
    /// the code log.
    pub only_in_code_log: usize,
    /// The rewritten files' sizes before and after.
    pub bytes_before: u64,
    /// See `bytes_before`.
    pub bytes_after: u64,
    /// Files that could not be given DWARF (damaged, unreadable), and why:
    /// left as they were.
    pub problems: Vec<FileProblem>,
    /// Files (or their cache entries) whose writing failed (a full disk, a
    /// write refused): each left as it was, whole; the run failed.
    pub not_written: Vec<FileProblem>,
    /// The readers' warnings, with the problems of the tables decoded.
    pub diagnostics: Diagnostics,
    /// The code logs and jitdump, kept so that a command line can exit
    /// without dropping millions of code objects one by one.
    pub code_logs: CodeLogs,
}

/// How many of a summary's problems are listed; the rest are counted.
const PROBLEMS_LISTED: usize = 5;

impl DebugInfoSummary {
    /// What to tell the user, one `v8inline:` line each.
    pub fn report(&self) -> String {
        let mut lines = Vec::new();
        list_problems(&mut lines, &self.skipped, |path| {
            format!("warning: {}: no regular file (a symbolic link?): skipped, not written through", path.display())
        });
        list_problems(&mut lines, &self.problems, |problem| format!("warning: {problem}"));
        list_problems(&mut lines, &self.cache_entries_left, |entry| format!("warning: {entry}"));
        list_problems(&mut lines, &self.not_written, |problem| {
            format!("error: {problem}: not rewritten, left as it was")
        });
        let added = self.bytes_after as i64 - self.bytes_before as i64;
        let changed = self.rewritten - self.unchanged;
        let mut line = if changed > 0 {
            let mut line = format!(
                "{}: gave {changed} jitted file(s) DWARF with their inlined frames ({added:+} bytes, {:+} per file)",
                self.directory.display(),
                added / changed as i64
            );
            if self.unchanged > 0 {
                line.push_str(&format!("; {} already had it", self.unchanged));
            }
            line
        } else if self.unchanged > 0 {
            format!("{}: the {} jitted file(s) already had their DWARF", self.directory.display(), self.unchanged)
        } else {
            format!("{}: no jitted file of a JavaScript function given DWARF", self.directory.display())
        };
        if self.cache_entries_rewritten > 0 {
            line.push_str(&format!("; {} copies in perf's build-id cache rewritten", self.cache_entries_rewritten));
        }
        lines.push(line);
        if self.left_alone > 0 {
            lines.push(format!(
                "{} jitted file(s) of code that is no JavaScript function left as perf inject wrote them",
                self.left_alone
            ));
        }
        if self.only_in_code_log > 0 {
            lines.push(format!(
                "{} code object(s) only the code log knew (created after the jitdump's cut: its process was killed): \
                 no jitted file can be made for them without their code bytes; v8inline reads their samples from \
                 the code log",
                self.only_in_code_log
            ));
        }
        if self.without_file > 0 {
            lines.push(format!(
                "{} code object(s) of the jitdump have no jitted file in {} (perf inject stops at a record V8 mis-sized: run v8inline repair-jitdump before perf inject)",
                self.without_file,
                self.directory.display()
            ));
        }
        lines.iter().map(|line| format!("v8inline: {line}\n")).collect()
    }
}

/// Adds the first [`PROBLEMS_LISTED`] of `items` to `lines`, `describe`d,
/// and how many more there are.
fn list_problems<T>(lines: &mut Vec<String>, items: &[T], describe: impl Fn(&T) -> String) {
    lines.extend(items.iter().take(PROBLEMS_LISTED).map(&describe));
    if items.len() > PROBLEMS_LISTED {
        let first = describe(&items[0]);
        let severity = first.split(':').next().unwrap_or("warning");
        lines.push(format!("{severity}: {} more like it", items.len() - PROBLEMS_LISTED));
    }
}

/// A build-id cache entry with a rewritten file's build id that is neither
/// that file nor a copy of it (a file whose note carries another file's
/// build id, a cache pointing outside itself): left alone.
#[derive(Debug, thiserror::Error)]
#[error("{}: perf's build-id cache entry {} has its build id but is another file: left alone", file.display(), entry.display())]
pub struct ForeignCacheEntry {
    /// The jitted file.
    pub file: PathBuf,
    /// The cache entry.
    pub entry: PathBuf,
}

/// perf's build-id cache when its configuration does not move it:
/// `$HOME/.debug`.
pub fn default_buildid_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|home| !home.is_empty()).map(|home| PathBuf::from(home).join(".debug"))
}

/// Why [`debuginfo`] could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DebugInfoCommandError {
    /// No jitdump: the jitted files are named by its code indices.
    #[error("debuginfo needs --jitdump (perf inject names each jitted-PID-N.so by its code index N) and --log")]
    NoJitdump,
    /// The inputs are of several processes.
    #[error("debuginfo takes one process, got {processes}: give one --log/--jitdump pair")]
    NotOneProcess {
        /// How many.
        processes: usize,
        /// The readers' warnings.
        diagnostics: Diagnostics,
    },
    /// An input that cannot be used at all.
    #[error(transparent)]
    Input(#[from] Error),
    /// The directory cannot be listed.
    #[error("{}: {source}", directory.display())]
    Directory {
        /// The directory.
        directory: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `strict`, and an input warning or a file that cannot be rewritten:
    /// nothing was written.
    #[error(transparent)]
    Strict(Box<StrictRefusal>),
    /// perf inject has not run, or wrote its files elsewhere.
    #[error("{}: no jitted-{pid}-*.so: run `perf inject -j -i perf.data -o perf.jit.data` first (it writes them next to the jitdump perf.data names)", directory.display())]
    NoJittedFiles {
        /// The directory.
        directory: PathBuf,
        /// The jitdump's process.
        pid: u32,
    },
}

/// What made `strict` refuse to write anything.
#[derive(Debug, thiserror::Error)]
#[error("--strict: {} input problem(s) and {} jitted file(s) that cannot be rewritten as they are, listed above; no file written", diagnostics.total(), problems.len() + skipped.len() + cache_entries_left.len())]
pub struct StrictRefusal {
    /// The readers' warnings.
    pub diagnostics: Diagnostics,
    /// The files that cannot be rewritten.
    pub problems: Vec<FileProblem>,
    /// The entries that are no regular file.
    pub skipped: Vec<PathBuf>,
    /// The cache entries that would be left alone.
    pub cache_entries_left: Vec<ForeignCacheEntry>,
}

/// A jitted file that could not be given its DWARF: `path: cause`.
#[derive(Debug, thiserror::Error)]
#[error("{}: {cause}", path.display())]
pub struct FileProblem {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub cause: FileProblemCause,
}

/// Why a jitted file was not rewritten.
#[derive(Debug, thiserror::Error)]
pub enum FileProblemCause {
    /// It cannot be read.
    #[error(transparent)]
    Read(std::io::Error),
    /// It is no regular file (it changed since the directory was listed).
    #[error("no regular file")]
    NotRegular,
    /// Its replacement could not be written (a full disk): it is as it was.
    #[error(transparent)]
    Write(std::io::Error),
    /// Its build-id cache entry could not be replaced: the entry is as it
    /// was (the file itself was rewritten).
    #[error("its build-id cache entry {}: {source}", entry.display())]
    CacheEntry {
        /// The entry.
        entry: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Its ELF or the DWARF could not be made.
    #[error(transparent)]
    Elf(#[from] DebugInfoError),
}

/// Gives each jitted file of the process its DWARF.
pub fn debuginfo(options: DebugInfoOptions) -> Result<DebugInfoSummary, DebugInfoCommandError> {
    if options.code_logs.jitdumps.is_empty() {
        return Err(DebugInfoCommandError::NoJitdump);
    }
    let code_logs = CodeLogs::load(options.code_logs.clone())?;
    let [map] = code_logs.maps() else {
        return Err(DebugInfoCommandError::NotOneProcess {
            processes: code_logs.maps().len(),
            diagnostics: code_logs.diagnostics.clone(),
        });
    };
    let directory = options.directory.clone().unwrap_or_else(|| {
        let jitdump = &options.code_logs.jitdumps[0];
        jitdump.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned()
    });
    let pid = map.pid.unwrap_or(0);
    let JittedFiles { files, skipped } = jitted_files(&directory, pid)?;
    if files.is_empty() && skipped.is_empty() {
        return Err(DebugInfoCommandError::NoJittedFiles { directory, pid });
    }
    let mut jobs = Vec::new();
    let mut left_alone = 0;
    let mut without_file = 0;
    let only_in_code_log = map.codes_only_in_code_log().len();
    for code in map.code_ids().filter(|&code| !map.only_in_code_log(code)) {
        let Some(path) = map.code(code).code_index().and_then(|index| files.get(&index)) else {
            without_file += 1;
            continue;
        };
        // JavaScript functions only: other code has no positions to give.
        if map.log_object(code).is_some_and(|object| object.function.is_some()) {
            jobs.push(Job { code, path });
        } else {
            left_alone += 1;
        }
    }
    let cache = options.buildid_dir.as_deref().map(BuildIdCache::new);
    let threads = options.threads.max(1);
    if options.strict {
        // Decided before anything is written: the tables are decoded (and
        // their problems found) as the files' DWARF is made.
        let checked = run_jobs(map, &jobs, cache.as_ref(), threads, Mode::Check);
        let mut diagnostics = code_logs.diagnostics.clone();
        code_logs.add_table_problems(&mut diagnostics);
        crate::v8::unexpanded::add_jitdump_cuts(&code_logs, None, &mut diagnostics);
        let mut problems = Vec::new();
        let mut cache_entries_left = Vec::new();
        for outcome in checked {
            match outcome {
                Ok(checked) => cache_entries_left.extend(checked.cache_entry_left),
                Err(problem) => problems.push(problem),
            }
        }
        if !diagnostics.is_empty() || !problems.is_empty() || !skipped.is_empty() || !cache_entries_left.is_empty() {
            problems.sort_by(|a, b| a.path.cmp(&b.path));
            return Err(DebugInfoCommandError::Strict(Box::new(StrictRefusal {
                diagnostics,
                problems,
                skipped,
                cache_entries_left,
            })));
        }
    }
    let outcomes = run_jobs(map, &jobs, cache.as_ref(), threads, Mode::Write);
    let mut summary = DebugInfoSummary {
        directory,
        rewritten: 0,
        unchanged: 0,
        cache_entries_rewritten: 0,
        cache_entries_left: Vec::new(),
        skipped,
        left_alone,
        without_file,
        only_in_code_log,
        bytes_before: 0,
        bytes_after: 0,
        problems: Vec::new(),
        not_written: Vec::new(),
        diagnostics: Diagnostics::new(),
        code_logs: code_logs.clone(),
    };
    for outcome in outcomes {
        match outcome {
            Ok(rewritten) => {
                summary.rewritten += 1;
                summary.unchanged += usize::from(rewritten.unchanged);
                summary.cache_entries_rewritten += usize::from(rewritten.cache_entry_rewritten);
                summary.cache_entries_left.extend(rewritten.cache_entry_left);
                summary.bytes_before += rewritten.bytes_before;
                summary.bytes_after += rewritten.bytes_after;
            }
            Err(
                problem @ FileProblem {
                    cause: FileProblemCause::Write(_) | FileProblemCause::CacheEntry { .. }, ..
                },
            ) => summary.not_written.push(problem),
            Err(problem) => summary.problems.push(problem),
        }
    }
    summary.problems.sort_by(|a, b| a.path.cmp(&b.path));
    summary.not_written.sort_by(|a, b| a.path.cmp(&b.path));
    summary.diagnostics = code_logs.diagnostics.clone();
    code_logs.add_table_problems(&mut summary.diagnostics);
    crate::v8::unexpanded::add_jitdump_cuts(&code_logs, None, &mut summary.diagnostics);
    Ok(summary)
}

/// One file to rewrite.
struct Job<'files> {
    code: CodeId,
    path: &'files Path,
}

/// Whether a run of the jobs writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Everything but the writing: what would fail or be left.
    Check,
    /// Rewrite the files.
    Write,
}

/// What rewriting one file did (or, checking, would do).
struct Rewritten {
    bytes_before: u64,
    bytes_after: u64,
    /// It already held this DWARF: not written.
    unchanged: bool,
    cache_entry_rewritten: bool,
    cache_entry_left: Option<ForeignCacheEntry>,
}

/// Rewrites the files of `jobs` on `threads` threads, each taking the next
/// file; the outcomes in the order of `jobs`.
fn run_jobs(
    map: &InlineMap,
    jobs: &[Job<'_>],
    cache: Option<&BuildIdCache>,
    threads: usize,
    mode: Mode,
) -> Vec<Result<Rewritten, FileProblem>> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(index) else { break };
            let outcome = rewrite_file(map, job.code, job.path, cache, mode)
                .map_err(|cause| FileProblem { path: job.path.to_owned(), cause });
            done.push((index, outcome));
        }
        done
    };
    let mut outcomes: Vec<(usize, Result<Rewritten, FileProblem>)> = if threads <= 1 || jobs.len() < 2 {
        work()
    } else {
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads.min(jobs.len())).map(|_| scope.spawn(work)).collect();
            workers.into_iter().flat_map(|worker| worker.join().unwrap_or_default()).collect()
        })
    };
    outcomes.sort_by_key(|(index, _)| *index);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

/// A regular file's bytes and identity, read without following a symbolic
/// link or blocking on a FIFO put in its place.
struct ReadFile {
    bytes: Vec<u8>,
    metadata: std::fs::Metadata,
}

fn read_regular_file(path: &Path) -> Result<ReadFile, FileProblemCause> {
    let mut file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).map_err(
            |error| match error.raw_os_error() {
                Some(libc::ELOOP) => FileProblemCause::NotRegular,
                _ => FileProblemCause::Read(error),
            },
        )?;
    let metadata = file.metadata().map_err(FileProblemCause::Read)?;
    if !metadata.is_file() {
        return Err(FileProblemCause::NotRegular);
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.read_to_end(&mut bytes).map_err(FileProblemCause::Read)?;
    Ok(ReadFile { bytes, metadata })
}

/// Gives the file of `code` its DWARF (replacing it whole), and the
/// build-id cache's entry for it.
fn rewrite_file(
    map: &InlineMap,
    code: CodeId,
    path: &Path,
    cache: Option<&BuildIdCache>,
    mode: Mode,
) -> Result<Rewritten, FileProblemCause> {
    let original = read_regular_file(path)?;
    let info = code_debug_info(map, code);
    let rewritten = rewrite_jitted_elf(&original.bytes, &info)?;
    let unchanged = rewritten.bytes == original.bytes;
    // Which entry is this file's is decided before the file is replaced:
    // perf's hard link is the same inode as the file as it was.
    let entry = cache.map(|cache| cache.entry_of(path, &original, &rewritten.bytes, &info)).unwrap_or(CacheEntry::None);
    if mode == Mode::Write && !unchanged {
        replace_file(path, |output| output.write_all(&rewritten.bytes)).map_err(FileProblemCause::Write)?;
    }
    // Only copies are counted: a hard link redone is the usual case.
    let cache_entry_rewritten = matches!(entry, CacheEntry::CopyOfThis(_));
    let mut cache_entry_left = None;
    match entry {
        CacheEntry::None | CacheEntry::UpToDate => {}
        CacheEntry::ThisFile(entry) | CacheEntry::CopyOfThis(entry) => {
            if mode == Mode::Write {
                link_or_copy(path, &entry, &rewritten.bytes)
                    .map_err(|source| FileProblemCause::CacheEntry { entry, source })?;
            }
        }
        CacheEntry::Foreign(entry) => cache_entry_left = Some(ForeignCacheEntry { file: path.to_owned(), entry }),
    }
    Ok(Rewritten {
        bytes_before: original.bytes.len() as u64,
        bytes_after: rewritten.bytes.len() as u64,
        unchanged,
        cache_entry_rewritten,
        cache_entry_left,
    })
}

/// perf's build-id cache (`--buildid-dir`, `~/.debug`).
struct BuildIdCache {
    directory: PathBuf,
    /// Its real path: entries resolving outside it are not its own.
    real_directory: Option<PathBuf>,
}

/// What the cache holds under a rewritten file's build id.
#[derive(Debug)]
enum CacheEntry {
    /// Nothing (or no build id).
    None,
    /// A copy already holding the rewritten bytes, or the file itself
    /// unchanged: nothing to do.
    UpToDate,
    /// The file itself (same device and inode, perf's hard link): to be
    /// linked to its replacement.
    ThisFile(PathBuf),
    /// A copy of the file with other DWARF (the cache on another file
    /// system, or an earlier run stopped between the file and its entry):
    /// debuginfo turns it into the very bytes written, so it is this file.
    CopyOfThis(PathBuf),
    /// Another file with the same build id, or an entry outside the cache.
    Foreign(PathBuf),
}

impl BuildIdCache {
    fn new(directory: &Path) -> BuildIdCache {
        BuildIdCache { directory: directory.to_owned(), real_directory: directory.canonicalize().ok() }
    }

    /// The entry of the file at `path`, read as `original`, to become
    /// `rewritten`.
    fn entry_of(&self, path: &Path, original: &ReadFile, rewritten: &[u8], info: &CodeDebugInfo) -> CacheEntry {
        let Some(build_id) = build_id(&original.bytes) else { return CacheEntry::None };
        let link = self.directory.join(".build-id").join(&build_id[..2]).join(&build_id[2..]);
        let Ok(target) = std::fs::metadata(&link) else { return CacheEntry::None };
        let cached = if target.is_dir() { link.join("elf") } else { link };
        // Written at its real path, inside the cache: never through a link
        // leading out of it.
        let Ok(real) = cached.canonicalize() else { return CacheEntry::None };
        let inside = self.real_directory.as_ref().is_some_and(|directory| real.starts_with(directory));
        // The file itself (a cache that is the directory of the files):
        // replacing the file was all.
        if path.canonicalize().is_ok_and(|file| file == real) {
            return CacheEntry::None;
        }
        let Ok(metadata) = std::fs::symlink_metadata(&real) else { return CacheEntry::None };
        if !inside || !metadata.is_file() {
            return CacheEntry::Foreign(real);
        }
        if metadata.dev() == original.metadata.dev() && metadata.ino() == original.metadata.ino() {
            return if original.bytes == rewritten { CacheEntry::UpToDate } else { CacheEntry::ThisFile(real) };
        }
        let Ok(ReadFile { bytes: cached_bytes, .. }) = read_regular_file(&real) else {
            return CacheEntry::Foreign(real);
        };
        if cached_bytes == rewritten {
            return CacheEntry::UpToDate;
        }
        match rewrite_jitted_elf(&cached_bytes, info) {
            Ok(again) if again.bytes == rewritten => CacheEntry::CopyOfThis(real),
            _ => CacheEntry::Foreign(real),
        }
    }
}

/// Makes the cache entry `entry` the file at `path` again: a hard link to
/// it put in the entry's place (a rename, so the entry is always whole),
/// or, on another file system, a copy replacing it.
fn link_or_copy(path: &Path, entry: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match replace_with_link(path, entry) {
        Err(error) if error.raw_os_error() == Some(libc::EXDEV) => {
            replace_file(entry, |output| output.write_all(bytes))
        }
        other => other,
    }
}

/// The build id of an ELF file, in lower-case hexadecimal.
fn build_id(elf: &[u8]) -> Option<String> {
    use object::Object as _;
    let file = object::File::parse(elf).ok()?;
    let id = file.build_id().ok()??;
    (id.len() >= 2).then(|| data_encoding::HEXLOWER.encode(id))
}

/// The jitted files of a process in a directory.
struct JittedFiles {
    /// The `jitted-PID-N.so` regular files, by N.
    files: FxHashMap<u64, PathBuf>,
    /// Entries so named that are no regular file (symbolic links above
    /// all): never read or written through.
    skipped: Vec<PathBuf>,
}

/// The `jitted-PID-N.so` files of `pid` in `directory`.
fn jitted_files(directory: &Path, pid: u32) -> Result<JittedFiles, DebugInfoCommandError> {
    let entries = std::fs::read_dir(directory)
        .map_err(|source| DebugInfoCommandError::Directory { directory: directory.to_owned(), source })?;
    let prefix = format!("jitted-{pid}-");
    let mut files = FxHashMap::default();
    let mut skipped = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(index) = name
            .to_str()
            .and_then(|name| name.strip_prefix(&prefix))
            .and_then(|rest| rest.strip_suffix(".so"))
            .and_then(|index| index.parse::<u64>().ok())
        else {
            continue;
        };
        // The entry's own type: a symbolic link is not followed.
        if entry.file_type().is_ok_and(|kind| kind.is_file()) {
            files.insert(index, entry.path());
        } else {
            skipped.push(entry.path());
        }
    }
    skipped.sort();
    Ok(JittedFiles { files, skipped })
}

/// The DWARF of one code object, from its inlining tree and the positions
/// [`InlineMap::describe`] gives its frames: what `v8inline lookup` prints.
pub fn code_debug_info(map: &InlineMap, code: CodeId) -> CodeDebugInfo {
    let inlining = code_inlining(map, code, map.code(code).size);
    let mut builder = InfoBuilder {
        map,
        code,
        info: CodeDebugInfo::default(),
        files: FxHashMap::default(),
        functions: FxHashMap::default(),
    };
    let outer = builder.function(FrameFunction::Outer);
    builder.info.outer = Some(outer);
    let calls: Vec<InlinedCallInfo> = inlining
        .calls
        .iter()
        .map(|call| {
            let caller = call
                .parent
                .map_or(FrameFunction::Outer, |parent| FrameFunction::Inlined(inlining.calls[parent.index()].function));
            InlinedCallInfo {
                parent: call.parent.map(|parent| parent.index()),
                function: builder.function(FrameFunction::Inlined(call.function)),
                call_site: builder.location(InlineFrame { function: caller, script_offset: call.call_offset }),
                ranges: call.spans.iter().map(|span| CodeRange { start: span.start, end: span.end }).collect(),
            }
        })
        .collect();
    builder.info.calls = calls;
    builder.info.rows = rows(&mut builder, &inlining);
    builder.info
}

/// The line table: the innermost position of each piece.
fn rows(builder: &mut InfoBuilder<'_>, inlining: &CodeInlining) -> Vec<LineRow> {
    let mut rows: Vec<LineRow> = Vec::with_capacity(inlining.positions.len());
    for piece in &inlining.positions {
        let function = piece
            .innermost
            .map_or(FrameFunction::Outer, |call| FrameFunction::Inlined(inlining.calls[call.index()].function));
        let location = builder.location(InlineFrame { function, script_offset: piece.script_offset });
        if rows.last().is_some_and(|last| last.location == location) {
            continue;
        }
        rows.push(LineRow { offset: piece.span.start, location });
    }
    rows
}

/// Builds a [`CodeDebugInfo`], each file and function once.
struct InfoBuilder<'map> {
    map: &'map InlineMap,
    code: CodeId,
    info: CodeDebugInfo,
    files: FxHashMap<String, FileIndex>,
    functions: FxHashMap<FrameFunction, FunctionIndex>,
}

impl InfoBuilder<'_> {
    /// The function of a frame, named as lookup names it.
    fn function(&mut self, function: FrameFunction) -> FunctionIndex {
        if let Some(&index) = self.functions.get(&function) {
            return index;
        }
        let frame = self.map.describe(self.code, &InlineFrame { function, script_offset: -1 });
        let declared_at = frame.function_start.map(|start| self.source_location(frame.script_name, start));
        let index = FunctionIndex(self.info.functions.len());
        self.info.functions.push(DebugFunction { name: function_label(&frame).to_string(), declared_at });
        self.functions.insert(function, index);
        index
    }

    /// Where a frame is, as lookup prints it (its position or its
    /// function's start); `None` when unknown.
    fn location(&mut self, frame: InlineFrame) -> Option<SourceLocation> {
        let described = self.map.describe(self.code, &frame);
        let position = described.position?;
        Some(self.source_location(described.script_name, position))
    }

    fn source_location(&mut self, script: &str, position: LineColumn) -> SourceLocation {
        let file = match self.files.get(script) {
            Some(&file) => file,
            None => {
                let file = FileIndex(self.info.files.len());
                self.info.files.push(file_name(script).into_owned());
                self.files.insert(script.to_string(), file);
                file
            }
        };
        SourceLocation { file, line: position.line, column: position.column }
    }
}

/// The file name tools should show for a script: a `file://` URL (ES
/// modules) as its path, so that source views find it; other names as V8
/// gives them (`/app/x.js`, `node:internal/...`).
pub fn file_name(script: &str) -> Cow<'_, str> {
    let Some(path) = script.strip_prefix("file://") else { return Cow::Borrowed(script) };
    if !path.contains('%') {
        return Cow::Borrowed(path);
    }
    // Percent-decoded bytes; a `%` without two hex digits stays as it is.
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .filter(|digits| digits.iter().all(u8::is_ascii_hexdigit))
            .and_then(|digits| std::str::from_utf8(digits).ok());
        match (bytes[index], hex.and_then(|digits| u8::from_str_radix(digits, 16).ok())) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                index += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                index += 1;
            }
        }
    }
    Cow::Owned(String::from_utf8_lossy(&decoded).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_urls_become_paths() {
        assert_eq!(file_name("file:///tmp/app/index.mjs"), "/tmp/app/index.mjs");
        assert_eq!(file_name("file:///tmp/my%20app/x.mjs"), "/tmp/my app/x.mjs");
        assert_eq!(file_name("file:///tmp/100%/x.mjs"), "/tmp/100%/x.mjs");
        assert_eq!(file_name("file:///tmp/%+1/x.mjs"), "/tmp/%+1/x.mjs");
        assert_eq!(file_name("node:internal/main"), "node:internal/main");
        assert_eq!(file_name("/app/deep.js"), "/app/deep.js");
    }
}
