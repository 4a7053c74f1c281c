//! The embedded builtins a code log names: its `code-creation,Builtin` and
//! `code-creation,BytecodeHandler` records, with the symbol a binary with
//! symbols gives each (node's `Builtins_LoadIC_Megamorphic`). A runtime
//! whose binary is stripped (Deno) has no other names for them.

use super::CodeLog;

/// One builtin of V8's embedded blob, as its code log describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedBuiltin {
    /// Where the log says its instructions start (for a blob V8 copied
    /// into its code range, the copy's address).
    pub address: u64,
    /// Its instruction size in bytes.
    pub size: u64,
    /// The symbol V8's embedded file writer gives it
    /// ([`builtin_symbol`]).
    pub symbol: String,
}

/// The symbol V8's embedded file writer gives a builtin in the binary
/// (`EmbeddedFileWriter::WriteBuiltin`: `Builtins_` and the builtin's
/// name), from its code log tag and name: `Builtin` `LoadIC_Megamorphic`
/// is `Builtins_LoadIC_Megamorphic`; a bytecode handler's builtin is the
/// bytecode, its operand scale and `Handler` (`BUILD_BCH` in
/// builtins-definitions.h), and the log writes the scale after a dot:
/// `BytecodeHandler` `GetNamedProperty.Wide` is
/// `Builtins_GetNamedPropertyWideHandler`. Other tags: `None`.
pub fn builtin_symbol(tag: &str, name: &str) -> Option<String> {
    match tag {
        "Builtin" => Some(format!("Builtins_{name}")),
        "BytecodeHandler" => {
            let (bytecode, scale) = name.split_once('.').unwrap_or((name, ""));
            // `Star0` ... `Star15` share one handler, `ShortStar`
            // (`Bytecodes::IsShortStar`), which the log names by the first.
            let is_short_star = bytecode
                .strip_prefix("Star")
                .is_some_and(|register| !register.is_empty() && register.bytes().all(|byte| byte.is_ascii_digit()));
            let bytecode = if is_short_star { "ShortStar" } else { bytecode };
            Some(format!("Builtins_{bytecode}{scale}Handler"))
        }
        _ => None,
    }
}

/// The log's embedded builtins in address order, each address once (every
/// isolate logs them again). V8 logs them as one contiguous blob; those
/// after a gap wider than [`MAX_BLOB_GAP`] are not part of it and are left
/// out.
pub fn embedded_builtins(log: &CodeLog) -> Vec<EmbeddedBuiltin> {
    let mut builtins: Vec<EmbeddedBuiltin> = log
        .code_objects
        .iter()
        .filter(|object| object.size > 0)
        .filter_map(|object| {
            let symbol = builtin_symbol(log.object_tag(object), log.object_name(object))?;
            Some(EmbeddedBuiltin { address: object.address, size: object.size, symbol })
        })
        .collect();
    builtins.sort_by_key(|builtin| builtin.address);
    builtins.dedup_by_key(|builtin| builtin.address);
    let blob_end = builtins
        .windows(2)
        .position(|pair| pair[1].address.saturating_sub(pair[0].address.saturating_add(pair[0].size)) > MAX_BLOB_GAP)
        .map_or(builtins.len(), |last| last + 1);
    builtins.truncate(blob_end);
    builtins
}

/// The widest gap between two builtins of one embedded blob: V8 pads each
/// to its code alignment (64 bytes on x64), so real gaps are far smaller.
pub const MAX_BLOB_GAP: u64 = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_builtins_as_the_embedded_file_writer_does() {
        assert_eq!(builtin_symbol("Builtin", "LoadIC_Megamorphic").as_deref(), Some("Builtins_LoadIC_Megamorphic"));
        assert_eq!(
            builtin_symbol("BytecodeHandler", "GetNamedProperty").as_deref(),
            Some("Builtins_GetNamedPropertyHandler")
        );
        assert_eq!(
            builtin_symbol("BytecodeHandler", "GetNamedProperty.ExtraWide").as_deref(),
            Some("Builtins_GetNamedPropertyExtraWideHandler")
        );
        assert_eq!(builtin_symbol("BytecodeHandler", "Star0").as_deref(), Some("Builtins_ShortStarHandler"));
        assert_eq!(builtin_symbol("BytecodeHandler", "Star").as_deref(), Some("Builtins_StarHandler"));
        assert_eq!(builtin_symbol("BytecodeHandler", "Wide").as_deref(), Some("Builtins_WideHandler"));
        assert_eq!(builtin_symbol("JS", "f"), None);
    }
}
