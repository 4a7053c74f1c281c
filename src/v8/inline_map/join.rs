//! The join of jitdump LOADs with the logs' code-creations, key by key
//! ((address, size)), and each log's clock against the jitdump's
//! ([`ClockAlignment`]), learned from the code objects only one log creates.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::formats::v8log::{CodeKindNumber, CodeLog, CodeObjectId};

use super::codes::{JitCode, LogId, LogObject};

/// How a code log's clock relates to the jitdump's: each isolate's log
/// counts microseconds from that isolate's start, the jitdump CLOCK_MONOTONIC
/// nanoseconds.
///
/// Learned from the code objects whose (address, size) the jitdump loads
/// once and only this log creates: for those the LOAD and the code-creation
/// are the same event, written at the same moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockAlignment {
    /// Jitdump time minus code-creation time (µs × 1000), in nanoseconds:
    /// the median over the pairs.
    pub offset_nanoseconds: i64,
    /// How many code objects it was learned from.
    pub pair_count: usize,
    /// How far 95 % of the pairs lie from the offset, in nanoseconds.
    pub spread_nanoseconds: u64,
}

impl ClockAlignment {
    /// A code-creation time of this log on the jitdump's clock (ns).
    pub fn jitdump_time(self, timestamp_micros: i64) -> i64 {
        timestamp_micros.saturating_mul(1000).saturating_add(self.offset_nanoseconds)
    }
}

/// What [`join_loads`] found besides each LOAD's code object.
pub(super) struct Join {
    /// Each log's clock against the jitdump's (only learned for several logs).
    pub(super) clocks: Vec<Option<ClockAlignment>>,
    /// The LOADs by key: their [`address_order`].
    pub(super) load_order: Vec<KeyedLoad>,
}

/// The (address, size) key of a code object and of a LOAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct CodeKey {
    pub(super) address: u64,
    pub(super) size: u64,
}

/// A code object of the logs beside its key.
type KeyedObject = (CodeKey, LogObject);

/// A LOAD (its index) beside its key.
pub(super) type KeyedLoad = (CodeKey, u32);

/// When a LOAD happened (jitdump clock, ns), as a signed time.
fn load_time(load: &JitCode) -> i64 {
    i64::try_from(load.load_time().unwrap_or(0)).unwrap_or(i64::MAX)
}

/// Sets the log code object of each jitdump LOAD (the `loads` are jitdump
/// code objects, in file order). Both sides are sorted by key
/// (then by log and order) and walked together, which takes far less memory
/// than a map of lists on logs with millions of code objects.
///
/// At a key that one log created code at, the k-th LOAD is that log's k-th
/// code-creation. At a key several logs created code at, each LOAD takes the
/// next code-creation of the log whose time, on the jitdump's clock, is
/// nearest to the LOAD's: each log stays in its own order.
pub(super) fn join_loads(logs: &[CodeLog], loads: &mut [JitCode]) -> Join {
    // Sorted with their keys beside them (millions of objects): no key is
    // looked up through an index while sorting or walking.
    let mut objects: Vec<KeyedObject> = Vec::with_capacity(logs.iter().map(|log| log.code_objects.len()).sum());
    for (log, code_log) in logs.iter().enumerate() {
        for (index, object) in code_log.code_objects.iter().enumerate() {
            let key = CodeKey { address: object.address, size: object.size };
            objects.push((key, LogObject { log: LogId(log as u32), object: CodeObjectId(index as u32) }));
        }
    }
    objects.sort_unstable_by_key(|&(key, object)| (key, object.log, object.object));
    let load_order = address_order(loads);
    let groups = KeyGroups { objects: &objects, load_order: &load_order };
    // A lone log's clock too: the code a cut jitdump lost is timed by it
    // ([`codes_after_the_cut`]).
    let clocks = learn_clocks(logs, loads, groups.iter());
    for load in loads.iter_mut() {
        load.set_log_object(None);
    }
    for group in groups.iter() {
        let first_log = group.objects.first().map(|(_, object)| object.log);
        if group.objects.iter().all(|(_, object)| Some(object.log) == first_log) {
            for (&(_, load), &(_, object)) in group.load_order.iter().zip(group.objects) {
                loads[load as usize].set_log_object(Some(object));
            }
        } else {
            match_nearest_in_time(logs, loads, &clocks, group);
        }
    }
    drop(objects);
    Join { clocks, load_order }
}

/// The LOADs and code objects of one key, each in order.
#[derive(Clone, Copy)]
struct KeyGroup<'join> {
    /// LOADs, ascending.
    load_order: &'join [KeyedLoad],
    /// Code objects, by log then log order.
    objects: &'join [KeyedObject],
}

/// Both sorted sides of [`join_loads`], to walk key by key.
#[derive(Clone, Copy)]
struct KeyGroups<'join> {
    /// Code objects sorted by key, then log and log order.
    objects: &'join [KeyedObject],
    /// LOADs sorted by key, then index.
    load_order: &'join [KeyedLoad],
}

impl<'join> KeyGroups<'join> {
    /// The keys that have LOADs, each with its LOADs and code objects (none
    /// when no log created code there).
    fn iter(self) -> impl Iterator<Item = KeyGroup<'join>> {
        let mut next_object = 0;
        let mut next_load = 0;
        std::iter::from_fn(move || {
            let &(key, _) = self.load_order.get(next_load)?;
            // Groups are short: walked, not searched.
            let mut loads_end = next_load + 1;
            while self.load_order.get(loads_end).is_some_and(|&(load_key, _)| load_key == key) {
                loads_end += 1;
            }
            while self.objects.get(next_object).is_some_and(|&(object_key, _)| object_key < key) {
                next_object += 1;
            }
            let mut objects_end = next_object;
            while self.objects.get(objects_end).is_some_and(|&(object_key, _)| object_key == key) {
                objects_end += 1;
            }
            let group = KeyGroup {
                load_order: &self.load_order[next_load..loads_end],
                objects: &self.objects[next_object..objects_end],
            };
            next_load = loads_end;
            next_object = objects_end;
            Some(group)
        })
    }
}

/// Each log's clock against the jitdump's, from the keys the jitdump loads
/// once and one log creates once: jitdump time − code-creation time × 1000,
/// the median over those pairs.
fn learn_clocks<'join>(
    logs: &[CodeLog],
    loads: &[JitCode],
    groups: impl Iterator<Item = KeyGroup<'join>>,
) -> Vec<Option<ClockAlignment>> {
    let mut differences: Vec<Vec<i64>> = vec![Vec::new(); logs.len()];
    for group in groups {
        let ([(_, load)], [(_, object)]) = (group.load_order, group.objects) else { continue };
        let creation = logs[object.log.index()].code_object(object.object);
        let load_time = load_time(&loads[*load as usize]);
        differences[object.log.index()].push(load_time.saturating_sub(creation.timestamp_micros.saturating_mul(1000)));
    }
    differences.into_iter().map(|mut pairs| median_alignment(&mut pairs)).collect()
}

/// The median of `differences` and how far 95 % of them lie from it.
fn median_alignment(differences: &mut [i64]) -> Option<ClockAlignment> {
    if differences.is_empty() {
        return None;
    }
    let middle = differences.len() / 2;
    let offset_nanoseconds = *differences.select_nth_unstable(middle).1;
    let mut deviations: Vec<u64> =
        differences.iter().map(|&difference| difference.abs_diff(offset_nanoseconds)).collect();
    let percentile = (deviations.len() * 95).div_ceil(100).saturating_sub(1);
    let spread_nanoseconds = *deviations.select_nth_unstable(percentile).1;
    Some(ClockAlignment { offset_nanoseconds, pair_count: differences.len(), spread_nanoseconds })
}

/// Joins the LOADs of a key several logs created code at: each LOAD, in
/// order, takes the next unmatched code-creation of the log whose aligned
/// time is nearest to the LOAD's (a log without a clock only when no other
/// log has code left there).
fn match_nearest_in_time(
    logs: &[CodeLog],
    loads: &mut [JitCode],
    clocks: &[Option<ClockAlignment>],
    group: KeyGroup<'_>,
) {
    // The objects are sorted by log: one cursor per log's run.
    let mut runs: Vec<&[KeyedObject]> = group.objects.chunk_by(|(_, left), (_, right)| left.log == right.log).collect();
    for &(_, load) in group.load_order {
        let load_time = load_time(&loads[load as usize]);
        let distance = |run: &[KeyedObject]| {
            let (_, object) = run[0];
            match clocks[object.log.index()] {
                Some(clock) => {
                    let creation = logs[object.log.index()].code_object(object.object);
                    clock.jitdump_time(creation.timestamp_micros).abs_diff(load_time)
                }
                None => u64::MAX,
            }
        };
        let nearest = runs.iter().enumerate().filter(|(_, run)| !run.is_empty()).min_by_key(|(_, run)| distance(run));
        let Some((run_index, _)) = nearest else { break };
        let run = &mut runs[run_index];
        loads[load as usize].set_log_object(Some(run[0].1));
        *run = &run[1..];
    }
}

/// A code object of a log that a cut jitdump lost: created after the last
/// one the jitdump loaded, or moved there after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LostCode {
    /// The log's code object.
    pub(super) object: LogObject,
    /// Where its instructions are: its code-creation's address, or where a
    /// later `code-move` put it.
    pub(super) address: u64,
    /// When it was created (or moved), on the jitdump's clock (ns).
    pub(super) load_time: u64,
}

/// The code objects of the logs that a jitdump cut short lost (`loads`, its
/// code objects joined by [`join_loads`]; `clocks`, the logs' clocks it
/// learned): V8 writes a LOAD and a code-creation from the same code event,
/// but buffers the jitdump (2 MB, flushed at exit: `PerfJitLogger` in V8's
/// src/diagnostics/perf-jit.cc) while the log is flushed line by line
/// (src/logging/log-file.cc). A process killed by a signal leaves the
/// jitdump cut at its last flush and the log whole, so everything the
/// jitdump lost is what each log created after the last code object it has
/// in the jitdump.
///
/// Not every code-creation has a LOAD: V8's jitdump writer logs `Code`
/// objects only, not bytecode arrays. Kinds the log created before that
/// last joined object and the jitdump never loaded are such kinds, and are
/// left out, and so is everything when no log has any code the jitdump
/// loaded (the logs are of another run). `code-move`s after the cut move a
/// code object to a new address from then on. Times are the
/// code-creations' on the jitdump's clock (the log's [`ClockAlignment`]),
/// and never before the jitdump's last LOAD, which was written before them;
/// a log whose clock is unknown puts them all at that LOAD's time, in log
/// order. The result is in time order.
pub(super) fn codes_after_the_cut(
    logs: &[CodeLog],
    loads: &[JitCode],
    clocks: &[Option<ClockAlignment>],
) -> Vec<LostCode> {
    // LOADs of which no log has the code: the logs are of another run, not
    // the rest of this one.
    if !loads.is_empty() && loads.iter().all(|load| load.log_object().is_none()) {
        return Vec::new();
    }
    let last_load = loads.iter().filter_map(JitCode::load_time).max().unwrap_or(0);
    // Per log, which code objects the jitdump loaded.
    let mut joined: Vec<Vec<bool>> = logs.iter().map(|log| vec![false; log.code_objects.len()]).collect();
    for object in loads.iter().filter_map(JitCode::log_object) {
        joined[object.log.index()][object.object.index()] = true;
    }
    let cuts: Vec<Option<usize>> = joined.iter().map(|joined| joined.iter().rposition(|&joined| joined)).collect();
    // One V8 in a process: what one isolate's log shows of the kinds holds
    // for all (a worker started after the cut has none joined).
    let never_loaded = kinds_never_loaded(logs, &joined, &cuts);
    let mut lost = Vec::new();
    for (index, log) in logs.iter().enumerate() {
        let log_id = LogId(index as u32);
        let joined = &joined[index];
        let cut = cuts[index];
        let first_lost = cut.map_or(0, |last| last + 1);
        let clock = clocks.get(index).copied().flatten();
        let time = |micros: i64| {
            let aligned = clock.map_or(0, |clock| u64::try_from(clock.jitdump_time(micros)).unwrap_or(0));
            aligned.max(last_load)
        };
        // Which kept code object is where: the joined ones (a move after
        // the cut may take one of them), then the lost ones as created.
        let cut_line = cut.map_or(0, |last| log.code_objects[last].log_line);
        let mut moves = log.code_moves.iter().filter(|moved| moved.log_line > cut_line).peekable();
        let mut object_at: FxHashMap<u64, CodeObjectId> = FxHashMap::default();
        if moves.peek().is_some() {
            for (object, _) in joined.iter().enumerate().filter(|(_, joined)| **joined) {
                object_at.insert(log.code_objects[object].address, CodeObjectId(object as u32));
            }
        }
        let mut last_time = cut.map_or(last_load, |last| time(log.code_objects[last].timestamp_micros));
        for (object_index, object) in log.code_objects.iter().enumerate().skip(first_lost) {
            while let Some(moved) = moves.next_if(|moved| moved.log_line < object.log_line) {
                move_code(&mut object_at, moved.from, moved.to, log_id, last_time, &mut lost);
            }
            if object.size == 0 || never_loaded.contains(&object.kind) {
                continue;
            }
            let id = CodeObjectId(object_index as u32);
            last_time = time(object.timestamp_micros);
            lost.push(LostCode {
                object: LogObject { log: log_id, object: id },
                address: object.address,
                load_time: last_time,
            });
            object_at.insert(object.address, id);
        }
        for moved in moves {
            move_code(&mut object_at, moved.from, moved.to, log_id, last_time, &mut lost);
        }
    }
    lost.sort_by_key(|code| code.load_time);
    lost
}

/// A `code-move` of a kept code object from `from` to `to` at `time`: the
/// object is there from then on.
fn move_code(
    object_at: &mut FxHashMap<u64, CodeObjectId>,
    from: u64,
    to: u64,
    log: LogId,
    time: u64,
    lost: &mut Vec<LostCode>,
) {
    let Some(object) = object_at.remove(&from) else { return };
    object_at.insert(to, object);
    lost.push(LostCode { object: LogObject { log, object }, address: to, load_time: time });
}

/// The kinds of code the logs created before their `cuts` (the last code
/// object of each the jitdump loaded; `joined` says which it loaded) that
/// the jitdump never loaded: V8's jitdump writer skips them (bytecode
/// arrays, whose kind number changes between V8 versions).
fn kinds_never_loaded(logs: &[CodeLog], joined: &[Vec<bool>], cuts: &[Option<usize>]) -> FxHashSet<CodeKindNumber> {
    let mut loaded: FxHashSet<CodeKindNumber> = FxHashSet::default();
    let mut not_loaded: FxHashSet<CodeKindNumber> = FxHashSet::default();
    for ((log, joined), cut) in logs.iter().zip(joined).zip(cuts) {
        let before_cut = cut.map_or(0, |last| last + 1);
        for (object, &joined) in log.code_objects.iter().zip(joined) {
            if joined {
                loaded.insert(object.kind);
            }
        }
        for (object, &joined) in log.code_objects[..before_cut].iter().zip(joined) {
            if !joined {
                not_loaded.insert(object.kind);
            }
        }
    }
    not_loaded.retain(|kind| !loaded.contains(kind));
    not_loaded
}

/// The codes (their ids) with their keys, by key: address, then size, then id.
pub(super) fn address_order(codes: &[JitCode]) -> Vec<KeyedLoad> {
    key_order(code_keys(codes))
}

/// The keys of `codes`, in their order.
pub(super) fn code_keys(codes: &[JitCode]) -> impl Iterator<Item = CodeKey> + Clone + '_ {
    codes.iter().map(|code| CodeKey { address: code.address, size: code.size })
}

/// The keys of the logs' code objects, log after log: the codes of a map
/// without a jitdump ([`log_codes`](super::codes::log_codes)).
pub(super) fn log_code_keys(logs: &[CodeLog]) -> impl Iterator<Item = CodeKey> + Clone + '_ {
    logs.iter().flat_map(|log| &log.code_objects).map(|object| CodeKey { address: object.address, size: object.size })
}

/// [`address_order`] of codes given by their keys, in load order.
pub(super) fn key_order(keys: impl Iterator<Item = CodeKey>) -> Vec<KeyedLoad> {
    let mut order: Vec<KeyedLoad> = keys.enumerate().map(|(id, key)| (key, id as u32)).collect();
    order.sort_unstable();
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v8::inline_map::codes::tests::{jit_codes, load};

    /// Two isolates whose clocks started 50 ms apart: both log the embedded
    /// builtin at 0x100, and the worker reuses the main isolate's freed
    /// address 0x1000. The worker's log comes first, so log order alone
    /// would give it the main isolate's code.
    #[test]
    fn loads_join_the_isolate_whose_aligned_clock_is_nearest() {
        let worker = CodeLog::parse(
            b"code-creation,Builtin,2,5,0x100,16,Abort\n\
              code-creation,JS,10,8,0x3000,32,h /w.js:1:1,0x900,*\n\
              code-creation,JS,10,9,0x4000,32,k /w.js:2:1,0x910,*\n\
              code-creation,JS,10,100,0x1000,32,reused /w.js:3:1,0x920,*\n",
        );
        let main = CodeLog::parse(
            b"code-creation,Builtin,2,10,0x100,16,Abort\n\
              code-creation,JS,10,20,0x1000,32,f /m.js:1:1,0x800,*\n\
              code-creation,JS,10,30,0x2000,32,g /m.js:2:1,0x810,*\n",
        );
        let main_start = 1_000_000_000;
        let worker_start = 1_050_000_000;
        let loads = [
            load(0x100, 16, main_start + 10_000),
            load(0x1000, 32, main_start + 20_000),
            load(0x2000, 32, main_start + 30_000),
            load(0x100, 16, worker_start + 5_000),
            load(0x3000, 32, worker_start + 8_000),
            load(0x4000, 32, worker_start + 9_000),
            load(0x1000, 32, worker_start + 100_000),
            load(0x5000, 8, worker_start + 200_000),
        ];
        let mut loads = jit_codes(loads);
        let join = join_loads(&[worker, main], &mut loads);
        let object = |log: u32, object: u32| Some(LogObject { log: LogId(log), object: CodeObjectId(object) });
        assert_eq!(
            loads.iter().map(JitCode::log_object).collect::<Vec<_>>(),
            [object(1, 0), object(1, 1), object(1, 2), object(0, 0), object(0, 1), object(0, 2), object(0, 3), None]
        );
        // The worker aligns on h and k, the main isolate on g (0x1000 and
        // 0x100 are loaded twice).
        assert_eq!(
            join.clocks,
            [
                Some(ClockAlignment { offset_nanoseconds: worker_start as i64, pair_count: 2, spread_nanoseconds: 0 }),
                Some(ClockAlignment { offset_nanoseconds: main_start as i64, pair_count: 1, spread_nanoseconds: 0 }),
            ]
        );
    }

    /// A lone log needs no clock: the k-th LOAD at a key is its k-th
    /// code-creation there, whatever the times say.
    #[test]
    fn a_lone_log_joins_by_order() {
        let log = CodeLog::parse(
            b"code-creation,JS,10,1,0x1000,32,f /m.js:1:1,0x800,*\n\
              code-creation,JS,10,2,0x1000,32,g /m.js:2:1,0x810,*\n",
        );
        let mut loads = jit_codes([load(0x1000, 32, 99), load(0x1000, 32, 7), load(0x1000, 32, 5)]);
        let join = join_loads(&[log], &mut loads);
        let object = |object: u32| Some(LogObject { log: LogId(0), object: CodeObjectId(object) });
        assert_eq!(loads.iter().map(JitCode::log_object).collect::<Vec<_>>(), [object(0), object(1), None]);
        assert_eq!(join.clocks, [None]);
    }

    /// What a killed process's jitdump lost, from its log: the code created
    /// after the last object the jitdump loaded, bytecode arrays left out
    /// (their kind was never loaded though created before the cut), a
    /// code-move after the cut replayed, times on the jitdump's clock.
    #[test]
    fn the_code_after_the_cut_comes_from_the_log() {
        let log = CodeLog::parse(
            b"code-creation,Builtin,2,1,0x100,16,Abort\n\
              code-creation,JS,10,2,0x5000,40,f /a.js:1:1,0x900,~\n\
              code-creation,JS,2,3,0x200,32,f /a.js:1:1,0x900,~\n\
              code-creation,JS,13,4,0x300,64,g /a.js:2:1,0x910,*\n\
              code-creation,JS,10,10,0x5100,40,h /a.js:3:1,0x920,~\n\
              code-creation,JS,13,20,0x400,64,h /a.js:3:1,0x920,*\n\
              code-move,0x400,0x600\n\
              code-creation,JS,13,30,0x400,48,k /a.js:4:1,0x930,*\n",
        );
        let start = 5_000_000_000;
        let mut loads =
            jit_codes([load(0x100, 16, start + 1_000), load(0x200, 32, start + 3_000), load(0x300, 64, start + 4_000)]);
        let logs = [log];
        let join = join_loads(&logs, &mut loads);
        assert_eq!(
            join.clocks,
            [Some(ClockAlignment { offset_nanoseconds: start as i64, pair_count: 3, spread_nanoseconds: 0 })]
        );
        let lost = |object: u32, address: u64, load_time: u64| LostCode {
            object: LogObject { log: LogId(0), object: CodeObjectId(object) },
            address,
            load_time,
        };
        assert_eq!(
            codes_after_the_cut(&logs, &loads, &join.clocks),
            [lost(5, 0x400, start + 20_000), lost(5, 0x600, start + 20_000), lost(6, 0x400, start + 30_000)]
        );
        // Another run's log covers nothing.
        let mut other_run = jit_codes([load(0x900, 16, start + 1_000)]);
        let join = join_loads(&logs, &mut other_run);
        assert!(codes_after_the_cut(&logs, &other_run, &join.clocks).is_empty());
        // Without a clock, in log order at the last LOAD's time.
        assert_eq!(
            codes_after_the_cut(&logs, &loads, &[None]),
            [lost(5, 0x400, start + 4_000), lost(5, 0x600, start + 4_000), lost(6, 0x400, start + 4_000)]
        );
    }

    #[test]
    fn the_median_offset_and_its_spread() {
        let alignment = median_alignment(&mut [5_000, 1_000, 900_000, 3_000, 2_000]).unwrap();
        assert_eq!(alignment, ClockAlignment { offset_nanoseconds: 3_000, pair_count: 5, spread_nanoseconds: 897_000 });
        let mut pairs: Vec<i64> = (0..100).map(|index| 10_000 + index * 10).collect();
        pairs.push(5_000_000);
        let alignment = median_alignment(&mut pairs).unwrap();
        assert_eq!((alignment.offset_nanoseconds, alignment.spread_nanoseconds), (10_500, 480));
        assert_eq!(median_alignment(&mut []), None);
    }
}
