//! `v8inline history add` and `v8inline history report`: a branch's
//! benchmark results, commit after commit, in `DIR/history.jsonl`, and
//! their change points (docs/history.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::commands::compare::read_result;
use crate::diagnostics::{Diagnostics, WarningKind};
use crate::history::change_points::{ChangePointOptions, DEFAULT_OPTIONS};
use crate::history::report::{HistoryReport, build_report};
use crate::history::{EntryContext, HISTORY_FILE, HistoryEntry, HistoryError, Runner, add_entry, entry_of};

pub use crate::history::{Added, HistoryError as HistoryCommandError};

/// What `history add` adds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistoryAddOptions {
    /// The history's directory (`history.jsonl` in it).
    pub history: PathBuf,
    /// A `record` directory or a side directory of `bench`.
    pub result: PathBuf,
    /// The commit; `None`: `git rev-parse HEAD` of the working directory.
    pub commit: Option<String>,
    /// The commit's date; `None`: its committer date (git), else now.
    pub date: Option<String>,
}

impl HistoryAddOptions {
    /// Adds `result` to the history in `history`, at HEAD's commit.
    pub fn new(history: PathBuf, result: PathBuf) -> HistoryAddOptions {
        HistoryAddOptions { history, result, commit: None, date: None }
    }
}

/// What `history add` did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistoryAdded {
    /// The entry written.
    pub entry: HistoryEntry,
    /// Whether it was appended or replaced the same commit's.
    pub added: Added,
    /// The history file.
    pub path: PathBuf,
}

/// Runs git in the working directory; its trimmed output when it succeeds.
fn git(arguments: &[&str]) -> Option<String> {
    let output = Command::new("git").args(arguments).stderr(Stdio::null()).output().ok()?;
    let text = String::from_utf8(output.stdout).ok().filter(|_| output.status.success())?;
    let text = text.trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// The days since 1970-01-01 as a civil date (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Now, as RFC 3339 in UTC.
fn now_rfc3339() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() as i64);
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let of_day = seconds.rem_euclid(86_400);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", of_day / 3600, of_day % 3600 / 60, of_day % 60)
}

/// This machine's host name.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// `v8-version,13,6,233,10,-node.24,0` → `13.6.233.10-node.24`.
fn v8_version_of_line(line: &str) -> Option<String> {
    let fields: Vec<&str> = line.trim_end().strip_prefix("v8-version,")?.split(',').collect();
    let numbers = fields.get(..4)?;
    if numbers.iter().any(|number| number.parse::<u32>().is_err()) {
        return None;
    }
    let embedder = fields.get(4).copied().unwrap_or_default();
    Some(format!("{}{embedder}", numbers.join(".")))
}

/// V8's version from a code log kept in a run's directory (`record` keeps
/// them; `bench` removes them unless --keep-recordings).
fn v8_version_in(directory: &Path) -> Option<String> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(directory)
        .ok()?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|extension| extension == "log"))
        .collect();
    logs.sort();
    logs.iter().find_map(|path| {
        use std::io::{BufRead as _, Read as _};
        let file = std::fs::File::open(path).ok()?;
        let mut first = String::new();
        std::io::BufReader::new(file.take(4096)).read_line(&mut first).ok()?;
        v8_version_of_line(&first)
    })
}

/// V8's version of the `node` on PATH, when its version is the one the
/// result ran on (`node 26.12.1`): the Action adds the result it has just
/// recorded, on the same node.
fn v8_version_of_path_node(runtime: &str) -> Option<String> {
    let version = runtime.strip_prefix("node ")?;
    let output = Command::new("node")
        .args(["-p", "process.version + ' ' + process.versions.v8"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok().filter(|_| output.status.success())?;
    let (node, v8) = text.trim().split_once(' ')?;
    (node.trim_start_matches('v') == version).then(|| v8.to_string())
}

/// `history add`: reads the result and adds its entry to the history.
pub fn history_add(options: &HistoryAddOptions) -> Result<HistoryAdded, HistoryError> {
    let runs = read_result(&options.result)?;
    if runs.iter().all(|run| run.benchmarks.is_empty()) {
        return Err(HistoryError::NoBenchmarks { path: options.result.clone() });
    }
    let commit = match &options.commit {
        Some(commit) => commit.clone(),
        None => git(&["rev-parse", "HEAD"]).ok_or(HistoryError::NoCommit)?,
    };
    let date = options
        .date
        .clone()
        .or_else(|| git(&["show", "-s", "--format=%cI", &format!("{commit}^{{commit}}"), "--"]))
        .unwrap_or_else(now_rfc3339);
    let runtime = runs.iter().find_map(|run| run.runtime.clone());
    let v8 = runs
        .iter()
        .find_map(|run| v8_version_in(&run.directory))
        .or_else(|| runtime.as_deref().and_then(v8_version_of_path_node));
    let runner = Runner {
        cpus: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        hostname: hostname(),
    };
    let entry = entry_of(&runs, EntryContext { commit, date, runner, v8 });
    let path = options.history.join(HISTORY_FILE);
    let added = add_entry(&path, entry.clone())?;
    Ok(HistoryAdded { entry, added, path })
}

/// What `history report` reports on.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistoryReportOptions {
    /// The history's directory.
    pub history: PathBuf,
    /// How change points are found.
    pub change_points: ChangePointOptions,
}

impl HistoryReportOptions {
    /// The history in `history`, change points by the defaults.
    pub fn new(history: PathBuf) -> HistoryReportOptions {
        HistoryReportOptions { history, change_points: DEFAULT_OPTIONS }
    }
}

/// A history read and its report.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistoryReported {
    /// The history's entries, oldest first.
    pub history: Vec<HistoryEntry>,
    /// The lines of the history that were not an entry, skipped (one
    /// warning each, naming its line; `--strict` refuses them).
    pub diagnostics: Diagnostics,
    /// The report.
    pub report: HistoryReport,
}

impl HistoryReported {
    /// The report as JSON (pretty, a final newline).
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(&self.report).expect("a report serializes") + "\n"
    }

    /// The report as a self-contained HTML page.
    pub fn html(&self) -> String {
        crate::history::html::page(&self.history, &self.report)
    }
}

/// `history report`: reads the history and finds its change points. A
/// line that is not an entry (a cut last line, a garbled one) is skipped
/// and warned about, the other commits reported; a history with no whole
/// entry is an error naming its first damaged line.
pub fn history_report(options: &HistoryReportOptions) -> Result<HistoryReported, HistoryError> {
    let path = options.history.join(HISTORY_FILE);
    let read = crate::history::read_history_lines(&path)?;
    if read.entries.is_empty() {
        return Err(match read.damaged.into_iter().next() {
            Some(damaged) => HistoryError::Line { path, line: damaged.line, message: damaged.message },
            None => HistoryError::Empty { path },
        });
    }
    let mut diagnostics = Diagnostics::new();
    for damaged in &read.damaged {
        diagnostics.warn(WarningKind::HistoryDamagedLine, || {
            format!("{}:{}: {}", path.display(), damaged.line, damaged.message)
        });
    }
    let report = build_report(&read.entries, &options.change_points);
    Ok(HistoryReported { history: read.entries, diagnostics, report })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_794), (2026, 12, 7));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn v8_versions_are_read_from_code_logs() {
        assert_eq!(v8_version_of_line("v8-version,11,3,244,8,-node.38,0\n").as_deref(), Some("11.3.244.8-node.38"));
        assert_eq!(v8_version_of_line("v8-version,13,0,0,1,,0").as_deref(), Some("13.0.0.1"));
        assert_eq!(v8_version_of_line("code-creation,x"), None);
    }
}
