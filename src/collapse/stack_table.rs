//! Distinct stacks as a prefix tree: each stack is its root-side prefix plus
//! one frame, as the Firefox Profiler's stack table and samply keep them.
//!
//! Deep stacks share most of their frames with other stacks: on a 20-second
//! recording of a real app (`testdata/realapp/record.sh`), 10,886 distinct
//! stacks of 74 frames on average (800,000 frames) have 80,000 distinct
//! prefixes. Each prefix costs 8 bytes here, 8 for its last child and 5 in
//! the index, where a boxed slice per stack cost 4 bytes per frame.

use std::cmp::Ordering;
use std::hash::BuildHasher;

use fxhash::FxBuildHasher;
use hashbrown::HashTable;

use super::folded::FrameId;

/// A stack in a [`StackTable`]: its innermost frame and, through its
/// prefix, every frame toward the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackIndex(u32);

/// One node of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct StackNode {
    /// The stack without its innermost frame; [`NO_PREFIX`] for a root.
    prefix: u32,
    /// The innermost frame.
    frame: FrameId,
}

/// The prefix of a stack of one frame.
const NO_PREFIX: u32 = u32::MAX;

/// A node's child interned last: `node` (or [`NO_PREFIX`] for none yet)
/// with its frame.
#[derive(Debug, Clone, Copy)]
struct LastChild {
    frame: FrameId,
    node: u32,
}

impl Default for LastChild {
    fn default() -> Self {
        LastChild { frame: FrameId::from_index(0), node: NO_PREFIX }
    }
}

/// Interned stacks.
#[derive(Default)]
pub struct StackTable {
    /// The nodes; a node's index is its [`StackIndex`].
    nodes: Vec<StackNode>,
    /// The nodes by (prefix, frame), as indexes into `nodes`.
    index: HashTable<u32>,
    /// Per node, and for the roots, the child interned last under it: past
    /// where a stack leaves the last one, it mostly goes on as a stack seen
    /// before did, and a look at the parent's last child then saves a hash
    /// lookup (mostly a cache miss) per frame.
    last_child: Vec<LastChild>,
    /// The same for the roots.
    last_root: LastChild,
    /// Hashes nodes for `index`.
    hasher: FxBuildHasher,
    /// The frames of the stack interned last, root first: consecutive
    /// samples mostly share their outer frames, which then need no lookup.
    last_frames: Vec<FrameId>,
    /// The nodes of `last_frames`, root first.
    last_nodes: Vec<u32>,
}

impl StackTable {
    /// An empty table.
    pub fn new() -> StackTable {
        StackTable::default()
    }

    /// The number of distinct stacks and prefixes of stacks.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The stack of `frames` (innermost first), added if new; `None` for no
    /// frame.
    pub fn intern(&mut self, frames: &[FrameId]) -> Option<StackIndex> {
        let shared = frames.iter().rev().zip(&self.last_frames).take_while(|(new, last)| new == last).count();
        self.last_frames.truncate(shared);
        self.last_nodes.truncate(shared);
        let mut prefix = self.last_nodes.last().copied().unwrap_or(NO_PREFIX);
        for &frame in frames[..frames.len() - shared].iter().rev() {
            prefix = self.intern_node(StackNode { prefix, frame });
            self.last_frames.push(frame);
            self.last_nodes.push(prefix);
        }
        (prefix != NO_PREFIX).then_some(StackIndex(prefix))
    }

    /// The index of `node`, added if new.
    fn intern_node(&mut self, node: StackNode) -> u32 {
        let last_child = match self.last_child.get(node.prefix as usize) {
            Some(&last_child) => last_child,
            None => self.last_root,
        };
        if last_child.node != NO_PREFIX && last_child.frame == node.frame {
            return last_child.node;
        }
        let found = self.find_or_insert(node);
        let last_child = LastChild { frame: node.frame, node: found };
        match self.last_child.get_mut(node.prefix as usize) {
            Some(slot) => *slot = last_child,
            None => self.last_root = last_child,
        }
        found
    }

    /// The index of `node` through the hash index, added if new.
    fn find_or_insert(&mut self, node: StackNode) -> u32 {
        let hash = self.hasher.hash_one(node);
        let nodes = &self.nodes;
        if let Some(&found) = self.index.find(hash, |&candidate| nodes[candidate as usize] == node) {
            return found;
        }
        let new = u32::try_from(self.nodes.len()).expect("fewer than 2^32 - 1 distinct stack prefixes");
        self.nodes.push(node);
        self.last_child.push(LastChild::default());
        let (nodes, hasher) = (&self.nodes, &self.hasher);
        self.index.insert_unique(hash, new, |&existing| hasher.hash_one(nodes[existing as usize]));
        new
    }

    /// Replaces the contents of `frames` by the frames of `stack`, innermost
    /// first.
    pub fn frames(&self, stack: StackIndex, frames: &mut Vec<FrameId>) {
        frames.clear();
        let mut node = stack.0;
        while let Some(&StackNode { prefix, frame }) = self.nodes.get(node as usize) {
            frames.push(frame);
            node = prefix;
        }
    }

    /// Compares the folded texts of two stacks (`root;...;leaf`, with the
    /// frame names `name` gives), using `buffers` for their frames.
    pub fn compare_texts<'name, F: Fn(FrameId) -> &'name str>(
        &self,
        left: StackIndex,
        right: StackIndex,
        name: &F,
        buffers: &mut [Vec<FrameId>; 2],
    ) -> Ordering {
        if left == right {
            return Ordering::Equal;
        }
        let [left_frames, right_frames] = buffers;
        self.frames(left, left_frames);
        self.frames(right, right_frames);
        let common =
            left_frames.iter().rev().zip(right_frames.iter().rev()).take_while(|(left, right)| left == right).count();
        // Equal frames render to equal text, separators included.
        text_after(left_frames, common, name).cmp(text_after(right_frames, common, name))
    }
}

/// The bytes of a stack's folded text after its `common` root frames
/// (`frames` innermost first).
fn text_after<'frames, 'name: 'frames, F: Fn(FrameId) -> &'name str>(
    frames: &'frames [FrameId],
    common: usize,
    name: &'frames F,
) -> impl Iterator<Item = u8> + 'frames {
    let rest = &frames[..frames.len() - common];
    rest.iter().rev().enumerate().flat_map(move |(position, &id)| {
        let separator: &[u8] = if position > 0 || common > 0 { b";" } else { b"" };
        separator.iter().chain(name(id).as_bytes()).copied()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(raw: &[u32]) -> Vec<FrameId> {
        raw.iter().map(|&id| FrameId::from_index(id as usize)).collect()
    }

    #[test]
    fn equal_stacks_share_one_index_and_prefixes_are_shared() {
        let mut table = StackTable::new();
        let a = table.intern(&ids(&[3, 2, 1])).unwrap();
        let b = table.intern(&ids(&[4, 2, 1])).unwrap();
        let c = table.intern(&ids(&[7])).unwrap();
        let again = table.intern(&ids(&[3, 2, 1])).unwrap();
        assert_eq!(a, again);
        assert_ne!(a, b);
        // 1, 1-2, 1-2-3, 1-2-4, 7.
        assert_eq!(table.len(), 5);
        let mut frames = Vec::new();
        table.frames(b, &mut frames);
        assert_eq!(frames, ids(&[4, 2, 1]));
        table.frames(c, &mut frames);
        assert_eq!(frames, ids(&[7]));
        assert_eq!(table.intern(&[]), None);
    }

    #[test]
    fn compares_by_text_not_by_id() {
        let names = ["a", "ab", "a!", "x"];
        let name = |id: FrameId| names[id.index()];
        let mut table = StackTable::new();
        let mut buffers = [Vec::new(), Vec::new()];
        // "a;x" > "a!" (';' > '!') and "a;x" < "ab", "a" < "a!".
        let a_x = table.intern(&ids(&[3, 0])).unwrap();
        let a_bang = table.intern(&ids(&[2])).unwrap();
        let ab = table.intern(&ids(&[1])).unwrap();
        let a = table.intern(&ids(&[0])).unwrap();
        let mut stacks = vec![a_x, a_bang, ab, a];
        stacks.sort_by(|&left, &right| table.compare_texts(left, right, &name, &mut buffers));
        assert_eq!(stacks, vec![a, a_bang, a_x, ab]);
    }
}
