//! Folded stacks as text (`root;caller;...;leaf count`, as v8inline and
//! inferno-collapse-perf write them), read back into a [`StackProfile`]:
//! each frame's kind from its suffix (`_[i]`, `_[j]`, `_[k]`, [`FoldedSuffix`])
//! and V8's tier marker, JavaScript functions from V8's names
//! ([`CodeName`]). A line that is not `stack count` is a [`FoldedLineError`].

use super::v8log::CodeName;
use crate::model::frames::{FrameKind, FrameTable, Function, Location, LocationId, ProfileFrame};
use crate::model::stack_profile::{ProfileBuilder, StackProfile};

impl StackProfile {
    /// Builds the profile from folded lines (`root;...;leaf count`), as
    /// v8inline or inferno-collapse-perf write them. ProfileFrame kinds come from
    /// the annotations (`_[i]`, `_[j]`, `_[k]`) and V8's tier markers;
    /// JavaScript functions from V8's names (`JS:*name file:line:column`).
    /// Lines that are not `stack count` are returned as errors with their
    /// 1-based line number.
    pub fn from_folded(text: &str) -> (StackProfile, Vec<FoldedLineError>) {
        let mut builder = ProfileBuilder::default();
        let mut errors = Vec::new();
        let mut locations = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let Some((stack, count)) = line.rsplit_once(' ').and_then(|(stack, count)| {
                let count: u64 = count.parse().ok()?;
                Some((stack, count))
            }) else {
                errors.push(FoldedLineError { line_number: index + 1, line: line.chars().take(120).collect() });
                continue;
            };
            locations.clear();
            // Inlined frames (`_[i]`) and the frame they were inlined into
            // form one location, as they do in a detailed profile.
            let mut pending = Vec::new();
            let names: Vec<&str> = stack.split(';').collect();
            for (position, name) in names.iter().enumerate().rev() {
                let frame =
                    if position == 0 { builder.frames.root_frame(name) } else { builder.frames.folded_frame(name) };
                let is_inlined = frame.kind == FrameKind::Inlined;
                pending.push(frame);
                if !is_inlined || position == 0 {
                    let frames = std::mem::take(&mut pending);
                    locations.push(builder.frames.intern_location(Location { address: None, frames }));
                }
            }
            builder.add_stack(&locations, count, count);
        }
        (builder.finish(None), errors)
    }
}

/// A line of folded text that is not `stack count`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldedLineError {
    /// 1-based line number.
    pub line_number: usize,
    /// The start of the line.
    pub line: String,
}

impl FrameTable {
    /// The location of a frame known by its name only (without annotation
    /// suffix): JIT code named by V8 (`JS:*square /app/deep.js:16:16`) is
    /// parsed into its JavaScript function, other names are the function.
    pub fn named_location(&mut self, name: &str, kind: FrameKind) -> LocationId {
        let function = match kind {
            FrameKind::Jit => CodeName::javascript(name).map_or_else(|| Function::named(name), |name| name.function()),
            _ => Function::named(name),
        };
        let function = self.intern_function(function);
        self.intern_location(Location { address: None, frames: vec![ProfileFrame { function, line: None, kind }] })
    }

    /// The root frame of a folded stack.
    fn root_frame(&mut self, name: &str) -> ProfileFrame {
        let function = self.intern_function(Function::named(name));
        ProfileFrame { function, line: None, kind: FrameKind::Root }
    }

    /// A non-root frame of a folded stack: its kind from its suffix and
    /// V8's tier marker, its function from V8's name ([`CodeName`]).
    fn folded_frame(&mut self, name: &str) -> ProfileFrame {
        let (name, suffix) = strip_annotation(name);
        let code_name = CodeName::javascript(name);
        let kind = match (suffix, &code_name) {
            (Some(FoldedSuffix::Inlined), _) => FrameKind::Inlined,
            (Some(FoldedSuffix::Kernel), _) => FrameKind::Kernel,
            (_, Some(code_name)) => code_name.marker.map_or(FrameKind::Jit, |marker| FrameKind::from_tier(marker.tier)),
            (Some(FoldedSuffix::Jit), None) => FrameKind::Jit,
            (None, None) => FrameKind::Native,
        };
        let function = code_name.map_or_else(|| Function::named(name), |code_name| code_name.function());
        let function = self.intern_function(function);
        ProfileFrame { function, line: None, kind }
    }
}

/// The suffix (inferno's "annotation") that inferno-style collapsers append
/// to frame names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldedSuffix {
    /// `_[i]`: inlined.
    Inlined,
    /// `_[j]`: JIT code.
    Jit,
    /// `_[k]`: kernel.
    Kernel,
}

/// Splits the suffix (`_[i]`, `_[j]`, `_[k]`) off a folded frame name.
pub fn strip_annotation(name: &str) -> (&str, Option<FoldedSuffix>) {
    for (text, suffix) in [("_[i]", FoldedSuffix::Inlined), ("_[j]", FoldedSuffix::Jit), ("_[k]", FoldedSuffix::Kernel)]
    {
        if let Some(stripped) = name.strip_suffix(text) {
            return (stripped, Some(suffix));
        }
    }
    (name, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_text_gives_kinds_from_annotations() {
        let text = "node;main;JS:*kernel /a.js:3:1_[j];JS:*square /a.js:1:1_[i] 5\nnode;page_fault_[k] 2\nnot a line\n";
        let (profile, errors) = StackProfile::from_folded(text);
        assert_eq!(errors, vec![FoldedLineError { line_number: 3, line: "not a line".to_string() }]);
        assert_eq!(profile.total_samples(), 7);
        let kinds: Vec<Vec<(String, FrameKind)>> = profile
            .stacks
            .iter()
            .map(|stack| {
                profile.frames(stack).map(|frame| (profile.function(frame.function).to_string(), frame.kind)).collect()
            })
            .collect();
        let first_location = profile.location(profile.stacks[0].locations[0]);
        assert_eq!(first_location.frames.len(), 2, "the inlined square and kernel are one location");
        assert_eq!(
            kinds,
            vec![
                vec![
                    ("square /a.js:1:1".to_string(), FrameKind::Inlined),
                    ("kernel /a.js:3:1".to_string(), FrameKind::TurboFan),
                    ("main".to_string(), FrameKind::Native),
                    ("node".to_string(), FrameKind::Root),
                ],
                vec![("page_fault".to_string(), FrameKind::Kernel), ("node".to_string(), FrameKind::Root)],
            ]
        );
    }
}
