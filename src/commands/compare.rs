//! `v8inline compare BASE HEAD`: each function's change of self and
//! inclusive share between two profiles (folded stacks or JSON reports),
//! as a table, GitHub annotations, and optionally a differential flame
//! graph.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::files::read_file;
use crate::output::annotations::SourceRoot;
use crate::output::compare::{
    CompareError, Shares, compare, is_json_report, markdown_table, regression_annotations, text_table,
    write_differential_svg,
};

/// How the comparison is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ComparisonFormat {
    /// An aligned text table.
    Text,
    /// A markdown table.
    Markdown,
    /// GitHub Actions warnings on functions whose self or inclusive share
    /// grew by at least `threshold` (a share: 0.005 is half a point).
    Github {
        /// The least growth annotated.
        threshold: f64,
    },
}

/// What to compare and how.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompareOptions {
    /// The profile before.
    pub base: PathBuf,
    /// The profile after, of the same kind.
    pub head: PathBuf,
    /// The output's form.
    pub format: ComparisonFormat,
    /// Rows (or annotations) at most.
    pub top: usize,
    /// Paths are shown relative to this directory (annotations: only
    /// files under it).
    pub source_root: PathBuf,
    /// Also render a differential flame graph (folded stacks only).
    pub flame_graph: bool,
}

impl CompareOptions {
    /// Compares `base` with `head` as text, the top 20 rows, paths as they
    /// are, no flame graph.
    pub fn new(base: PathBuf, head: PathBuf) -> CompareOptions {
        CompareOptions {
            base,
            head,
            format: ComparisonFormat::Text,
            top: 20,
            source_root: PathBuf::new(),
            flame_graph: false,
        }
    }
}

/// A comparison, rendered.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The table or the annotations.
    pub text: String,
    /// The differential flame graph, when asked for.
    pub svg: Option<Vec<u8>>,
}

/// Why two profiles could not be compared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompareCommandError {
    /// A file that cannot be read.
    #[error(transparent)]
    Read(#[from] Error),
    /// A file that is neither folded stacks nor a JSON report.
    #[error(transparent)]
    Input(#[from] CompareError),
    /// A differential flame graph of JSON reports.
    #[error("a differential flame graph needs two folded files, not JSON reports")]
    FlameGraphOfReports,
}

/// Reads both profiles and renders their comparison.
pub fn compare_files(options: &CompareOptions) -> Result<Comparison, CompareCommandError> {
    let read = |path: &Path| -> Result<(String, Shares), CompareCommandError> {
        let text = String::from_utf8_lossy(&read_file(path)?).into_owned();
        let shares = Shares::parse(&text, path)?;
        Ok((text, shares))
    };
    let (base_text, base) = read(&options.base)?;
    let (head_text, head) = read(&options.head)?;
    let changes = compare(&base, &head);
    let root = SourceRoot::new(&options.source_root);
    let text = match options.format {
        ComparisonFormat::Text => text_table(&changes, &root, options.top),
        ComparisonFormat::Markdown => markdown_table(&changes, &root, options.top),
        ComparisonFormat::Github { threshold } => regression_annotations(&changes, &root, threshold, options.top)
            .iter()
            .map(|annotation| annotation.command() + "\n")
            .collect(),
    };
    let svg = if options.flame_graph {
        if is_json_report(&base_text) || is_json_report(&head_text) {
            return Err(CompareCommandError::FlameGraphOfReports);
        }
        let title = format!("v8inline: {} → {}", options.base.display(), options.head.display());
        let mut svg = Vec::new();
        // Rendering into memory cannot fail.
        let _ = write_differential_svg(&base_text, &head_text, &title, &mut svg);
        Some(svg)
    } else {
        None
    };
    Ok(Comparison { text, svg })
}
