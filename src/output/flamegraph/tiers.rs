//! One box per function, whatever its tier, in a
//! [`super::FlameGraphStyle::Icicle`] graph: V8 runs a function as
//! bytecode (`JS:~f`), then Sparkplug (`^`), Maglev (`+`) and TurboFan
//! (`*`) code, and the folded stacks name each tier apart, so a benchmark's
//! function showed as one box per tier and per warm-up. Here each frame
//! loses its tier marker before inferno draws it (`JS:f /app/a.js:1:2`),
//! and the box it becomes keeps, per tier, the count it holds: its tooltip
//! gives the tier shares (`TurboFan 80%, interpreted 20%`) and its colour
//! is its hottest tier's. The folded stacks keep the tiers.

use rustc_hash::FxHashMap;
use std::borrow::Cow;

use crate::formats::v8log::{CodeName, Tier};

/// V8's tiers in the order tooltips list them, fastest first.
const TIERS: [Tier; 4] = [Tier::TurboFan, Tier::Maglev, Tier::Sparkplug, Tier::Interpreted];

/// How a tooltip names a tier.
fn tier_name(tier: Tier) -> &'static str {
    match tier {
        Tier::TurboFan => "TurboFan",
        Tier::Maglev => "Maglev",
        Tier::Sparkplug => "Sparkplug",
        Tier::Interpreted => "interpreted",
    }
}

/// The index of a tier in [`TIERS`].
fn tier_index(tier: Tier) -> usize {
    TIERS.iter().position(|known| *known == tier).unwrap_or(0)
}

/// A frame name without its tier marker (`JS:*f /a.js:1:2_[j]` is
/// `JS:f /a.js:1:2_[j]`), and the tier; other names as they are.
fn untiered(frame: &str) -> (Cow<'_, str>, Option<Tier>) {
    match CodeName::javascript(frame) {
        Some(CodeName { tag, marker: Some(marker), rest }) => (Cow::Owned(format!("{tag}:{rest}")), Some(marker.tier)),
        _ => (Cow::Borrowed(frame), None),
    }
}

/// Where a box is drawn, as inferno writes it on its rectangle: its start
/// (`fg:x`) and width (`fg:w`) in counts, and its name as its title shows
/// it (without the annotation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct BoxPlace {
    name: String,
    start: u64,
    width: u64,
}

/// What the tiers of one box hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct TierShares {
    /// The depth of the box (0: `all`).
    depth: usize,
    /// The count per tier, indexed as [`TIERS`].
    counts: [u64; 4],
    /// Whether the frame is an inlined one (`_[i]`).
    inlined: bool,
}

impl TierShares {
    /// The tooltip's addition: `TurboFan 80%, interpreted 20%`.
    pub(super) fn describe(&self) -> String {
        let total: u64 = self.counts.iter().sum();
        let mut parts = Vec::new();
        for (index, &count) in self.counts.iter().enumerate() {
            if count > 0 {
                let share = count as f64 * 100.0 / total as f64;
                parts.push(format!("{} {}%", tier_name(TIERS[index]), format_share(share)));
            }
        }
        parts.join(", ")
    }

    /// The box's depth (0: `all`).
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    /// The fill of the box: its hottest tier's colour, green for JIT code
    /// (red above blue) and aqua for inlined functions (green and blue
    /// above red) as inferno's palette, darker the faster the tier.
    pub(super) fn fill(&self) -> &'static str {
        let hottest = (0..TIERS.len()).max_by_key(|&index| (self.counts[index], std::cmp::Reverse(index))).unwrap_or(0);
        match (self.inlined, TIERS[hottest]) {
            (false, Tier::TurboFan) => "rgb(60,140,40)",
            (false, Tier::Maglev) => "rgb(100,180,70)",
            (false, Tier::Sparkplug) => "rgb(150,205,100)",
            (false, Tier::Interpreted) => "rgb(195,228,135)",
            (true, Tier::TurboFan) => "rgb(40,160,170)",
            (true, Tier::Maglev) => "rgb(90,196,200)",
            (true, Tier::Sparkplug | Tier::Interpreted) => "rgb(150,225,225)",
        }
    }
}

/// A share as tooltips print it: whole percents, one decimal under 10 %.
fn format_share(share: f64) -> String {
    if share >= 9.95 { format!("{share:.0}") } else { format!("{share:.1}") }
}

/// The boxes of merged functions, by where they are drawn.
#[derive(Debug, Clone, Default)]
pub(super) struct TieredBoxes {
    boxes: FxHashMap<BoxPlace, Vec<TierShares>>,
}

impl TieredBoxes {
    /// The tiers of the box drawn at `start` for `width` under `name` (its
    /// title's name) at `depth`, if it merged tiers.
    pub(super) fn shares(&self, name: &str, start: u64, width: u64, depth: Option<usize>) -> Option<&TierShares> {
        let candidates = self.boxes.get(&BoxPlace { name: name.to_string(), start, width })?;
        match depth {
            Some(depth) => candidates.iter().find(|shares| shares.depth == depth).or(candidates.first()),
            None => candidates.first(),
        }
    }
}

/// The annotation inferno hides from a frame's title (`_[j]`, `_[i]`, ...).
fn without_annotation(frame: &str) -> &str {
    match frame.rfind("_[") {
        Some(start) if frame.ends_with(']') && frame.len() - start <= 5 => &frame[..start],
        _ => frame,
    }
}

/// One merged stack: its count, and per frame the count of each tier.
#[derive(Debug, Clone, Default)]
struct MergedStack {
    count: u64,
    /// A differential line's base count (`stack BEFORE AFTER`): summed,
    /// not drawn; inferno draws `count` and colors by the change.
    base_count: u64,
    frame_tiers: Vec<[u64; 4]>,
}

/// A box open while the stacks are replayed.
#[derive(Debug, Clone)]
struct OpenBox<'stack> {
    frame: &'stack str,
    start: u64,
    counts: [u64; 4],
}

/// The folded lines with every frame's tier marker dropped and runs of
/// identical frames made one (direct recursion; a run takes the tier of its
/// innermost frame that has one), equal stacks summed, sorted as inferno
/// sorts them; and where inferno will draw each box that holds JavaScript
/// code of a tier, with its tier shares (inferno's
/// `flamegraph::merge::frames` replayed: boxes open and close where two
/// sorted lines' frames part, and a box is drawn from the count before its
/// first line, as wide as the counts of its lines).
pub(super) fn merge_tiers<'lines>(
    lines: impl IntoIterator<Item = &'lines str>,
    differential: bool,
) -> (Vec<String>, TieredBoxes) {
    let mut stacks: FxHashMap<String, MergedStack> = FxHashMap::default();
    let mut frames: Vec<(Cow<'_, str>, Option<Tier>)> = Vec::new();
    for line in lines {
        let Some((stack, count)) = line.trim_end().rsplit_once(' ') else { continue };
        let Ok(count) = count.parse::<u64>() else { continue };
        // A differential line's counts are two: `stack BEFORE AFTER`.
        let (stack, base_count) = match differential.then(|| stack.rsplit_once(' ')).flatten() {
            Some((stack, before)) => match before.parse::<u64>() {
                Ok(before) => (stack, before),
                Err(_) => continue,
            },
            None if differential => continue,
            None => (stack, 0),
        };
        frames.clear();
        for frame in stack.split(';') {
            let (name, tier) = untiered(frame);
            match frames.last_mut() {
                Some((previous, previous_tier)) if *previous == name => *previous_tier = tier.or(*previous_tier),
                _ => frames.push((name, tier)),
            }
        }
        let merged = frames.iter().map(|(name, _)| name.as_ref()).collect::<Vec<_>>().join(";");
        let entry = stacks.entry(merged).or_default();
        entry.count = entry.count.saturating_add(count);
        entry.base_count = entry.base_count.saturating_add(base_count);
        entry.frame_tiers.resize(frames.len(), [0; 4]);
        for (tiers, (_, tier)) in entry.frame_tiers.iter_mut().zip(&frames) {
            if let Some(tier) = tier {
                tiers[tier_index(*tier)] = tiers[tier_index(*tier)].saturating_add(count);
            }
        }
    }
    let mut sorted: Vec<(String, &str, &MergedStack)> = stacks
        .iter()
        .map(|(stack, merged)| {
            let line = match differential {
                true => format!("{stack} {} {}", merged.base_count, merged.count),
                false => format!("{stack} {}", merged.count),
            };
            (line, stack.as_str(), merged)
        })
        .collect();
    sorted.sort_unstable_by(|left, right| left.0.cmp(&right.0));
    let mut boxes = TieredBoxes::default();
    let mut open: Vec<OpenBox<'_>> = Vec::new();
    let mut time: u64 = 0;
    let mut close = |open_box: OpenBox<'_>, depth: usize, time: u64| {
        if open_box.counts.iter().any(|&count| count > 0) {
            let place = BoxPlace {
                name: without_annotation(open_box.frame).to_string(),
                start: open_box.start,
                width: time - open_box.start,
            };
            let inlined = open_box.frame.ends_with("_[i]");
            boxes.boxes.entry(place).or_default().push(TierShares { depth, counts: open_box.counts, inlined });
        }
    };
    for (_, stack, merged) in &sorted {
        let frames: Vec<&str> = stack.split(';').collect();
        let common = open.iter().zip(&frames).take_while(|(open_box, frame)| open_box.frame == **frame).count();
        while open.len() > common {
            let depth = open.len();
            let open_box = open.pop().expect("open boxes beyond the common ones");
            close(open_box, depth, time);
        }
        for frame in &frames[common..] {
            open.push(OpenBox { frame, start: time, counts: [0; 4] });
        }
        for (open_box, tiers) in open.iter_mut().zip(&merged.frame_tiers) {
            for (count, added) in open_box.counts.iter_mut().zip(tiers) {
                *count = count.saturating_add(*added);
            }
        }
        time = time.saturating_add(merged.count);
    }
    while let Some(open_box) = open.pop() {
        let depth = open.len() + 1;
        close(open_box, depth, time);
    }
    (sorted.into_iter().map(|(line, ..)| line).collect(), boxes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_of_a_function_make_one_box() {
        let (lines, boxes) = merge_tiers(
            [
                "node;JS:~f /a.js:1:1_[j];JS:~g /a.js:5:1_[j] 10",
                "node;JS:*f /a.js:1:1_[j];JS:*g /a.js:5:1_[i] 30",
                "node;JS:^f /a.js:1:1_[j];JS:^f /a.js:1:1_[j] 20",
                "node;[node] 40",
            ],
            false,
        );
        assert_eq!(
            lines,
            [
                "node;JS:f /a.js:1:1_[j] 20",
                "node;JS:f /a.js:1:1_[j];JS:g /a.js:5:1_[i] 30",
                "node;JS:f /a.js:1:1_[j];JS:g /a.js:5:1_[j] 10",
                "node;[node] 40",
            ]
        );
        // f: drawn from 0 for 60, at depth 2 (all, node, f).
        let f = boxes.shares("JS:f /a.js:1:1", 0, 60, Some(2)).unwrap();
        assert_eq!(f.counts, [30, 0, 20, 10]);
        assert_eq!(f.describe(), "TurboFan 50%, Sparkplug 33%, interpreted 17%");
        assert_eq!(f.fill(), "rgb(60,140,40)");
        // g inlined (TurboFan) and g's own bytecode stay two boxes.
        let inlined = boxes.shares("JS:g /a.js:5:1", 20, 30, Some(3)).unwrap();
        assert_eq!((inlined.counts, inlined.fill()), ([30, 0, 0, 0], "rgb(40,160,170)"));
        assert_eq!(boxes.shares("JS:g /a.js:5:1", 50, 10, None).unwrap().describe(), "interpreted 100%");
        assert!(boxes.shares("[node]", 60, 40, None).is_none());
    }
}
