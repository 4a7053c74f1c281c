//! Typed frames: the functions and code locations stacks refer to, interned
//! in a [`FrameTable`] and named by [`FunctionId`] and [`LocationId`].
//!
//! A [`Location`] is a sampled address with its inline frames, innermost
//! first, or a frame known by its name only; each [`ProfileFrame`] is a
//! [`Function`] running at a line in a kind of code ([`FrameKind`]). The
//! stack profile ([`super::stack_profile`]) and the timeline share them.

use std::fmt;

use indexmap::IndexSet;

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

/// The index of a [`Function`] in [`FrameTable::functions`] (and
/// [`StackProfile::functions`](super::stack_profile::StackProfile::functions)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionId(pub(crate) u32);

impl FunctionId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

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

/// The index of a [`Location`] in [`FrameTable::locations`] (and
/// [`StackProfile::locations`](super::stack_profile::StackProfile::locations)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocationId(pub(crate) u32);

impl LocationId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Functions and locations, interned: what stacks of typed frames refer to
/// by [`FunctionId`] and [`LocationId`]. [`StackProfile`](super::stack_profile::StackProfile)
/// and the timeline build their frames here.
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
        &self.functions[id.index()]
    }

    /// The location with this id.
    pub fn location(&self, id: LocationId) -> &Location {
        &self.locations[id.index()]
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
}
