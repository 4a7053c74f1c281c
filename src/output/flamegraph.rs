//! Flame graph SVG from folded stacks, with inferno's renderer.
//!
//! Frames are colored by the annotations the collapser appends (inferno's
//! annotation-driven palette): inlined JavaScript `_[i]` aqua, JIT code
//! `_[j]` green, kernel `_[k]` orange, native code yellow or red. inferno
//! hides the annotations in the frame labels.

use std::io::{self, Write};

use inferno::flamegraph::color::{MultiPalette, Palette};
use inferno::flamegraph::{self, Options, TextTruncateDirection};

/// Renders folded lines (`stack count`) as an SVG flame graph titled
/// `title`. The output depends only on the input: colors come from hashes
/// of the frame names, not from a random generator.
pub fn write_svg<'lines, W: Write>(
    folded_lines: impl IntoIterator<Item = &'lines str>,
    title: &str,
    output: W,
) -> io::Result<()> {
    let mut options = Options::default();
    options.colors = Palette::Multi(MultiPalette::Java);
    options.deterministic = true;
    options.title = title.to_string();
    // Labels start with the function's name; cut the script path instead.
    options.text_truncate_direction = TextTruncateDirection::Right;
    flamegraph::from_lines(&mut options, folded_lines, output)
}
