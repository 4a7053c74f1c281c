//! Builds large, realistic benchmark inputs from the real recordings in
//! `testdata/` (run by `bench/large.sh`):
//!
//! ```text
//! scale-inputs perf-script INPUT OUTPUT MIN_BYTES
//! scale-inputs code-log    INPUT OUTPUT COPIES
//! scale-inputs code-log-without-sources INPUT OUTPUT COPIES
//! scale-inputs jitdump     INPUT OUTPUT COPIES
//! ```
//!
//! - `perf-script` repeats a `perf script` text until it reaches MIN_BYTES.
//! - `code-log` writes COPIES copies of a V8 code log; copy k has every code
//!   and SharedFunctionInfo address moved up by `k << 48` (V8 user addresses
//!   stay below 2^47, so the copies never overlap). The header records
//!   (`v8-version`, `shared-library`, ...) are written once, so the result
//!   still reads as one isolate.
//! - `code-log-without-sources` does the same without the `script-source`
//!   records: a log as `node --no-log-source-code` writes it (CodSpeed
//!   records so), all code records.
//! - `jitdump` does the same to a jitdump: CODE_LOAD and CODE_MOVE addresses
//!   move by `k << 48` and code indexes by k times the largest index plus one;
//!   DEBUG_INFO records move their code address (their entries are left as
//!   they are: v8inline reads them only for tests). Code bytes are kept, so the
//!   file is as heavy to read as a real one.
//!
//! So the k-th copy of the jitdump joins the k-th copy of the log, as the
//! originals join. Inputs ending in `.gz` are decompressed.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::process::ExitCode;

use flate2::read::MultiGzDecoder;

/// Copy k of the inputs lives `k << ADDRESS_SHIFT_BITS` bytes above the original.
const ADDRESS_SHIFT_BITS: u32 = 48;

/// Log records whose fields hold code or SharedFunctionInfo addresses, and
/// the records repeated in every copy.
const REPEATED_LOG_RECORDS: [&str; 6] =
    ["code-creation", "code-source-info", "sfi-move", "code-move", "code-delete", "script-source"];

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [mode, input, output, amount] = arguments.as_slice() else {
        eprintln!("usage: scale-inputs perf-script|code-log|code-log-without-sources|jitdump INPUT OUTPUT AMOUNT");
        return ExitCode::from(2);
    };
    let Ok(amount) = amount.parse::<u64>() else {
        eprintln!("scale-inputs: AMOUNT must be a number, got {amount:?}");
        return ExitCode::from(2);
    };
    let result = read_input(input).and_then(|bytes| {
        let mut writer = BufWriter::with_capacity(1 << 20, File::create(output).map_err(|error| error.to_string())?);
        match mode.as_str() {
            "perf-script" => write_repeated(&bytes, amount, &mut writer),
            "code-log" => write_shifted_log(&bytes, amount, true, &mut writer),
            "code-log-without-sources" => write_shifted_log(&bytes, amount, false, &mut writer),
            "jitdump" => write_shifted_jitdump(&bytes, amount, &mut writer),
            _ => Err(format!("unknown mode {mode:?}")),
        }?;
        writer.flush().map_err(|error| error.to_string())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("scale-inputs: {input}: {message}");
            ExitCode::FAILURE
        }
    }
}

fn read_input(path: &str) -> Result<Vec<u8>, String> {
    let mut file = File::open(path).map_err(|error| error.to_string())?;
    let mut bytes = Vec::new();
    if path.ends_with(".gz") {
        MultiGzDecoder::new(file).read_to_end(&mut bytes).map_err(|error| error.to_string())?;
    } else {
        file.read_to_end(&mut bytes).map_err(|error| error.to_string())?;
    }
    Ok(bytes)
}

fn write_error(error: std::io::Error) -> String {
    format!("writing: {error}")
}

fn write_repeated(text: &[u8], min_bytes: u64, output: &mut impl Write) -> Result<(), String> {
    if text.is_empty() {
        return Err("empty input".to_string());
    }
    let mut written = 0;
    while written < min_bytes {
        output.write_all(text).map_err(write_error)?;
        // Samples are separated by blank lines: keep one between copies.
        if !text.ends_with(b"\n\n") {
            output.write_all(b"\n").map_err(write_error)?;
        }
        written += text.len() as u64;
    }
    Ok(())
}

/// Writes `0x<address + shift>` for a `0x`-prefixed field, the field as it is
/// otherwise.
fn write_shifted_address(field: &[u8], shift: u64, output: &mut Vec<u8>) {
    let parsed = field
        .strip_prefix(b"0x")
        .and_then(|digits| std::str::from_utf8(digits).ok())
        .and_then(|digits| u64::from_str_radix(digits, 16).ok());
    match parsed {
        Some(address) => {
            let _ = write!(output, "0x{:x}", address.wrapping_add(shift));
        }
        None => output.extend_from_slice(field),
    }
}

/// One log line of copy `shift`: the address fields of its record moved.
fn shift_log_line(line: &[u8], shift: u64, output: &mut Vec<u8>) {
    let fields: Vec<&[u8]> = line.split(|&byte| byte == b',').collect();
    let kind = fields[0];
    let address_fields: &[usize] = match kind {
        b"code-creation" if fields.len() == 9 => &[4, 7],
        b"code-creation" => &[4],
        b"code-source-info" => &[1],
        b"sfi-move" | b"code-move" => &[1, 2],
        b"code-delete" => &[1],
        _ => &[],
    };
    for (index, field) in fields.iter().enumerate() {
        if index > 0 {
            output.push(b',');
        }
        if address_fields.contains(&index) {
            write_shifted_address(field, shift, output);
        } else if kind == b"code-source-info" && index == 7 {
            // Inlined functions: `S0x<address>` repeated.
            for address in field.split(|&byte| byte == b'S').filter(|part| !part.is_empty()) {
                output.push(b'S');
                write_shifted_address(address, shift, output);
            }
        } else {
            output.extend_from_slice(field);
        }
    }
    output.push(b'\n');
}

/// Writes `copies` shifted copies of `log`, with or without its
/// `script-source` records.
fn write_shifted_log(log: &[u8], copies: u64, with_sources: bool, output: &mut impl Write) -> Result<(), String> {
    let mut buffer = Vec::with_capacity(1 << 20);
    for copy in 0..copies {
        let shift = copy << ADDRESS_SHIFT_BITS;
        for line in log.split(|&byte| byte == b'\n').filter(|line| !line.is_empty()) {
            let kind = line.split(|&byte| byte == b',').next().unwrap_or_default();
            let repeated = REPEATED_LOG_RECORDS.iter().any(|record| record.as_bytes() == kind);
            if (copy > 0 && !repeated) || (!with_sources && kind == b"script-source") {
                continue;
            }
            shift_log_line(line, shift, &mut buffer);
        }
        output.write_all(&buffer).map_err(write_error)?;
        buffer.clear();
    }
    Ok(())
}

/// A little-endian field of a jitdump.
fn read_u32(bytes: &[u8], offset: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(offset..offset + 4)?.try_into().ok()?))
}

fn read_u64(bytes: &[u8], offset: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(offset..offset + 8)?.try_into().ok()?))
}

fn add_to_u64(bytes: &mut [u8], offset: usize, amount: u64) {
    if let Some(value) = read_u64(bytes, offset) {
        bytes[offset..offset + 8].copy_from_slice(&value.wrapping_add(amount).to_le_bytes());
    }
}

/// Jitdump record ids (`tools/perf/Documentation/jitdump-specification.txt`).
const CODE_LOAD: u32 = 0;
const CODE_MOVE: u32 = 1;
const DEBUG_INFO: u32 = 2;
/// Record prefix: id u32, total_size u32, timestamp u64.
const PREFIX_SIZE: usize = 16;

/// The whole records after the header, as (start, end) offsets.
fn jitdump_records(dump: &[u8]) -> Result<Vec<(usize, usize)>, String> {
    if read_u32(dump, 0) != Some(0x4A69_5444) {
        return Err("not a little-endian jitdump".to_string());
    }
    let mut offset = read_u32(dump, 8).ok_or("cut header")? as usize;
    let mut records = Vec::new();
    while let Some(total_size) = read_u32(dump, offset + 4) {
        let end = offset + total_size as usize;
        if total_size < PREFIX_SIZE as u32 || end > dump.len() {
            break;
        }
        records.push((offset, end));
        offset = end;
    }
    Ok(records)
}

fn write_shifted_jitdump(dump: &[u8], copies: u64, output: &mut impl Write) -> Result<(), String> {
    let records = jitdump_records(dump)?;
    let header_size = read_u32(dump, 8).ok_or("cut header")? as usize;
    // CODE_LOAD body: pid u32, tid u32, vma u64, code_addr u64, code_size u64, code_index u64.
    let index_stride = records
        .iter()
        .filter(|&&(start, _)| read_u32(dump, start) == Some(CODE_LOAD))
        .filter_map(|&(start, _)| read_u64(dump, start + PREFIX_SIZE + 32))
        .max()
        .map_or(1, |index| index + 1);
    output.write_all(&dump[..header_size]).map_err(write_error)?;
    let mut record = Vec::new();
    for copy in 0..copies {
        let shift = copy << ADDRESS_SHIFT_BITS;
        let index_shift = copy * index_stride;
        for &(start, end) in &records {
            record.clear();
            record.extend_from_slice(&dump[start..end]);
            let body = PREFIX_SIZE;
            match read_u32(&record, 0) {
                Some(CODE_LOAD) => {
                    add_to_u64(&mut record, body + 8, shift);
                    add_to_u64(&mut record, body + 16, shift);
                    add_to_u64(&mut record, body + 32, index_shift);
                }
                Some(CODE_MOVE) => {
                    // pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index.
                    for field in [8, 16, 24] {
                        add_to_u64(&mut record, body + field, shift);
                    }
                    add_to_u64(&mut record, body + 40, index_shift);
                }
                Some(DEBUG_INFO) => add_to_u64(&mut record, body, shift),
                _ => {}
            }
            output.write_all(&record).map_err(write_error)?;
        }
    }
    Ok(())
}
