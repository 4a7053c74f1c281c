//! The kernel's side of a sample: its frames are named from this machine's
//! `/proc/kallsyms`, as perf names them, but only when the recording is of
//! this kernel (same build id, or release where perf recorded none), and
//! moved by how far the kernel moved since (KASLR). The symbols are loaded
//! once per process, on another thread when the events allow kernel frames.

/// Why the running kernel's symbols cannot be used: a warning
/// ([`crate::diagnostics::WarningKind::NoKernelSymbols`]), its kernel frames stay unnamed.
/// Displays as `/proc/kallsyms: CAUSE`.
#[derive(Debug, thiserror::Error)]
pub(super) enum KernelSymbolsError {
    /// `/proc/kallsyms` cannot be read.
    #[error("{KALLSYMS}: {0}")]
    Unreadable(#[source] std::io::Error),
    /// It lists no function with an address: all addresses read as zero
    /// (`kernel.kptr_restrict`).
    #[error(
        "{KALLSYMS}: expected function symbols with their addresses, found none (addresses hidden: kernel.kptr_restrict)"
    )]
    Hidden,
}

/// The kernel's function symbols (`/proc/kallsyms`), by address.
#[derive(Debug, Default)]
pub(super) struct KernelSymbols {
    /// (address, name), ascending.
    symbols: Vec<(u64, Box<str>)>,
}

impl KernelSymbols {
    /// Reads `/proc/kallsyms`; why not when it is unreadable or hidden (all
    /// zeros).
    pub(super) fn load() -> Result<KernelSymbols, KernelSymbolsError> {
        let text = std::fs::read_to_string(KALLSYMS).map_err(KernelSymbolsError::Unreadable)?;
        let mut symbols: Vec<(u64, Box<str>)> = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let address = u64::from_str_radix(fields.next()?, 16).ok()?;
                let kind = fields.next()?;
                let name = fields.next()?;
                (address != 0 && matches!(kind, "t" | "T" | "w" | "W")).then(|| (address, name.into()))
            })
            .collect();
        if symbols.is_empty() {
            return Err(KernelSymbolsError::Hidden);
        }
        symbols.sort_by_key(|(address, _)| *address);
        Ok(KernelSymbols { symbols })
    }

    /// What to add to an address of a recording, whose kernel had the
    /// symbol `reference` at `recorded_address`, to look it up here: how far
    /// the kernel moved since (KASLR), 0 where `reference` is unknown.
    pub(super) fn relocation(&self, reference: &str, recorded_address: u64) -> u64 {
        let running_address =
            self.symbols.iter().find(|(_, symbol)| **symbol == *reference).map(|(address, _)| *address);
        running_address.map_or(0, |running_address| running_address.wrapping_sub(recorded_address))
    }

    /// The function at `address` and the offset into it.
    pub(super) fn lookup(&self, address: u64) -> Option<(&str, u64)> {
        let after = self.symbols.partition_point(|(start, _)| *start <= address);
        let (start, name) = self.symbols.get(after.checked_sub(1)?)?;
        Some((name, address - start))
    }
}

/// Where the recorded kernel's text was: the symbol perf names in its
/// kernel mapping (`[kernel.kallsyms]_text`) and that symbol's address (the
/// mapping's page offset, perf's `ref_reloc_sym`).
#[derive(Debug, Clone)]
pub(super) struct KernelReference {
    pub(super) symbol: Box<str>,
    pub(super) address: u64,
}

/// The name perf gives the kernel in build ids and frames.
pub(super) const KERNEL_DSO: &str = "[kernel.kallsyms]";

/// The running kernel's symbols.
const KALLSYMS: &str = "/proc/kallsyms";

/// The running kernel's release (`uname -r`).
pub(super) const KERNEL_RELEASE: &str = "/proc/sys/kernel/osrelease";

/// The running kernel's notes, with its build id.
pub(super) const KERNEL_NOTES: &str = "/sys/kernel/notes";

/// The `NT_GNU_BUILD_ID` note in an ELF note section's bytes (native byte
/// order, as `/sys/kernel/notes`): `namesz, descsz, type`, then the name and
/// the description, each padded to 4 bytes.
pub(super) fn gnu_build_id(notes: &[u8]) -> Option<Vec<u8>> {
    const NT_GNU_BUILD_ID: u32 = 3;
    let padded = |length: usize| length.checked_add(3).map(|length| length & !3);
    let mut rest = notes;
    while rest.len() >= 12 {
        let word = |index: usize| u32::from_ne_bytes([rest[index], rest[index + 1], rest[index + 2], rest[index + 3]]);
        let (name_size, description_size, note_type) = (word(0) as usize, word(4) as usize, word(8));
        let name_end = 12usize.checked_add(padded(name_size)?)?;
        let description_end = name_end.checked_add(padded(description_size)?)?;
        if description_end > rest.len() {
            return None;
        }
        if note_type == NT_GNU_BUILD_ID && rest.get(12..12 + name_size) == Some(b"GNU\0".as_slice()) {
            return Some(rest[name_end..name_end + description_size].to_vec());
        }
        rest = &rest[description_end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_addresses_of_a_recording_before_the_kernel_moved_are_looked_up_where_it_is_now() {
        let symbols = |text_at: u64| KernelSymbols {
            symbols: vec![(text_at, "_text".into()), (text_at + 0x100, "schedule".into())],
        };
        // Recorded with _text at 0xffffffff81000000; booted since at
        // 0xffffffff9a200000.
        let moved = symbols(0xffff_ffff_9a20_0000);
        let relocation = moved.relocation("_text", 0xffff_ffff_8100_0000);
        assert_eq!(moved.lookup(0xffff_ffff_8100_0105u64.wrapping_add(relocation)), Some(("schedule", 5)));
        let unmoved = symbols(0xffff_ffff_8100_0000);
        assert_eq!(unmoved.relocation("_text", 0xffff_ffff_8100_0000), 0);
        assert_eq!(unmoved.relocation("_stext", 0xffff_ffff_8100_0000), 0, "a reference it does not have");
        assert_eq!(unmoved.lookup(0xffff_ffff_8100_0105), Some(("schedule", 5)));
    }

    #[test]
    fn kernel_symbol_problems_name_kallsyms() {
        let unreadable = KernelSymbolsError::Unreadable(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert_eq!(unreadable.to_string(), "/proc/kallsyms: permission denied");
        assert_eq!(
            KernelSymbolsError::Hidden.to_string(),
            "/proc/kallsyms: expected function symbols with their addresses, found none \
             (addresses hidden: kernel.kptr_restrict)"
        );
    }

    #[test]
    fn reads_the_gnu_build_id_note() {
        let mut notes = Vec::new();
        for (name, note_type, description) in [(&b"Xen\0"[..], 1u32, &[9u8; 3][..]), (b"GNU\0", 3, &[0xab; 20])] {
            notes.extend((name.len() as u32).to_ne_bytes());
            notes.extend((description.len() as u32).to_ne_bytes());
            notes.extend(note_type.to_ne_bytes());
            notes.extend(name);
            notes.extend(description);
            notes.resize(notes.len().next_multiple_of(4), 0);
        }
        assert_eq!(gnu_build_id(&notes), Some(vec![0xab; 20]));
        assert_eq!(gnu_build_id(&notes[..notes.len() - 1]), None);
        assert_eq!(gnu_build_id(&[0xff; 12]), None);
        if let Ok(running) = std::fs::read("/sys/kernel/notes") {
            assert!(gnu_build_id(&running).is_some_and(|id| id.len() == 20));
        }
    }
}
