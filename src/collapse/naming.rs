//! inferno's frame-naming rules for `perf script` stack lines.
//!
//! These reproduce inferno 0.12.8 (`collapse/perf.rs`, `collapse/common.rs`,
//! `collapse/matcher.rs`) exactly, writing into reused buffers instead of
//! allocating a `String` per frame.

use std::borrow::Cow;

/// Length of a legacy Rust symbol hash suffix: `h` and 16 hex digits.
const RUST_HASH_LENGTH: usize = 17;

/// The escapes of legacy Rust mangling that inferno undoes, in its order.
const RUST_ESCAPES: [(&str, &str); 20] = [
    ("$SP$", "@"),
    ("$BP$", "*"),
    ("$RF$", "&"),
    ("$LT$", "<"),
    ("$GT$", ">"),
    ("$LP$", "("),
    ("$RP$", ")"),
    ("$C$", ","),
    ("$u7e$", "~"),
    ("$u20$", " "),
    ("$u27$", "'"),
    ("$u3d$", "="),
    ("$u5b$", "["),
    ("$u5d$", "]"),
    ("$u7b$", "{"),
    ("$u7d$", "}"),
    ("$u3b$", ";"),
    ("$u2b$", "+"),
    ("$u21$", "!"),
    ("$u22$", "\""),
];

/// Fixes symbols that a profiler demangled only partially, like
/// `_$LT$std..fs..ReadDir$u20$as$u20$Iterator$GT$::next::hc14f1750ca79129b`:
/// any symbol ending in `h` and 16 hex digits loses that suffix (and a `::`
/// before it) and has its `..` and `$..$` escapes undone. Other symbols are
/// returned unchanged.
pub fn fix_partially_demangled_rust_symbol(symbol: &str) -> Cow<'_, str> {
    let Some(hash_start) = symbol.len().checked_sub(RUST_HASH_LENGTH) else {
        return Cow::Borrowed(symbol);
    };
    // inferno slices here and would panic inside a multi-byte character; such
    // a suffix cannot be a hash anyway.
    let Some(hash) = symbol.get(hash_start..) else {
        return Cow::Borrowed(symbol);
    };
    if !(hash.starts_with('h') && hash[1..].bytes().all(|byte| byte.is_ascii_hexdigit())) {
        return Cow::Borrowed(symbol);
    }
    let mut rest = &symbol[..hash_start];
    if let Some(stripped) = rest.strip_suffix("::") {
        rest = stripped;
    }
    if rest.starts_with("_$") {
        rest = &rest[1..];
    }
    let mut demangled = String::with_capacity(rest.len());
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("..") {
            demangled.push_str("::");
            rest = after;
        } else if let Some(after) = rest.strip_prefix('.') {
            demangled.push('.');
            rest = after;
        } else if rest.starts_with('$') {
            match RUST_ESCAPES.iter().find(|(escaped, _)| rest.starts_with(escaped)) {
                Some((escaped, plain)) => {
                    demangled.push_str(plain);
                    rest = &rest[escaped.len()..];
                }
                None => {
                    demangled.push_str(rest);
                    break;
                }
            }
        } else {
            let end = rest.find(['$', '.']).unwrap_or(rest.len());
            demangled.push_str(&rest[..end]);
            rest = &rest[end..];
        }
    }
    Cow::Owned(demangled)
}

/// Appends `function` to `name`, or for `[unknown]` a name made from the
/// module: `[basename]`, or with `include_addresses` `[basename <address>]`
/// and `[unknown <address>]`. An unknown function in an unknown module stays
/// `[unknown]` without `include_addresses`.
pub fn push_function_or_module(
    name: &mut String,
    function: &str,
    module: &str,
    address_text: &str,
    include_addresses: bool,
) {
    if function != "[unknown]" {
        name.push_str(function);
        return;
    }
    let fallback = if module == "[unknown]" {
        if !include_addresses {
            name.push_str(function);
            return;
        }
        "unknown"
    } else {
        &module[module.rfind('/').map_or(0, |slash| slash + 1)..]
    };
    name.push('[');
    name.push_str(fallback);
    if include_addresses {
        name.push_str(" <");
        name.push_str(address_text);
        name.push_str(">]");
    } else {
        name.push(']');
    }
}

/// inferno's `tidy_generic`: replaces `;` by `:` and cuts the name at the
/// first top-level `(` (an argument list), except a `(` right after a `.`
/// (Go methods like `net/http.(*Client).Do`) or one starting
/// `(anonymous namespace)`. `<{[` open a level and `>}])` close one.
pub fn tidy_generic(name: &mut String) {
    // One scan answers for the usual name, with neither.
    let Some(first) = memchr::memchr2(b';', b'(', name.as_bytes()) else {
        return;
    };
    if memchr::memchr(b';', &name.as_bytes()[first..]).is_some() {
        *name = name.replace(';', ":");
    }
    if memchr::memchr(b'(', name.as_bytes()).is_none() {
        return;
    }
    let mut depth: i64 = 0;
    let mut after_last_dot: Option<usize> = None;
    let mut cut_at = name.len();
    for (index, &byte) in name.as_bytes().iter().enumerate() {
        match byte {
            b'<' | b'{' | b'[' => depth += 1,
            b'>' | b'}' | b']' | b')' => depth -= 1,
            b'(' => {
                if depth == 0 {
                    let is_go_method = after_last_dot == Some(index);
                    let is_anonymous_namespace = name[index..].starts_with("(anonymous namespace)");
                    if !is_go_method && !is_anonymous_namespace {
                        cut_at = index;
                        break;
                    }
                }
                depth += 1;
            }
            b'.' => after_last_dot = Some(index + 1),
            _ => {}
        }
    }
    name.truncate(cut_at);
}

/// The tidying of a name V8 gave (a JIT frame the expander named): `;`, the
/// folded format's separator, becomes `:` as inferno's `tidy_generic` makes
/// it, but the name is not cut at its first `(`. That cut drops C++
/// argument lists; a V8 name has none, and a `RegExp:` name is the
/// expression's source, `(?!...)` and all (node 20's
/// `RegExp:...|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|...`).
pub fn tidy_v8_name(name: &mut String) {
    if memchr::memchr(b';', name.as_bytes()).is_some() {
        *name = name.replace(';', ":");
    }
}

/// inferno's `tidy_java` (applied when the comm starts with `java`): drops
/// the leading `L` of JVM class names like `Ljava/lang/Object;`.
pub fn tidy_java(name: &mut String) {
    if name.starts_with('L') && name.contains('/') {
        name.remove(0);
    }
}

/// Appends inferno's root frame name: the comm with spaces as `_`, then
/// `-PID/TID` with `include_tid` or `-PID` with `include_pid`.
pub fn push_root_frame(
    name: &mut String,
    comm: &str,
    pid_text: &str,
    tid_text: &str,
    include_pid: bool,
    include_tid: bool,
) {
    for (index, part) in comm.split(' ').enumerate() {
        if index > 0 {
            name.push('_');
        }
        name.push_str(part);
    }
    if include_tid {
        name.push('-');
        name.push_str(pid_text);
        name.push('/');
        name.push_str(tid_text);
    } else if include_pid {
        name.push('-');
        name.push_str(pid_text);
    }
}

/// Appends `marker` (like `_[j]`) unless `name` already contains it.
pub fn push_marker_once(name: &mut String, marker: &str) {
    if !name.contains(marker) {
        name.push_str(marker);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tidied(input: &str) -> String {
        let mut name = input.to_owned();
        tidy_generic(&mut name);
        name
    }

    #[test]
    fn tidy_generic_matches_inferno_examples() {
        let expectations = [
            ("go/build.(*importReader).readByte", "go/build.(*importReader).readByte"),
            ("foo<Vec::<usize>>(Vec<usize>)", "foo<Vec::<usize>>"),
            (".run()V", ".run"),
            ("base(BasicType) const", "base"),
            ("std::function<void (int, int)>::operator(int, int)", "std::function<void (int, int)>::operator"),
            ("{lambda(int, int)#2}::operator()", "{lambda(int, int)#2}::operator"),
            ("(anonymous namespace)::myBar()", "(anonymous namespace)::myBar"),
            ("[(foo)]::bar()", "[(foo)]::bar"),
            ("a;b(c;d)", "a:b"),
        ];
        for (input, expected) in expectations {
            assert_eq!(tidied(input), expected, "{input}");
        }
    }

    #[test]
    fn v8_names_keep_their_parentheses() {
        let mut name = r"RegExp:[\x00-\x7F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF]);(?:x)".to_owned();
        tidy_v8_name(&mut name);
        assert_eq!(name, r"RegExp:[\x00-\x7F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF]):(?:x)");
    }

    #[test]
    fn fixes_rust_symbols_like_inferno() {
        let fixed = |symbol: &str| fix_partially_demangled_rust_symbol(symbol).into_owned();
        assert_eq!(fixed("std::sys::unix::fs::File::open::hb90e1c1c787080f0"), "std::sys::unix::fs::File::open");
        assert_eq!(
            fixed(
                "_$LT$std..fs..ReadDir$u20$as$u20$core..iter..traits..iterator..Iterator$GT$::next::hc14f1750ca79129b"
            ),
            "<std::fs::ReadDir as core::iter::traits::iterator::Iterator>::next"
        );
        assert_eq!(
            fixed("rg::search_parallel::_$u7b$$u7b$closure$u7d$$u7d$::_$u7b$$u7b$closure$u7d$$u7d$::h6e849b55a66fcd85"),
            "rg::search_parallel::_{{closure}}::_{{closure}}"
        );
        assert_eq!(fixed("_ZN4testE"), "_ZN4testE");
        assert_eq!(
            fixed("_ZN3std2rt19lang_start_internal17h540c897fe52ba9c5E"),
            "_ZN3std2rt19lang_start_internal17h540c897fe52ba9c5E"
        );
        assert_eq!(fixed("x$zz::h0123456789abcdef"), "x$zz");
        assert_eq!(fixed("ééééééééééééééééé"), "ééééééééééééééééé");
    }

    #[test]
    fn names_unknown_functions_from_modules() {
        let named = |module: &str, addresses: bool| {
            let mut name = String::new();
            push_function_or_module(&mut name, "[unknown]", module, "7f00", addresses);
            name
        };
        assert_eq!(named("/tmp/perf-2020.map", false), "[perf-2020.map]");
        assert_eq!(named("/tmp/perf-2020.map", true), "[perf-2020.map <7f00>]");
        assert_eq!(named("[unknown]", false), "[unknown]");
        assert_eq!(named("[unknown]", true), "[unknown <7f00>]");
    }
}
