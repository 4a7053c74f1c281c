//! The ELF symbol reader on arbitrary bytes (`ElfSymbols::parse`, as
//! `--perf-data` and `--ticks` read the binaries a recording names). Never
//! panics, hangs or runs out of memory; every lookup it answers lies inside
//! the symbol it names, and file offsets map into their segments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use v8inline::internals::symbols::ElfSymbols;

fuzz_target!(|bytes: &[u8]| {
    let Ok(symbols) = ElfSymbols::parse(bytes) else { return };
    for segment in symbols.segments().iter().take(64) {
        for delta in [0, 1, segment.file_size / 2, segment.file_size.saturating_sub(1)] {
            let file_offset = segment.file_offset.saturating_add(delta);
            if let Some(address) = symbols.virtual_address_of_file_offset(file_offset) {
                probe(&symbols, address);
            }
        }
        for address in [segment.virtual_address, segment.virtual_address.wrapping_add(0x10)] {
            probe(&symbols, address);
        }
    }
    // Addresses the input chooses too.
    for chunk in bytes.chunks_exact(8).take(32) {
        probe(&symbols, u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
    }
});

/// Looks `address` up: a hit is a function starting at `address - offset`,
/// which looked up itself answers with offset 0 and the same name.
fn probe(symbols: &ElfSymbols, address: u64) {
    let Some(hit) = symbols.lookup(address) else { return };
    assert!(hit.offset <= address);
    let start = symbols.lookup(address - hit.offset).expect("a function's start lies in it");
    assert_eq!(start.offset, 0);
    assert_eq!(start.name, hit.name);
}
