//! Kernel frames of a perf.data: named from this machine's kernel symbols
//! unless the recording is of another kernel, loaded on the first kernel
//! frame and moved to where the recorded kernel was placed.

use std::rc::Rc;

use super::frame_key::named_frame;
use super::hex;
use super::kernel::{KERNEL_DSO, KERNEL_NOTES, KERNEL_RELEASE, KernelSymbols, KernelSymbolsError, gnu_build_id};
use super::reader::PerfDataReader;
use crate::diagnostics::WarningKind;
use crate::model::sample::{Frame, ModuleKind};

impl PerfDataReader {
    /// A kernel frame: its function from the running kernel's symbols
    /// (loaded on the first one), `[unknown]` without them.
    pub(super) fn kernel_frame(&mut self, address: u64) -> Frame {
        if self.kernel.is_none() {
            self.kernel = Some(self.load_kernel_symbols());
        }
        let module = self.interner.module(KERNEL_DSO, ModuleKind::Kernel);
        let hit = self
            .kernel
            .as_deref()
            .and_then(|kernel| kernel.as_ref().ok())
            .and_then(|kernel| kernel.lookup(address.wrapping_add(self.kernel_relocation)));
        match hit {
            Some((name, offset)) => named_frame(&mut self.interner, address, module, name, Some(offset)),
            None => named_frame(&mut self.interner, address, module, "[unknown]", None),
        }
    }

    /// Why the recording is of another kernel than the running one, when
    /// it is: its build id differs from `/sys/kernel/notes`, or, where perf
    /// recorded none, its release differs from the running one.
    pub(super) fn other_kernel(&self) -> Option<String> {
        let recorded = self.recorded_build_ids.get(KERNEL_DSO);
        let running = std::fs::read(KERNEL_NOTES).ok().and_then(|notes| gnu_build_id(&notes));
        if let (Some(recorded), Some(running)) = (recorded, &running)
            && !recorded.starts_with(running)
        {
            return Some(format!(
                "{KERNEL_DSO}: build id {} in the recording, {} running ({KERNEL_NOTES})",
                hex(&recorded[..running.len().min(recorded.len())]),
                hex(running)
            ));
        }
        let running_release = std::fs::read_to_string(KERNEL_RELEASE).ok();
        if recorded.is_none()
            && let (Some(recorded), Some(running)) = (&self.recorded_kernel_release, running_release)
            && recorded.trim() != running.trim()
        {
            return Some(format!(
                "{KERNEL_DSO}: release {} in the recording, {} running ({KERNEL_RELEASE}), and no build id recorded",
                recorded.trim(),
                running.trim()
            ));
        }
        None
    }

    /// This machine's kernel symbols, unless perf recorded another kernel:
    /// its build id differs from `/sys/kernel/notes`, or, where perf
    /// recorded none, its release differs from the running one. Where the
    /// kernel was placed elsewhere at boot since, its symbols are moved to
    /// the recorded addresses, as perf does (`kallsyms__delta`).
    fn load_kernel_symbols(&mut self) -> Rc<Result<KernelSymbols, KernelSymbolsError>> {
        if let Some(other_kernel) = self.other_kernel() {
            self.diagnostics.warn(WarningKind::OtherKernel, || format!("{}: {other_kernel}", self.path.display()));
            return Rc::new(Ok(KernelSymbols::default()));
        }
        let read_ahead = self.kernel_read_ahead.take();
        let running = self
            .running_kernel
            .get_or_insert_with(|| {
                let read = read_ahead.and_then(|thread| thread.join().ok());
                Rc::new(read.unwrap_or_else(KernelSymbols::load))
            })
            .clone();
        match running.as_ref() {
            Err(problem) => self.diagnostics.warn(WarningKind::NoKernelSymbols, || format!("{KERNEL_DSO}: {problem}")),
            Ok(symbols) => {
                if let Some(reference) = &self.recorded_kernel_reference {
                    self.kernel_relocation = symbols.relocation(&reference.symbol, reference.address);
                }
            }
        }
        running
    }
}
