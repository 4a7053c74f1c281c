//! The JSON report (`--report json`): the [`Report`] in a documented,
//! versioned schema that `compare` reads back. The schema is in the README.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::report::{Report, Weights};
use crate::model::frames::Function;

/// The value of the `schema` field.
pub const SCHEMA: &str = "v8inline-report/1";

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// What the weights count: `samples`, or `count` (folded input).
    pub unit: String,
    /// The perf event, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The total weight.
    pub total: u64,
    /// Functions, heaviest self first.
    pub functions: Vec<JsonFunction>,
    /// Source lines of JavaScript functions, heaviest self first.
    pub lines: Vec<JsonLine>,
}

/// Self and inclusive weights and shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonWeights {
    /// Weight as the leaf.
    #[serde(rename = "self")]
    pub self_weight: u64,
    /// `self` / total.
    pub self_share: f64,
    /// Weight anywhere on the stack (once per stack).
    pub inclusive: u64,
    /// `inclusive` / total.
    pub inclusive_share: f64,
}

/// One function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonFunction {
    /// The function's name.
    pub name: String,
    /// Its script, for JavaScript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its first line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Its first column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// Its weights.
    #[serde(flatten)]
    pub weights: JsonWeights,
    /// Weights by kind of code: `interpreted`, `Sparkplug`, `Maglev`,
    /// `TurboFan`, `inlined`, `jit`, `native`, `kernel`.
    pub tiers: BTreeMap<String, JsonWeights>,
    /// The functions it ran inlined into, heaviest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inlined_into: Vec<JsonHost>,
}

/// A function something was inlined into.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonHost {
    /// Its name.
    pub name: String,
    /// Its script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its first line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The inclusive weight of the inlined function inside it.
    pub inclusive: u64,
}

/// One source line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonLine {
    /// The script.
    pub file: String,
    /// The 1-based line.
    pub line: u32,
    /// The function the line is in.
    pub function: String,
    /// The function's first line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_line: Option<u32>,
    /// Its weights.
    #[serde(flatten)]
    pub weights: JsonWeights,
    /// Weights by kind of code, as for functions.
    pub tiers: BTreeMap<String, JsonWeights>,
}

impl JsonReport {
    /// The JSON form of `report`.
    pub fn new(report: &Report) -> JsonReport {
        let weights = |weights: &Weights| JsonWeights {
            self_weight: weights.self_weight,
            self_share: rounded(report.share(weights.self_weight)),
            inclusive: weights.inclusive_weight,
            inclusive_share: rounded(report.share(weights.inclusive_weight)),
        };
        let tiers = |by_kind: &BTreeMap<_, Weights>| {
            by_kind
                .iter()
                .map(|(kind, kind_weights): (&crate::model::frames::FrameKind, _)| {
                    (kind.name().to_string(), weights(kind_weights))
                })
                .collect()
        };
        JsonReport {
            schema: SCHEMA.to_string(),
            unit: report.unit.name().to_string(),
            event: report.event.clone(),
            total: report.total,
            functions: report
                .functions
                .iter()
                .map(|statistics| JsonFunction {
                    name: statistics.function.name.clone(),
                    file: statistics.function.file.clone(),
                    line: statistics.function.start.map(|start| start.line),
                    column: statistics.function.start.and_then(|start| start.column),
                    weights: weights(&statistics.weights),
                    tiers: tiers(&statistics.by_kind),
                    inlined_into: statistics
                        .inlined_into
                        .iter()
                        .map(|inlined| JsonHost {
                            name: inlined.host.name.clone(),
                            file: inlined.host.file.clone(),
                            line: inlined.host.start.map(|start| start.line),
                            inclusive: inlined.inclusive_weight,
                        })
                        .collect(),
                })
                .collect(),
            lines: report
                .lines
                .iter()
                .map(|statistics| JsonLine {
                    file: statistics.file.clone(),
                    line: statistics.line,
                    function: statistics.function.name.clone(),
                    function_line: statistics.function.start.map(|start| start.line),
                    weights: weights(&statistics.weights),
                    tiers: tiers(&statistics.by_kind),
                })
                .collect(),
        }
    }

    /// Writes the report as pretty-printed JSON and a newline.
    pub fn write<W: Write>(&self, mut output: W) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut output, self)?;
        output.write_all(b"\n")?;
        output.flush()
    }

    /// Reads a report; the error says what is wrong and where.
    pub fn parse(text: &str) -> Result<JsonReport, JsonReportError> {
        let report: JsonReport = serde_json::from_str(text)?;
        if report.schema != SCHEMA {
            return Err(JsonReportError::Schema { found: report.schema });
        }
        Ok(report)
    }
}

/// Why a text is not a JSON report.
#[derive(Debug, thiserror::Error)]
pub enum JsonReportError {
    /// Not JSON, or not the report's fields (the error names the line and
    /// column).
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// A JSON document of another schema.
    #[error("schema {found:?}, expected {SCHEMA:?}")]
    Schema {
        /// The schema it names.
        found: String,
    },
}

impl JsonFunction {
    /// The function this entry describes.
    pub fn function(&self) -> Function {
        Function {
            name: self.name.clone(),
            file: self.file.clone(),
            start: self.line.map(|line| crate::model::frames::SourceLine { line, column: self.column }),
        }
    }
}

/// Rounds a share to 6 decimals, enough for any profile and short to read.
fn rounded(share: f64) -> f64 {
    (share * 1e6).round() / 1e6
}
