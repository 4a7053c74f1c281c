//! A history of one branch's benchmark results, commit after commit
//! (`v8inline history`, docs/history.md): one line of JSON per commit in
//! `DIR/history.jsonl` ([`HistoryEntry`]), change points found over it by
//! E-divisive means ([`change_points`]) and reported with the functions
//! that moved there ([`report`]).

pub mod change_points;
pub mod html;
pub mod report;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::commands::compare::{ResultBenchmark, ResultRun};
use crate::model::frames::Function;
use crate::output::compare::noise::student_t_critical;

/// The schema a history line names.
pub const HISTORY_SCHEMA: &str = "v8inline-history/1";

/// The history's file inside its directory.
pub const HISTORY_FILE: &str = "history.jsonl";

/// Functions kept per benchmark and commit: the most self time first.
pub const TOP_FUNCTIONS: usize = 10;

/// How each tier or inlining of a function is kept: at most this many, the
/// largest share of its self time first.
pub const TOP_RAN_AS: usize = 3;

/// One commit's result: a line of `history.jsonl`. Fields are in
/// alphabetical order, so the line's keys are sorted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// Each benchmark, in the result's order.
    pub benchmarks: Vec<BenchmarkEntry>,
    /// The commit (full SHA as git names it, or what `--commit` said).
    pub commit: String,
    /// The commit's date (committer date, RFC 3339), or when it was added.
    pub date: String,
    /// The machine that ran it.
    pub runner: Runner,
    /// The runs the result held.
    pub runs: usize,
    /// The runtime recording.json names (`node 26.12.1`).
    pub runtime: Option<String>,
    /// [`HISTORY_SCHEMA`].
    pub schema: String,
    /// V8's version (`13.6.233.10-node.24`), when known.
    pub v8: Option<String>,
}

/// The machine a result ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Runner {
    /// CPUs the process could use.
    pub cpus: usize,
    /// Its host name.
    pub hostname: String,
}

/// A benchmark of one commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkEntry {
    /// Its time per iteration, by statistic, over the commit's runs.
    pub figures: Figures,
    /// The functions with the most self time ([`TOP_FUNCTIONS`]).
    pub functions: Vec<FunctionEntry>,
    /// Its name, as the harness names it.
    pub name: String,
}

/// A benchmark's time per iteration by statistic: each present when every
/// run has it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The profile's CPU time per iteration (its samples' cpu-clock weight
    /// in the benchmark's windows over the iterations), ns.
    pub cpu: Option<Figure>,
    /// The iterations the harness timed, per run.
    pub iterations: Vec<f64>,
    /// The harness's mean, ns.
    pub mean: Option<Figure>,
    /// The harness's median, ns.
    pub median: Option<Figure>,
    /// The harness's fastest iteration, ns.
    pub min: Option<Figure>,
    /// The benchmark's samples per iteration (benchmarks.json): CPU time
    /// per iteration at the recording's sampling frequency, when the
    /// profiles were not kept.
    pub samples_per_iteration: Option<Figure>,
}

/// One statistic over a commit's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The 95 % Student t interval of the geometric mean, high end.
    pub high: f64,
    /// Its low end (both equal to `value` with one run).
    pub low: f64,
    /// Each run's value.
    pub runs: Vec<f64>,
    /// The standard deviation of the runs' natural logarithms (about the
    /// coefficient of variation; 0 with one run).
    pub spread: f64,
    /// The geometric mean of the runs.
    pub value: f64,
}

/// A function of a benchmark at one commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionEntry {
    /// Its column, when V8 names one.
    pub column: Option<u32>,
    /// Its script, relative to the project root when under it.
    pub file: Option<String>,
    /// Its first line.
    pub line: Option<u32>,
    /// Its name.
    pub name: String,
    /// How V8 ran its self time, the largest share first ([`TOP_RAN_AS`]).
    pub ran_as: Vec<RanAsEntry>,
    /// Its self (own) time per iteration, the median over runs, ns.
    pub self_per_iteration: Option<f64>,
    /// Its self share of the benchmark's profile, the median over runs.
    pub self_share: f64,
}

impl FunctionEntry {
    /// `name file:line`.
    pub fn label(&self) -> String {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => format!("{} {file}:{line}", self.name),
            (Some(file), None) => format!("{} {file}", self.name),
            _ => self.name.clone(),
        }
    }

    /// What names it across commits: its name and script, for a function
    /// without a name also its line and column (a named function's line
    /// moves when code above it changes: the same function at another
    /// commit).
    pub fn key(&self) -> FunctionKey {
        let anonymous = self.name.is_empty() || self.name.starts_with("(anonymous") || self.name == "<anonymous>";
        let (line, column) = if anonymous { (self.line, self.column) } else { (None, None) };
        FunctionKey { name: self.name.clone(), file: self.file.clone(), line, column }
    }

    /// The way V8 ran most of its self time.
    pub fn main_ran_as(&self) -> Option<&RanAsEntry> {
        self.ran_as.first()
    }
}

/// A function's identity across commits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FunctionKey {
    /// Its name.
    pub name: String,
    /// Its script.
    pub file: Option<String>,
    /// Its first line.
    pub line: Option<u32>,
    /// Its column.
    pub column: Option<u32>,
}

/// A share of a function's self time by how V8 ran it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RanAsEntry {
    /// The caller it was inlined into, if it was.
    pub inlined_into: Option<String>,
    /// Its share of the function's self time (pooled over runs).
    pub share: f64,
    /// The tier of the code that ran (for inlined code, its host's):
    /// `TurboFan`, `Maglev`, `Sparkplug`, `interpreted`, ...
    pub tier: String,
}

impl RanAsEntry {
    /// `inlined into walk (TurboFan)`, `TurboFan`.
    pub fn describe(&self) -> String {
        match &self.inlined_into {
            Some(caller) => format!("inlined into {caller} ({})", self.tier),
            None => self.tier.clone(),
        }
    }
}

/// Where a result was recorded and what describes its commit, beside its
/// runs.
#[derive(Debug, Clone)]
pub struct EntryContext {
    /// The commit.
    pub commit: String,
    /// Its date.
    pub date: String,
    /// The machine.
    pub runner: Runner,
    /// V8's version, when known.
    pub v8: Option<String>,
}

/// Rounds to 5 significant digits: the runs' spread is percents, and
/// shorter numbers keep the history small.
fn round(value: f64) -> f64 {
    if value == 0.0 || !value.is_finite() {
        return value;
    }
    let digits = 4 - value.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

impl Figure {
    /// The figure of each run's value (all positive and finite), or `None`.
    pub fn of(values: &[f64]) -> Option<Figure> {
        if values.is_empty() || values.iter().any(|value| !value.is_finite() || *value <= 0.0) {
            return None;
        }
        let logs: Vec<f64> = values.iter().map(|value| value.ln()).collect();
        let count = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / count;
        let spread = if logs.len() < 2 {
            0.0
        } else {
            (logs.iter().map(|log| (log - mean).powi(2)).sum::<f64>() / (count - 1.0)).sqrt()
        };
        let half_width =
            if logs.len() < 2 { 0.0 } else { student_t_critical(0.05, count - 1.0) * spread / count.sqrt() };
        Some(Figure {
            high: round((mean + half_width).exp()),
            low: round((mean - half_width).exp()),
            runs: values.iter().copied().map(round).collect(),
            spread: round(spread),
            value: round(mean.exp()),
        })
    }
}

/// The median of `values` (0 for none).
fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 { values[middle] } else { (values[middle - 1] + values[middle]) / 2.0 }
}

/// A commit's entry from a result's runs.
pub(crate) fn entry_of(runs: &[ResultRun], context: EntryContext) -> HistoryEntry {
    let mut names: Vec<&str> = Vec::new();
    for run in runs {
        for benchmark in &run.benchmarks {
            if !names.contains(&benchmark.name.as_str()) {
                names.push(&benchmark.name);
            }
        }
    }
    let benchmarks = names
        .iter()
        .map(|name| {
            let of_runs: Vec<&ResultBenchmark> =
                runs.iter().filter_map(|run| run.benchmarks.iter().find(|benchmark| benchmark.name == *name)).collect();
            benchmark_entry(name, &of_runs)
        })
        .collect();
    HistoryEntry {
        benchmarks,
        commit: context.commit,
        date: context.date,
        runner: context.runner,
        runs: runs.len(),
        runtime: runs.iter().find_map(|run| run.runtime.clone()),
        schema: HISTORY_SCHEMA.to_string(),
        v8: context.v8,
    }
}

/// A benchmark's entry from its runs.
fn benchmark_entry(name: &str, runs: &[&ResultBenchmark]) -> BenchmarkEntry {
    let values = |value: &dyn Fn(&ResultBenchmark) -> Option<f64>| -> Option<Figure> {
        Figure::of(&runs.iter().map(|run| value(run)).collect::<Option<Vec<f64>>>()?)
    };
    let figures = Figures {
        cpu: values(&|run| run.timing?.cpu_per_iteration),
        iterations: runs.iter().filter_map(|run| run.timing.map(|timing| timing.samples)).collect(),
        mean: values(&|run| Some(run.timing?.mean)),
        median: values(&|run| run.timing?.median),
        min: values(&|run| run.timing?.min),
        samples_per_iteration: values(&|run| {
            let timing = run.timing?;
            let samples = run.samples.filter(|samples| *samples > 0)? as f64;
            (timing.samples >= 1.0).then(|| samples / timing.samples)
        }),
    };
    BenchmarkEntry { figures, functions: top_functions(runs), name: name.to_string() }
}

/// The functions with the most self time over a benchmark's runs that kept
/// their profiles: each run's self share (0 in a run without it), the
/// median kept; self time per iteration likewise.
fn top_functions(runs: &[&ResultBenchmark]) -> Vec<FunctionEntry> {
    struct Gathered {
        shares: Vec<f64>,
        per_iteration: Vec<f64>,
        ran_as: BTreeMap<(String, Option<String>), u64>,
        self_weight: u64,
    }
    let profiled: Vec<&ResultBenchmark> = runs.iter().copied().filter(|run| run.profile.is_some()).collect();
    let every_run_timed = profiled.iter().all(|run| run.timing.is_some_and(|timing| timing.samples >= 1.0));
    let mut gathered: BTreeMap<FunctionKey, Gathered> = BTreeMap::new();
    for (index, run) in profiled.iter().enumerate() {
        let profile = run.profile.as_ref().expect("profiled");
        for (function, samples) in &profile.functions {
            if samples.self_weight == 0 {
                continue;
            }
            let entry = gathered.entry(key_of(function)).or_insert_with(|| Gathered {
                shares: vec![0.0; profiled.len()],
                per_iteration: vec![0.0; profiled.len()],
                ran_as: BTreeMap::new(),
                self_weight: 0,
            });
            entry.shares[index] = profile.share(samples.self_weight);
            if let Some(timing) = run.timing.filter(|timing| timing.samples >= 1.0) {
                entry.per_iteration[index] = samples.self_weight as f64 / timing.samples;
            }
            entry.self_weight += samples.self_weight;
            for (ran_as, weight) in &samples.ran_as {
                *entry.ran_as.entry((ran_as.tier.name().to_string(), ran_as.inlined_into.clone())).or_default() +=
                    weight;
            }
        }
    }
    let mut functions: Vec<(f64, FunctionEntry)> = gathered
        .into_iter()
        .map(|(key, mut gathered)| {
            let share = median(&mut gathered.shares);
            let mut ran_as: Vec<RanAsEntry> = gathered
                .ran_as
                .into_iter()
                .map(|((tier, inlined_into), weight)| RanAsEntry {
                    inlined_into,
                    share: round(weight as f64 / gathered.self_weight.max(1) as f64),
                    tier,
                })
                .collect();
            ran_as.sort_by(|left, right| right.share.total_cmp(&left.share));
            ran_as.truncate(TOP_RAN_AS);
            let entry = FunctionEntry {
                column: key.column,
                file: key.file,
                line: key.line,
                name: key.name,
                ran_as,
                self_per_iteration: every_run_timed.then(|| round(median(&mut gathered.per_iteration))),
                self_share: round(share),
            };
            (share, entry)
        })
        .collect();
    // The most self time first; ties by name, file and line (stable lines).
    functions.sort_by(|left, right| {
        let order = |entry: &FunctionEntry| (entry.name.clone(), entry.file.clone(), entry.line, entry.column);
        right.0.total_cmp(&left.0).then_with(|| order(&left.1).cmp(&order(&right.1)))
    });
    functions.into_iter().take(TOP_FUNCTIONS).map(|(_, entry)| entry).collect()
}

fn key_of(function: &Function) -> FunctionKey {
    FunctionKey {
        name: function.name.clone(),
        file: function.file.clone(),
        line: function.start.map(|start| start.line),
        column: function.start.and_then(|start| start.column),
    }
}

/// Why a history could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// A file that cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A line of the history that is not an entry.
    #[error("{}:{line}: not a {HISTORY_SCHEMA} entry: {message}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line, 1-based.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A line of the history that is not an entry, found by `history add`,
    /// which rewrites the file whole and would lose it.
    #[error(
        "{}:{line}: not a {HISTORY_SCHEMA} entry ({message}): `history add` rewrites the file whole and would lose this line; mend or delete it, then add again",
        path.display()
    )]
    DamagedBeforeAdd {
        /// The file.
        path: PathBuf,
        /// The line, 1-based.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A result that cannot be read.
    #[error(transparent)]
    Result(#[from] crate::commands::compare::CompareCommandError),
    /// A result without benchmarks.
    #[error("{}: no benchmarks (a history keeps benchmarks.json's benchmarks: record a benchmark suite)", path.display())]
    NoBenchmarks {
        /// The result.
        path: PathBuf,
    },
    /// No commit given and none found.
    #[error("no commit: give --commit SHA, or run in the repository whose HEAD the result is of")]
    NoCommit,
    /// The history holds no commit.
    #[error("{}: the history holds no commit", path.display())]
    Empty {
        /// The history file.
        path: PathBuf,
    },
}

/// A history read line by line: the entry of every whole line, and the
/// lines that are not one (cut, garbled, another schema).
#[derive(Debug, Clone, Default)]
pub struct HistoryRead {
    /// The entries, in the file's order.
    pub entries: Vec<HistoryEntry>,
    /// The lines that are not an entry, in the file's order.
    pub damaged: Vec<DamagedLine>,
}

/// A line of `history.jsonl` that is not an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamagedLine {
    /// The line, 1-based.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// Reads the history file at `path` (none yet: empty), keeping every whole
/// line's entry and naming the lines that are not one. Blank lines are
/// skipped.
pub fn read_history_lines(path: &Path) -> Result<HistoryRead, HistoryError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(HistoryRead::default()),
        Err(source) => return Err(HistoryError::Io { path: path.to_owned(), source }),
    };
    let mut read = HistoryRead::default();
    for (index, line) in bytes.split(|byte| *byte == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line_number = index + 1;
        match serde_json::from_slice::<HistoryEntry>(line) {
            Ok(entry) if entry.schema == HISTORY_SCHEMA => read.entries.push(entry),
            Ok(entry) => {
                read.damaged.push(DamagedLine { line: line_number, message: format!("schema {:?}", entry.schema) })
            }
            Err(error) => read.damaged.push(DamagedLine { line: line_number, message: error.to_string() }),
        }
    }
    Ok(read)
}

/// Reads the history file at `path` (none yet: empty); a line that is not
/// an entry is an error naming it.
pub fn read_history(path: &Path) -> Result<Vec<HistoryEntry>, HistoryError> {
    let read = read_history_lines(path)?;
    match read.damaged.into_iter().next() {
        Some(damaged) => {
            Err(HistoryError::Line { path: path.to_owned(), line: damaged.line, message: damaged.message })
        }
        None => Ok(read.entries),
    }
}

/// What adding an entry did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// A new commit, appended.
    Appended,
    /// The commit was there: its line was replaced, in its place.
    Replaced,
}

/// Adds `entry` to the history file at `path`: appended, or in the place
/// of the line of the same commit (a rerun replaces it). The file is
/// written whole beside and renamed over the old one
/// ([`crate::files::replace_file`]).
pub fn add_entry(path: &Path, entry: HistoryEntry) -> Result<Added, HistoryError> {
    let read = read_history_lines(path)?;
    if let Some(damaged) = read.damaged.into_iter().next() {
        return Err(HistoryError::DamagedBeforeAdd {
            path: path.to_owned(),
            line: damaged.line,
            message: damaged.message,
        });
    }
    let mut entries = read.entries;
    let added = match entries.iter_mut().find(|existing| existing.commit == entry.commit) {
        Some(existing) => {
            *existing = entry;
            Added::Replaced
        }
        None => {
            entries.push(entry);
            Added::Appended
        }
    };
    let mut text = String::new();
    for entry in &entries {
        text.push_str(&serde_json::to_string(entry).expect("an entry serializes"));
        text.push('\n');
    }
    if let Some(directory) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(directory).map_err(|source| HistoryError::Io { path: directory.to_owned(), source })?;
    }
    crate::files::replace_file(path, |output| std::io::Write::write_all(output, text.as_bytes()))
        .map_err(|source| HistoryError::Io { path: path.to_owned(), source })?;
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_geometric_with_a_t_interval() {
        let figure = Figure::of(&[100.0, 110.0, 121.0]).unwrap();
        assert_eq!(figure.value, 110.0);
        // ln(1.1) = 0.09531; t(0.975, 2) = 4.3027; 4.3027 * 0.09531 / sqrt(3) = 0.23677.
        assert_eq!(figure.spread, 0.09531);
        assert_eq!(figure.low, 86.81);
        assert_eq!(figure.high, 139.39);
        assert_eq!(Figure::of(&[5.0]).unwrap().low, 5.0);
        assert!(Figure::of(&[5.0, 0.0]).is_none());
    }

    #[test]
    fn numbers_keep_five_digits() {
        assert_eq!(round(1_248_401.78), 1_248_400.0);
        assert_eq!(round(0.0123456), 0.012346);
        assert_eq!(round(0.0), 0.0);
    }
}
