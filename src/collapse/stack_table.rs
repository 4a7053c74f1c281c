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

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// The number of an interned frame name in a [`Folder`](super::Folder): the
/// key of the frames a [`StackTable`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FrameId(u32);

impl FrameId {
    /// The id of the name at `index` of a folder's name table.
    pub(crate) fn from_index(index: usize) -> FrameId {
        FrameId(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// The frame's index in the folder's name table.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

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

    /// Every node, in the byte order of the folded texts of the stacks they
    /// end (`root;...;leaf`, as inferno sorts its lines), by one walk of the
    /// tree: no text is rendered and no two stacks are compared. Exact when
    /// no frame name contains `;` (then distinct stacks have distinct texts);
    /// `None` otherwise, and the caller compares texts
    /// ([`StackTable::compare_texts`]).
    ///
    /// Under a node, a child's own stack (`...;name`) and the stacks below
    /// it (`...;name;...`) sort as the keys `name` + end and `name` + `;`:
    /// where one sibling's name is a prefix of another's, the byte after
    /// it decides, and bytes below `;` (space, digits, `/`, `:`) sort the
    /// longer name between the shorter one's own stack and its subtree.
    pub fn in_text_order<'name, F: Fn(FrameId) -> &'name str>(&self, name: F) -> Option<Vec<StackIndex>> {
        if self.nodes.iter().any(|node| name(node.frame).contains(';')) {
            return None;
        }
        // The children of each node, and the roots (as children of node
        // `len`), as one array by parent.
        let root_parent = self.nodes.len();
        let parent_of = |node: &StackNode| if node.prefix == NO_PREFIX { root_parent } else { node.prefix as usize };
        let mut child_starts = vec![0u32; self.nodes.len() + 2];
        for node in &self.nodes {
            child_starts[parent_of(node) + 1] += 1;
        }
        for parent in 1..child_starts.len() {
            child_starts[parent] += child_starts[parent - 1];
        }
        // child_starts[parent]..child_starts[parent + 1] are its children.
        let mut filled = child_starts.clone();
        let mut children = vec![0u32; self.nodes.len()];
        for (index, node) in self.nodes.iter().enumerate() {
            let slot = &mut filled[parent_of(node)];
            children[*slot as usize] = index as u32;
            *slot += 1;
        }
        drop(filled);
        /// A child's own stack (`ends`) or the stacks below it.
        #[derive(Clone, Copy)]
        struct Entry {
            node: u32,
            ends: bool,
        }
        let key_order = |left: &Entry, right: &Entry| {
            let (left_name, right_name) =
                (name(self.nodes[left.node as usize].frame), name(self.nodes[right.node as usize].frame));
            let common = left_name.len().min(right_name.len());
            let by_common = left_name.as_bytes()[..common].cmp(&right_name.as_bytes()[..common]);
            // The byte after the common part; `None` (the end) first.
            let next = |name: &str, ends: bool| match name.as_bytes().get(common) {
                Some(&byte) => Some(byte),
                None if ends => None,
                None => Some(b';'),
            };
            by_common.then_with(|| next(left_name, left.ends).cmp(&next(right_name, right.ends)))
        };
        let mut order = Vec::with_capacity(self.nodes.len());
        // Entries still to visit, the next one last.
        let mut pending: Vec<Entry> = Vec::new();
        let mut siblings: Vec<Entry> = Vec::new();
        let mut push_children = |parent: usize, pending: &mut Vec<Entry>| {
            let range = child_starts[parent] as usize..child_starts[parent + 1] as usize;
            siblings.clear();
            for &child in &children[range] {
                siblings.push(Entry { node: child, ends: true });
                siblings.push(Entry { node: child, ends: false });
            }
            if siblings.len() > 2 {
                siblings.sort_unstable_by(key_order);
            }
            pending.extend(siblings.iter().rev());
        };
        push_children(root_parent, &mut pending);
        while let Some(entry) = pending.pop() {
            if entry.ends {
                order.push(StackIndex(entry.node));
            } else {
                push_children(entry.node as usize, &mut pending);
            }
        }
        Some(order)
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

    /// The walk gives the order of a sort by text, on names where one is a
    /// prefix of another and the next byte lies below or above `;`.
    #[test]
    fn walks_in_text_order() {
        let names = ["a", "ab", "a!", "x", "a b", "", "b", "a;b"];
        let name = |id: FrameId| names[id.index()];
        let mut table = StackTable::new();
        let mut stacks = Vec::new();
        // Every stack of up to three frames over the first six names.
        for first in 0..6u32 {
            stacks.push(table.intern(&ids(&[first])).unwrap());
            for second in 0..6u32 {
                stacks.push(table.intern(&ids(&[second, first])).unwrap());
                for third in [0, 2, 4] {
                    stacks.push(table.intern(&ids(&[third, second, first])).unwrap());
                }
            }
        }
        let text = |stack: StackIndex| {
            let mut frames = Vec::new();
            table.frames(stack, &mut frames);
            frames.iter().rev().map(|&id| name(id)).collect::<Vec<_>>().join(";")
        };
        let mut by_text = stacks.clone();
        by_text.sort_by_key(|&stack| text(stack));
        let walked = table.in_text_order(name).unwrap();
        assert_eq!(
            walked.iter().map(|&stack| text(stack)).collect::<Vec<_>>(),
            by_text.iter().map(|&stack| text(stack)).collect::<Vec<_>>()
        );
        assert_eq!(walked.len(), table.len());
        // A name with the separator: no walk.
        table.intern(&ids(&[7, 6]));
        assert_eq!(table.in_text_order(name), None);
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
