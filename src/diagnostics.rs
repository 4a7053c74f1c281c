//! Warnings about inputs, gathered from every reader into one summary.
//!
//! The readers never stop at an odd line or record: they skip it and say so
//! ([`crate::formats::v8log::LogWarning`], [`crate::formats::jitdump::JitDumpWarning`],
//! [`crate::formats::perf_script::ReaderWarnings`]). A damaged input can produce thousands
//! of such warnings; [`Diagnostics`] counts them per kind and keeps the first
//! few examples, so the user reads one short summary:
//!
//! ```text
//! v8inline: warning: 1502 lines or records skipped or incomplete; the rest of the input was used:
//! v8inline:   1500 perf script line(s) that are not `address symbol (module)`, e.g.
//! v8inline:     perf.script:12: "garbage"
//! v8inline:   2 jitdump(s) cut short, e.g.
//! v8inline:     jit-42.dump: byte offset 1024: expected a whole record of 88 bytes, ...
//! ```
//!
//! With `--strict` any warning makes the run fail ([`Diagnostics::is_empty`]).

use std::fmt::{self, Write as _};
use std::path::Path;

use indexmap::IndexMap;

use crate::formats::jitdump::{JitDump, JitDumpWarning};
use crate::formats::perf_script::{ReaderWarnings, WarningTally};
use crate::formats::v8log::{CodeLog, LogWarningKind};

/// How many examples a [`Diagnostics`] keeps per kind.
pub const EXAMPLES_PER_KIND: usize = 3;

/// A kind of warning: what the summary line says after the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WarningKind {
    /// Code-log lines of a known record kind whose fields do not parse.
    LogUnparsableLine,
    /// `code-source-info` records with no `code-creation` before them.
    LogSourceInfoWithoutCode,
    /// Code logs whose last line was cut short.
    LogCutShort,
    /// `code-source-info` tables whose ids point nowhere or loop.
    LogBadInliningTable,
    /// Code logs several isolates wrote at once (`--no-logfile-per-isolate`
    /// with worker threads): one warning per log, its damaged lines counted
    /// in the example rather than listed as unparsable lines.
    LogSharedByIsolates,
    /// Jitdumps that end inside a record.
    JitDumpCutShort,
    /// Jitdump records whose size cannot be right (reading stopped there).
    JitDumpBadRecordSize,
    /// Jitdump records whose body does not hold what their id requires.
    JitDumpMalformedRecord,
    /// DEBUG_INFO records that needed resynchronization or ended early.
    JitDumpDebugInfo,
    /// Compressed inputs whose gzip stream stops early.
    CompressedCutShort,
    /// Jitdumps with no code log: their frames are not expanded.
    NoCodeLog,
    /// Jitdumps found for a sampled pid that could not be read.
    UnreadableDiscoveredJitDump,
    /// Perf-script lines where an event line was expected.
    PerfScriptEventLine,
    /// Perf-script lines inside a sample that are not stack lines.
    PerfScriptStackLine,
    /// perf.data files whose data section goes past the end of the file.
    PerfDataCutShort,
    /// perf.data files whose `perf record` did not finish (killed): data
    /// size 0 in the header, records after it, no feature sections.
    PerfDataUnfinished,
    /// perf.data files with a record the reader could not frame (reading
    /// stopped there).
    PerfDataBrokenRecord,
    /// perf.data records whose body does not hold what their type requires.
    PerfDataUnparsableRecord,
    /// Native files whose function symbols could not be read.
    NoSymbols,
    /// Native files that changed since perf recorded them.
    BuildIdMismatch,
    /// perf.data files recorded on another kernel than the running one.
    OtherKernel,
    /// Kernel frames with no kernel symbols to name them.
    NoKernelSymbols,
    /// V8 processes most of whose samples that ran JavaScript did not
    /// expand, with the likely cause ([`crate::v8::unexpanded`]).
    UnexpandedJavaScript,
    /// Source maps a script names (or `--source-map` gives) that are
    /// missing, unreadable or malformed: its frames keep their JavaScript
    /// positions.
    SourceMapUnusable,
    /// Lines of a `history.jsonl` that are not a history entry (cut,
    /// garbled, or of another schema).
    HistoryDamagedLine,
}

impl WarningKind {
    /// Whether the warning is about the machine reading a recording rather
    /// than about the recording: native files missing or changed since perf
    /// recorded them, another kernel, kernel symbols hidden. Read where it
    /// was made, a whole recording has none of them; elsewhere they only
    /// leave native and kernel frames unnamed (docs/testing.md).
    pub fn is_about_the_reading_machine(self) -> bool {
        matches!(
            self,
            WarningKind::NoSymbols
                | WarningKind::BuildIdMismatch
                | WarningKind::OtherKernel
                | WarningKind::NoKernelSymbols
        )
    }

    /// The summary's description, after the count.
    pub fn description(self) -> &'static str {
        match self {
            WarningKind::LogUnparsableLine => "code-log line(s) skipped: fields not as V8 writes them",
            WarningKind::LogSourceInfoWithoutCode => "code-source-info record(s) skipped: no code-creation before them",
            WarningKind::LogCutShort => "code log(s) cut short: last line skipped",
            WarningKind::LogBadInliningTable => {
                "code-source-info table(s) of sampled code that do not parse (not used) or have ids out of range or parent chains that loop (inline stacks cut there)"
            }
            WarningKind::LogSharedByIsolates => {
                "code log(s) written by several isolates at once: damaged lines skipped, every whole record used"
            }
            WarningKind::JitDumpCutShort => "jitdump(s) cut short: the whole records before the cut were used",
            WarningKind::JitDumpBadRecordSize => "jitdump(s) with an impossible record size: reading stopped there",
            WarningKind::JitDumpMalformedRecord => "jitdump record(s) skipped: body not as the record id requires",
            WarningKind::JitDumpDebugInfo => "jitdump DEBUG_INFO record(s) resynchronized or incomplete",
            WarningKind::CompressedCutShort => "compressed file(s) cut short: what was before the cut was used",
            WarningKind::NoCodeLog => "jitdump(s) without a code log: their frames pass through unexpanded",
            WarningKind::UnreadableDiscoveredJitDump => "jitdump(s) of sampled processes unreadable: not used",
            WarningKind::PerfScriptEventLine => "perf-script line(s) skipped: not an event line `comm pid ...:`",
            WarningKind::PerfScriptStackLine => {
                "perf-script line(s) skipped: not a stack line `address symbol (module)`"
            }
            WarningKind::PerfDataCutShort => "perf.data file(s) cut short: the whole records before the cut were used",
            WarningKind::PerfDataUnfinished => {
                "perf.data file(s) of a recording that was not finished (perf record killed): the whole records written were used"
            }
            WarningKind::PerfDataBrokenRecord => "perf.data file(s) with a broken record: reading stopped there",
            WarningKind::PerfDataUnparsableRecord => {
                "perf.data record(s) skipped: body not as the record type requires"
            }
            WarningKind::NoSymbols => {
                "native file(s) with no symbols (missing, unreadable or not ELF): their frames are not symbolized"
            }
            WarningKind::BuildIdMismatch => {
                "native file(s) whose build id differs from the one perf recorded: their frames are not symbolized"
            }
            WarningKind::OtherKernel => {
                "recording(s) of another kernel (build id or release differs): kernel frames are not symbolized"
            }
            WarningKind::SourceMapUnusable => {
                "source map(s) missing, unreadable or malformed: their scripts' frames keep their JavaScript positions"
            }
            WarningKind::HistoryDamagedLine => {
                "history line(s) skipped: not a history entry (the other commits were reported)"
            }
            WarningKind::NoKernelSymbols => {
                "no kernel symbols (/proc/kallsyms unreadable or hidden): kernel frames are not symbolized"
            }
            WarningKind::UnexpandedJavaScript => {
                "V8 process(es) whose JavaScript mostly did not expand into inlined functions, with the likely cause"
            }
        }
    }
}

/// The warnings of one kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// How many.
    pub count: u64,
    /// The first [`EXAMPLES_PER_KIND`], each naming its file and line or
    /// byte offset.
    pub examples: Vec<String>,
}

/// Warnings of a run, counted by kind, in the order kinds first occurred,
/// and the known producer defects that were recovered exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    tallies: IndexMap<WarningKind, Tally>,
    /// One line per input in which a producer's known bug was read around
    /// exactly (V8's mis-sized DEBUG_INFO records): said, but not damage, so
    /// neither counted nor refused by `--strict`.
    recovered_defects: Vec<String>,
    /// What is said beside the warnings (boxed: a [`Diagnostics`] travels
    /// in errors, which should stay small).
    remarks: Box<Remarks>,
}

/// What [`Diagnostics`] says that is not an input problem: neither counted
/// nor refused by `--strict`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Remarks {
    /// What the user should know that is not damage (a jitdump its process
    /// was killed while writing, every sampled frame resolved): said as a
    /// note.
    notes: Vec<String>,
    /// Options that changed nothing (a `--skip-after` that named no frame):
    /// said as warnings.
    option_warnings: Vec<String>,
    /// What would be a warning were it the user's: a package manager's or
    /// the runtime's own process or files ([`crate::v8::tool_code`]). Only
    /// `--stats` tells them.
    not_the_users: Vec<String>,
    /// What would be a warning were it more than a small part of the
    /// profile: a launcher's or a waiting parent's JavaScript, never
    /// optimized ([`crate::v8::unexpanded::MINOR_SHARE`]). Only `--stats`
    /// tells them.
    minor: Vec<String>,
}

/// What a process's code log gave of the code its cut jitdump lost
/// ([`Diagnostics::add_jitdump_cut_by_writers_death`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CutCoverage {
    /// The code objects only the code log knew.
    pub code_objects: usize,
    /// The samples whose innermost JavaScript frame ran one of them (`None`
    /// where no samples were read: `lookup`, `debuginfo`).
    pub samples: Option<u64>,
}

impl Diagnostics {
    /// No warnings yet.
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    /// Counts one warning; `example` is called only while examples of this
    /// kind are still kept.
    pub fn warn(&mut self, kind: WarningKind, example: impl FnOnce() -> String) {
        self.add(kind, 1, std::iter::once_with(example));
    }

    /// Counts `count` warnings of `kind` with examples of some of them.
    pub fn add(&mut self, kind: WarningKind, count: u64, examples: impl IntoIterator<Item = String>) {
        if count == 0 {
            return;
        }
        let tally = self.tallies.entry(kind).or_default();
        tally.count = tally.count.saturating_add(count);
        let room = EXAMPLES_PER_KIND.saturating_sub(tally.examples.len());
        tally.examples.extend(examples.into_iter().take(room));
    }

    /// Adds every warning and recovered defect of `other`.
    pub fn merge(&mut self, other: &Diagnostics) {
        for (&kind, tally) in &other.tallies {
            self.add(kind, tally.count, tally.examples.iter().cloned());
        }
        self.recovered_defects.extend(other.recovered_defects.iter().cloned());
        self.remarks.notes.extend(other.remarks.notes.iter().cloned());
        self.remarks.option_warnings.extend(other.remarks.option_warnings.iter().cloned());
        self.remarks.not_the_users.extend(other.remarks.not_the_users.iter().cloned());
        self.remarks.minor.extend(other.remarks.minor.iter().cloned());
    }

    /// Says `text` as a note: not an input problem.
    pub fn note(&mut self, text: String) {
        self.remarks.notes.push(text);
    }

    /// Says `text` as a warning about an option that changed nothing: not
    /// an input problem.
    pub fn warn_option(&mut self, text: String) {
        self.remarks.option_warnings.push(text);
    }

    /// Keeps `text`, what would be a warning were it the user's, for
    /// `--stats`.
    pub fn not_the_users(&mut self, text: String) {
        self.remarks.not_the_users.push(text);
    }

    /// Says `text` under `--stats` only: a small part of the profile that
    /// would be warned about were it more ([`Remarks::minor`]).
    pub fn minor(&mut self, text: String) {
        self.remarks.minor.push(text);
    }

    /// The notes ([`Diagnostics::note`]).
    pub fn notes(&self) -> &[String] {
        &self.remarks.notes
    }

    /// The lines `--stats` adds for what was told no warning: each
    /// `v8inline: not the user's, so no warning: ...`, then each
    /// `v8inline: a small part of the profile, so no warning: ...`.
    pub fn unwarned_report(&self) -> String {
        let not_the_users =
            self.remarks.not_the_users.iter().map(|text| format!("v8inline: not the user's, so no warning: {text}\n"));
        let minor = self
            .remarks
            .minor
            .iter()
            .map(|text| format!("v8inline: a small part of the profile, so no warning: {text}\n"));
        not_the_users.chain(minor).collect()
    }

    /// The producer defects read around exactly, one line per input.
    pub fn recovered_defects(&self) -> &[String] {
        &self.recovered_defects
    }

    /// The warnings of a code log read from `log.path`: `PATH:LINE: what`.
    ///
    /// A log several isolates wrote at once gets one warning that says so,
    /// with its count of damaged lines and how to record instead; its
    /// unparsable lines and orphaned `code-source-info`s are those collisions
    /// and are not listed again.
    pub fn add_code_log(&mut self, log: &CodeLog) {
        let shared = log.is_shared_by_isolates();
        if shared {
            self.warn(WarningKind::LogSharedByIsolates, || shared_log_example(log));
        }
        let kinds = [
            (LogWarningKind::UnparsableLine, WarningKind::LogUnparsableLine),
            (LogWarningKind::SourceInfoWithoutCode, WarningKind::LogSourceInfoWithoutCode),
            (LogWarningKind::CutShort, WarningKind::LogCutShort),
        ];
        for (log_kind, kind) in kinds {
            if shared && log_kind != LogWarningKind::CutShort {
                continue;
            }
            let count = log.warning_counts.get(&log_kind).copied().unwrap_or(0);
            let examples = log
                .warnings
                .iter()
                .filter(|warning| warning.kind == log_kind)
                .map(|warning| format!("{}:{}: {}", log.path.display(), warning.line, warning.message));
            self.add(kind, count, examples);
        }
    }

    /// The problems of the code-source-info tables of `log` decoded so far
    /// ([`CodeLog::table_problems`]): after the samples were expanded, so
    /// that every table a sample needed was.
    pub fn add_table_problems(&mut self, log: &CodeLog) {
        for (object, problem) in log.table_problems() {
            self.warn(WarningKind::LogBadInliningTable, || {
                format!(
                    "{}:{}: the code-source-info of this code-creation: {problem}",
                    log.path.display(),
                    object.log_line
                )
            });
        }
    }

    /// The warnings of the jitdump read from `path`: `PATH: byte offset N: what`.
    pub fn add_jitdump(&mut self, path: &Path, jitdump: &JitDump) {
        let _ = self.add_jitdump_but_writers_death(path, jitdump, false);
    }

    /// [`Diagnostics::add_jitdump`] of a process's jitdump whose samples are
    /// still to be expanded: the cut a killed writer leaves
    /// ([`JitDumpWarning::is_cut_by_writers_death`]) is returned, not
    /// warned, to be a note if every sampled frame resolves
    /// ([`Diagnostics::add_jitdump_cut_by_writers_death`]).
    pub fn add_jitdump_of_process(&mut self, path: &Path, jitdump: &JitDump) -> Option<String> {
        self.add_jitdump_but_writers_death(path, jitdump, true)
    }

    /// A jitdump cut where its killed writer last flushed (`cut`, as
    /// [`Diagnostics::add_jitdump_of_process`] returned it): a note when
    /// none of its process's samples ran code at an address neither it nor
    /// the process's code log covers (`covered`: what the log gave of what
    /// the cut lost), else a warning.
    pub fn add_jitdump_cut_by_writers_death(&mut self, cut: String, unresolved_samples: u64, covered: CutCoverage) {
        let from_log = match covered.code_objects {
            0 => String::new(),
            objects => {
                let ran = covered.samples.map(|samples| format!(" ({samples} sample(s) ran them)")).unwrap_or_default();
                format!("; its code log gave the {objects} code object(s) created after the cut{ran}")
            }
        };
        if unresolved_samples == 0 {
            self.note(format!(
                "{cut}: where its process last flushed it before it was killed (test runners stop their workers \
                 so){from_log}; every sampled frame of the process resolved"
            ));
        } else {
            self.warn(WarningKind::JitDumpCutShort, || {
                format!(
                    "{cut}{from_log}: {unresolved_samples} sample(s) of its process ran code neither it nor its code \
                     log covers"
                )
            });
        }
    }

    fn add_jitdump_but_writers_death(
        &mut self,
        path: &Path,
        jitdump: &JitDump,
        defer_writers_death: bool,
    ) -> Option<String> {
        let mut cut_by_writers_death = None;
        for warning in &jitdump.warnings {
            if defer_writers_death && warning.is_cut_by_writers_death() {
                cut_by_writers_death = Some(format!("{}: {warning}", path.display()));
                continue;
            }
            let kind = match warning {
                JitDumpWarning::Truncated { .. } => WarningKind::JitDumpCutShort,
                JitDumpWarning::RecordSizeTooSmall { .. } => WarningKind::JitDumpBadRecordSize,
                JitDumpWarning::MalformedRecord { .. } => WarningKind::JitDumpMalformedRecord,
                JitDumpWarning::DebugInfoResynced { .. } | JitDumpWarning::DebugInfoIncomplete { .. } => {
                    WarningKind::JitDumpDebugInfo
                }
            };
            self.warn(kind, || format!("{}: {warning}", path.display()));
        }
        let mis_sized = jitdump.mis_sized_debug_infos.len();
        if mis_sized > 0 {
            self.recovered_defects.push(format!(
                "{}: {mis_sized} debug-info record(s) mis-sized by V8 (cross-script inlining), read by their entries",
                path.display()
            ));
        }
        cut_by_writers_death
    }

    /// A `.gz` input whose stream stops early, after `what_was_read` (e.g.
    /// `1024 decompressed bytes`).
    pub fn add_compressed_cut(&mut self, path: &Path, what_was_read: &str) {
        self.warn(WarningKind::CompressedCutShort, || {
            format!("{}: expected a gzip stream to its end, it stops after {what_was_read} (cut short)", path.display())
        });
    }

    /// The lines the perf-script reader skipped in `path`.
    pub fn add_perf_script(&mut self, path: &Path, warnings: &ReaderWarnings) {
        let kinds = [
            (WarningKind::PerfScriptEventLine, &warnings.weird_event_lines),
            (WarningKind::PerfScriptStackLine, &warnings.weird_stack_lines),
        ];
        for (kind, tally) in kinds {
            self.add(kind, tally.count, perf_script_example(path, tally));
        }
    }

    /// The number of warnings.
    pub fn total(&self) -> u64 {
        self.tallies.values().map(|tally| tally.count).fold(0, u64::saturating_add)
    }

    /// Whether there is no warning.
    pub fn is_empty(&self) -> bool {
        self.tallies.is_empty()
    }

    /// The count and examples of one kind.
    pub fn tally(&self, kind: WarningKind) -> Option<&Tally> {
        self.tallies.get(&kind)
    }

    /// The kinds seen, in the order they first occurred.
    pub fn kinds(&self) -> impl Iterator<Item = (WarningKind, &Tally)> {
        self.tallies.iter().map(|(&kind, tally)| (kind, tally))
    }
}

/// With `--strict`, the error message that ends a run with warnings (printed
/// after the summary); `None` when the run may go on.
pub fn strict_failure(diagnostics: &Diagnostics, strict: bool) -> Option<String> {
    (strict && !diagnostics.is_empty())
        .then(|| format!("--strict: {} input problem(s), listed above; no output written", diagnostics.total()))
}

/// What a shared code log shows: `PATH: written by several isolates at once
/// (3 v8-version records, 9 clock restarts, 12 spliced lines): 130 damaged
/// lines skipped; record with one log per isolate ...`.
fn shared_log_example(log: &CodeLog) -> String {
    let mut evidence = Vec::new();
    if log.isolate_count > 1 {
        evidence.push(format!("{} v8-version records", log.isolate_count));
    }
    if log.clock_restarts > 0 {
        evidence.push(format!("{} clock restart(s)", log.clock_restarts));
    }
    if log.spliced_lines > 0 {
        evidence.push(format!("{} spliced line(s)", log.spliced_lines));
    }
    format!(
        "{}: written by several isolates at once ({}): {} damaged line(s) skipped; record with one log per \
         isolate (V8's default: drop --no-logfile-per-isolate; V8 then writes isolate-0x<address>-<pid>-<logfile> \
         per isolate, v8inline record does so) and give them all, or none to find them beside the jitdump",
        log.path.display(),
        evidence.join(", "),
        log.damaged_lines
    )
}

/// The first skipped line of a perf-script tally, as `PATH:LINE: "text"`.
fn perf_script_example(path: &Path, tally: &WarningTally) -> Option<String> {
    let example = tally.first_example.as_ref()?;
    Some(format!("{}:{}: {:?}", path.display(), example.line_number, example.line))
}

/// The summary for standard error: the recovered producer defects and the
/// notes as notes, the options that changed nothing as warnings, then a
/// headline and per kind its count, description and examples; every
/// line starts with `v8inline: `. Empty when there is neither.
impl fmt::Display for Diagnostics {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        for note in self.recovered_defects.iter().chain(&self.remarks.notes) {
            let _ = writeln!(text, "v8inline: note: {note}");
        }
        for warning in &self.remarks.option_warnings {
            let _ = writeln!(text, "v8inline: warning: {warning}");
        }
        if self.is_empty() {
            return formatter.write_str(&text);
        }
        let _ = writeln!(text, "v8inline: warning: {} input problem(s); the rest of the input was used:", self.total());
        for (kind, tally) in &self.tallies {
            let _ = writeln!(text, "v8inline:   {} {}", tally.count, kind.description());
            for example in &tally.examples {
                let _ = writeln!(text, "v8inline:     {example}");
            }
        }
        formatter.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_warning_and_keeps_the_first_examples() {
        let mut diagnostics = Diagnostics::new();
        assert!(diagnostics.is_empty());
        assert_eq!(diagnostics.to_string(), "");
        for line in 1..=5 {
            diagnostics.warn(WarningKind::PerfScriptStackLine, || format!("p:{line}: \"x\""));
        }
        diagnostics.add(WarningKind::JitDumpCutShort, 2, vec!["d: byte offset 40: cut".to_string()]);
        diagnostics.add(WarningKind::NoCodeLog, 0, Vec::new());
        assert_eq!(diagnostics.total(), 7);
        assert_eq!(
            diagnostics.tally(WarningKind::PerfScriptStackLine).unwrap().examples,
            vec!["p:1: \"x\"", "p:2: \"x\"", "p:3: \"x\""]
        );
        assert_eq!(diagnostics.tally(WarningKind::NoCodeLog), None);
        assert_eq!(
            diagnostics.to_string(),
            "v8inline: warning: 7 input problem(s); the rest of the input was used:\n\
             v8inline:   5 perf-script line(s) skipped: not a stack line `address symbol (module)`\n\
             v8inline:     p:1: \"x\"\n\
             v8inline:     p:2: \"x\"\n\
             v8inline:     p:3: \"x\"\n\
             v8inline:   2 jitdump(s) cut short: the whole records before the cut were used\n\
             v8inline:     d: byte offset 40: cut\n"
        );
        let mut merged = Diagnostics::new();
        merged.merge(&diagnostics);
        merged.merge(&diagnostics);
        assert_eq!(merged.total(), 14);
        assert_eq!(merged.tally(WarningKind::JitDumpCutShort).unwrap().examples.len(), 2);
    }

    /// A jitdump cut where its killed writer last flushed: a note when its
    /// process's samples all resolved, else a warning; a cut elsewhere is a
    /// warning at once. Notes and option warnings are not input problems.
    #[test]
    fn a_killed_writers_cut_is_a_note_only_when_nothing_sampled_was_lost() {
        // A jitdump header (`JiTD`, version 1, 40 bytes, x86-64, pid 7).
        let mut header = Vec::new();
        for field in [0x4A69_5444u32, 1, 40, 62, 0, 7] {
            header.extend_from_slice(&field.to_le_bytes());
        }
        header.extend_from_slice(&[0; 16]);
        let cut_at = |offset: u64, available: u64| {
            let mut jitdump = crate::formats::jitdump::read(&header, &Default::default()).unwrap();
            jitdump.warnings = vec![JitDumpWarning::Truncated { offset, needed: 996, available }];
            jitdump
        };
        let mut diagnostics = Diagnostics::new();
        let deferred = diagnostics.add_jitdump_of_process(Path::new("jit-7.dump"), &cut_at(4000, 96));
        assert!(diagnostics.is_empty());
        let deferred = deferred.unwrap();
        assert_eq!(
            deferred,
            "jit-7.dump: byte offset 4000: expected a whole record of 996 bytes, the file ends 96 bytes later (cut \
             short); reading stopped"
        );
        diagnostics.add_jitdump_cut_by_writers_death(deferred.clone(), 0, CutCoverage::default());
        diagnostics.warn_option("--skip-after \"f\" names no frame".to_string());
        assert!(diagnostics.is_empty());
        assert_eq!(strict_failure(&diagnostics, true), None);
        assert_eq!(
            diagnostics.to_string(),
            format!(
                "v8inline: note: {deferred}: where its process last flushed it before it was killed (test runners \
                 stop their workers so); every sampled frame of the process resolved\n\
                 v8inline: warning: --skip-after \"f\" names no frame\n"
            )
        );
        diagnostics.add_jitdump_cut_by_writers_death(
            deferred.clone(),
            3,
            CutCoverage { code_objects: 5, samples: Some(40) },
        );
        assert_eq!(
            diagnostics.tally(WarningKind::JitDumpCutShort).unwrap().examples,
            [format!(
                "{deferred}; its code log gave the 5 code object(s) created after the cut (40 sample(s) ran them): 3 \
                 sample(s) of its process ran code neither it nor its code log covers"
            )]
        );
        // Cut elsewhere than a flush: a warning at once.
        let mut diagnostics = Diagnostics::new();
        assert_eq!(diagnostics.add_jitdump_of_process(Path::new("jit-8.dump"), &cut_at(4000, 95)), None);
        assert_eq!(diagnostics.tally(WarningKind::JitDumpCutShort).unwrap().count, 1);
        // Read for itself (repair-jitdump), a killed writer's cut is a warning.
        let mut diagnostics = Diagnostics::new();
        diagnostics.add_jitdump(Path::new("jit-9.dump"), &cut_at(4000, 96));
        assert_eq!(diagnostics.tally(WarningKind::JitDumpCutShort).unwrap().count, 1);
    }

    #[test]
    fn code_log_warnings_by_kind() {
        let mut log = CodeLog::parse(
            b"code-creation,JS,x,1,0x10,4,f,0x20,*\ncode-source-info,0x99,1,0,1,,,\nv8-version,1,2,3,4,,0\n\
              code-creation,JS,1,1,0x",
        );
        log.path = "v8.log".into();
        let mut diagnostics = Diagnostics::new();
        diagnostics.add_code_log(&log);
        let kinds: Vec<(WarningKind, u64, Vec<String>)> =
            diagnostics.kinds().map(|(kind, tally)| (kind, tally.count, tally.examples.clone())).collect();
        assert_eq!(
            kinds,
            vec![
                (
                    WarningKind::LogUnparsableLine,
                    1,
                    vec!["v8.log:1: code-creation: field 3: expected a code kind".to_string()]
                ),
                (
                    WarningKind::LogSourceInfoWithoutCode,
                    1,
                    vec!["v8.log:2: code-source-info for 0x99 with no code-creation before it".to_string()]
                ),
                (
                    WarningKind::LogCutShort,
                    1,
                    vec![
                        "v8.log:4: expected a line ending in a newline, the file ends 23 bytes into it (cut short); line skipped"
                            .to_string()
                    ]
                ),
            ]
        );
    }

    /// A log several isolates wrote at once: one warning with the damaged
    /// lines counted, none for each of them.
    #[test]
    fn a_shared_log_is_one_warning() {
        let mut log = CodeLog::parse(
            b"v8-version,11,3,244,8,-node.38,0\n\
              code-creation,Builtin,2,500,0x10,4,A\n\
              code-creation,Builtin,code-creation,Builtin,2,40,0x20,4,B\n\
              code-creation,Builtin,2,60,0x30,4,C\n\
              code-source-info,0x99,1,0,1,,,\n\
              {\\n  return x;\\n}\n\
              v8-version,11,3,244,8,-node.38,0\n",
        );
        log.path = "shared.log".into();
        assert_eq!((log.isolate_count, log.clock_restarts, log.spliced_lines, log.damaged_lines), (2, 1, 1, 3));
        let mut diagnostics = Diagnostics::new();
        diagnostics.add_code_log(&log);
        let kinds: Vec<(WarningKind, u64, Vec<String>)> =
            diagnostics.kinds().map(|(kind, tally)| (kind, tally.count, tally.examples.clone())).collect();
        assert_eq!(
            kinds,
            vec![(
                WarningKind::LogSharedByIsolates,
                1,
                vec![
                    "shared.log: written by several isolates at once (2 v8-version records, 1 clock restart(s), \
                     1 spliced line(s)): 3 damaged line(s) skipped; record with one log per isolate (V8's default: \
                     drop --no-logfile-per-isolate; V8 then writes isolate-0x<address>-<pid>-<logfile> per \
                     isolate, v8inline record does so) and give them all, or none to find them beside the jitdump"
                        .to_string()
                ]
            )]
        );
        // Every whole record is used.
        let addresses: Vec<u64> = log.code_objects.iter().map(|object| object.address).collect();
        assert_eq!(addresses, [0x10, 0x30]);
    }
}
