//! The inlined-function list of a `code-source-info` at ingest.
//!
//! Its addresses are read while the log is read (each names a function that
//! a later `code-creation` may name); the position and inlining tables are
//! kept as text and decoded on first use (`CodeLog::source_tables`).

/// Appends the addresses of `S0x<address>...` to `addresses`; `false` unless
/// the list is in the plain form (at most 16 hex digits each).
pub fn inlined_function_addresses(table: &[u8], addresses: &mut Vec<u64>) -> bool {
    let mut at = 0;
    while at < table.len() {
        if !table[at..].starts_with(b"S0x") {
            return false;
        }
        at += 3;
        let mut value: u64 = 0;
        let start = at;
        while let Some(&byte) = table.get(at) {
            let digit = match byte {
                b'0'..=b'9' => byte - b'0',
                b'a'..=b'f' => byte - b'a' + 10,
                b'A'..=b'F' => byte - b'A' + 10,
                _ => break,
            };
            value = (value << 4) | u64::from(digit);
            at += 1;
        }
        if at == start || at - start > 16 {
            return false;
        }
        addresses.push(value);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::v8log::record::parse_inlined_functions;

    #[test]
    fn inlined_function_lists() {
        for (table, expected) in [
            ("", Some(vec![])),
            ("S0x1a2BS0x3c4d", Some(vec![0x1a2b, 0x3c4d])),
            ("S0xffffffffffffffff", Some(vec![u64::MAX])),
            ("S0x1ffffffffffffffff", None),
            ("S0x", None),
            ("S0X1", None),
            ("S0x1S", None),
            ("S0x1g", None),
        ] {
            let mut addresses = Vec::new();
            let plain = inlined_function_addresses(table.as_bytes(), &mut addresses);
            assert_eq!(plain.then_some(addresses.clone()), expected, "{table}");
            if plain {
                assert_eq!(parse_inlined_functions(table.as_bytes()).unwrap(), addresses, "{table}");
            }
        }
    }
}
