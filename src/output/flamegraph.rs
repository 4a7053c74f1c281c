//! Flame graph SVG from folded stacks, with inferno's renderer.
//!
//! Frames are colored by the annotations the collapser appends (inferno's
//! annotation-driven palette): inlined JavaScript `_[i]` aqua, JIT code
//! `_[j]` green, kernel `_[k]` orange, native code yellow or red. inferno
//! hides the annotations in the frame labels.
//!
//! Three things differ from inferno's defaults, in the SVG only (the folded
//! stacks stay as inferno writes them):
//!
//! - Counts are stated in their unit ([`CountUnit`]): perf periods of the
//!   `cpu-clock` and `task-clock` events are nanoseconds, shown as time
//!   through inferno's `count_name` and `factor`; counts of 1 per sample
//!   are samples. The subtitle names the event and the total.
//! - JavaScript frames are labelled with what a person looks for
//!   ([`frame_label`]: `parseStatement acorn.js:1416`); the tooltip, the
//!   details line and search keep the full name (`JS:*pp$8.parseStatement
//!   /app/node_modules/acorn/dist/acorn.js:1416:31`). inferno has no option
//!   for a label other than the name, so the SVG it writes is rewritten
//!   (`relabel`): each frame's `<text>` gets the label and carries it in a
//!   `fg:label` attribute, and the embedded script, which sizes the labels
//!   from the title when the page loads, zooms or resizes, reads that
//!   attribute instead.
//! - The graph is drawn to be read at first sight on a real app
//!   ([`FlameGraphStyle::Icicle`], the default): roots at the top, frames
//!   under [`MIN_WIDTH_PERCENT`] left out, direct recursion drawn once, a
//!   function drawn once whatever its V8 tier (`tiers`: its tooltip gives
//!   the tier shares, its colour is its hottest tier's), and a frame too
//!   narrow for its label shows its function alone (`fg:short`, which the
//!   patched script reads too). [`FlameGraphStyle::Classic`] keeps
//!   inferno's look.

use std::borrow::Cow;
use std::io::{self, Write};

use inferno::flamegraph::color::{MultiPalette, Palette};
use inferno::flamegraph::{self, Direction, Options, TextTruncateDirection};
use quick_xml::events::{BytesCData, BytesStart, BytesText, Event};
use quick_xml::{Reader, Writer};

use crate::formats::v8log::{CodeName, ScriptLine};

mod tiers;
use tiers::{TieredBoxes, merge_tiers};

/// What a flame graph shows besides its stacks: the title and what the
/// counts are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SvgOptions {
    /// The title (the input, or the recorded command).
    pub title: String,
    /// The sampled event (`cpu-clock`) or sampler (`V8 ticks`), if known.
    pub event: Option<String>,
    /// Samples folded into the stacks.
    pub samples: u64,
    /// The sum of the stacks' counts.
    pub total_count: u64,
    /// How the graph is drawn.
    pub style: FlameGraphStyle,
    /// Whether the lines are differential (`stack BEFORE AFTER`): frames
    /// keep inferno's red and blue of the change, not their tier's color.
    pub differential: bool,
}

/// How a flame graph is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FlameGraphStyle {
    /// Made to be read at first sight on a real app, whose stacks are deep
    /// and whose time spreads over thousands of stacks: the roots at the
    /// top and callees below their callers (an icicle graph), so that the
    /// first screen shows the program's structure; frames narrower than
    /// [`MIN_WIDTH_PERCENT`] of the graph left out (the subtitle says so);
    /// each run of identical frames in a row drawn as one frame (direct
    /// recursion; `[deno]`, `[unknown]`: native code without symbols); a
    /// function's V8 tiers (`JS:~f`, `JS:^f`, `JS:+f`, `JS:*f`) drawn as one
    /// box `JS:f`, the tier shares in its tooltip; and a
    /// JavaScript frame too narrow for its label (`parseStatement
    /// acorn.js:1015`) showing its function alone (`parseStatement`) when
    /// that fits. The folded stacks are not changed.
    #[default]
    Icicle,
    /// inferno's own look, as v8inline drew flame graphs before: the roots
    /// at the bottom, stacks growing up, every frame of at least 0.01 %
    /// drawn (inferno's `min_width`), recursion as it is, labels cut.
    Classic,
}

/// Frames narrower than this share of the graph (in percent) are left out of
/// a [`FlameGraphStyle::Icicle`] graph: 1.2 px of inferno's 1200 px image,
/// so that each frame drawn can be seen and pointed at.
pub const MIN_WIDTH_PERCENT: f64 = 0.1;

impl SvgOptions {
    /// What the counts are: see [`CountUnit::of`].
    pub fn unit(&self) -> CountUnit {
        CountUnit::of(self.event.as_deref(), self.samples, self.total_count)
    }

    /// The subtitle: the event, the samples and, for periods, their total
    /// (`cpu-clock: 1,526 samples, 1.53 s of CPU time`).
    pub fn subtitle(&self) -> String {
        let event = self.event.as_deref().unwrap_or("samples");
        let plural = if self.samples == 1 { "" } else { "s" };
        let samples = format!("{} sample{plural}", thousands(self.samples));
        match self.unit() {
            CountUnit::Samples => format!("{event}: {samples}"),
            CountUnit::Nanoseconds => format!("{event}: {samples}, {} of CPU time", duration(self.total_count)),
            CountUnit::Events => {
                format!(
                    "{event}: {samples}, {} {}",
                    thousands(self.total_count),
                    event_count_name(self.event.as_deref())
                )
            }
        }
    }
}

/// What the counts of folded stacks are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountUnit {
    /// Each sample counts 1 (V8 ticks; perf samples without a period).
    Samples,
    /// perf periods of a clock event (`cpu-clock`, `task-clock`).
    Nanoseconds,
    /// perf periods of another event (`cycles`, `instructions`): events.
    Events,
}

impl CountUnit {
    /// The unit of `total_count` over `samples` samples of `event`: samples
    /// if every sample counted 1, else nanoseconds for the clock events
    /// (whose periods perf measures in nanoseconds), else events.
    pub fn of(event: Option<&str>, samples: u64, total_count: u64) -> CountUnit {
        if total_count == samples {
            return CountUnit::Samples;
        }
        // perf script may print modifiers: `cpu-clock:u`.
        match event.map(|event| event.split(':').next().unwrap_or(event)) {
            Some("cpu-clock" | "task-clock") => CountUnit::Nanoseconds,
            _ => CountUnit::Events,
        }
    }
}

/// inferno's `count_name` and `factor` for counts in `unit`: nanoseconds
/// in the largest unit that one sample's mean period reaches, so a frame of
/// one sample reads at least 1 (inferno rounds to whole numbers).
fn count_name_and_factor(options: &SvgOptions) -> (String, f64) {
    match options.unit() {
        CountUnit::Samples => ("samples".to_string(), 1.0),
        CountUnit::Events => (event_count_name(options.event.as_deref()).to_string(), 1.0),
        CountUnit::Nanoseconds => {
            let mean_period = options.total_count / options.samples.max(1);
            let (name, factor) = match mean_period {
                1_000_000_000.. => ("s", 1e-9),
                1_000_000.. => ("ms", 1e-6),
                1_000.. => ("µs", 1e-3),
                _ => ("ns", 1.0),
            };
            (name.to_string(), factor)
        }
    }
}

/// The name of a count of `event`s: the event without modifiers.
fn event_count_name(event: Option<&str>) -> &str {
    event.and_then(|event| event.split(':').next()).filter(|name| !name.is_empty()).unwrap_or("events")
}

/// `1234567` as `1,234,567`.
fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut text = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

/// Nanoseconds as seconds or milliseconds with three significant digits
/// or more (`1.53 s`, `12.3 ms`, `0.412 ms`).
fn duration(nanoseconds: u64) -> String {
    let seconds = nanoseconds as f64 / 1e9;
    if seconds >= 100.0 {
        format!("{seconds:.0} s")
    } else if seconds >= 10.0 {
        format!("{seconds:.1} s")
    } else if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else {
        let milliseconds = nanoseconds as f64 / 1e6;
        if milliseconds >= 100.0 {
            format!("{milliseconds:.0} ms")
        } else if milliseconds >= 10.0 {
            format!("{milliseconds:.1} ms")
        } else if milliseconds >= 1.0 {
            format!("{milliseconds:.2} ms")
        } else {
            format!("{milliseconds:.3} ms")
        }
    }
}

/// A note added to the tooltip of the frames of one name: what a
/// benchmark's root stands for (`crate::collapse::task_root`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameNote {
    /// The frame's name, as in the folded stacks.
    pub frame: String,
    /// The note, on the tooltip's next lines.
    pub note: String,
}

/// Renders folded lines (`stack count`) as an SVG flame graph. The output
/// depends only on the input: colors come from hashes of the frame names,
/// not from a random generator.
pub fn write_svg<'lines, W: Write>(
    folded_lines: impl IntoIterator<Item = &'lines str>,
    svg_options: &SvgOptions,
    output: W,
) -> io::Result<()> {
    write_svg_with_note(folded_lines, svg_options, None, output)
}

/// [`write_svg`], with `note` added to the tooltip of its frame, which is
/// labelled by its name. No control character reaches the SVG (XML allows
/// none but tab and line ends): one in a frame name, the title or the
/// event is written as U+FFFD ([`xml_safe`]).
pub fn write_svg_with_note<'lines, W: Write>(
    folded_lines: impl IntoIterator<Item = &'lines str>,
    svg_options: &SvgOptions,
    note: Option<&FrameNote>,
    mut output: W,
) -> io::Result<()> {
    let svg_options = &SvgOptions {
        title: xml_safe(&svg_options.title).into_owned(),
        event: svg_options.event.as_deref().map(|event| xml_safe(event).into_owned()),
        ..svg_options.clone()
    };
    let mut options = Options::default();
    options.colors = Palette::Multi(MultiPalette::Java);
    options.deterministic = true;
    options.title = svg_options.title.clone();
    (options.count_name, options.factor) = count_name_and_factor(svg_options);
    // Labels start with the function's name; cut the script path instead.
    options.text_truncate_direction = TextTruncateDirection::Right;
    let subtitle = svg_options.subtitle();
    let folded_lines = folded_lines.into_iter().map(xml_safe);
    let note = note
        .map(|note| FrameNote { frame: xml_safe(&note.frame).into_owned(), note: xml_safe(&note.note).into_owned() });
    let mut rendered = Vec::new();
    let mut tiered = None;
    match svg_options.style {
        FlameGraphStyle::Classic => {
            options.subtitle = Some(subtitle);
            let lines: Vec<Cow<'_, str>> = folded_lines.collect();
            flamegraph::from_lines(&mut options, lines.iter().map(|line| line.as_ref()), &mut rendered)?;
        }
        FlameGraphStyle::Icicle => {
            options.subtitle = Some(format!("{subtitle}; frames under {MIN_WIDTH_PERCENT}% not drawn"));
            options.direction = Direction::Inverted;
            options.min_width = MIN_WIDTH_PERCENT;
            let lines: Vec<String> = folded_lines.map(|line| collapse_direct_recursion(&line).into_owned()).collect();
            // One box per function, whatever its tier.
            let (lines, boxes) = merge_tiers(lines.iter().map(|line| line.as_ref()), svg_options.differential);
            flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut rendered)?;
            tiered = Some(boxes);
        }
    }
    let layout = LabelLayout {
        font_size: options.font_size as f64,
        font_width: options.font_width,
        image_width: options.image_width.unwrap_or(INFERNO_IMAGE_WIDTH) as f64,
    };
    let tiers = tiered.as_ref().map(|boxes| TierLayout {
        boxes,
        frame_height: options.frame_height as f64,
        keep_fill: svg_options.differential,
    });
    relabel(&rendered, &layout, svg_options.style == FlameGraphStyle::Icicle, tiers, note.as_ref(), &mut output)?;
    output.flush()
}

/// `text` with every character XML 1.0 does not allow (the C0 controls but
/// tab and line ends, U+FFFE, U+FFFF), and the other controls (DEL, C1),
/// replaced by U+FFFD: a NUL in a frame name would make the SVG no XML at
/// all.
pub fn xml_safe(text: &str) -> Cow<'_, str> {
    let unsafe_character = |character: char| {
        (character.is_control() && !matches!(character, '\t' | '\n' | '\r'))
            || matches!(character, '\u{FFFE}' | '\u{FFFF}')
    };
    if !text.chars().any(unsafe_character) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(|character| if unsafe_character(character) { '\u{FFFD}' } else { character }).collect())
}

/// The folded line `stack count` with each run of identical frames in a row
/// made one frame (`a;f;f;f;g 5` is `a;f;g 5`): direct recursion, and runs of
/// frames named alike (`[deno]`, `[unknown]`: native code without symbols)
/// that say no more drawn one under the other.
fn collapse_direct_recursion(line: &str) -> Cow<'_, str> {
    let Some((stack, count)) = line.trim_end().rsplit_once(' ') else {
        return Cow::Borrowed(line);
    };
    let frames = || stack.split(';');
    if !frames().zip(frames().skip(1)).any(|(caller, callee)| caller == callee) {
        return Cow::Borrowed(line);
    }
    let mut collapsed = String::with_capacity(line.len());
    let mut previous = None;
    for frame in stack.split(';') {
        if Some(frame) != previous {
            if previous.is_some() {
                collapsed.push(';');
            }
            collapsed.push_str(frame);
        }
        previous = Some(frame);
    }
    collapsed.push(' ');
    collapsed.push_str(count);
    Cow::Owned(collapsed)
}

/// inferno's image width when none is given (its `DEFAULT_IMAGE_WIDTH`),
/// which it sizes the labels written into the SVG for.
const INFERNO_IMAGE_WIDTH: usize = 1200;

/// The short label of a frame named `name` (without its annotation), if it
/// is a JavaScript frame with a script position: the function name without
/// the object it was found on, the script's file name and the line
/// (`JS:*pp$8.parseStatement /app/acorn/dist/acorn.js:1416:31` is
/// `parseStatement acorn.js:1416`; `JS:~ file:///app/main.ts:1:1` is
/// `(anonymous) main.ts:1`). On line 1 past its first column the column is
/// kept (`n index.js:1:2345`): in a minified one-line bundle the line
/// alone names nothing. Names as V8 writes them into the jitdump and
/// code log, read by [`CodeName::script_line`]. Other frames (native,
/// kernel, builtins) keep their name.
pub fn frame_label(name: &str) -> Option<String> {
    frame_label_and_function(name).map(|(label, _)| label)
}

/// [`frame_label`] and the length of its function part (`parseStatement`
/// of `parseStatement acorn.js:1416`): what a frame too narrow for the
/// label shows in a [`FlameGraphStyle::Icicle`] graph.
fn frame_label_and_function(name: &str) -> Option<(String, usize)> {
    let ScriptLine { function, script, line, column } = CodeName::javascript(name)?.script_line()?;
    let file_name = script.rsplit(['/', '\\']).next().filter(|file_name| !file_name.is_empty()).unwrap_or(script);
    let function = short_function_name(function);
    let label = match column {
        Some(column) if line == "1" && column != "1" => format!("{function} {file_name}:1:{column}"),
        _ => format!("{function} {file_name}:{line}"),
    };
    Some((label, function.len()))
}

/// The function's own name: the last part of a dotted name whose parts are
/// identifiers (`pp$8.parseStatement` is `parseStatement`), other names as
/// they are (`get size`, `Module._extensions..js`), `(anonymous)` for none.
fn short_function_name(function: &str) -> &str {
    if function.is_empty() {
        return "(anonymous)";
    }
    let is_identifier = |part: &str| {
        !part.is_empty()
            && part.chars().enumerate().all(|(index, character)| {
                character.is_alphanumeric() || character == '_' || character == '$' || (index == 0 && character == '#')
            })
    };
    if function.split('.').all(is_identifier) { function.rsplit('.').next().unwrap_or(function) } else { function }
}

/// How inferno sizes labels: the characters that fit a frame are its width
/// over `font_size * font_width` pixels, in an image `image_width` wide.
#[derive(Debug, Clone, Copy)]
struct LabelLayout {
    font_size: f64,
    font_width: f64,
    image_width: f64,
}

impl LabelLayout {
    /// `label` cut to a frame `width_percent` wide, as inferno cuts names
    /// (on the right, `..` appended; empty when 3 characters do not fit);
    /// `short` instead of a cut label when it fits whole.
    fn fit(&self, label: &str, short: Option<&str>, width_percent: f64) -> String {
        let fitting = (width_percent / (100.0 * self.font_size * self.font_width / self.image_width)).trunc() as usize;
        if fitting < 3 {
            return String::new();
        }
        if label.chars().count() < fitting {
            return label.to_string();
        }
        if let Some(short) = short.filter(|short| short.chars().count() < fitting) {
            return short.to_string();
        }
        let mut cut: String = label.chars().take(fitting - 2).collect();
        cut.push_str("..");
        cut
    }
}

/// The expression inferno's script labels a frame `e` with: its title
/// without the trailing `(count unit, share)`. Twice in the script: when
/// labels are sized for a monospace font and for any font.
const SCRIPT_LABEL_SOURCE: &str = r#"find_child(e, "title").textContent.replace(/\([^(]*\)$/,"")"#;
/// What search matches a frame `e` against in inferno's script: its title.
const SCRIPT_SEARCH_SOURCE: &str = "var func = g_to_text(e);";
/// Functions added to inferno's script: the label of a frame `w` pixels wide
/// is its `fg:label`, or its `fg:short` when only that fits whole, and
/// search matches the title and the label.
const SCRIPT_LABEL_FUNCTIONS: &str = r#"
// v8inline: a frame's label leads with the function, file name and line;
// the full name stays in the title (tooltip, details, search). A frame too
// narrow for the label shows its function alone (fg:short) if that fits.
function frame_label(e, w) {
    var text = find_child(e, "text");
    var label = text.getAttribute("fg:label");
    if (label == null) return find_child(e, "title").textContent.replace(/\([^(]*\)$/,"");
    var short = text.getAttribute("fg:short");
    var char_width = known_font_width || fontsize * fontwidth;
    if (short != null && label.length * char_width >= w && short.length * char_width < w) return short;
    return label;
}
function frame_search_text(e) {
    var label = find_child(e, "text").getAttribute("fg:label");
    return label != null ? g_to_text(e) + "\n" + label : g_to_text(e);
}
"#;

/// How inferno's script measures a frame `w` pixels wide, just before each
/// use of [`SCRIPT_LABEL_SOURCE`].
const SCRIPT_WIDTH_SOURCE: &str =
    "var w = parseFloat(r.attributes.width.value) * frames.attributes.width.value / 100 - 3;";

/// inferno's script with labels and search taken from [`frame_label`]'s
/// labels; `None` if the script no longer has the expressions replaced, or
/// no longer measures the frame's width `w` right before its label.
fn patch_script(script: &str) -> Option<String> {
    let label_after_width = format!("{SCRIPT_WIDTH_SOURCE}\n");
    let labels_after_width = script
        .split(label_after_width.as_str())
        .skip(1)
        .filter(|after| after.trim_start().starts_with(&format!("var txt = {SCRIPT_LABEL_SOURCE};")))
        .count();
    if script.matches(SCRIPT_LABEL_SOURCE).count() != 2
        || labels_after_width != 2
        || script.matches(SCRIPT_SEARCH_SOURCE).count() != 1
    {
        return None;
    }
    let mut patched = script
        .replace(SCRIPT_LABEL_SOURCE, "frame_label(e, w)")
        .replace(SCRIPT_SEARCH_SOURCE, "var func = frame_search_text(e);");
    patched.push_str(SCRIPT_LABEL_FUNCTIONS);
    Some(patched)
}

/// The boxes that merged a function's tiers, and how high inferno draws a
/// level (to tell a box's depth from its `y`).
#[derive(Debug, Clone, Copy)]
struct TierLayout<'boxes> {
    boxes: &'boxes TieredBoxes,
    frame_height: f64,
    /// Keep inferno's fill (a differential graph's red and blue).
    keep_fill: bool,
}

/// Copies the SVG that inferno wrote, with each JavaScript frame's label
/// made [`frame_label`]'s and inferno's script patched to use it; with
/// `short_labels`, each also carries its function name in `fg:short`, shown
/// when only that fits.
///
/// inferno writes a frame as `<g><title>NAME (COUNT UNIT, SHARE%)</title>
/// <rect width="W%" .../><text ...>LABEL</text></g>` inside `<svg
/// id="frames">`. The name is read back from the title (its last `(` opens
/// the counts: inferno's count names hold none); the label is written into
/// `<text>`, cut to the frame's width as inferno cuts it, and into its
/// `fg:label` attribute. With `tiers`, a box that merged a function's tiers
/// gets the tier shares in its title and its hottest tier's fill. Everything
/// else is copied as it is.
fn relabel<W: Write>(
    svg: &[u8],
    layout: &LabelLayout,
    short_labels: bool,
    tiers: Option<TierLayout<'_>>,
    note: Option<&FrameNote>,
    output: W,
) -> io::Result<()> {
    let invalid = |error: quick_xml::Error| io::Error::new(io::ErrorKind::InvalidData, error);
    let mut reader = Reader::from_reader(svg);
    let mut writer = Writer::new(output);
    let mut in_frames = false;
    let mut in_script = false;
    // The frame being copied: its title text (escaped) while inside
    // `<title>`, then its name and rectangle width.
    let mut title: Option<String> = None;
    let mut name: Option<String> = None;
    let mut width_percent = 0.0;
    // With `tiers`, a frame's title events wait for its rectangle, which
    // tells where the box is drawn; and the `y` of depth 0, once known.
    let mut pending_title: Vec<Event<'static>> = Vec::new();
    let mut title_text = String::new();
    let mut depth_zero_y: Option<f64> = None;
    loop {
        let event = reader.read_event().map_err(invalid)?;
        match &event {
            Event::Eof => break,
            Event::Start(start) if start.name().as_ref() == b"svg" => {
                in_frames = attribute(start, b"id").as_deref() == Some("frames");
            }
            Event::End(end) if end.name().as_ref() == b"svg" => in_frames = false,
            Event::Start(start) if start.name().as_ref() == b"script" => in_script = true,
            Event::End(end) if end.name().as_ref() == b"script" => in_script = false,
            Event::CData(data) if in_script => {
                let script = String::from_utf8_lossy(data);
                if let Some(patched) = patch_script(&script) {
                    writer.write_event(Event::CData(BytesCData::new(patched)))?;
                    continue;
                }
            }
            Event::Start(start) if in_frames && start.name().as_ref() == b"g" => {
                (title, name, width_percent) = (None, None, 0.0);
            }
            Event::Start(start) if in_frames && start.name().as_ref() == b"title" => {
                title = Some(String::new());
                if tiers.is_some() {
                    pending_title.clear();
                    pending_title.push(event.clone().into_owned());
                    continue;
                }
            }
            Event::Text(text) if title.is_some() => {
                if let Some(title) = &mut title {
                    title.push_str(&text.decode().unwrap_or_default());
                }
                if tiers.is_some() {
                    pending_title.push(event.clone().into_owned());
                    continue;
                }
            }
            // quick-xml reports `&amp;` and the like apart from the text.
            Event::GeneralRef(reference) if title.is_some() => {
                if let Some(title) = &mut title {
                    title.push('&');
                    title.push_str(&reference.decode().unwrap_or_default());
                    title.push(';');
                }
                if tiers.is_some() {
                    pending_title.push(event.clone().into_owned());
                    continue;
                }
            }
            Event::End(end) if end.name().as_ref() == b"title" => {
                let unescaped =
                    title.take().and_then(|title| Some(quick_xml::escape::unescape(&title).ok()?.into_owned()));
                title_text = unescaped.clone().unwrap_or_default();
                name = unescaped.and_then(|title| {
                    let counts = title.rfind('(')?;
                    Some(title[..counts].trim_end().to_string())
                });
                // The noted frame's tooltip goes on with the note.
                let noted = note.filter(|note| name.as_deref() == Some(note.frame.as_str()));
                let note_text = noted.map(|note| Event::Text(BytesText::new(&format!("\n{}", note.note)).into_owned()));
                if tiers.is_some() {
                    pending_title.extend(note_text);
                    pending_title.push(event.clone().into_owned());
                    continue;
                }
                if let Some(note_text) = note_text {
                    writer.write_event(note_text)?;
                }
            }
            Event::Empty(rect) if in_frames && rect.name().as_ref() == b"rect" => {
                width_percent =
                    attribute(rect, b"width").and_then(|width| width.trim_end_matches('%').parse().ok()).unwrap_or(0.0);
                if let Some(tiers) = tiers {
                    let number = |key: &[u8]| attribute(rect, key).and_then(|value| value.parse::<f64>().ok());
                    let place = name.as_deref().zip(number(b"fg:x")).zip(number(b"fg:w")).zip(number(b"y"));
                    let frame_height = tiers.frame_height;
                    let known_zero = depth_zero_y;
                    let depth_of =
                        |y: f64| known_zero.map(|zero| ((y - zero) / frame_height).round().max(0.0) as usize);
                    let shares = place.and_then(|(((name, start), width), y)| {
                        let shares = tiers.boxes.shares(name, start as u64, width as u64, depth_of(y))?;
                        depth_zero_y.get_or_insert(y - shares.depth() as f64 * tiers.frame_height);
                        Some(shares)
                    });
                    match (shares, title_text.strip_suffix(')')) {
                        (Some(shares), Some(counts)) => {
                            let described = format!("{counts}; {})", shares.describe());
                            writer.write_event(Event::Start(BytesStart::new("title")))?;
                            writer.write_event(Event::Text(BytesText::new(&described)))?;
                            writer.write_event(Event::End(BytesStart::new("title").to_end()))?;
                            let mut filled = BytesStart::new("rect");
                            for attribute in rect.attributes().flatten() {
                                if attribute.key.as_ref() == b"fill" && !tiers.keep_fill {
                                    filled.push_attribute(("fill", shares.fill()));
                                } else {
                                    filled.push_attribute(attribute);
                                }
                            }
                            writer.write_event(Event::Empty(filled))?;
                            pending_title.clear();
                            continue;
                        }
                        _ => {
                            for pending in pending_title.drain(..) {
                                writer.write_event(pending)?;
                            }
                        }
                    }
                }
            }
            Event::Start(text) if in_frames && text.name().as_ref() == b"text" => {
                let name = name.take();
                // A JavaScript frame's label; the noted frame's is its name
                // (its title goes on past the counts).
                let labelled = name
                    .as_deref()
                    .and_then(frame_label_and_function)
                    .map(|(label, length)| (label, Some(length)))
                    .or_else(|| {
                        let noted = note.filter(|note| name.as_deref() == Some(note.frame.as_str()))?;
                        Some((noted.frame.clone(), None))
                    });
                if let Some((label, function_length)) = labelled {
                    let short = function_length.filter(|_| short_labels).map(|length| &label[..length]);
                    let mut start = text.to_owned();
                    start.push_attribute(("fg:label", label.as_str()));
                    if let Some(short) = short {
                        start.push_attribute(("fg:short", short));
                    }
                    writer.write_event(Event::Start(start))?;
                    skip_to_end_of_text(&mut reader).map_err(invalid)?;
                    writer.write_event(Event::Text(BytesText::new(&layout.fit(&label, short, width_percent))))?;
                    writer.write_event(Event::End(text.to_end().into_owned()))?;
                    continue;
                }
            }
            _ => {}
        }
        writer.write_event(event)?;
    }
    Ok(())
}

/// Reads past the content of a `<text>` element and its end tag.
fn skip_to_end_of_text(reader: &mut Reader<&[u8]>) -> Result<(), quick_xml::Error> {
    loop {
        match reader.read_event()? {
            Event::End(end) if end.name().as_ref() == b"text" => return Ok(()),
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// An attribute's value as written (those read here hold no escapes), if
/// the element has it.
fn attribute(element: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    let attribute = element.try_get_attribute(key).ok().flatten()?;
    Some(String::from_utf8_lossy(&attribute.value).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A control character in a frame name, the title or the event never
    /// reaches the SVG, which a strict XML parser reads; the noted root
    /// is labelled by its name, its tooltip goes on with the note.
    #[test]
    fn no_control_character_reaches_the_svg_and_the_note_is_in_the_tooltip() {
        let lines = [
            "bench;\0root 12985;[unknown];_int_free 1003009",
            "bench;JS:~task /app/bench.js:3:1_[j];leaf\u{1b} 2006018",
        ];
        for style in [FlameGraphStyle::Icicle, FlameGraphStyle::Classic] {
            let options = SvgOptions {
                title: "v8inline record: node\u{7}bench.mjs".to_string(),
                event: Some("cpu-clock\0".to_string()),
                samples: 3,
                total_count: 3009027,
                style,
                differential: false,
            };
            let note = FrameNote { frame: "bench".to_string(), note: "stands for:\nnode-1\0\nmain".to_string() };
            let mut svg = Vec::new();
            write_svg_with_note(lines, &options, Some(&note), &mut svg).unwrap();
            let svg = String::from_utf8(svg).unwrap();
            let strict = roxmltree::ParsingOptions { allow_dtd: true, ..roxmltree::ParsingOptions::default() };
            let document = roxmltree::Document::parse_with_options(&svg, strict)
                .unwrap_or_else(|error| panic!("{style:?}: {error}"));
            assert!(!svg.contains('\0') && !svg.contains('\u{1b}') && !svg.contains('\u{7}'));
            let root = document
                .descendants()
                .filter(|node| node.has_tag_name("g"))
                .find(|frame| {
                    frame.children().any(|child| child.text().is_some_and(|text| text.starts_with("bench (")))
                })
                .unwrap_or_else(|| panic!("{style:?}: no root frame"));
            let title = root.children().find(|child| child.has_tag_name("title")).unwrap().text().unwrap();
            assert!(title.ends_with("%)\nstands for:\nnode-1\u{FFFD}\nmain"), "{style:?}: {title}");
            let text = root.children().find(|child| child.has_tag_name("text")).unwrap();
            assert_eq!(text.attributes().find(|attribute| attribute.name() == "label").unwrap().value(), "bench");
        }
    }

    #[test]
    fn labels_lead_with_function_file_and_line() {
        let cases = [
            (
                "JS:*pp$8.parseStatement /tmp/app/node_modules/acorn/dist/acorn.js:1416:31",
                "parseStatement acorn.js:1416",
            ),
            ("JS:*kernel /app/deep.js:32:16", "kernel deep.js:32"),
            ("JS:*'kernel file:///tmp/denotry/deep.js:32:16", "kernel deep.js:32"),
            ("JS:o*kernel /app/deep.js:32:16", "kernel deep.js:32"),
            ("JS:o+ /app/deep.js:1:1", "(anonymous) deep.js:1"),
            ("JS:~onload /app/page.js:3:1", "onload page.js:3"),
            ("JS:^ordinary /app/deep.js:9:2", "ordinary deep.js:9"),
            ("JS:+'scale /app/lib.js:10:15", "scale lib.js:10"),
            ("JS:~ node:internal/main/run_main_module:1:1", "(anonymous) run_main_module:1"),
            ("JS:~Module._extensions..js node:module:5:1504", "Module._extensions..js node:module:5"),
            ("JS:~Module._load node:module:1:22824", "_load node:module:1:22824"),
            // A minified one-line bundle: the column names the function.
            ("JS:*n /app/dist/index.js:1:48213", "n index.js:1:48213"),
            ("Script:~ file:///tmp/app/main.ts:1:1", "(anonymous) main.ts:1"),
            ("LazyCompile:*kernel /app/deep.js:32", "kernel deep.js:32"),
            (
                "Function:~<instance_members_initializer> node:internal/modules/esm/loader:84",
                "<instance_members_initializer> loader:84",
            ),
            ("JS:~get size /tmp/my app/lib.js:4:7", "get size lib.js:4"),
            ("JS:~#private.Foo.#bar ext:core/01_core.js:12:3", "#bar 01_core.js:12"),
            ("JS:*ohNo https://deno.land/std/path/mod.ts:7:1", "ohNo mod.ts:7"),
        ];
        for (name, label) in cases {
            assert_eq!(frame_label(name).as_deref(), Some(label), "{name}");
        }
        for name in [
            "Builtin:ArrayMap",
            "node::Start",
            "[unknown]",
            "do_syscall_64",
            "JS:~foo :1:5",
            "JS:*kernel",
            "v8::internal::Invoke(v8::internal::Isolate*)",
        ] {
            assert_eq!(frame_label(name), None, "{name}");
        }
    }

    #[test]
    fn counts_are_stated_in_their_unit() {
        let clock = |samples, total| SvgOptions {
            title: "t".into(),
            event: Some("cpu-clock".into()),
            samples,
            total_count: total,
            style: FlameGraphStyle::Icicle,
            differential: false,
        };
        assert_eq!(clock(1526, 1_530_591_234).unit(), CountUnit::Nanoseconds);
        assert_eq!(count_name_and_factor(&clock(1526, 1_530_591_234)), ("ms".to_string(), 1e-6));
        assert_eq!(clock(1526, 1_530_591_234).subtitle(), "cpu-clock: 1,526 samples, 1.53 s of CPU time");
        assert_eq!(count_name_and_factor(&clock(10, 1_000_000)).0, "µs");
        assert_eq!(count_name_and_factor(&clock(2, 4_000_000_000)).0, "s");
        assert_eq!(clock(1, 1_003_009).subtitle(), "cpu-clock: 1 sample, 1.00 ms of CPU time");
        let task_clock = SvgOptions { event: Some("task-clock:u".into()), ..clock(3, 3_000_000) };
        assert_eq!(task_clock.unit(), CountUnit::Nanoseconds);
        let ticks = SvgOptions { event: Some("V8 ticks".into()), ..clock(773, 773) };
        assert_eq!(ticks.unit(), CountUnit::Samples);
        assert_eq!(count_name_and_factor(&ticks), ("samples".to_string(), 1.0));
        assert_eq!(ticks.subtitle(), "V8 ticks: 773 samples");
        let cycles = SvgOptions { event: Some("cycles".into()), ..clock(2, 5_000_000) };
        assert_eq!(cycles.unit(), CountUnit::Events);
        assert_eq!(count_name_and_factor(&cycles), ("cycles".to_string(), 1.0));
        assert_eq!(cycles.subtitle(), "cycles: 2 samples, 5,000,000 cycles");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(123), "123");
        assert_eq!(thousands(1234), "1,234");
        assert_eq!(duration(412_000), "0.412 ms");
        assert_eq!(duration(123_400_000_000), "123 s");
    }

    /// Frames of the SVG: (title, `fg:label`, text).
    fn frames(svg: &str) -> Vec<(String, Option<String>, String)> {
        let mut frames = Vec::new();
        for group in svg.split("<g><title>").skip(1) {
            let title = group[..group.find("</title>").unwrap()].to_string();
            let text_start = group.find("<text ").unwrap();
            let text_tag = &group[text_start..text_start + group[text_start..].find('>').unwrap()];
            let label = text_tag.split("fg:label=\"").nth(1).map(|rest| rest[..rest.find('"').unwrap()].to_string());
            let text_end = group.find("</text>").unwrap();
            let text = group[text_start + text_tag.len() + 1..text_end].to_string();
            frames.push((title, label, text));
        }
        frames
    }

    #[test]
    fn svg_labels_javascript_frames_and_keeps_full_names_in_titles() {
        let folded = [
            "node;JS:*pp$8.parseStatement /tmp/app/node_modules/acorn/dist/acorn.js:1416:31_[j];JS:*square /app/deep.js:16:16_[i] 3009027",
            "node;JS:~<instance_members_initializer> /app/a&b.js:1:1_[j] 1003009",
            "node;node::Start 1003009",
        ];
        let options = SvgOptions {
            title: "v8inline: test".into(),
            event: Some("cpu-clock".into()),
            samples: 5,
            total_count: 5_015_045,
            style: FlameGraphStyle::Classic,
            differential: false,
        };
        let mut svg = Vec::new();
        write_svg(folded, &options, &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.contains(">cpu-clock: 5 samples, 5.02 ms of CPU time</text>"), "{svg}");
        let frames = frames(&svg);
        let find = |title_start: &str| {
            frames
                .iter()
                .find(|(title, _, _)| title.starts_with(title_start))
                .unwrap_or_else(|| panic!("no frame {title_start} in {frames:?}"))
        };
        assert_eq!(find("all ").0, "all (5 ms, 100%)");
        let (title, label, text) = find("JS:*pp$8.parseStatement");
        assert_eq!(title, "JS:*pp$8.parseStatement /tmp/app/node_modules/acorn/dist/acorn.js:1416:31 (3 ms, 59.82%)");
        assert_eq!(label.as_deref(), Some("parseStatement acorn.js:1416"));
        assert_eq!(text, "parseStatement acorn.js:1416");
        let (_, label, _) = find("JS:*square");
        assert_eq!(label.as_deref(), Some("square deep.js:16"));
        // Escaped names are read back and the labels escaped again.
        let (title, label, _) = find("JS:~&lt;instance_members_initializer&gt; /app/a&amp;b.js:1:1 (1 ms");
        assert!(title.ends_with("(1 ms, 19.94%)"), "{title}");
        assert_eq!(label.as_deref(), Some("&lt;instance_members_initializer&gt; a&amp;b.js:1"));
        let (_, label, text) = find("node::Start");
        assert_eq!((label, text.as_str()), (&None, "node::Start"));
        // The script labels frames by fg:label and searches titles and labels.
        assert!(svg.contains("function frame_label(e, w)"));
        assert!(!svg.contains(SCRIPT_LABEL_SOURCE.replace('"', "&quot;").as_str()));
        assert_eq!(svg.matches("frame_label(e, w)").count(), 3, "two uses and the definition");
        // A classic graph has no short labels.
        assert!(!svg.contains("fg:short="));
        assert!(svg.contains("var func = frame_search_text(e);"));
    }

    #[test]
    fn inferno_script_is_patched() {
        // The script inferno embeds still has what patch_script replaces:
        // when an inferno update changes it, this fails.
        let mut svg = Vec::new();
        let mut options = Options::default();
        flamegraph::from_lines(&mut options, ["a;b 1"], &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        let script_start = svg.find("\"use strict\";").unwrap();
        let script = &svg[script_start..svg[script_start..].find("]]>").unwrap() + script_start];
        let patched = patch_script(script).expect("inferno's script changed: update patch_script");
        // Left only in frame_label's fallback for frames without fg:label.
        assert_eq!(patched.matches(SCRIPT_LABEL_SOURCE).count(), 1);
    }

    #[test]
    fn relabel_copies_everything_else_as_inferno_wrote_it() {
        // Without JavaScript frames, only the script changes.
        let mut options = Options::default();
        options.deterministic = true;
        options.subtitle = Some("a & <b>".into());
        let mut original = Vec::new();
        flamegraph::from_lines(
            &mut options,
            ["main;node::Start 2", "main;do_syscall_64 1", "main;f<'a> 1"],
            &mut original,
        )
        .unwrap();
        let layout = LabelLayout { font_size: 12.0, font_width: 0.59, image_width: 1200.0 };
        let mut relabelled = Vec::new();
        relabel(&original, &layout, true, None, None, &mut relabelled).unwrap();
        let original = String::from_utf8(original).unwrap();
        let script_start = original.find("\"use strict\";").unwrap();
        let script_end = original[script_start..].find("]]>").unwrap() + script_start;
        let script = &original[script_start..script_end];
        let expected = original.replace(script, &patch_script(script).unwrap());
        assert_eq!(String::from_utf8(relabelled).unwrap(), expected);
    }

    #[test]
    fn labels_are_cut_to_the_frame_as_inferno_cuts_names() {
        let layout = LabelLayout { font_size: 12.0, font_width: 0.59, image_width: 1200.0 };
        // One character is 12 * 0.59 = 7.08 px of 1200: 0.59 %.
        let label = "parseStatement acorn.js:1416";
        assert_eq!(layout.fit(label, None, 100.0), label);
        assert_eq!(layout.fit(label, None, 0.59 * 10.5), "parseSta..");
        assert_eq!(layout.fit(label, None, 0.59 * 2.5), "");
        // The function alone when the label does not fit and it does.
        assert_eq!(layout.fit(label, Some("parseStatement"), 100.0), label);
        assert_eq!(layout.fit(label, Some("parseStatement"), 0.59 * 20.5), "parseStatement");
        assert_eq!(layout.fit(label, Some("parseStatement"), 0.59 * 14.5), "parseStateme..");
        assert_eq!(layout.fit(label, Some("parseStatement"), 0.59 * 2.5), "");
    }

    #[test]
    fn runs_of_identical_frames_are_drawn_once() {
        assert_eq!(collapse_direct_recursion("a;f;f;f;g 5"), "a;f;g 5");
        assert_eq!(
            collapse_direct_recursion("deno;[deno];[deno];JS:*f /a.js:1:1_[j];[deno];[deno] 7"),
            "deno;[deno];JS:*f /a.js:1:1_[j];[deno] 7"
        );
        // Only identical names: the same function JIT and inlined stays two frames.
        assert_eq!(
            collapse_direct_recursion("a;JS:*f /a.js:1:1_[j];JS:*f /a.js:1:1_[i] 2"),
            "a;JS:*f /a.js:1:1_[j];JS:*f /a.js:1:1_[i] 2"
        );
        assert!(matches!(collapse_direct_recursion("a;b;a;b 3"), Cow::Borrowed("a;b;a;b 3")));
        assert!(matches!(collapse_direct_recursion("a 1"), Cow::Borrowed("a 1")));
        assert!(matches!(collapse_direct_recursion("garbage"), Cow::Borrowed("garbage")));
    }

    /// Frames of an SVG: (title, y of the rectangle, width in percent, text).
    fn frame_boxes(svg: &str) -> Vec<(String, f64, f64, String)> {
        let number = |tag: &str, name: &str| -> f64 {
            let value = tag.split(&format!(" {name}=\"")).nth(1).unwrap();
            value[..value.find('"').unwrap()].trim_end_matches('%').parse().unwrap()
        };
        svg.split("<g><title>")
            .skip(1)
            .map(|group| {
                let title = group[..group.find("</title>").unwrap()].to_string();
                let rect = &group[group.find("<rect ").unwrap()..];
                let rect = &rect[..rect.find("/>").unwrap()];
                let text_start = group.find("<text ").unwrap();
                let text =
                    &group[text_start + group[text_start..].find('>').unwrap() + 1..group.find("</text>").unwrap()];
                (title, number(rect, "y"), number(rect, "width"), text.to_string())
            })
            .collect()
    }

    #[test]
    fn icicle_draws_roots_on_top_without_thin_frames() {
        // 1,000 samples of 1 ms: `thin` is 0.05 % of them, `tail` 0.11 %.
        let folded = [
            "node;JS:*main /app/main.js:1:1_[j];JS:*pp$8.parseStatement /app/acorn.js:1015:33_[j];JS:*pp$8.parseStatement /app/acorn.js:1015:33_[j] 900000000",
            "node;JS:*main /app/main.js:1:1_[j];JS:*thin /app/main.js:9:1_[j] 500000",
            "node;JS:*main /app/main.js:1:1_[j];JS:*tail /app/main.js:12:1_[j] 1100000",
            "node;JS:*main /app/main.js:1:1_[j];JS:*callPluginPrintFunction /app/index.mjs:19042:33_[i] 98400000",
        ];
        let options = |style| SvgOptions {
            title: "t".into(),
            event: Some("cpu-clock".into()),
            samples: 1000,
            total_count: 1_000_000_000,
            style,
            differential: false,
        };
        let render = |style| {
            let mut svg = Vec::new();
            write_svg(folded, &options(style), &mut svg).unwrap();
            String::from_utf8(svg).unwrap()
        };
        let (icicle, classic) = (render(FlameGraphStyle::Icicle), render(FlameGraphStyle::Classic));
        assert!(icicle.contains(">cpu-clock: 1,000 samples, 1.00 s of CPU time; frames under 0.1% not drawn</text>"));
        assert!(classic.contains(">cpu-clock: 1,000 samples, 1.00 s of CPU time</text>"));
        let (icicle_frames, classic_frames) = (frame_boxes(&icicle), frame_boxes(&classic));
        let find = |frames: &[(String, f64, f64, String)], title_start: &str| {
            frames.iter().filter(|(title, ..)| title.starts_with(title_start)).cloned().collect::<Vec<_>>()
        };
        // The root on top in the icicle, at the bottom in the classic graph.
        let (all, main) = (&find(&icicle_frames, "all ")[0], &find(&icicle_frames, "JS:main ")[0]);
        assert!(all.1 < main.1, "icicle: all at {}, main at {}", all.1, main.1);
        let (all, main) = (&find(&classic_frames, "all ")[0], &find(&classic_frames, "JS:*main ")[0]);
        assert!(all.1 > main.1, "classic: all at {}, main at {}", all.1, main.1);
        // The 0.05 % frame is left out of the icicle only; 0.11 % is kept.
        assert!(find(&icicle_frames, "JS:thin ").is_empty());
        assert_eq!(find(&classic_frames, "JS:*thin ").len(), 1);
        assert_eq!(find(&icicle_frames, "JS:tail ").len(), 1);
        // Direct recursion is one frame in the icicle, two in the classic graph.
        assert_eq!(find(&icicle_frames, "JS:pp$8.parseStatement ").len(), 1);
        assert_eq!(find(&classic_frames, "JS:*pp$8.parseStatement ").len(), 2);
        // 9.84 % of 1200 px holds 16 characters: the function alone (23) does
        // not fit; 90 % holds the label. The short label rides along in fg:short.
        let print = &find(&icicle_frames, "JS:callPluginPrintFunction ")[0];
        assert_eq!(print.3, "callPluginPrin..");
        assert!(
            icicle.contains(r#"fg:label="callPluginPrintFunction index.mjs:19042" fg:short="callPluginPrintFunction""#)
        );
        let parse = &find(&icicle_frames, "JS:pp$8.parseStatement ")[0];
        assert_eq!(parse.3, "parseStatement acorn.js:1015");
        // One box per function whatever its tier; the tooltip gives the tiers.
        assert_eq!(parse.0, "JS:pp$8.parseStatement /app/acorn.js:1015:33 (900 ms, 90.00%; TurboFan 100%)");
        // all, node, main, parseStatement (twice in the classic graph), thin
        // (classic only), tail, callPluginPrintFunction.
        assert_eq!((icicle_frames.len(), classic_frames.len()), (6, 8));
    }

    #[test]
    fn icicle_draws_a_function_once_whatever_its_tier() {
        // f ran as bytecode (100 ms), Sparkplug (300 ms) and TurboFan (600 ms).
        let folded = [
            "node;JS:*f /app/a.js:3:11_[j] 600000000",
            "node;JS:^f /app/a.js:3:11_[j] 300000000",
            "node;JS:~f /app/a.js:3:11_[j] 100000000",
        ];
        let render = |style| {
            let options = SvgOptions {
                title: "t".into(),
                event: Some("cpu-clock".into()),
                samples: 1000,
                total_count: 1_000_000_000,
                style,
                differential: false,
            };
            let mut svg = Vec::new();
            write_svg(folded, &options, &mut svg).unwrap();
            frame_boxes(&String::from_utf8(svg).unwrap())
        };
        let icicle: Vec<_> =
            render(FlameGraphStyle::Icicle).into_iter().filter(|frame| frame.0.contains("a.js")).collect();
        assert_eq!(icicle.len(), 1, "{icicle:?}");
        assert_eq!(
            icicle[0].0,
            "JS:f /app/a.js:3:11 (1,000 ms, 100.00%; TurboFan 60%, Sparkplug 30%, interpreted 10%)"
        );
        assert_eq!(icicle[0].3, "f a.js:3");
        let classic: Vec<_> =
            render(FlameGraphStyle::Classic).into_iter().filter(|frame| frame.0.contains("a.js")).collect();
        assert_eq!(classic.len(), 3, "classic keeps a box per tier");
    }
}
