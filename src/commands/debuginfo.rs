//! `v8inline debuginfo --log LOG --jitdump JITDUMP [DIR]`: after
//! `perf inject -j`, gives each `jitted-PID-N.so` it wrote (N the jitdump's
//! code index) the DWARF of its code object's inlining
//! ([`crate::output::debuginfo`]): the stacks `v8inline lookup` prints, in
//! the form perf, addr2line, llvm-symbolizer, samply and hotspot read.
//!
//! Each file is rewritten in place, keeping its inode: perf's build-id cache
//! (`~/.debug`) holds a hard link to it when it is on the same file system,
//! and perf reads the cache before the file. A cache entry that is a copy is
//! rewritten too. The build id and `.text` stay as perf inject wrote them.

use std::borrow::Cow;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rustc_hash::FxHashMap;

use crate::commands::lookup::function_label;
use crate::diagnostics::Diagnostics;
use crate::error::Error;
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
    /// Jitted files of code that is no JavaScript function of the log
    /// (builtins, stubs, regexps; code the log does not have): left as perf
    /// inject wrote them.
    pub left_alone: usize,
    /// Code objects of the jitdump with no jitted file in the directory
    /// (perf inject stops at a record V8 mis-sized: `repair-jitdump` first).
    pub without_file: usize,
    /// The rewritten files' sizes before and after.
    pub bytes_before: u64,
    /// See `bytes_before`.
    pub bytes_after: u64,
    /// Files that could not be rewritten, and why.
    pub problems: Vec<FileProblem>,
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
        for problem in self.problems.iter().take(PROBLEMS_LISTED) {
            lines.push(format!("warning: {problem}"));
        }
        if self.problems.len() > PROBLEMS_LISTED {
            lines.push(format!(
                "warning: {} more jitted file(s) could not be rewritten",
                self.problems.len() - PROBLEMS_LISTED
            ));
        }
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

/// perf's build-id cache when its configuration does not move it:
/// `$HOME/.debug`.
pub fn default_buildid_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|home| !home.is_empty()).map(|home| PathBuf::from(home).join(".debug"))
}

/// Why [`debuginfo`] could not run.
#[derive(Debug, thiserror::Error)]
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
    /// perf inject has not run, or wrote its files elsewhere.
    #[error("{}: no jitted-{pid}-*.so: run `perf inject -j -i perf.data -o perf.jit.data` first (it writes them next to the jitdump perf.data names)", directory.display())]
    NoJittedFiles {
        /// The directory.
        directory: PathBuf,
        /// The jitdump's process.
        pid: u32,
    },
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
    /// It cannot be read or written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
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
    let files = jitted_files(&directory, pid)?;
    if files.is_empty() {
        return Err(DebugInfoCommandError::NoJittedFiles { directory, pid });
    }
    let mut jobs = Vec::new();
    let mut left_alone = 0;
    let mut without_file = 0;
    for code in map.code_ids() {
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
    let outcomes = run_jobs(map, &jobs, options.buildid_dir.as_deref(), options.threads.max(1));
    let mut summary = DebugInfoSummary {
        directory,
        rewritten: 0,
        unchanged: 0,
        cache_entries_rewritten: 0,
        left_alone,
        without_file,
        bytes_before: 0,
        bytes_after: 0,
        problems: Vec::new(),
        diagnostics: Diagnostics::new(),
        code_logs: code_logs.clone(),
    };
    for outcome in outcomes {
        match outcome {
            Ok(rewritten) => {
                summary.rewritten += 1;
                summary.unchanged += usize::from(rewritten.unchanged);
                summary.cache_entries_rewritten += usize::from(rewritten.cache_entry_rewritten);
                summary.bytes_before += rewritten.bytes_before;
                summary.bytes_after += rewritten.bytes_after;
            }
            Err(problem) => summary.problems.push(problem),
        }
    }
    summary.problems.sort_by(|a, b| a.path.cmp(&b.path));
    summary.diagnostics = code_logs.diagnostics.clone();
    code_logs.add_table_problems(&mut summary.diagnostics);
    Ok(summary)
}

/// One file to rewrite.
struct Job<'files> {
    code: CodeId,
    path: &'files Path,
}

/// What rewriting one file did.
struct Rewritten {
    bytes_before: u64,
    bytes_after: u64,
    /// It already held this DWARF: not written.
    unchanged: bool,
    cache_entry_rewritten: bool,
}

/// Rewrites the files of `jobs` on `threads` threads, each taking the next
/// file; the outcomes in the order of `jobs`.
fn run_jobs(
    map: &InlineMap,
    jobs: &[Job<'_>],
    buildid_dir: Option<&Path>,
    threads: usize,
) -> Vec<Result<Rewritten, FileProblem>> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(index) else { break };
            let outcome = rewrite_file(map, job.code, job.path, buildid_dir)
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

/// Gives the file of `code` its DWARF, in place, and the build-id cache's
/// copy of it.
fn rewrite_file(
    map: &InlineMap,
    code: CodeId,
    path: &Path,
    buildid_dir: Option<&Path>,
) -> Result<Rewritten, FileProblemCause> {
    let original = std::fs::read(path)?;
    let info = code_debug_info(map, code);
    let rewritten = rewrite_jitted_elf(&original, &info)?;
    let unchanged = rewritten.bytes == original;
    if !unchanged {
        write_in_place(path, &rewritten.bytes)?;
    }
    let cache_entry_rewritten = match buildid_dir {
        Some(buildid_dir) => rewrite_cache_entry(buildid_dir, path, &rewritten.bytes)?,
        None => false,
    };
    Ok(Rewritten {
        bytes_before: original.len() as u64,
        bytes_after: rewritten.bytes.len() as u64,
        unchanged,
        cache_entry_rewritten,
    })
}

/// Replaces the contents of `path`, keeping its inode and so every hard
/// link to it. The bytes are written over the old ones and the file cut
/// after them only if it was longer: a truncation to zero first makes the
/// file system free and allocate its blocks again (ext4: 1 ms a file).
fn write_in_place(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(bytes)?;
    if file.metadata()?.len() > bytes.len() as u64 {
        file.set_len(bytes.len() as u64)?;
    }
    Ok(())
}

/// Rewrites perf's cached copy of a jitted file (`BUILDID_DIR/.build-id/xx/
/// yyyy...`, a link to `.../<build id>/elf` or, in older perf, to the file)
/// when it is not the file itself; whether it did.
fn rewrite_cache_entry(buildid_dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    let Some(build_id) = build_id(bytes) else { return Ok(false) };
    let link = buildid_dir.join(".build-id").join(&build_id[..2]).join(&build_id[2..]);
    let Ok(target) = std::fs::metadata(&link) else { return Ok(false) };
    let cached = if target.is_dir() { link.join("elf") } else { link };
    let (Ok(cached_metadata), Ok(file_metadata)) = (std::fs::metadata(&cached), std::fs::metadata(path)) else {
        return Ok(false);
    };
    let same_file = cached_metadata.dev() == file_metadata.dev() && cached_metadata.ino() == file_metadata.ino();
    if same_file || std::fs::read(&cached).is_ok_and(|cached| cached == bytes) {
        return Ok(false);
    }
    write_in_place(&cached, bytes).map_err(|error| {
        std::io::Error::new(error.kind(), format!("its build-id cache entry {}: {error}", cached.display()))
    })?;
    Ok(true)
}

/// The build id of an ELF file, in lower-case hexadecimal.
fn build_id(elf: &[u8]) -> Option<String> {
    use object::Object as _;
    let file = object::File::parse(elf).ok()?;
    let id = file.build_id().ok()??;
    (id.len() >= 2).then(|| data_encoding::HEXLOWER.encode(id))
}

/// The `jitted-PID-N.so` files of `pid` in `directory`, by N.
fn jitted_files(directory: &Path, pid: u32) -> Result<FxHashMap<u64, PathBuf>, DebugInfoCommandError> {
    let entries = std::fs::read_dir(directory)
        .map_err(|source| DebugInfoCommandError::Directory { directory: directory.to_owned(), source })?;
    let prefix = format!("jitted-{pid}-");
    let mut files = FxHashMap::default();
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
        files.insert(index, entry.path());
    }
    Ok(files)
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
