//! The flame graph of a real app reads at first sight: on the committed
//! recordings of real apps (prettier on node 26 and on Deno,
//! testdata/esmapp; acorn, acorn-walk and marked on node 20,
//! testdata/realapp), the first screen of the page as a browser shows it holds
//! at least 25 whole labels, and the SVG is at most 3 MB. The old look
//! (`--flamegraph-style classic`) meets neither, and the folded stacks are
//! the same whatever the style.

mod common;

use std::path::Path;

use common::{file_starting, stderr, temp_dir};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// What a browser window shows first: 1,000 px of the page.
const WINDOW_HEIGHT: f64 = 1000.0;
/// The page's width in a 1,200 px window, less a 15 px scrollbar (the page
/// is taller than the window). The SVG's script makes the drawing this wide.
const PAGE_WIDTH: f64 = 1185.0;
/// inferno's margin left and right of the frames.
const FRAMES_MARGIN: f64 = 10.0;
/// One character of the labels' font (monospace, 12 px) as Chromium lays
/// it out with DejaVu Sans Mono (Debian's monospace), which the SVG's script
/// measures and sizes the labels by: wider than inferno's 12 * 0.59 = 7.08.
const CHARACTER_WIDTH: f64 = 7.2246875;
const TARGET_LABELS: usize = 25;
const TARGET_BYTES: usize = 3_000_000;

/// A frame of the SVG.
#[derive(Debug, Default)]
struct Frame {
    /// The title: the full name and the counts.
    title: String,
    y: f64,
    height: f64,
    width_percent: f64,
    /// `fg:label` and `fg:short`, if the frame has them.
    label: Option<String>,
    short: Option<String>,
    /// The text as written in the file.
    text: String,
}

impl Frame {
    /// The label as the SVG's script sizes it when the page loads (inferno's
    /// `update_text_for_elements` for a monospace font, with v8inline's
    /// `frame_label(e, w)`): the whole label if it fits the frame, else the
    /// function alone if that fits (`fg:short`), else the label cut with
    /// `..`, nothing when two characters do not fit. And whether it is whole.
    fn shown_in_browser(&self) -> (String, bool) {
        let width = self.width_percent * (PAGE_WIDTH - 2.0 * FRAMES_MARGIN) / 100.0 - 3.0;
        let fits = |text: &str| text.chars().count() as f64 * CHARACTER_WIDTH < width;
        let text = match (&self.label, &self.short) {
            (Some(label), Some(short)) if !fits(label) && fits(short) => short.clone(),
            (Some(label), _) => label.clone(),
            // The title without its counts (the script keeps the space before them).
            (None, _) => self.title[..self.title.rfind('(').unwrap_or(self.title.len())].to_string(),
        };
        if width < 2.0 * CHARACTER_WIDTH {
            return (String::new(), false);
        }
        if fits(&text) {
            return (text, true);
        }
        let kept = ((width / CHARACTER_WIDTH).floor() as usize).saturating_sub(2);
        (format!("{}..", text.chars().take(kept).collect::<String>()), false)
    }

    /// Whether the text written in the file is a whole label (what a viewer
    /// that runs no script shows).
    fn written_whole(&self) -> bool {
        let name = self.title[..self.title.rfind('(').unwrap_or(self.title.len())].trim_end();
        !self.text.is_empty()
            && (self.label.as_deref() == Some(self.text.as_str())
                || self.short.as_deref() == Some(self.text.as_str())
                || (self.label.is_none() && self.text == name))
    }

    /// Whether the frame lies in the first screen of the page.
    fn on_first_screen(&self) -> bool {
        self.y + self.height <= WINDOW_HEIGHT
    }
}

fn attribute(element: &BytesStart<'_>, key: &str) -> Option<String> {
    let attribute = element.try_get_attribute(key).ok().flatten()?;
    Some(attribute.normalized_value(quick_xml::XmlVersion::Explicit1_0).ok()?.into_owned())
}

fn number(element: &BytesStart<'_>, key: &str) -> f64 {
    attribute(element, key).and_then(|value| value.trim_end_matches('%').parse().ok()).unwrap_or(0.0)
}

/// The frames of an SVG that inferno wrote (`<g><title/><rect/><text/></g>`
/// inside `<svg id="frames">`).
fn frames(svg: &[u8]) -> Vec<Frame> {
    let mut reader = Reader::from_reader(svg);
    let mut frames = Vec::new();
    let mut in_frames = false;
    let mut frame: Option<Frame> = None;
    let mut in_title = false;
    let mut in_text = false;
    loop {
        match reader.read_event().unwrap() {
            Event::Eof => break,
            Event::Start(start) if start.name().as_ref() == b"svg" => {
                in_frames = attribute(&start, "id").as_deref() == Some("frames");
            }
            Event::Start(start) if in_frames && start.name().as_ref() == b"g" => frame = Some(Frame::default()),
            Event::End(end) if end.name().as_ref() == b"g" => frames.extend(frame.take()),
            Event::Start(start) if start.name().as_ref() == b"title" => in_title = true,
            Event::End(end) if end.name().as_ref() == b"title" => in_title = false,
            Event::Empty(rect) if rect.name().as_ref() == b"rect" => {
                if let Some(frame) = &mut frame {
                    frame.y = number(&rect, "y");
                    frame.height = number(&rect, "height");
                    frame.width_percent = number(&rect, "width");
                }
            }
            Event::Start(text) if text.name().as_ref() == b"text" => {
                in_text = true;
                if let Some(frame) = &mut frame {
                    frame.label = attribute(&text, "fg:label");
                    frame.short = attribute(&text, "fg:short");
                }
            }
            Event::End(end) if end.name().as_ref() == b"text" => in_text = false,
            Event::Text(text) => {
                if let Some(frame) = &mut frame {
                    let text = text.decode().unwrap();
                    if in_title {
                        frame.title.push_str(&text);
                    } else if in_text {
                        frame.text.push_str(&text);
                    }
                }
            }
            Event::GeneralRef(reference) => {
                if let Some(frame) = &mut frame {
                    let character = match reference.decode().unwrap().as_ref() {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        other => panic!("unexpected reference &{other};"),
                    };
                    if in_title {
                        frame.title.push_str(character);
                    } else if in_text {
                        frame.text.push_str(character);
                    }
                }
            }
            _ => {}
        }
    }
    frames
}

/// What the first screen of a flame graph holds.
#[derive(Debug)]
struct FirstScreen {
    bytes: usize,
    frames: usize,
    /// Whole labels in the first 1,000 px as the browser shows them.
    whole_labels: usize,
    /// ... of which the function alone (`fg:short`).
    function_only: usize,
    /// Labels cut with `..` there.
    cut_labels: usize,
    /// Whole labels there as written in the file.
    written_whole_labels: usize,
}

impl FirstScreen {
    fn of(svg: &[u8]) -> FirstScreen {
        let frames = frames(svg);
        let mut screen = FirstScreen {
            bytes: svg.len(),
            frames: frames.len(),
            whole_labels: 0,
            function_only: 0,
            cut_labels: 0,
            written_whole_labels: 0,
        };
        for frame in frames.iter().filter(|frame| frame.on_first_screen()) {
            let (shown, whole) = frame.shown_in_browser();
            if whole {
                screen.whole_labels += 1;
                if frame.short.as_deref() == Some(shown.as_str()) && frame.label.as_deref() != Some(shown.as_str()) {
                    screen.function_only += 1;
                }
            } else if !shown.is_empty() {
                screen.cut_labels += 1;
            }
            screen.written_whole_labels += usize::from(frame.written_whole());
        }
        screen
    }

    fn meets_target(&self) -> bool {
        self.whole_labels >= TARGET_LABELS && self.written_whole_labels >= TARGET_LABELS && self.bytes <= TARGET_BYTES
    }
}

/// The folded stacks and the flame graph of a recording in `style`.
fn render(recording: &str, style: &str, directory: &Path) -> (Vec<u8>, Vec<u8>) {
    let recording_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(recording);
    let file = |prefix: &str| file_starting(&recording_dir, prefix).display().to_string();
    let name = recording.replace('/', "-");
    let svg = directory.join(format!("{name}.{style}.svg"));
    let folded = directory.join(format!("{name}.{style}.folded"));
    let output = common::run(&[
        "--log",
        &file("codspeed-v8-"),
        "--jitdump",
        &file("jit-"),
        &file("perf.script"),
        "--flamegraph",
        &svg.display().to_string(),
        "--flamegraph-style",
        style,
        "-o",
        &folded.display().to_string(),
    ]);
    assert!(output.status.success(), "{recording}: {}", stderr(&output));
    (std::fs::read(&folded).unwrap(), std::fs::read(&svg).unwrap())
}

fn check_recording(recording: &str) {
    let directory = temp_dir("flamegraph", &recording.replace('/', "-"));
    let (folded, svg) = render(recording, "icicle", &directory);
    let (classic_folded, classic_svg) = render(recording, "classic", &directory);
    assert!(folded == classic_folded, "{recording}: the folded stacks depend on the flame graph's style");
    let icicle = FirstScreen::of(&svg);
    let classic = FirstScreen::of(&classic_svg);
    eprintln!("{recording}: icicle {icicle:?}\n{recording}: classic {classic:?}");
    assert!(
        icicle.meets_target(),
        "{recording}: the first screen holds {} whole labels ({} as written), the SVG {} bytes: {icicle:?}",
        icicle.whole_labels,
        icicle.written_whole_labels,
        icicle.bytes
    );
    assert!(
        icicle.frames < classic.frames / 5,
        "{recording}: {} frames drawn, {} in the classic look",
        icicle.frames,
        classic.frames
    );
    // The test tells the two looks apart: the old one meets the target nowhere.
    assert!(!classic.meets_target(), "{recording}: the classic look meets the target: {classic:?}");
    assert_tiers_merged(recording, &folded, &svg, &classic_svg);
}

/// Whether a frame name carries V8's tier marker (`JS:*f`, `JS:o^f`).
fn has_tier_marker(title: &str) -> bool {
    let markers = ['~', '^', '+', '*'];
    title
        .strip_prefix("JS:")
        .map(|rest| rest.strip_prefix('o').unwrap_or(rest))
        .is_some_and(|rest| rest.starts_with(markers))
}

/// The icicle draws a function once whatever its tier (issue 41): no title
/// holds a tier marker, the JavaScript boxes give their tier shares (which
/// add up to 100 %), while the folded stacks and the classic look keep the
/// tiers.
fn assert_tiers_merged(recording: &str, folded: &[u8], svg: &[u8], classic_svg: &[u8]) {
    let folded = String::from_utf8_lossy(folded);
    assert!(folded.contains(";JS:*") || folded.contains(";JS:o*"), "{recording}: the folded stacks lost their tiers");
    assert!(frames(classic_svg).iter().any(|frame| has_tier_marker(&frame.title)), "{recording}: classic");
    let icicle = frames(svg);
    let tiered: Vec<&Frame> = icicle.iter().filter(|frame| has_tier_marker(&frame.title)).collect();
    assert!(tiered.is_empty(), "{recording}: a box per tier: {:?}", tiered.first().map(|frame| &frame.title));
    let mut with_shares = 0;
    for frame in icicle.iter().filter(|frame| frame.title.starts_with("JS:")) {
        let counts = &frame.title[frame.title.rfind('(').unwrap()..];
        let Some((_, shares)) = counts.trim_end_matches(')').split_once("; ") else { continue };
        with_shares += 1;
        let total: f64 = shares
            .split(", ")
            .map(|share| share.rsplit_once(' ').unwrap().1.trim_end_matches('%').parse::<f64>().unwrap())
            .sum();
        assert!((total - 100.0).abs() <= 1.5, "{recording}: {} adds up to {total}", frame.title);
    }
    assert!(with_shares > 20, "{recording}: {with_shares} JavaScript boxes give their tiers");
}

#[test]
fn prettier_on_node26_reads_at_first_sight() {
    check_recording("esmapp/node26");
}

#[test]
fn prettier_on_deno_reads_at_first_sight() {
    check_recording("esmapp/deno");
}

#[test]
fn acorn_and_marked_on_node20_read_at_first_sight() {
    check_recording("realapp");
}

/// The frames as the browser would show them, on a graph made here.
#[test]
fn labels_are_sized_as_the_page_script_sizes_them() {
    let frame = |width_percent: f64| Frame {
        title: "JS:*pp$8.parseStatement /a/acorn.js:1015:33 (3 ms, 1%)".into(),
        width_percent,
        label: Some("parseStatement acorn.js:1015".into()),
        short: Some("parseStatement".into()),
        ..Frame::default()
    };
    // 1,165 px of frames: 1 % is 11.65 px.
    let characters = |count: f64| (count * CHARACTER_WIDTH + 3.0) * 100.0 / (PAGE_WIDTH - 2.0 * FRAMES_MARGIN);
    assert_eq!(frame(characters(28.5)).shown_in_browser(), ("parseStatement acorn.js:1015".into(), true));
    assert_eq!(frame(characters(27.5)).shown_in_browser(), ("parseStatement".into(), true));
    assert_eq!(frame(characters(13.5)).shown_in_browser(), ("parseStatem..".into(), false));
    assert_eq!(frame(characters(1.5)).shown_in_browser(), (String::new(), false));
    let native = Frame { title: "node::Start (1 ms, 0.5%)".into(), width_percent: 50.0, ..Frame::default() };
    assert_eq!(native.shown_in_browser(), ("node::Start ".into(), true));
}
