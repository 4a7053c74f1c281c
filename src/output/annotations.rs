//! Benchmark CI views of a [`Report`]: GitHub Actions workflow commands
//! (`--annotate github`) that put notices on the hottest source lines, and a
//! markdown summary (`--summary markdown`) for `$GITHUB_STEP_SUMMARY`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::report::{FunctionStatistics, Report, Weights, percent};
use crate::model::frames::{FrameKind, Function};

/// How file paths are shown.
#[derive(Debug, Clone)]
pub struct SourceRoot {
    /// The directory paths are made relative to (absolute).
    root: PathBuf,
    /// Directories tried in order for a path not under `root`.
    fallbacks: Vec<PathBuf>,
}

impl SourceRoot {
    /// Paths relative to `root`; a relative `root` is taken from the current
    /// directory.
    pub fn new(root: &Path) -> SourceRoot {
        let root = if root.is_absolute() {
            root.to_path_buf()
        } else {
            std::env::current_dir().map(|current| current.join(root)).unwrap_or_else(|_| root.to_path_buf())
        };
        SourceRoot { root: normalize(&root), fallbacks: Vec::new() }
    }

    /// This root, and for paths not under it, `fallback` (after any
    /// fallbacks given before).
    pub fn or_else(mut self, fallback: &Path) -> SourceRoot {
        self.fallbacks.push(SourceRoot::new(fallback).root);
        self
    }

    /// `script` relative to the root, if it is under it. V8 names ES
    /// modules by `file://` URLs; their path is used.
    pub fn relative(&self, script: &str) -> Option<String> {
        let path = script.strip_prefix("file://").unwrap_or(script);
        let path = Path::new(path);
        if !path.is_absolute() {
            return None;
        }
        let path = normalize(path);
        std::iter::once(&self.root).chain(&self.fallbacks).find_map(|root| {
            let relative = path.strip_prefix(root).ok()?.to_str()?.to_string();
            (!relative.is_empty()).then_some(relative)
        })
    }

    /// `script` relative to the root when under it, else as it is.
    pub fn display(&self, script: &str) -> String {
        self.relative(script).unwrap_or_else(|| script.to_string())
    }
}

/// Removes `.` and `..` components without touching the file system (the
/// profiled files need not exist here).
fn normalize(path: &Path) -> PathBuf {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                normalized.pop();
            }
            other => normalized.push(other),
        }
    }
    normalized
}

/// The severity of a workflow command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// `::notice`.
    Notice,
    /// `::warning`.
    Warning,
}

/// One GitHub Actions annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GithubAnnotation {
    /// Notice or warning.
    pub severity: Severity,
    /// The file, relative to the repository root.
    pub file: String,
    /// The 1-based line.
    pub line: u32,
    /// The title.
    pub title: String,
    /// The message.
    pub message: String,
}

impl GithubAnnotation {
    /// The workflow command line, escaped as GitHub's runner unescapes it
    /// (`%`, CR and LF in the message; also `:` and `,` in properties):
    /// <https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts>.
    pub fn command(&self) -> String {
        let severity = match self.severity {
            Severity::Notice => "notice",
            Severity::Warning => "warning",
        };
        format!(
            "::{severity} file={},line={},title={}::{}",
            escape_property(&self.file),
            self.line,
            escape_property(&self.title),
            escape_data(&self.message)
        )
    }
}

/// Escapes a workflow command's message.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A function's name with where it was inlined: `square (inlined into
/// kernel)`, with the part of its time that ran inlined when not all.
pub fn name_with_host(statistics: &FunctionStatistics) -> String {
    let mut text = statistics.function.name.clone();
    if let Some(first) = statistics.inlined_into.first() {
        let _ = write!(text, " (inlined into {}", first.host.name);
        if statistics.inlined_into.len() > 1 {
            let _ = write!(text, " and {} more", statistics.inlined_into.len() - 1);
        }
        let inlined_total: u64 = statistics.inlined_into.iter().map(|inlined| inlined.inclusive_weight).sum();
        let inclusive = statistics.weights.inclusive_weight;
        if inlined_total < inclusive && inclusive > 0 {
            let _ = write!(text, ", {} of its time", percent(inlined_total as f64 / inclusive as f64));
        }
        text.push(')');
    }
    text
}

/// The kinds of code a weight split ran in, heaviest first:
/// `inlined 30.1%, TurboFan 2.0%`, each a share of the profile.
fn kinds_text(report: &Report, by_kind: &BTreeMap<FrameKind, Weights>) -> String {
    kinds_by_weight(by_kind, |weights| weights.self_weight)
        .iter()
        .map(|kind| format!("{} {}", kind.kind.name(), percent(report.share(kind.weight))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A kind of code and a weight of it.
struct KindWeight {
    kind: FrameKind,
    weight: u64,
}

/// The kinds with a nonzero `weight` (self or inclusive), heaviest first.
fn kinds_by_weight(by_kind: &BTreeMap<FrameKind, Weights>, weight: impl Fn(&Weights) -> u64) -> Vec<KindWeight> {
    let mut kinds: Vec<KindWeight> = by_kind
        .iter()
        .map(|(kind, weights)| KindWeight { kind: *kind, weight: weight(weights) })
        .filter(|kind| kind.weight > 0)
        .collect();
    kinds.sort_by(|left, right| right.weight.cmp(&left.weight).then(left.kind.cmp(&right.kind)));
    kinds
}

/// The annotations for the hottest functions and source lines under
/// `root`: functions at their first line, lines where they ran, ranked by
/// self share (functions first on ties); at most `limit`.
pub fn github_annotations(report: &Report, root: &SourceRoot, limit: usize) -> Vec<GithubAnnotation> {
    struct Candidate {
        self_weight: u64,
        is_function: bool,
        annotation: GithubAnnotation,
    }
    let mut candidates = Vec::new();
    for statistics in &report.functions {
        let (Some(file), Some(start)) = (&statistics.function.file, statistics.function.start) else { continue };
        let Some(file) = root.relative(file) else { continue };
        if statistics.weights.self_weight == 0 {
            continue;
        }
        let self_share = percent(report.share(statistics.weights.self_weight));
        let inclusive_share = percent(report.share(statistics.weights.inclusive_weight));
        candidates.push(Candidate {
            self_weight: statistics.weights.self_weight,
            is_function: true,
            annotation: GithubAnnotation {
                severity: Severity::Notice,
                file,
                line: start.line,
                title: format!("v8inline: {} {self_share} self, {inclusive_share} inclusive", statistics.function.name),
                message: format!(
                    "{}: {self_share} self, {inclusive_share} inclusive of {} {}{}; by tier: {}",
                    name_with_host(statistics),
                    report.total,
                    report.unit.name(),
                    report.event.as_deref().map(|event| format!(" ({event})")).unwrap_or_default(),
                    kinds_text(report, &statistics.by_kind)
                ),
            },
        });
    }
    for statistics in &report.lines {
        let Some(file) = root.relative(&statistics.file) else { continue };
        if statistics.weights.self_weight == 0 {
            continue;
        }
        let self_share = percent(report.share(statistics.weights.self_weight));
        let inclusive_share = percent(report.share(statistics.weights.inclusive_weight));
        candidates.push(Candidate {
            self_weight: statistics.weights.self_weight,
            is_function: false,
            annotation: GithubAnnotation {
                severity: Severity::Notice,
                file,
                line: statistics.line,
                title: format!("v8inline: line {self_share} self, {inclusive_share} inclusive"),
                message: format!(
                    "{self_share} of samples ran this line of {} ({inclusive_share} inclusive); by tier: {}",
                    statistics.function.name,
                    kinds_text(report, &statistics.by_kind)
                ),
            },
        });
    }
    candidates.sort_by(|left, right| {
        right
            .self_weight
            .cmp(&left.self_weight)
            .then(right.is_function.cmp(&left.is_function))
            .then_with(|| left.annotation.file.cmp(&right.annotation.file))
            .then(left.annotation.line.cmp(&right.annotation.line))
    });
    candidates.into_iter().take(limit).map(|candidate| candidate.annotation).collect()
}

/// Escapes text for a markdown table cell.
pub fn markdown_cell(text: &str) -> String {
    text.replace('\\', "\\\\").replace('|', "\\|").replace('`', "'").replace('\n', " ")
}

/// Where a function is, for people: `deep.js:16` (relative to the root
/// when under it).
pub fn function_location(function: &Function, root: &SourceRoot) -> String {
    match (&function.file, function.start) {
        (Some(file), Some(start)) => format!("{}:{}", root.display(file), start.line),
        (Some(file), None) => root.display(file),
        _ => String::new(),
    }
}

/// The markdown summary: the top `limit` functions by self share and
/// JavaScript functions by inclusive share, noting where a function ran
/// inlined.
pub fn markdown_summary(report: &Report, root: &SourceRoot, limit: usize) -> String {
    let mut text = String::new();
    let event = report.event.as_deref().map(|event| format!(", event `{}`", markdown_cell(event))).unwrap_or_default();
    let _ = writeln!(text, "### v8inline profile: {} {}{event}\n", report.total, report.unit.name());
    let tables: [(&str, Vec<&FunctionStatistics>); 2] = [
        (
            "Top functions by self time",
            report.functions.iter().filter(|statistics| statistics.weights.self_weight > 0).collect(),
        ),
        // Native entry points (main, node::Start...) would fill this table.
        (
            "Top JavaScript functions by inclusive time",
            report
                .functions_by_inclusive()
                .into_iter()
                .filter(|statistics| statistics.function.file.is_some())
                .collect(),
        ),
    ];
    for (heading, functions) in tables {
        let _ = writeln!(text, "**{heading}**\n");
        let _ = writeln!(text, "| Self | Inclusive | Function | Location | Ran as |");
        let _ = writeln!(text, "|---:|---:|---|---|---|");
        for statistics in functions.into_iter().take(limit) {
            let _ = writeln!(
                text,
                "| {} | {} | `{}`{} | {} | {} |",
                percent(report.share(statistics.weights.self_weight)),
                percent(report.share(statistics.weights.inclusive_weight)),
                markdown_cell(&statistics.function.name),
                inlined_note(statistics),
                markdown_cell(&function_location(&statistics.function, root)),
                markdown_cell(&ran_as(statistics)),
            );
        }
        text.push('\n');
    }
    text
}

/// ` inlined into `kernel`` for the markdown table.
fn inlined_note(statistics: &FunctionStatistics) -> String {
    let Some(first) = statistics.inlined_into.first() else { return String::new() };
    let more = match statistics.inlined_into.len() {
        1 => String::new(),
        count => format!(" and {} more", count - 1),
    };
    format!(" inlined into `{}`{more}", markdown_cell(&first.host.name))
}

/// The kinds of code a function's inclusive time ran in, heaviest first.
fn ran_as(statistics: &FunctionStatistics) -> String {
    let kinds = kinds_by_weight(&statistics.by_kind, |weights| weights.inclusive_weight);
    kinds.iter().map(|kind| kind.kind.name()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_escape_as_the_runner_unescapes() {
        let annotation = GithubAnnotation {
            severity: Severity::Notice,
            file: "src/a,b:c.js".to_string(),
            line: 7,
            title: "50% self, 60%: x".to_string(),
            message: "100% here\nnext".to_string(),
        };
        assert_eq!(
            annotation.command(),
            "::notice file=src/a%2Cb%3Ac.js,line=7,title=50%25 self%2C 60%25%3A x::100%25 here%0Anext"
        );
    }

    #[test]
    fn paths_under_the_root_only() {
        let root = SourceRoot::new(Path::new("/work/app/"));
        assert_eq!(root.relative("/work/app/src/deep.js").as_deref(), Some("src/deep.js"));
        assert_eq!(root.relative("file:///work/app/lib/x.mjs").as_deref(), Some("lib/x.mjs"));
        assert_eq!(root.relative("/work/app/../other/y.js"), None);
        assert_eq!(root.relative("/work/application/z.js"), None);
        assert_eq!(root.relative("node:internal/main"), None);
        assert_eq!(root.display("/elsewhere/q.js"), "/elsewhere/q.js");
    }
}
