//! The DWARF writer's ELF rewrite (`rewrite_jitted_elf`, as `v8inline
//! debuginfo` gives perf inject's `jitted-PID-N.so` files their inlined
//! frames) on arbitrary bytes: a `u32` ELF length (little-endian), the ELF
//! file, then bytes that choose a small `CodeDebugInfo` (files, functions,
//! an inlined call tree, line rows; indexes, offsets and names odd at times).
//! Never panics, hangs or runs out of memory; a file it rewrites parses
//! again, keeps its `.text` (address and bytes) and build id, holds exactly
//! the debug sections `dwarf_sections` makes for it, and rewriting it again
//! changes nothing.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use object::{Object as _, ObjectSection as _};
use v8inline::internals::output::debuginfo::{
    CodeDebugInfo, CodeRange, DebugFunction, FileIndex, FunctionIndex, InlinedCallInfo, LineRow, SourceLocation,
    Target, TextSection, dwarf_sections, rewrite_jitted_elf,
};

/// Bounds on the info, so that one input stays fast (real code objects
/// have a few files and functions, tens of calls and hundreds of rows).
const MAX_FILES: usize = 6;
const MAX_FUNCTIONS: usize = 8;
const MAX_CALLS: usize = 16;
const MAX_RANGES: usize = 4;
const MAX_ROWS: usize = 64;
const MAX_NAME_CHARS: usize = 24;

fuzz_target!(|bytes: &[u8]| {
    let Some((length, rest)) = bytes.split_first_chunk::<4>() else { return };
    let length = (u32::from_le_bytes(*length) as usize).min(rest.len());
    let (elf, info_bytes) = rest.split_at(length);
    let Ok(info) = code_debug_info(&mut Unstructured::new(info_bytes)) else { return };
    let Ok(rewritten) = rewrite_jitted_elf(elf, &info) else { return };

    let output = object::File::parse(&*rewritten.bytes).expect("the rewritten file parses");
    let output_text = text_section(&output).expect("the rewritten file has a .text");
    if let Ok(input) = object::File::parse(elf) {
        let input_text = text_section(&input).expect("a file rewritten had a .text");
        assert_eq!(output_text.address(), input_text.address());
        if let Ok(data) = input_text.data() {
            assert_eq!(output_text.data().ok(), Some(data), ".text kept byte for byte");
        }
        if let Ok(Some(build_id)) = input.build_id() {
            assert_eq!(output.build_id().ok().flatten(), Some(build_id), "build id kept");
        }
    }

    // The debug sections are those written for this info, in order, and
    // no other (the input's are gone).
    let text = TextSection { address: output_text.address(), size: output_text.size() };
    let target = Target {
        address_size: if output.is_64() { 8 } else { 4 },
        endian: if output.is_little_endian() { gimli::RunTimeEndian::Little } else { gimli::RunTimeEndian::Big },
    };
    let expected = dwarf_sections(&info, text, target).expect("the DWARF was written once");
    let written: Vec<(&[u8], &[u8])> = output
        .sections()
        .filter_map(|section| {
            let name = section.name_bytes().ok()?;
            name.starts_with(b".debug_").then(|| (name, section.data().expect("a debug section's data")))
        })
        .collect();
    let expected_written: Vec<(&[u8], &[u8])> =
        expected.iter().map(|section| (section.name.as_bytes(), section.data.as_slice())).collect();
    assert_eq!(written, expected_written);
    assert_eq!(written.iter().map(|(_, data)| data.len()).sum::<usize>(), rewritten.debug_bytes);

    let again = rewrite_jitted_elf(&rewritten.bytes, &info).expect("a rewritten file is rewritten again");
    assert!(again == rewritten, "rewriting again changes nothing");
});

/// The first section named `.text`, as object's builder finds it: not the
/// null section at index 0 (which `section_by_name` also looks at, and the
/// builder writes back with no name).
fn text_section<'file>(file: &'file object::File) -> Option<object::Section<'file, 'file>> {
    file.sections().find(|section| section.index().0 != 0 && section.name_bytes().ok() == Some(b".text"))
}

/// A small info whose indexes, offsets and names are chosen by the input:
/// mostly in range, at times past the lists or the code.
fn code_debug_info(input: &mut Unstructured) -> Result<CodeDebugInfo> {
    let file_count = input.int_in_range(0..=MAX_FILES)?;
    let files = (0..file_count).map(|_| name(input)).collect::<Result<Vec<_>>>()?;
    let function_count = input.int_in_range(0..=MAX_FUNCTIONS)?;
    let mut functions = Vec::with_capacity(function_count);
    for _ in 0..function_count {
        functions.push(DebugFunction { name: name(input)?, declared_at: location(input, file_count)? });
    }
    let outer = if input.arbitrary()? { Some(FunctionIndex(input.int_in_range(0..=function_count)?)) } else { None };
    let call_count = input.int_in_range(0..=MAX_CALLS)?;
    let mut calls = Vec::with_capacity(call_count);
    for index in 0..call_count {
        // Mostly an earlier call (a tree), at times a later one or none.
        let parent = if input.arbitrary()? { Some(input.int_in_range(0..=index + 1)?) } else { None };
        let range_count = input.int_in_range(0..=MAX_RANGES)?;
        let ranges = (0..range_count)
            .map(|_| Ok(CodeRange { start: offset(input)?, end: offset(input)? }))
            .collect::<Result<Vec<_>>>()?;
        calls.push(InlinedCallInfo {
            parent,
            function: FunctionIndex(input.int_in_range(0..=function_count)?),
            call_site: location(input, file_count)?,
            ranges,
        });
    }
    let row_count = input.int_in_range(0..=MAX_ROWS)?;
    let rows = (0..row_count)
        .map(|_| Ok(LineRow { offset: offset(input)?, location: location(input, file_count)? }))
        .collect::<Result<Vec<_>>>()?;
    Ok(CodeDebugInfo { files, functions, outer, calls, rows })
}

/// A short name: empty, with NULs, or any text.
fn name(input: &mut Unstructured) -> Result<String> {
    let text: &str = input.arbitrary()?;
    Ok(text.chars().take(MAX_NAME_CHARS).collect())
}

/// A position in one of `file_count` files (or the one past them), or none.
fn location(input: &mut Unstructured, file_count: usize) -> Result<Option<SourceLocation>> {
    if !input.arbitrary::<bool>()? {
        return Ok(None);
    }
    Ok(Some(SourceLocation {
        file: FileIndex(input.int_in_range(0..=file_count)?),
        line: input.arbitrary()?,
        column: input.arbitrary()?,
    }))
}

/// A code offset: mostly within a few KB (real code objects' sizes), at
/// times any.
fn offset(input: &mut Unstructured) -> Result<u64> {
    if input.ratio(1, 16)? { input.arbitrary() } else { input.int_in_range(0..=4096) }
}
