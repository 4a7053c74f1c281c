//! Stacks of functions with source lines and tiers: the model behind every
//! output richer than folded text (pprof, JSON report, annotations, summary,
//! compare).
//!
//! A [`StackProfile`] is built either from a folder that recorded details,
//! asking the expander about each expanded code location
//! (`StackProfile::from_folder`), or from folded text, parsing V8's frame
//! names, which carry the function's script and start but not the sampled
//! line (`StackProfile::from_folded`).

use indexmap::IndexSet;

use super::frames::{FrameTable, Function, FunctionId, Location, LocationId, ProfileFrame};

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
        &self.functions[id.index()]
    }

    /// The location with this id.
    pub fn location(&self, id: LocationId) -> &Location {
        &self.locations[id.index()]
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
}

/// Interns functions and locations and merges stacks: how a
/// [`StackProfile`] is built (from a folder's detailed stacks, or from folded
/// text).
#[derive(Default)]
pub(crate) struct ProfileBuilder {
    /// The functions and locations of the stacks added.
    pub(crate) frames: FrameTable,
    stacks: rustc_hash::FxHashMap<Vec<LocationId>, StackWeight>,
}

/// The samples and count of a stack being merged.
#[derive(Debug, Clone, Copy, Default)]
struct StackWeight {
    samples: u64,
    count: u64,
}

impl ProfileBuilder {
    /// Adds `samples` and `count` to the stack of `locations` (leaf first);
    /// an empty stack is left out.
    pub(crate) fn add_stack(&mut self, locations: &[LocationId], samples: u64, count: u64) {
        if locations.is_empty() {
            return;
        }
        let weight = self.stacks.entry(locations.to_vec()).or_default();
        weight.samples += samples;
        weight.count = weight.count.wrapping_add(count);
    }

    /// The profile of the stacks added, of samples of `event`.
    pub(crate) fn finish(self, event: Option<String>) -> StackProfile {
        let mut stacks: Vec<Stack> = self
            .stacks
            .into_iter()
            .map(|(locations, weight)| Stack { locations, samples: weight.samples, count: weight.count })
            .collect();
        stacks.sort_unstable_by(|left, right| left.locations.cmp(&right.locations));
        StackProfile { functions: self.frames.functions, locations: self.frames.locations, stacks, event }
    }
}
