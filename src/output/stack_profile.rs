//! Stacks of functions with source lines and tiers: the model behind every
//! output richer than folded text (pprof, JSON report, annotations, summary,
//! compare).
//!
//! A [`StackProfile`] is built either from a [`Folder`] that recorded
//! details, asking the [`V8Expander`] about each expanded code location, or
//! from folded text, parsing V8's frame names (which carry the function's
//! script and start, but not the sampled line).

use std::fmt;

use indexmap::IndexSet;

use crate::collapse::{DetailedFrame, Folder, FrameOrigin, PassedThroughKind};
use crate::formats::v8log::{CodeName, Tier};
use crate::v8::expand::{LocationDetails, V8Expander};
use crate::v8::inline_map::SourceFrame;

/// What kind of code a frame ran in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameKind {
    /// Ignition bytecode.
    Interpreted,
    /// Sparkplug baseline code.
    Sparkplug,
    /// Maglev code.
    Maglev,
    /// TurboFan code.
    TurboFan,
    /// A function inlined into optimized code of another.
    Inlined,
    /// JIT code of no known tier: builtins, stubs, regular expressions, or
    /// code v8inline could not resolve.
    Jit,
    /// Native (C, C++, Rust...) code.
    Native,
    /// Kernel code.
    Kernel,
    /// The root frame: the process (command) name.
    Root,
}

impl FrameKind {
    /// All kinds, in report order.
    pub const ALL: [FrameKind; 9] = [
        FrameKind::Interpreted,
        FrameKind::Sparkplug,
        FrameKind::Maglev,
        FrameKind::TurboFan,
        FrameKind::Inlined,
        FrameKind::Jit,
        FrameKind::Native,
        FrameKind::Kernel,
        FrameKind::Root,
    ];

    /// The kind of code of a V8 tier.
    pub fn from_tier(tier: Tier) -> FrameKind {
        match tier {
            Tier::Interpreted => FrameKind::Interpreted,
            Tier::Sparkplug => FrameKind::Sparkplug,
            Tier::Maglev => FrameKind::Maglev,
            Tier::TurboFan => FrameKind::TurboFan,
        }
    }

    /// The name used in reports: `interpreted`, `Sparkplug`, `Maglev`,
    /// `TurboFan`, `inlined`, `jit`, `native`, `kernel`, `root`.
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Interpreted => "interpreted",
            FrameKind::Sparkplug => "Sparkplug",
            FrameKind::Maglev => "Maglev",
            FrameKind::TurboFan => "TurboFan",
            FrameKind::Inlined => "inlined",
            FrameKind::Jit => "jit",
            FrameKind::Native => "native",
            FrameKind::Kernel => "kernel",
            FrameKind::Root => "root",
        }
    }

    /// The kind named `name` by [`FrameKind::name`].
    pub fn from_name(name: &str) -> Option<FrameKind> {
        FrameKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// Whether this is JavaScript code (of a tier, or inlined).
    pub fn is_javascript(self) -> bool {
        matches!(
            self,
            FrameKind::Interpreted
                | FrameKind::Sparkplug
                | FrameKind::Maglev
                | FrameKind::TurboFan
                | FrameKind::Inlined
        )
    }
}

/// A function: what pprof calls a Function, what reports rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Function {
    /// The function's name: `square`, `(anonymous)` for unnamed
    /// JavaScript, or a native symbol as inferno names it.
    pub name: String,
    /// The script (usually its path) for JavaScript functions.
    pub file: Option<String>,
    /// Where the function starts in `file`, when known.
    pub start: Option<SourceLine>,
}

impl Function {
    /// A function known only by its name.
    pub fn named(name: &str) -> Function {
        Function { name: name.to_string(), file: None, start: None }
    }
}

impl fmt::Display for Function {
    /// `name file:line:column` for JavaScript (V8's own naming), else the name.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.name)?;
        if let Some(file) = &self.file {
            write!(formatter, " {file}")?;
            if let Some(start) = self.start {
                write!(formatter, ":{}", start.line)?;
                if let Some(column) = start.column {
                    write!(formatter, ":{column}")?;
                }
            }
        }
        Ok(())
    }
}

/// A 1-based line, and column when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceLine {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (UTF-16 code units for JavaScript).
    pub column: Option<u32>,
}

/// The index of a [`Function`] in [`StackProfile::functions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionId(pub u32);

/// One frame: a function running at a line, in a kind of code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProfileFrame {
    /// The function.
    pub function: FunctionId,
    /// The line running in this frame (the call site for outer frames),
    /// when known.
    pub line: Option<SourceLine>,
    /// The kind of code.
    pub kind: FrameKind,
}

/// One code location: a sampled PC with its inline frames, or a named
/// frame that has no address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    /// The runtime address, for expanded JIT code.
    pub address: Option<u64>,
    /// The frames, innermost first; more than one when functions were inlined
    /// (the last is the code object's own function).
    pub frames: Vec<ProfileFrame>,
}

/// The index of a [`Location`] in [`StackProfile::locations`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocationId(pub u32);

/// A distinct stack and its weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    /// The locations, leaf first; the last is usually the root frame.
    pub locations: Vec<LocationId>,
    /// How many samples (folded input: the count).
    pub samples: u64,
    /// The sum of their periods (folded input: the count).
    pub count: u64,
}

/// Stacks of locations of functions; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct StackProfile {
    /// Every function, by id.
    pub functions: IndexSet<Function>,
    /// Every location, by id.
    pub locations: IndexSet<Location>,
    /// The distinct stacks, sorted by their location ids for deterministic
    /// output.
    pub stacks: Vec<Stack>,
    /// The perf event the samples are of, when known.
    pub event: Option<String>,
}

impl StackProfile {
    /// The function with this id.
    pub fn function(&self, id: FunctionId) -> &Function {
        &self.functions[id.0 as usize]
    }

    /// The location with this id.
    pub fn location(&self, id: LocationId) -> &Location {
        &self.locations[id.0 as usize]
    }

    /// The number of samples of all stacks.
    pub fn total_samples(&self) -> u64 {
        self.stacks.iter().map(|stack| stack.samples).sum()
    }

    /// The sum of the counts (periods) of all stacks.
    pub fn total_count(&self) -> u64 {
        self.stacks.iter().map(|stack| stack.count).sum()
    }

    /// The frames of a stack, leaf first (each location's frames innermost
    /// first).
    pub fn frames<'profile>(
        &'profile self,
        stack: &'profile Stack,
    ) -> impl Iterator<Item = &'profile ProfileFrame> + 'profile {
        stack.locations.iter().flat_map(|&location| self.location(location).frames.iter())
    }

    /// Builds the profile from `folder`'s detailed stacks (see
    /// [`Folder::record_details`]), describing expanded frames through
    /// `expander`, whose location ids tagged them.
    pub fn from_folder(folder: &Folder, expander: &V8Expander, event: Option<String>) -> StackProfile {
        let mut builder = ProfileBuilder::default();
        let mut locations = Vec::new();
        for detailed in folder.detailed_stacks() {
            locations.clear();
            let mut rest = detailed.frames;
            while let Some((first, _)) = rest.split_first() {
                let taken = match first.origin {
                    FrameOrigin::Expanded { location, .. } => {
                        // The frames of one location: depths 0, 1, ... (a cut
                        // by skip_after may end them early).
                        let length = 1 + rest[1..]
                            .iter()
                            .enumerate()
                            .take_while(|(index, frame)| {
                                frame.origin
                                    == FrameOrigin::Expanded {
                                        location,
                                        inline_depth: u16::try_from(index + 1).unwrap_or(u16::MAX),
                                    }
                            })
                            .count();
                        match expander.location_details(location) {
                            Some(details) => locations.push(builder.frames.expanded_location(&details, length)),
                            None => {
                                for frame in &rest[..length] {
                                    locations.push(builder.named_location(folder, frame, FrameKind::Jit));
                                }
                            }
                        }
                        length
                    }
                    FrameOrigin::ExpandedWithoutLocation => {
                        locations.push(builder.named_location(folder, first, FrameKind::Jit));
                        1
                    }
                    FrameOrigin::PassedThrough(kind) => {
                        let kind = match kind {
                            PassedThroughKind::Root => FrameKind::Root,
                            PassedThroughKind::Kernel => FrameKind::Kernel,
                            PassedThroughKind::Jit => FrameKind::Jit,
                            PassedThroughKind::Native => FrameKind::Native,
                        };
                        locations.push(builder.named_location(folder, first, kind));
                        1
                    }
                };
                rest = &rest[taken..];
            }
            builder.add_stack(&locations, detailed.samples, detailed.count);
        }
        builder.finish(event)
    }

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

/// Functions and locations, interned: what stacks of typed frames refer to
/// by [`FunctionId`] and [`LocationId`]. [`StackProfile`] and the timeline
/// ([`crate::output::timeline`]) build their frames here.
#[derive(Debug, Clone, Default)]
pub struct FrameTable {
    /// Every function, by id.
    pub functions: IndexSet<Function>,
    /// Every location, by id.
    pub locations: IndexSet<Location>,
}

impl FrameTable {
    /// The function with this id.
    pub fn function(&self, id: FunctionId) -> &Function {
        &self.functions[id.0 as usize]
    }

    /// The location with this id.
    pub fn location(&self, id: LocationId) -> &Location {
        &self.locations[id.0 as usize]
    }

    /// The id of `function`, added if new.
    pub fn intern_function(&mut self, function: Function) -> FunctionId {
        let index = match self.functions.get_index_of(&function) {
            Some(index) => index,
            None => self.functions.insert_full(function).0,
        };
        FunctionId(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// The id of `location`, added if new.
    pub fn intern_location(&mut self, location: Location) -> LocationId {
        let index = match self.locations.get_index_of(&location) {
            Some(index) => index,
            None => self.locations.insert_full(location).0,
        };
        LocationId(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// The location of an expanded code location: its first `frame_count`
    /// inline frames (all of them unless `skip_after` cut the stack).
    pub fn expanded_location(&mut self, details: &LocationDetails<'_>, frame_count: usize) -> LocationId {
        let frames = details.frames[..frame_count.min(details.frames.len())]
            .iter()
            .map(|frame| self.source_frame(frame))
            .collect();
        self.intern_location(Location { address: Some(details.address), frames })
    }

    /// A frame of an expanded location.
    pub fn source_frame(&mut self, frame: &SourceFrame<'_>) -> ProfileFrame {
        let name = if frame.function_name.is_empty() { "(anonymous)" } else { frame.function_name };
        let function = self.intern_function(Function {
            name: name.to_string(),
            file: (!frame.script_name.is_empty()).then(|| frame.script_name.to_string()),
            start: frame.function_start.map(|start| SourceLine { line: start.line, column: Some(start.column) }),
        });
        let kind = match (frame.inlined, frame.tier) {
            (true, _) => FrameKind::Inlined,
            (false, Some(tier)) => FrameKind::from_tier(tier),
            (false, None) => FrameKind::Jit,
        };
        let line = frame.position.map(|position| SourceLine { line: position.line, column: Some(position.column) });
        ProfileFrame { function, line, kind }
    }

    /// The location of a frame known by its name only (without annotation
    /// suffix): JIT code named by V8 (`JS:*square /app/deep.js:16:16`) is
    /// parsed into its JavaScript function, other names are the function.
    pub fn named_location(&mut self, name: &str, kind: FrameKind) -> LocationId {
        let function = match kind {
            FrameKind::Jit => parse_v8_name(name).map_or_else(|| Function::named(name), |parsed| parsed.function),
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

    /// A non-root frame of a folded stack.
    fn folded_frame(&mut self, name: &str) -> ProfileFrame {
        let (name, annotation) = strip_annotation(name);
        let parsed = parse_v8_name(name);
        let kind = match (annotation, &parsed) {
            (Some(Annotation::Inlined), _) => FrameKind::Inlined,
            (Some(Annotation::Kernel), _) => FrameKind::Kernel,
            (_, Some(parsed)) => parsed.tier.map_or(FrameKind::Jit, FrameKind::from_tier),
            (Some(Annotation::Jit), None) => FrameKind::Jit,
            (None, None) => FrameKind::Native,
        };
        let function = parsed.map_or_else(|| Function::named(name), |parsed| parsed.function);
        let function = self.intern_function(function);
        ProfileFrame { function, line: None, kind }
    }
}

/// Interns functions and locations and merges stacks.
#[derive(Default)]
struct ProfileBuilder {
    frames: FrameTable,
    stacks: fxhash::FxHashMap<Vec<LocationId>, StackWeight>,
}

/// The samples and count of a stack being merged.
#[derive(Debug, Clone, Copy, Default)]
struct StackWeight {
    samples: u64,
    count: u64,
}

impl ProfileBuilder {
    /// A location for a frame of a folder known by its folded name only.
    fn named_location(&mut self, folder: &Folder, frame: &DetailedFrame, kind: FrameKind) -> LocationId {
        let (name, _) = strip_annotation(folder.frame_name(frame.frame));
        self.frames.named_location(name, kind)
    }

    fn add_stack(&mut self, locations: &[LocationId], samples: u64, count: u64) {
        if locations.is_empty() {
            return;
        }
        let weight = self.stacks.entry(locations.to_vec()).or_default();
        weight.samples += samples;
        weight.count = weight.count.wrapping_add(count);
    }

    fn finish(self, event: Option<String>) -> StackProfile {
        let mut stacks: Vec<Stack> = self
            .stacks
            .into_iter()
            .map(|(locations, weight)| Stack { locations, samples: weight.samples, count: weight.count })
            .collect();
        stacks.sort_unstable_by(|left, right| left.locations.cmp(&right.locations));
        StackProfile { functions: self.frames.functions, locations: self.frames.locations, stacks, event }
    }
}

/// An annotation inferno-style collapsers append to frame names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Annotation {
    /// `_[i]`: inlined.
    Inlined,
    /// `_[j]`: JIT code.
    Jit,
    /// `_[k]`: kernel.
    Kernel,
}

/// Splits an annotation suffix off a folded frame name.
fn strip_annotation(name: &str) -> (&str, Option<Annotation>) {
    for (suffix, annotation) in [("_[i]", Annotation::Inlined), ("_[j]", Annotation::Jit), ("_[k]", Annotation::Kernel)]
    {
        if let Some(stripped) = name.strip_suffix(suffix) {
            return (stripped, Some(annotation));
        }
    }
    (name, None)
}

/// A JavaScript function parsed from V8's code name.
struct ParsedV8Name {
    function: Function,
    tier: Option<Tier>,
}

/// Reads `TAG:MARKER name script:line[:column]` (V8's naming of JavaScript
/// code, as in the jitdump and the folded stacks, [`CodeName`]); `None` for
/// other names.
fn parse_v8_name(name: &str) -> Option<ParsedV8Name> {
    let code_name = CodeName::javascript(name)?;
    let parsed = code_name.function_name();
    let name = if parsed.function.is_empty() { "(anonymous)" } else { parsed.function };
    Some(ParsedV8Name {
        function: Function {
            name: name.to_string(),
            file: (!parsed.script.is_empty()).then(|| parsed.script.to_string()),
            start: parsed.start.map(|start| SourceLine { line: start.line, column: Some(start.column) }),
        },
        tier: code_name.marker.map(|marker| marker.tier),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v8_names_parse_into_functions_and_tiers() {
        let parsed = parse_v8_name("JS:*square /app/deep.js:16:16").unwrap();
        assert_eq!(parsed.function.to_string(), "square /app/deep.js:16:16");
        assert_eq!(parsed.tier, Some(Tier::TurboFan));
        let parsed = parse_v8_name("LazyCompile:~weigh /app/deep.js:20").unwrap();
        assert_eq!(parsed.function.name, "weigh");
        // A name without a column starts at column 1, as `FunctionName::parse` reads it.
        assert_eq!(parsed.function.start, Some(SourceLine { line: 20, column: Some(1) }));
        assert_eq!(parsed.tier, Some(Tier::Interpreted));
        let parsed = parse_v8_name("JS:^ /app/deep.js:1:1").unwrap();
        assert_eq!(parsed.function.name, "(anonymous)");
        assert_eq!(parsed.tier, Some(Tier::Sparkplug));
        let parsed = parse_v8_name("JS:o+kernel /app/deep.js:32:16").unwrap();
        assert_eq!((parsed.function.name.as_str(), parsed.tier), ("kernel", Some(Tier::Maglev)));
        let parsed = parse_v8_name("JS:*'combine /app/deep.js:26:17").unwrap();
        assert_eq!((parsed.function.name.as_str(), parsed.tier), ("combine", Some(Tier::TurboFan)));
        let parsed = parse_v8_name("JS:onload /app/page.js:3:1").unwrap();
        assert_eq!((parsed.function.name.as_str(), parsed.tier), ("onload", None));
        assert!(parse_v8_name("Builtin:ArrayMap").is_none());
        assert!(parse_v8_name("std::vector<int>::push_back").is_none());
    }

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
