//! Which frames a `--skip-after FUNCTION` names. inferno compares the
//! function's whole name; a JavaScript frame's name also carries its tier
//! (`JS:*loop /app.js:2:14` optimized, `JS:~loop /app.js:2:14`
//! interpreted) and its column, so the same function's frames match by any
//! of: the whole name, the name without the tier marker (`loop
//! /app.js:2:14`), without the column (`loop /app.js:2`) or the function's
//! name alone (`loop`), in any tier. Annotations (`_[j]`) are ignored.

/// The code-creation tags V8 names JavaScript code with (`JS:` since V8
/// 11, `LazyCompile:`, `Function:`, `Script:` and `Eval:` before).
const JAVASCRIPT_TAGS: [&str; 5] = ["JS", "LazyCompile", "Function", "Script", "Eval"];

/// V8's tier markers: interpreted, Sparkplug, Maglev, TurboFan.
const TIER_MARKERS: [char; 4] = ['~', '^', '+', '*'];

/// Whether the frame named `frame` is the function `wanted` names.
pub fn names_function(wanted: &str, frame: &str) -> bool {
    let (wanted, frame) = (without_annotation(wanted), without_annotation(frame));
    if wanted == frame {
        return true;
    }
    let (Some(frame), Some(wanted)) = (JavaScriptFrame::parse(frame), JavaScriptFrame::parse_wanted(wanted)) else {
        return false;
    };
    frame.name == wanted.name
        && wanted.file.is_none_or(|file| Some(file) == frame.file)
        && wanted.line.is_none_or(|line| Some(line) == frame.line)
        && wanted.column.is_none_or(|column| Some(column) == frame.column)
}

/// A name without the annotation inferno colours by (`_[i]`, `_[j]`, `_[k]`).
fn without_annotation(name: &str) -> &str {
    ["_[i]", "_[j]", "_[k]"].iter().find_map(|annotation| name.strip_suffix(annotation)).unwrap_or(name)
}

/// A JavaScript frame's parts: `NAME FILE:LINE:COLUMN`, its tier dropped.
#[derive(Debug, PartialEq, Eq)]
struct JavaScriptFrame<'a> {
    name: &'a str,
    file: Option<&'a str>,
    line: Option<&'a str>,
    column: Option<&'a str>,
}

impl<'a> JavaScriptFrame<'a> {
    /// A frame's name as V8 gives it: `TAG:MARKER NAME FILE:LINE:COLUMN`;
    /// `None` for other frames (natives, builtins).
    fn parse(frame: &'a str) -> Option<JavaScriptFrame<'a>> {
        let (tag, rest) = frame.split_once(':')?;
        if !JAVASCRIPT_TAGS.contains(&tag) {
            return None;
        }
        let parsed = JavaScriptFrame::parse_wanted(rest.strip_prefix(TIER_MARKERS).unwrap_or(rest))?;
        parsed.line.is_some().then_some(parsed)
    }

    /// What a `--skip-after` gives: a frame's name with or without its tag
    /// and tier, column or place, or the function's name alone.
    fn parse_wanted(wanted: &'a str) -> Option<JavaScriptFrame<'a>> {
        let wanted = match wanted.split_once(':') {
            Some((tag, rest)) if JAVASCRIPT_TAGS.contains(&tag) => rest.strip_prefix(TIER_MARKERS).unwrap_or(rest),
            _ => wanted,
        };
        let Some((name, place)) = wanted.rsplit_once(' ') else {
            return Some(JavaScriptFrame { name: wanted, file: None, line: None, column: None });
        };
        let is_number = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
        let (file, line, column) = match place.rsplit_once(':') {
            Some((rest, last)) if is_number(last) => match rest.rsplit_once(':') {
                Some((file, line)) if is_number(line) => (file, Some(line), Some(last)),
                _ => (rest, Some(last), None),
            },
            _ => return Some(JavaScriptFrame { name: wanted, file: None, line: None, column: None }),
        };
        Some(JavaScriptFrame { name, file: Some(file), line, column })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_matches_whatever_its_tier() {
        for frame in ["JS:*loop /tmp/app.js:2:14", "JS:~loop /tmp/app.js:2:14_[j]", "JS:^loop /tmp/app.js:2:14_[i]"] {
            for wanted in [
                "JS:*loop /tmp/app.js:2:14",
                "JS:+loop /tmp/app.js:2:14",
                "loop /tmp/app.js:2:14",
                "loop /tmp/app.js:2",
                "loop",
            ] {
                assert!(names_function(wanted, frame), "{wanted} names {frame}");
            }
            for wanted in ["loop /tmp/app.js:3", "loop /tmp/other.js:2", "add", "loop /tmp/app.js:2:15", "JS:*add"] {
                assert!(!names_function(wanted, frame), "{wanted} does not name {frame}");
            }
        }
        // Node 18's tags; an anonymous function by its place.
        assert!(names_function("parse /a.js:4", "LazyCompile:*parse /a.js:4:9"));
        assert!(names_function(" /tmp/app.js:1", "JS:~ /tmp/app.js:1:1"));
        assert!(names_function("get size /a.js:7", "JS:*get size /a.js:7:3"));
    }

    #[test]
    fn other_frames_match_by_their_whole_name() {
        assert!(names_function("main", "main"));
        assert!(names_function("uv_run", "uv_run_[k]"));
        assert!(!names_function("virtual thunk to", "virtual thunk to v8::internal::OFStream::~OFStream"));
        assert!(!names_function("Builtins_LoadIC", "Builtins_LoadIC_Megamorphic"));
    }
}
