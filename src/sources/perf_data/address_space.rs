//! The memory of each process as perf recorded it, rebuilt from its
//! MMAP/MMAP2 records: which file a sampled address is in, and, for memory
//! in no mapping (V8's code pages, made executable by `mprotect`, which perf
//! does not see), which jitdump may name it: the one the process mapped as
//! a marker, or none.

use std::collections::BTreeMap;

use crate::model::sample::{MappedJitDump, ModuleKind};
use crate::symbols::FileMapping;

/// The memory mappings of one process, by start address, not overlapping.
#[derive(Debug, Clone, Default)]
pub(super) struct AddressSpace {
    mappings: BTreeMap<u64, FileMapping>,
    /// The pid in the name of the jitdump the process mapped (V8 maps
    /// `jit-PID.dump` as a marker for perf inject), if it did.
    jitdump_pid: Option<u32>,
}

impl AddressSpace {
    /// Adds a mapping; older mappings it overlaps are cut away, as the
    /// kernel replaces them (perf's `maps__fixup_overlappings`).
    pub(super) fn insert(&mut self, mapping: FileMapping) {
        if mapping.end <= mapping.start {
            return;
        }
        if let Some(pid) = jitdump_pid_in_path(&mapping.path) {
            self.jitdump_pid = Some(pid);
        }
        let overlapping: Vec<u64> = self
            .mappings
            .range(..mapping.end)
            .rev()
            .take_while(|(_, existing)| existing.end > mapping.start)
            .map(|(&start, _)| start)
            .collect();
        for start in overlapping {
            let Some(existing) = self.mappings.remove(&start) else { continue };
            if existing.start < mapping.start {
                let before = FileMapping { end: mapping.start, ..existing.clone() };
                self.mappings.insert(before.start, before);
            }
            if existing.end > mapping.end {
                let after = FileMapping {
                    start: mapping.end,
                    file_offset: existing.file_offset.wrapping_add(mapping.end - existing.start),
                    ..existing
                };
                self.mappings.insert(after.start, after);
            }
        }
        self.mappings.insert(mapping.start, mapping);
    }

    /// The mapping containing `address`.
    pub(super) fn find(&self, address: u64) -> Option<&FileMapping> {
        let (_, mapping) = self.mappings.range(..=address).next_back()?;
        mapping.contains(address).then_some(mapping)
    }

    /// What memory with no mapping is: V8's code pages when the process
    /// mapped a jitdump; else, when perf described the process's memory,
    /// no code a jitdump names (another program's, or a node run without
    /// `--perf-prof`: not to be named from another process's jitdump); else
    /// unknown.
    pub(super) fn unmapped_kind(&self) -> ModuleKind {
        match self.mapped_jitdump() {
            MappedJitDump::Named(pid) => ModuleKind::JitDumpCode { pid },
            MappedJitDump::NoneMapped => ModuleKind::NoCode,
            MappedJitDump::NotKnown => ModuleKind::Unknown,
        }
    }

    /// The jitdump the process mapped: none when perf described its memory
    /// and no jitdump was in it, not known when perf described nothing.
    pub(super) fn mapped_jitdump(&self) -> MappedJitDump {
        match self.jitdump_pid {
            Some(pid) => MappedJitDump::Named(pid),
            None if !self.mappings.is_empty() => MappedJitDump::NoneMapped,
            None => MappedJitDump::NotKnown,
        }
    }
}

/// The pid in a jitdump's path as V8 names it, `DIR/jit-PID.dump`
/// ([`LinuxPerfJitLogger::OpenJitDumpFile`](https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/diagnostics/perf-jit.cc)).
pub(super) fn jitdump_pid_in_path(path: &str) -> Option<u32> {
    let name = path.rsplit('/').next()?;
    let digits = name.strip_prefix("jit-")?.strip_suffix(".dump")?;
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(start: u64, end: u64, file_offset: u64, path: &str) -> FileMapping {
        FileMapping { start, end, file_offset, path: path.into() }
    }

    #[test]
    fn unmapped_memory_is_the_mapped_jitdumps_code_or_no_jitdumps() {
        assert_eq!(jitdump_pid_in_path("/tmp/out/jit-17052.dump"), Some(17052));
        assert_eq!(jitdump_pid_in_path("jit-7.dump"), Some(7));
        for not_a_jitdump in ["/tmp/jit-.dump", "/tmp/jit-12.dump.gz", "/tmp/xjit-12.dump", "/tmp/jit-1a.dump"] {
            assert_eq!(jitdump_pid_in_path(not_a_jitdump), None, "{not_a_jitdump}");
        }
        // Nothing known of the process: perhaps JIT code of any jitdump.
        let mut space = AddressSpace::default();
        assert_eq!(space.unmapped_kind(), ModuleKind::Unknown);
        // Its memory known, no jitdump in it (npm without --perf-prof, sh).
        space.insert(mapping(0x1000, 0x2000, 0, "/usr/bin/node"));
        assert_eq!(space.unmapped_kind(), ModuleKind::NoCode);
        assert_eq!(space.mapped_jitdump(), MappedJitDump::NoneMapped);
        // V8 mapped its jitdump (in a container, under another pid).
        space.insert(mapping(0x7f00_0000, 0x7f00_1000, 0, "/app/jit-1.dump"));
        assert_eq!(space.unmapped_kind(), ModuleKind::JitDumpCode { pid: 1 });
        assert_eq!(space.mapped_jitdump(), MappedJitDump::Named(1));
    }

    #[test]
    fn new_mappings_cut_old_ones() {
        let mut space = AddressSpace::default();
        space.insert(mapping(0x1000, 0x5000, 0, "/old"));
        space.insert(mapping(0x2000, 0x3000, 0x10, "/new"));
        assert_eq!(space.find(0x1fff).unwrap(), &mapping(0x1000, 0x2000, 0, "/old"));
        assert_eq!(space.find(0x2000).unwrap().path.as_ref(), "/new");
        assert_eq!(space.find(0x3000).unwrap(), &mapping(0x3000, 0x5000, 0x2000, "/old"));
        assert_eq!(space.find(0x5000), None);
        assert_eq!(space.find(0xfff), None);
        space.insert(mapping(0x800, 0x6000, 0, "/all"));
        assert_eq!(space.mappings.len(), 1);
        space.insert(mapping(0x10, 0x10, 0, "/empty"));
        assert_eq!(space.mappings.len(), 1);
    }
}
