//! One side of a comparison: each function's self and inclusive samples,
//! its self samples split by how V8 ran it, read from folded stacks (as
//! `record` writes them, inlined frames marked `_[i]`) or a JSON report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::formats::folded::{FoldedSuffix, strip_annotation};
use crate::formats::v8log::CodeName;
use crate::model::frames::{FrameKind, Function};
use crate::output::annotations::SourceRoot;
use crate::output::json::{JsonReport, JsonReportError};

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
        line_number,
        line,
        match more { 0 => String::new(), more => format!(" ({more} more such lines)") }
    )]
    FoldedLines {
        /// The file.
        path: PathBuf,
        /// The first such line, 1-based.
        line_number: usize,
        /// Its start.
        line: String,
        /// How many more there are.
        more: usize,
    },
}

/// Whether `text` is a JSON report rather than folded stacks: it starts
/// with `{`, which no folded line does.
pub fn is_json_report(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// How a function's own time ran: in which kind of code, and for inlined
/// code, into which caller (the frame below it) and in which tier (of the
/// optimized code it was inlined into).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RanAs {
    /// The tier of the code that ran: for inlined frames, their host's.
    pub tier: FrameKind,
    /// The caller it was inlined into, if it was.
    pub inlined_into: Option<String>,
}

impl RanAs {
    /// `inlined into versionKey (TurboFan)`, `TurboFan`, `interpreted`.
    pub fn describe(&self) -> String {
        match (&self.inlined_into, self.tier) {
            // A JSON report's inlined time: its host's tier is not known.
            (Some(caller), FrameKind::Inlined) => format!("inlined into {caller}"),
            (Some(caller), tier) => format!("inlined into {caller} ({})", tier.name()),
            (None, FrameKind::Inlined) => "inlined".to_string(),
            (None, tier) => tier.name().to_string(),
        }
    }
}

/// A function's samples on one side.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FunctionSamples {
    /// Weight (count) as the leaf, after native frames were charged.
    pub self_weight: u64,
    /// Weight of the stacks it is on (once per stack).
    pub inclusive_weight: u64,
    /// The self weight by how it ran.
    pub ran_as: BTreeMap<RanAs, u64>,
    /// Its absolute script path as recorded, for annotations.
    pub script: Option<String>,
}

/// One side of a comparison.
#[derive(Debug, Clone, Default)]
pub struct SideProfile {
    /// Each function's samples, keyed by [`FunctionKey`].
    pub functions: FxHashMap<Function, FunctionSamples>,
    /// The total weight.
    pub total_weight: u64,
    /// The weight of one sample (the profile's period: nanoseconds for
    /// `cpu-clock`, 1 for sample counts), so that weights become sample
    /// counts for the noise model.
    pub sample_weight: u64,
}

impl SideProfile {
    /// The number of samples the profile holds.
    pub fn samples(&self) -> f64 {
        self.total_weight as f64 / self.sample_weight.max(1) as f64
    }

    /// A weight's share of the profile, 0 to 1.
    pub fn share(&self, weight: u64) -> f64 {
        if self.total_weight == 0 { 0.0 } else { weight as f64 / self.total_weight as f64 }
    }
}

/// How functions are keyed and charged.
#[derive(Debug, Clone)]
pub struct KeyOptions {
    /// Scripts are keyed by their path relative to this project root
    /// (when under it), so that checkouts in two directories match.
    pub project_root: Option<SourceRoot>,
    /// Keep native, kernel and builtin frames as functions of their own
    /// instead of charging their self time to the JavaScript function that
    /// called them (as V8's CPU profiler does).
    pub separate_native: bool,
}

/// A function as compared: by name, script (relative to the project root
/// when under it), first line and column (node 18's names carry no column:
/// its functions are keyed without).
fn function_key(function: &Function, root: Option<&SourceRoot>) -> Function {
    let file = function.file.as_ref().map(|file| match root.and_then(|root| root.relative(file)) {
        Some(relative) => relative,
        None => file.strip_prefix("file://").unwrap_or(file).to_string(),
    });
    Function { name: function.name.clone(), file, start: function.start }
}

/// A frame of a folded stack, parsed once per distinct name.
#[derive(Debug, Clone)]
struct ParsedFrame {
    /// Index into the side's key list.
    key: usize,
    kind: FrameKind,
    is_inlined: bool,
}

impl SideProfile {
    /// Reads folded stacks or a JSON report (told apart by a leading `{`),
    /// the text of the file at `path` (which names it in errors).
    pub fn parse(text: &str, path: &Path, options: &KeyOptions) -> Result<SideProfile, CompareError> {
        if is_json_report(text) {
            let report =
                JsonReport::parse(text).map_err(|source| CompareError::JsonReport { path: path.to_owned(), source })?;
            return Ok(SideProfile::from_json(&report, options));
        }
        SideProfile::from_folded(text, path, options)
    }

    /// Reads folded stacks: a function's self weight is its leaf frame's
    /// (or, unless [`KeyOptions::separate_native`], that of the JavaScript
    /// frame nearest the leaf when the leaf is native, kernel or builtin
    /// code); its inclusive weight counts each stack once.
    pub fn from_folded(text: &str, path: &Path, options: &KeyOptions) -> Result<SideProfile, CompareError> {
        let mut keys: Vec<Function> = Vec::new();
        let mut scripts: Vec<Option<String>> = Vec::new();
        let mut key_index: FxHashMap<Function, usize> = FxHashMap::default();
        let mut frame_cache: FxHashMap<&str, ParsedFrame> = FxHashMap::default();
        let mut samples: Vec<FunctionSamples> = Vec::new();
        let mut bad_lines: Vec<(usize, String)> = Vec::new();
        let mut total_weight = 0u64;
        let mut smallest_count = u64::MAX;
        let mut counts_gcd = 0u64;
        let mut frames: Vec<ParsedFrame> = Vec::new();
        let mut seen: FxHashSet<usize> = FxHashSet::default();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let Some((stack, count)) =
                line.rsplit_once(' ').and_then(|(stack, count)| Some((stack, count.parse::<u64>().ok()?)))
            else {
                bad_lines.push((index + 1, line.chars().take(120).collect()));
                continue;
            };
            if count == 0 {
                continue;
            }
            total_weight = total_weight.saturating_add(count);
            smallest_count = smallest_count.min(count);
            counts_gcd = gcd(counts_gcd, count);
            frames.clear();
            // The root frame (the process) is not a function of the program.
            for name in stack.split(';').skip(1) {
                let frame = frame_cache.entry(name).or_insert_with(|| {
                    let (function, kind, is_inlined) = parse_frame(name);
                    let key = function_key(&function, options.project_root.as_ref());
                    let next = key_index.len();
                    let key = *key_index.entry(key.clone()).or_insert_with(|| {
                        keys.push(key);
                        scripts.push(function.file.clone());
                        samples.push(FunctionSamples::default());
                        next
                    });
                    ParsedFrame { key, kind, is_inlined }
                });
                frames.push(frame.clone());
            }
            let Some(leaf) = charged_frame(&frames, options.separate_native) else { continue };
            let ran_as = ran_as(&frames, leaf, &keys);
            let charged = &mut samples[frames[leaf].key];
            charged.self_weight += count;
            *charged.ran_as.entry(ran_as).or_default() += count;
            seen.clear();
            for frame in &frames {
                if seen.insert(frame.key) {
                    samples[frame.key].inclusive_weight += count;
                }
            }
        }
        if let Some((line_number, line)) = bad_lines.first().cloned() {
            return Err(CompareError::FoldedLines {
                path: path.to_owned(),
                line_number,
                line,
                more: bad_lines.len() - 1,
            });
        }
        // One sample's weight: the periods' greatest common divisor when it
        // is the smallest count (a fixed period: `perf record -F` of
        // cpu-clock), else the smallest count, which is one sample's.
        let sample_weight = if smallest_count == u64::MAX {
            1
        } else if counts_gcd * 2 > smallest_count {
            counts_gcd
        } else {
            smallest_count
        };
        let functions = keys
            .into_iter()
            .zip(samples)
            .zip(scripts)
            .filter(|((_, samples), _)| samples.inclusive_weight > 0)
            .map(|((key, mut samples), script)| {
                samples.script = script;
                (key, samples)
            })
            .collect();
        Ok(SideProfile { functions, total_weight, sample_weight })
    }

    /// Reads a JSON report: self weights and their tiers as the report
    /// has them (native frames stay apart: the report has no stacks).
    pub fn from_json(report: &JsonReport, options: &KeyOptions) -> SideProfile {
        let mut functions: FxHashMap<Function, FunctionSamples> = FxHashMap::default();
        let mut smallest = u64::MAX;
        for function in &report.functions {
            let recorded = function.function();
            let key = function_key(&recorded, options.project_root.as_ref());
            let entry = functions.entry(key).or_default();
            entry.self_weight += function.weights.self_weight;
            entry.inclusive_weight = entry.inclusive_weight.max(function.weights.inclusive);
            entry.script = recorded.file.clone();
            for (tier, weights) in &function.tiers {
                let Some(kind) = FrameKind::from_name(tier) else { continue };
                if weights.self_weight > 0 {
                    let inlined_into = (kind == FrameKind::Inlined)
                        .then(|| function.inlined_into.first().map(|host| host.name.clone()))
                        .flatten();
                    *entry.ran_as.entry(RanAs { tier: kind, inlined_into }).or_default() += weights.self_weight;
                }
            }
            if function.weights.self_weight > 0 {
                smallest = smallest.min(function.weights.self_weight);
            }
        }
        let sample_weight = if report.unit == "samples" || smallest == u64::MAX { 1 } else { smallest };
        SideProfile { functions, total_weight: report.total, sample_weight }
    }
}

fn gcd(mut left: u64, mut right: u64) -> u64 {
    while right != 0 {
        (left, right) = (right, left % right);
    }
    left
}

/// The function, kind and inlinedness of a folded frame named `name`: V8's
/// JavaScript names (`JS:*f /a.js:1:1`) give the function and the tier
/// from its marker (`*` TurboFan, `+` Maglev, `^` Sparkplug, `~`
/// interpreter: [`crate::formats::v8log::TierMarker`]); `_[i]` marks a
/// frame inlined into the frame below it.
fn parse_frame(name: &str) -> (Function, FrameKind, bool) {
    let (name, suffix) = strip_annotation(name);
    let code_name = CodeName::javascript(name);
    let kind = match (&code_name, suffix) {
        (Some(code_name), _) => code_name.marker.map_or(FrameKind::Jit, |marker| FrameKind::from_tier(marker.tier)),
        (None, Some(FoldedSuffix::Kernel)) => FrameKind::Kernel,
        (None, Some(FoldedSuffix::Jit)) => FrameKind::Jit,
        (None, _) => FrameKind::Native,
    };
    let function = code_name.map_or_else(|| Function::named(name), |code_name| code_name.function());
    let is_javascript = function.file.is_some() || kind.is_javascript();
    // A JavaScript frame without a tier marker is still JavaScript.
    let kind = if is_javascript && kind == FrameKind::Jit { FrameKind::TurboFan } else { kind };
    (function, kind, suffix == Some(FoldedSuffix::Inlined))
}

/// The frame a stack's self time is charged to: the leaf, or with native
/// frames charged to JavaScript, the JavaScript frame nearest the leaf
/// (the leaf itself when no frame is JavaScript: a native thread).
fn charged_frame(frames: &[ParsedFrame], separate_native: bool) -> Option<usize> {
    let leaf = frames.len().checked_sub(1)?;
    if separate_native {
        return Some(leaf);
    }
    Some(frames.iter().rposition(|frame| frame.kind.is_javascript()).unwrap_or(leaf))
}

/// How the frame at `index` ran: its tier, or for an inlined frame the
/// tier of the optimized code below that it is part of, and its caller.
fn ran_as(frames: &[ParsedFrame], index: usize, keys: &[Function]) -> RanAs {
    let frame = &frames[index];
    if !frame.is_inlined {
        return RanAs { tier: frame.kind, inlined_into: None };
    }
    let host = frames[..index].iter().rev().find(|frame| !frame.is_inlined);
    let caller = index.checked_sub(1).map(|caller| keys[frames[caller].key].name.clone());
    RanAs { tier: host.map_or(frame.kind, |host| host.kind), inlined_into: caller }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::frames::SourceLine;

    fn options() -> KeyOptions {
        KeyOptions { project_root: Some(SourceRoot::new(Path::new("/r"))), separate_native: false }
    }

    #[test]
    fn native_leaves_are_charged_to_their_javascript_caller() {
        let text = "node;JS:*main /r/a.js:1:1_[j];JS:*sq /r/a.js:5:1_[i] 30\n\
                    node;JS:*main /r/a.js:1:1_[j];Builtins_ArrayMap;memcpy 10\n\
                    node;gc_thread 5\n";
        let side = SideProfile::from_folded(text, Path::new("x"), &options()).unwrap();
        let sq = Function {
            name: "sq".into(),
            file: Some("a.js".into()),
            start: Some(SourceLine { line: 5, column: Some(1) }),
        };
        let main = Function {
            name: "main".into(),
            file: Some("a.js".into()),
            start: Some(SourceLine { line: 1, column: Some(1) }),
        };
        assert_eq!(side.functions[&sq].self_weight, 30);
        assert_eq!(
            side.functions[&sq].ran_as.keys().collect::<Vec<_>>(),
            [&RanAs { tier: FrameKind::TurboFan, inlined_into: Some("main".into()) }]
        );
        assert_eq!(side.functions[&main].self_weight, 10);
        assert_eq!(side.functions[&main].inclusive_weight, 40);
        assert_eq!(side.functions[&Function::named("gc_thread")].self_weight, 5);
        assert_eq!(side.sample_weight, 5);
        let apart = KeyOptions { separate_native: true, ..options() };
        let side = SideProfile::from_folded(text, Path::new("x"), &apart).unwrap();
        assert_eq!(side.functions[&main].self_weight, 0);
        assert_eq!(side.functions[&Function::named("memcpy")].self_weight, 10);
    }

    #[test]
    fn bad_lines_are_named() {
        let error = SideProfile::parse("node;a 1\nnode;b x\n", Path::new("base.folded"), &options()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "base.folded:2: expected a folded stack line `frame;frame;... count`, got \"node;b x\""
        );
        let error = SideProfile::parse("{\"schema\": \"other\"}", Path::new("r.json"), &options()).unwrap_err();
        assert!(error.to_string().starts_with("r.json: not a v8inline JSON report: missing field"), "{error}");
    }
}
