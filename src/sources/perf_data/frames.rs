//! Naming a sample's frames as `perf script` names them: by the file a
//! process mapped at the address and that file's symbols (when its build id
//! is the recorded one), by the kernel's symbols, or as `[unknown]` memory
//! whose kind tells the V8 expander which jitdump may name it. Names are
//! kept per (process, address) until a mapping there changes, and the
//! files the samples will hit are read ahead on other threads.

use std::path::{Path, PathBuf};

use linux_perf_data::PerfFile;
use linux_perf_data::linux_perf_event_reader::AttrFlags;

use super::address_space::AddressSpace;
use super::frame_key::{FrameKey, Mode, named_frame};
use super::hex;
use super::kernel::KernelSymbols;
use super::reader::PerfDataReader;
use crate::diagnostics::WarningKind;
use crate::model::sample::{AddressKind, Frame, FrameNumber, MappedJitDump, ModuleKind};
use crate::symbols::{FileMapping, VDSO};

impl PerfDataReader {
    /// One frame, named as perf script names it.
    pub(super) fn frame(&mut self, pid: i32, address: u64, mode: Mode, address_kind: AddressKind) -> Frame {
        let key = FrameKey { pid, address, mode };
        if let Some(frame) = self.frames.get(&key) {
            return Frame { address_kind, ..*frame };
        }
        // Numbered on, not from 0, after the frames are forgotten (a
        // mapping changed): a number must not be reused.
        let number = u32::try_from(self.frames_numbered).ok().map(FrameNumber::new);
        self.frames_numbered += 1;
        let frame = Frame { address_kind, number, ..self.name_frame(pid, address, mode) };
        self.frames.insert(key, frame);
        frame
    }

    /// Names one frame as perf script would print it.
    fn name_frame(&mut self, pid: i32, address: u64, mode: Mode) -> Frame {
        if mode == Mode::Kernel {
            return self.kernel_frame(address);
        }
        let space = self.processes.get(&pid);
        let Some(mapping) = space.and_then(|space| space.find(address)) else {
            // V8's code pages: made executable by mprotect, unseen by perf.
            let kind = space.map_or(ModuleKind::Unknown, AddressSpace::unmapped_kind);
            let module = self.interner.module("[unknown]", kind);
            return named_frame(&mut self.interner, address, module, "[unknown]", None);
        };
        let is_anonymous = mapping.path.starts_with("//anon") || mapping.path.starts_with("[anon");
        // perf script prints an address in a file as the file's own address
        // (`map__map_ip`: minus the mapping's start, plus its file offset);
        // anonymous memory keeps the runtime address.
        let address_in_file = address.wrapping_sub(mapping.start).wrapping_add(mapping.file_offset);
        let address_text = (!is_anonymous && address_in_file != address)
            .then(|| self.interner.intern(&format!("{address_in_file:x}")));
        let frame = if !mapping.has_symbols() {
            let module = if is_anonymous {
                // perf's name for anonymous executable memory (map__new).
                let jitdump = space.map_or(MappedJitDump::NotKnown, AddressSpace::mapped_jitdump);
                self.interner
                    .module(&format!("/tmp/perf-{pid}.map"), ModuleKind::PerfMap { pid: Some(pid as u32), jitdump })
            } else {
                self.interner.module_at_path(&mapping.path)
            };
            named_frame(&mut self.interner, address, module, "[unknown]", None)
        } else {
            let mapping = mapping.clone();
            self.symbolized_frame(&mapping, address)
        };
        let file_address = (!is_anonymous).then_some(address_in_file);
        Frame { address_text, file_address, ..frame }
    }

    /// A frame in a file with symbols: its function, unless the file on
    /// disk is not the one perf saw.
    fn symbolized_frame(&mut self, mapping: &FileMapping, address: u64) -> Frame {
        let module = self.interner.module_at_path(&mapping.path);
        if !self.build_id_matches(&mapping.path) {
            return named_frame(&mut self.interner, address, module, "[unknown]", None);
        }
        match self.symbols.symbolize(mapping, address) {
            Some(hit) => named_frame(&mut self.interner, address, module, hit.name, Some(hit.offset)),
            None => named_frame(&mut self.interner, address, module, "[unknown]", None),
        }
    }

    /// Forgets the frames named in `range` of `pid`'s address space (a
    /// mapping there changed), not the others: a process mapping a file
    /// would otherwise have every frame named again.
    pub(super) fn forget_frames(&mut self, pid: i32, range: std::ops::Range<u64>) {
        self.frames.retain(|key, _| key.mode == Mode::Kernel || key.pid != pid || !range.contains(&key.address));
    }

    /// Starts reading, on other threads, the symbols the samples will need:
    /// the files perf lists as hit by samples (its build ids), largest
    /// first, and the running kernel's when the events allow kernel frames
    /// and the recording is of this kernel.
    pub(super) fn read_symbols_ahead(&mut self, perf_file: &PerfFile) {
        if !self.reads_ahead {
            return;
        }
        let size = |path: &PathBuf| std::fs::metadata(path).map_or(0, |metadata| metadata.len());
        let mut files: Vec<PathBuf> = self
            .recorded_build_ids
            .keys()
            // Not the kernel's modules (kallsyms names their code), nor the
            // images `perf inject --jit` writes, one per code object.
            .filter(|path| (path.starts_with('/') && ModuleKind::of_path(path) == ModuleKind::File) || &***path == VDSO)
            .map(|path| PathBuf::from(&**path))
            .collect();
        files.sort_by_cached_key(|path| (std::cmp::Reverse(size(path)), path.clone()));
        self.symbols.read_ahead(files);
        let kernel_frames_possible =
            perf_file.event_attributes().iter().any(|event| !event.attr.flags.contains(AttrFlags::EXCLUDE_KERNEL));
        if kernel_frames_possible
            && self.running_kernel.is_none()
            && self.kernel_read_ahead.is_none()
            && self.other_kernel().is_none()
        {
            self.kernel_read_ahead =
                std::thread::Builder::new().name("kallsyms".to_string()).spawn(KernelSymbols::load).ok();
        }
    }

    /// Whether the file on disk is the one perf saw (when perf recorded its
    /// build id and the file has one).
    fn build_id_matches(&mut self, path: &str) -> bool {
        if self.mismatched_files.contains(path) {
            return false;
        }
        if self.checked_files.insert(path.into()) {
            let recorded = self.recorded_build_ids.get(path);
            let on_disk = self.symbols.get(Path::new(path)).and_then(|symbols| symbols.build_id.clone());
            if let (Some(recorded), Some(on_disk)) = (recorded, on_disk) {
                // perf pads build ids to 20 bytes.
                if !recorded.starts_with(&on_disk) {
                    self.diagnostics.warn(WarningKind::BuildIdMismatch, || {
                        format!(
                            "{path}: build id {} in the recording, {} on disk",
                            hex(&recorded[..on_disk.len().min(recorded.len())]),
                            hex(&on_disk)
                        )
                    });
                    self.mismatched_files.insert(path.into());
                    return false;
                }
            }
        }
        true
    }
}
