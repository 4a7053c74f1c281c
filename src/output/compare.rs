//! `v8inline compare BASE HEAD`: the change of each function's self and
//! inclusive share between two profiles (folded stacks or JSON reports),
//! worst regression first.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::formats::folded::FoldedLineError;

use super::annotations::{GithubAnnotation, Severity, SourceRoot, function_location, markdown_cell};
use super::json::{JsonReport, JsonReportError};
use super::report::{Report, WeightUnit};
use crate::model::frames::Function;
use crate::model::stack_profile::StackProfile;

/// Why `compare` cannot use one of its inputs: the file and what is wrong
/// with its text. Displays as `path: what`, `path:LINE: what` for a line.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A JSON report (the text starts with `{`) that is not one.
    #[error("{}: not a v8inline JSON report: {source}", path.display())]
    JsonReport {
        /// The file.
        path: PathBuf,
        /// Why it is not a report.
        source: JsonReportError,
    },
    /// Folded stacks with lines that are not `stack count`: the first one,
    /// and how many more.
    #[error(
        "{}:{}: expected a folded stack line `frame;frame;... count`, got {:?}{}",
        path.display(),
        first.line_number,
        first.line,
        match more { 0 => String::new(), more => format!(" ({more} more such lines)") }
    )]
    FoldedLines {
        /// The file.
        path: PathBuf,
        /// The first such line.
        first: FoldedLineError,
        /// How many more there are.
        more: usize,
    },
}

/// Whether `text` is a JSON report rather than folded stacks: it starts
/// with `{`, which no folded line does.
pub fn is_json_report(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// One side of a comparison: each function's shares.
#[derive(Debug, Clone, Default)]
pub struct Shares {
    /// Self and inclusive share per function.
    pub functions: FxHashMap<Function, FunctionShares>,
    /// The total weight (samples or counts).
    pub total: u64,
}

/// A function's shares of its profile.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FunctionShares {
    /// Self share, 0 to 1.
    pub self_share: f64,
    /// Inclusive share, 0 to 1.
    pub inclusive_share: f64,
}

impl Shares {
    /// Reads folded stacks or a JSON report (told apart by a leading `{`),
    /// the text of the file at `path` (which names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Shares, CompareError> {
        if is_json_report(text) {
            let report =
                JsonReport::parse(text).map_err(|source| CompareError::JsonReport { path: path.to_owned(), source })?;
            return Ok(Shares::from_json(&report));
        }
        let (profile, mut errors) = StackProfile::from_folded(text);
        if !errors.is_empty() {
            let more = errors.len() - 1;
            let first = errors.swap_remove(0);
            return Err(CompareError::FoldedLines { path: path.to_owned(), first, more });
        }
        Ok(Shares::from_report(&Report::new(&profile, WeightUnit::Count)))
    }

    /// The shares of a report's functions.
    pub fn from_report(report: &Report) -> Shares {
        let functions = report
            .functions
            .iter()
            .map(|statistics| {
                let shares = FunctionShares {
                    self_share: report.share(statistics.weights.self_weight),
                    inclusive_share: report.share(statistics.weights.inclusive_weight),
                };
                (comparison_key(&statistics.function), shares)
            })
            .collect();
        Shares { functions, total: report.total }
    }

    /// The shares of a JSON report's functions.
    pub fn from_json(report: &JsonReport) -> Shares {
        let functions = report
            .functions
            .iter()
            .map(|function| {
                let shares = FunctionShares {
                    self_share: function.weights.self_share,
                    inclusive_share: function.weights.inclusive_share,
                };
                (comparison_key(&function.function()), shares)
            })
            .collect();
        Shares { functions, total: report.total }
    }
}

/// A function as compared: by name, script and first line. Not by column:
/// node 18's jitdump names, and so its folded stacks, carry none.
fn comparison_key(function: &Function) -> Function {
    let mut key = function.clone();
    if let Some(start) = &mut key.start {
        start.column = None;
    }
    key
}

/// One function's change.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionChange {
    /// The function.
    pub function: Function,
    /// Its shares in the base profile (zero if absent).
    pub base: FunctionShares,
    /// Its shares in the head profile (zero if absent).
    pub head: FunctionShares,
}

impl FunctionChange {
    /// Head minus base self share.
    pub fn self_change(&self) -> f64 {
        self.head.self_share - self.base.self_share
    }

    /// Head minus base inclusive share.
    pub fn inclusive_change(&self) -> f64 {
        self.head.inclusive_share - self.base.inclusive_share
    }
}

/// The changes of every function in either profile, worst regression
/// first: by self-share increase, then inclusive-share increase, then name.
pub fn compare(base: &Shares, head: &Shares) -> Vec<FunctionChange> {
    let mut changes: FxHashMap<&Function, FunctionChange> = FxHashMap::default();
    for (function, shares) in &base.functions {
        changes.entry(function).or_insert_with(|| change_of(function)).base = *shares;
    }
    for (function, shares) in &head.functions {
        changes.entry(function).or_insert_with(|| change_of(function)).head = *shares;
    }
    let mut changes: Vec<FunctionChange> = changes.into_values().collect();
    changes.sort_by(|left, right| {
        right
            .self_change()
            .total_cmp(&left.self_change())
            .then(right.inclusive_change().total_cmp(&left.inclusive_change()))
            .then_with(|| left.function.cmp(&right.function))
    });
    changes
}

fn change_of(function: &Function) -> FunctionChange {
    FunctionChange { function: function.clone(), base: FunctionShares::default(), head: FunctionShares::default() }
}

/// A share change in percentage points: `+1.25 pp`.
fn points(change: f64) -> String {
    format!("{:+.2} pp", change * 100.0)
}

/// A share in percent with two decimals.
fn share(value: f64) -> String {
    format!("{:.2}%", value * 100.0)
}

/// Whether a change is worth showing: either share moved by more than the
/// JSON report's rounding (6 decimals).
fn changed(change: &FunctionChange) -> bool {
    const ROUNDING: f64 = 1e-6;
    change.self_change().abs() > ROUNDING || change.inclusive_change().abs() > ROUNDING
}

/// The comparison as an aligned text table of the `limit` first changes.
pub fn text_table(changes: &[FunctionChange], root: &SourceRoot, limit: usize) -> String {
    let rows: Vec<[String; 8]> = changes
        .iter()
        .filter(|change| changed(change))
        .take(limit)
        .map(|change| {
            [
                points(change.self_change()),
                share(change.base.self_share),
                share(change.head.self_share),
                points(change.inclusive_change()),
                share(change.base.inclusive_share),
                share(change.head.inclusive_share),
                change.function.name.clone(),
                function_location(&change.function, root),
            ]
        })
        .collect();
    let header = ["self Δ", "base", "head", "incl Δ", "base", "head", "function", "location"].map(str::to_string);
    let mut widths = header.clone().map(|cell| cell.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (column, (cell, width)) in row.iter().zip(widths).enumerate() {
            if column >= 6 {
                let _ = write!(line, "{cell:<width$}  ");
            } else {
                let _ = write!(line, "{cell:>width$}  ");
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    if rows.is_empty() {
        text.push_str("no function's share changed\n");
    }
    text
}

/// The comparison as a markdown table of the `limit` first changes.
pub fn markdown_table(changes: &[FunctionChange], root: &SourceRoot, limit: usize) -> String {
    let mut text = String::from("### v8inline: change of each function's share, worst regression first\n\n");
    text.push_str("| Self Δ | Self base → head | Inclusive Δ | Inclusive base → head | Function | Location |\n");
    text.push_str("|---:|---:|---:|---:|---|---|\n");
    for change in changes.iter().filter(|change| changed(change)).take(limit) {
        let _ = writeln!(
            text,
            "| {} | {} → {} | {} | {} → {} | `{}` | {} |",
            points(change.self_change()),
            share(change.base.self_share),
            share(change.head.self_share),
            points(change.inclusive_change()),
            share(change.base.inclusive_share),
            share(change.head.inclusive_share),
            markdown_cell(&change.function.name),
            markdown_cell(&function_location(&change.function, root)),
        );
    }
    text
}

/// Warnings on the first lines of functions (under `root`) whose self or
/// inclusive share grew by at least `threshold` (a share, e.g. 0.005 for
/// half a percentage point); at most `limit`.
pub fn regression_annotations(
    changes: &[FunctionChange],
    root: &SourceRoot,
    threshold: f64,
    limit: usize,
) -> Vec<GithubAnnotation> {
    changes
        .iter()
        .filter(|change| change.self_change() >= threshold || change.inclusive_change() >= threshold)
        .filter_map(|change| {
            let file = root.relative(change.function.file.as_deref()?)?;
            let line = change.function.start?.line;
            Some(GithubAnnotation {
                severity: Severity::Warning,
                file,
                line,
                title: format!(
                    "v8inline: {} self {}, inclusive {}",
                    change.function.name,
                    points(change.self_change()),
                    points(change.inclusive_change())
                ),
                message: format!(
                    "{}: self {} → {} ({}), inclusive {} → {} ({})",
                    change.function.name,
                    share(change.base.self_share),
                    share(change.head.self_share),
                    points(change.self_change()),
                    share(change.base.inclusive_share),
                    share(change.head.inclusive_share),
                    points(change.inclusive_change()),
                ),
            })
        })
        .take(limit)
        .collect()
}

/// Renders a differential flame graph of two folded files: the head's
/// stacks, colored by how each frame's count changed from the base (red
/// grew, blue shrank), counts normalized to the same total. The result does
/// not depend on the run.
pub fn write_differential_svg<W: Write>(base: &str, head: &str, title: &str, output: W) -> io::Result<()> {
    let mut differential = Vec::new();
    let options = inferno::differential::Options { normalize: true, strip_hex: false };
    inferno::differential::from_readers(options, base.as_bytes(), head.as_bytes(), &mut differential)?;
    let text = String::from_utf8_lossy(&differential);
    let mut options = inferno::flamegraph::Options::default();
    options.deterministic = true;
    options.title = title.to_string();
    inferno::flamegraph::from_lines(&mut options, text.lines(), output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regressions_come_first() {
        let base = Shares::parse("node;main;JS:*a /r/x.js:1:1 50\nnode;main;JS:*b /r/x.js:5:1 50\n", Path::new("base"))
            .unwrap();
        let head = Shares::parse("node;main;JS:*a /r/x.js:1:1 20\nnode;main;JS:*b /r/x.js:5:1 80\n", Path::new("head"))
            .unwrap();
        let changes = compare(&base, &head);
        let order: Vec<(&str, String, String)> = changes
            .iter()
            .map(|change| {
                (change.function.name.as_str(), points(change.self_change()), points(change.inclusive_change()))
            })
            .collect();
        assert_eq!(
            order,
            vec![
                ("b", "+30.00 pp".to_string(), "+30.00 pp".to_string()),
                ("main", "+0.00 pp".to_string(), "+0.00 pp".to_string()),
                ("a", "-30.00 pp".to_string(), "-30.00 pp".to_string()),
            ]
        );
        let root = SourceRoot::new(std::path::Path::new("/r"));
        let annotations = regression_annotations(&changes, &root, 0.005, 10);
        assert_eq!(annotations.len(), 1);
        assert_eq!(
            annotations[0].command(),
            "::warning file=x.js,line=5,title=v8inline%3A b self +30.00 pp%2C inclusive +30.00 pp::b: self 50.00%25 → 80.00%25 (+30.00 pp), inclusive 50.00%25 → 80.00%25 (+30.00 pp)"
        );
    }

    #[test]
    fn bad_lines_are_named() {
        let error = Shares::parse("node;a 1\nnode;b x\n", Path::new("base.folded")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "base.folded:2: expected a folded stack line `frame;frame;... count`, got \"node;b x\""
        );
        let error = Shares::parse("{\"schema\": \"other\"}", Path::new("r.json")).unwrap_err();
        assert!(matches!(error, CompareError::JsonReport { source: JsonReportError::Json(_), .. }), "{error:?}");
        assert!(error.to_string().starts_with("r.json: not a v8inline JSON report: missing field"), "{error}");
    }
}
