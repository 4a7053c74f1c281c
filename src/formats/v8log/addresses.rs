//! The code objects' addresses followed through `code-move` and
//! `code-delete` ([`CodeAddresses`], replayed only when a record needs it),
//! and the hashing the address maps use ([`AddressHashing`]).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use super::{CodeLog, CodeObjectId};

/// Hashing of addresses for the maps keyed by them. FxHash keeps a key's
/// low bits in the hash's low bits, which pick the bucket: aligned addresses,
/// or addresses differing only in high bits, then crowd into few buckets.
/// Folding the 128-bit product mixes every bit into the low ones.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct AddressHashing;

impl BuildHasher for AddressHashing {
    type Hasher = AddressHasher;

    fn build_hasher(&self) -> AddressHasher {
        AddressHasher(0)
    }
}

/// The hasher of [`AddressHashing`].
#[derive(Debug, Clone, Copy)]
pub(super) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        // The multiplier of FxHash; the high half of the product folded in.
        let product = u128::from(self.0 ^ value) * 0x517c_c1b7_2722_0a95;
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }
}

/// The latest code object created at each address, followed through
/// `code-move` and `code-delete`.
///
/// V8 writes a code object's `code-source-info` right after its
/// `code-creation`, so the answer is nearly always the last code object
/// created; the map of every address is built only when a record asks for
/// another one (several isolates writing one file), from the code objects
/// and the moves and deletes recorded until then.
#[derive(Default)]
pub(super) struct CodeAddresses {
    /// The last code object created, while no move or delete came after it.
    last_created: Option<(u64, CodeObjectId)>,
    /// Every address, once needed.
    map: Option<HashMap<u64, CodeObjectId, AddressHashing>>,
    /// `code-delete`s (address, log line) while there is no map.
    deletes: Vec<(u64, u64)>,
}

impl CodeAddresses {
    pub(super) fn created(&mut self, address: u64, id: CodeObjectId) {
        self.last_created = Some((address, id));
        if let Some(map) = &mut self.map {
            map.insert(address, id);
        }
    }

    pub(super) fn moved(&mut self, from: u64, to: u64) {
        self.last_created = None;
        if let Some(map) = &mut self.map
            && let Some(code) = map.remove(&from)
        {
            map.insert(to, code);
        }
    }

    pub(super) fn deleted(&mut self, address: u64, log_line: u64) {
        self.last_created = None;
        match &mut self.map {
            Some(map) => {
                map.remove(&address);
            }
            None => self.deletes.push((address, log_line)),
        }
    }

    /// The latest code object at `address`, as of now in `log`.
    pub(super) fn at(&mut self, address: u64, log: &CodeLog) -> Option<CodeObjectId> {
        if let Some((last_address, id)) = self.last_created
            && last_address == address
        {
            return Some(id);
        }
        let deletes = &self.deletes;
        self.map.get_or_insert_with(|| replay_addresses(log, deletes)).get(&address).copied()
    }
}

/// The address map of [`CodeAddresses`] after the records read so far: the
/// code-creations, code-moves and code-deletes replayed in log order.
fn replay_addresses(log: &CodeLog, deletes: &[(u64, u64)]) -> HashMap<u64, CodeObjectId, AddressHashing> {
    let mut map: HashMap<u64, CodeObjectId, AddressHashing> = HashMap::default();
    let mut moves = log.code_moves.iter().peekable();
    let mut deletes = deletes.iter().peekable();
    let mut apply_until = |line: u64, map: &mut HashMap<u64, CodeObjectId, AddressHashing>| loop {
        let next_move = moves.peek().map(|moved| moved.log_line).filter(|&at| at < line);
        let next_delete = deletes.peek().map(|&&(_, at)| at).filter(|&at| at < line);
        match (next_move, next_delete) {
            (Some(move_line), delete_line) if delete_line.is_none_or(|delete_line| move_line < delete_line) => {
                let moved = moves.next().expect("peeked");
                if let Some(code) = map.remove(&moved.from) {
                    map.insert(moved.to, code);
                }
            }
            (_, Some(_)) => {
                let &(address, _) = deletes.next().expect("peeked");
                map.remove(&address);
            }
            _ => return,
        }
    };
    for (index, object) in log.code_objects.iter().enumerate() {
        apply_until(object.log_line, &mut map);
        map.insert(object.address, CodeObjectId(index as u32));
    }
    apply_until(u64::MAX, &mut map);
    map
}
