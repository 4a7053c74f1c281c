//! Charts as SVG text, drawn with [plotters](https://docs.rs/plotters)'
//! SVG backend (no font files: labels are `<text>` elements the viewer
//! sets in its own sans-serif), for pages that must open offline.
//!
//! Two kinds, each a plain description rendered by one function:
//!
//! - an **interval plot** ([`IntervalPlot`], [`interval_plot_svg`]): panels
//!   side by side, each a value axis with labelled rows; a row holds points
//!   (one per run, in run order from the top of the row down) and/or an
//!   estimate with its interval; a panel may shade a band (a threshold
//!   ±5 %) and draw a reference line (no change). `compare`'s page draws a
//!   benchmark's runs of both sides in one panel and the change with its
//!   interval against the threshold in the other;
//! - a **trend** ([`TrendPlot`], [`trend_svg`]): estimates with their
//!   intervals over an x axis (commits, dates), joined by a line, with an
//!   optional band.
//!
//! Values are drawn as given: scale them to the unit the axis title names
//! ([`time_unit`] picks one for nanoseconds).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Why a chart could not be drawn (plotters' error, as text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("chart: {0}")]
pub struct ChartError(pub String);

fn chart_error<E: std::fmt::Display>(error: E) -> ChartError {
    ChartError(error.to_string())
}

/// Which series a row or point belongs to: its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Before (blue).
    Base,
    /// After (orange).
    Head,
    /// Head against base: ratios, changes (dark grey).
    Change,
}

impl Tone {
    /// Its colour; the fill of its points in the SVG (`#1F77B4`, …).
    pub fn color(self) -> RGBColor {
        match self {
            Tone::Base => RGBColor(0x1f, 0x77, 0xb4),
            Tone::Head => RGBColor(0xd9, 0x5f, 0x02),
            Tone::Change => RGBColor(0x44, 0x44, 0x44),
        }
    }

    /// The colour as the SVG writes it: `#1F77B4`.
    pub fn svg_color(self) -> String {
        let RGBColor(red, green, blue) = self.color();
        format!("#{red:02X}{green:02X}{blue:02X}")
    }
}

/// The radius of a point, in pixels: every point of a row is a `<circle>`
/// of this radius filled with its [`Tone::svg_color`].
pub const POINT_RADIUS: u32 = 4;

/// An estimate and its interval (`low ≤ estimate ≤ high`; an infinite
/// bound is drawn to the edge of the axis). Drawn as an error bar with a
/// ring at the estimate; without width (`low == high`), as a tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The estimate.
    pub estimate: f64,
    /// Its lower bound.
    pub low: f64,
    /// Its upper bound.
    pub high: f64,
}

/// A labelled row of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Its label, left of the axis (`base runs`).
    pub label: String,
    /// Its colour.
    pub tone: Tone,
    /// One point per run, drawn in order from the top of the row down.
    pub points: Vec<f64>,
    /// An estimate with its interval, drawn across the row's middle.
    pub interval: Option<Interval>,
}

/// A shaded band across a panel, `low` to `high` (a threshold: ±5 %).
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// Its lower edge.
    pub low: f64,
    /// Its upper edge.
    pub high: f64,
    /// What it is, written above it (`±5 % threshold`).
    pub label: String,
}

/// One value axis with its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// The axis title, with its unit: `CPU time per iteration (ms)`.
    pub axis_title: String,
    /// The rows, top to bottom.
    pub rows: Vec<Row>,
    /// A band to shade behind the rows.
    pub band: Option<Band>,
    /// A value to draw a vertical line at (0: no change).
    pub reference: Option<f64>,
}

/// Panels side by side, sharing the rows' height.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalPlot {
    /// The panels, left to right.
    pub panels: Vec<Panel>,
}

/// A point of a trend: an estimate with its interval at `x`.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendPoint {
    /// Where on the x axis (a commit's index, a day).
    pub x: f64,
    /// The estimate and its interval.
    pub interval: Interval,
}

/// Estimates with their intervals over an x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendPlot {
    /// The x axis title (`commit on main`).
    pub x_title: String,
    /// The y axis title, with its unit (`CPU time per iteration (ms)`).
    pub y_title: String,
    /// The points, in x order.
    pub points: Vec<TrendPoint>,
    /// How an x value is labelled (a commit's short hash); `None`: as a
    /// number.
    pub x_labels: Option<Vec<(f64, String)>>,
    /// A band behind the points (a threshold around a baseline).
    pub band: Option<Band>,
}

/// The unit to show nanosecond values in: the divisor and its name, by the
/// largest value (`(1e6, "ms")` from a millisecond on).
pub fn time_unit(values: &[f64]) -> (f64, &'static str) {
    let largest = values.iter().copied().filter(|value| value.is_finite()).fold(0.0_f64, f64::max);
    match largest {
        value if value >= 1e9 => (1e9, "s"),
        value if value >= 1e6 => (1e6, "ms"),
        value if value >= 1e3 => (1e3, "µs"),
        _ => (1.0, "ns"),
    }
}

const FONT: &str = "sans-serif";
/// Height of a row, pixels.
const ROW_HEIGHT: u32 = 46;
/// Room above the rows (band labels) and below (ticks, axis title).
const TOP: u32 = 26;
const BOTTOM: u32 = 56;
/// Room for the rows' labels left of each panel.
const LABEL_WIDTH: u32 = 130;

/// The plot's height for `rows` rows.
fn plot_height(rows: usize) -> u32 {
    TOP + BOTTOM + ROW_HEIGHT * rows.max(1) as u32
}

/// The range of an axis holding `values` (finite ones), padded by a
/// twentieth on each side; a single value gets room around it.
fn padded_range(values: impl IntoIterator<Item = f64>) -> Result<(f64, f64), ChartError> {
    axis_range(values, 1.0 / 20.0)
}

/// The largest value an axis shows, in its unit (ms, samples...): a
/// benchmark's time past a million seconds is a garbled input, and
/// plotters' search for tick marks does not end on spans near `f64::MAX`.
const LARGEST_ON_AN_AXIS: f64 = 1e12;

/// An axis from the finite `values`, widened by `padding` of its span on
/// each side (a span of 10 % of the value where all are equal or nearly
/// so); an error where they reach past [`LARGEST_ON_AN_AXIS`].
pub(crate) fn axis_range(values: impl IntoIterator<Item = f64>, padding: f64) -> Result<(f64, f64), ChartError> {
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    for value in values.into_iter().filter(|value| value.is_finite()) {
        low = low.min(value);
        high = high.max(value);
    }
    if !low.is_finite() {
        return Ok((0.0, 1.0));
    }
    let magnitude = low.abs().max(high.abs());
    if magnitude > LARGEST_ON_AN_AXIS {
        return Err(ChartError(format!("values out of range for a chart ({low:e} to {high:e})")));
    }
    let span = if high - low > magnitude * 1e-9 { high - low } else { magnitude.max(1.0) * 0.1 };
    Ok((low - span * padding, high + span * padding))
}

/// Tick labels with as many decimals as the axis' span needs.
fn tick_label(value: f64, span: f64) -> String {
    let decimals = match span {
        span if span >= 50.0 => 0,
        span if span >= 5.0 => 1,
        span if span >= 0.5 => 2,
        _ => 3,
    };
    let text = format!("{value:.decimals$}");
    // No "-0".
    if text.trim_start_matches('-').chars().all(|character| character == '0' || character == '.') {
        text.trim_start_matches('-').to_string()
    } else {
        text
    }
}

/// Draws `plot` as an SVG document (`<svg …>…</svg>`) `width` pixels wide.
pub fn interval_plot_svg(plot: &IntervalPlot, width: u32) -> Result<String, ChartError> {
    let rows = plot.panels.iter().map(|panel| panel.rows.len()).max().unwrap_or(1);
    let height = plot_height(rows);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let count = plot.panels.len().max(1) as u32;
        let panel_width = width / count;
        let mut rest = root.clone();
        for (index, panel) in plot.panels.iter().enumerate() {
            let (area, next) = if index + 1 < plot.panels.len() {
                rest.split_horizontally(panel_width)
            } else {
                (rest.clone(), rest.clone())
            };
            draw_panel(&root, &area, panel, rows)?;
            rest = next;
        }
        root.present().map_err(chart_error)?;
    }
    Ok(svg)
}

/// One panel: its axis, band, reference line, rows' labels, points and
/// intervals.
fn draw_panel<'svg>(
    root: &DrawingArea<SVGBackend<'svg>, Shift>,
    area: &DrawingArea<SVGBackend<'svg>, Shift>,
    panel: &Panel,
    rows: usize,
) -> Result<(), ChartError> {
    let mut values: Vec<f64> = Vec::new();
    for row in &panel.rows {
        values.extend(&row.points);
        if let Some(interval) = row.interval {
            values.extend([interval.estimate, interval.low, interval.high]);
        }
    }
    if let Some(band) = &panel.band {
        // The band and a little beyond it, so that its edges show.
        let margin = (band.high - band.low).abs() * 0.25;
        values.extend([band.low - margin, band.high + margin]);
    }
    values.extend(panel.reference);
    let (low, high) = padded_range(values)?;
    let span = high - low;
    // Row i is centred at y = i + 0.5, from the top.
    let (top, bottom) = (0.0, rows as f64);
    let mut chart = ChartBuilder::on(area)
        .margin_top(TOP)
        .margin_right(16)
        .x_label_area_size(BOTTOM)
        .y_label_area_size(LABEL_WIDTH)
        .build_cartesian_2d(low..high, bottom..top)
        .map_err(chart_error)?;
    let label_font = (FONT, 16).into_font().color(&RGBColor(0x33, 0x33, 0x33));
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(6)
        .x_label_formatter(&|value| tick_label(*value, span))
        .x_desc(panel.axis_title.as_str())
        .axis_desc_style((FONT, 17))
        .label_style((FONT, 15))
        .light_line_style(RGBColor(0xf2, 0xf2, 0xf2))
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .draw()
        .map_err(chart_error)?;
    if let Some(band) = &panel.band {
        let (band_low, band_high) = (band.low.max(low), band.high.min(high));
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(band_low, bottom), (band_high, top)],
                RGBColor(0x2c, 0xa0, 0x2c).mix(0.12).filled(),
            )))
            .map_err(chart_error)?;
        let (x, y) = chart.backend_coord(&((band_low + band_high) / 2.0, top));
        root.draw(&Text::new(
            band.label.clone(),
            (x, y - 4),
            (FONT, 15).into_font().color(&RGBColor(0x1e, 0x6e, 0x1e)).pos(Pos::new(HPos::Center, VPos::Bottom)),
        ))
        .map_err(chart_error)?;
    }
    if let Some(reference) = panel.reference.filter(|value| (low..=high).contains(value)) {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(reference, bottom), (reference, top)],
                BLACK.mix(0.6).stroke_width(1),
            )))
            .map_err(chart_error)?;
    }
    for (index, row) in panel.rows.iter().enumerate() {
        let middle = index as f64 + 0.5;
        let (x, y) = chart.backend_coord(&(low, middle));
        root.draw(&Text::new(
            row.label.clone(),
            (x - 8, y),
            label_font.clone().pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(chart_error)?;
        let color = row.tone.color();
        let count = row.points.len();
        // Spread over the row's upper part when an interval shares it.
        let (from, to) = if row.interval.is_some() { (0.12, 0.38) } else { (0.15, 0.85) };
        chart
            .draw_series(row.points.iter().enumerate().filter(|(_, value)| value.is_finite()).map(|(order, value)| {
                let place =
                    if count <= 1 { (from + to) / 2.0 } else { from + (to - from) * order as f64 / (count - 1) as f64 };
                Circle::new((*value, index as f64 + place), POINT_RADIUS, color.mix(0.75).filled())
            }))
            .map_err(chart_error)?;
        if let Some(interval) = row.interval {
            let clip = |value: f64| value.clamp(low, high);
            let y = if count > 0 { index as f64 + 0.7 } else { middle };
            if interval.low == interval.high {
                // No interval (a side's mean, one run's change): a tick.
                let estimate = clip(interval.estimate);
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(estimate, y - 0.17), (estimate, y + 0.17)],
                        BLACK.stroke_width(3),
                    )))
                    .map_err(chart_error)?;
                continue;
            }
            chart
                .draw_series(std::iter::once(ErrorBar::new_horizontal(
                    y,
                    clip(interval.low),
                    clip(interval.estimate),
                    clip(interval.high),
                    BLACK.stroke_width(2),
                    10,
                )))
                .map_err(chart_error)?;
        }
    }
    Ok(())
}

/// Draws `plot` as an SVG document `width` × `height` pixels.
pub fn trend_svg(plot: &TrendPlot, width: u32, height: u32) -> Result<String, ChartError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let (x_low, x_high) = padded_range(plot.points.iter().map(|point| point.x))?;
        let mut values: Vec<f64> = plot
            .points
            .iter()
            .flat_map(|point| [point.interval.estimate, point.interval.low, point.interval.high])
            .collect();
        if let Some(band) = &plot.band {
            values.extend([band.low, band.high]);
        }
        let (y_low, y_high) = padded_range(values)?;
        let (x_span, y_span) = (x_high - x_low, y_high - y_low);
        let mut chart = ChartBuilder::on(&root)
            .margin(16)
            .margin_top(TOP)
            .x_label_area_size(BOTTOM)
            .y_label_area_size(80)
            .build_cartesian_2d(x_low..x_high, y_low..y_high)
            .map_err(chart_error)?;
        let labels = plot.x_labels.clone();
        let x_formatter = move |value: &f64| match &labels {
            Some(labels) => labels
                .iter()
                .find(|(x, _)| (x - value).abs() < 1e-9)
                .map(|(_, label)| label.clone())
                .unwrap_or_default(),
            None => tick_label(*value, x_span),
        };
        chart
            .configure_mesh()
            .x_labels(plot.points.len().clamp(2, 12))
            .x_label_formatter(&x_formatter)
            .y_label_formatter(&|value| tick_label(*value, y_span))
            .x_desc(plot.x_title.as_str())
            .y_desc(plot.y_title.as_str())
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 15))
            .light_line_style(RGBColor(0xf2, 0xf2, 0xf2))
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .draw()
            .map_err(chart_error)?;
        if let Some(band) = &plot.band {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x_low, band.low.max(y_low)), (x_high, band.high.min(y_high))],
                    RGBColor(0x2c, 0xa0, 0x2c).mix(0.12).filled(),
                )))
                .map_err(chart_error)?;
        }
        let color = Tone::Head.color();
        chart
            .draw_series(LineSeries::new(
                plot.points.iter().map(|point| (point.x, point.interval.estimate)),
                color.stroke_width(2),
            ))
            .map_err(chart_error)?;
        let clip = |value: f64| value.clamp(y_low, y_high);
        chart
            .draw_series(plot.points.iter().map(|point| {
                ErrorBar::new_vertical(
                    point.x,
                    clip(point.interval.low),
                    clip(point.interval.estimate),
                    clip(point.interval.high),
                    color.stroke_width(2),
                    8,
                )
            }))
            .map_err(chart_error)?;
        chart
            .draw_series(
                plot.points
                    .iter()
                    .map(|point| Circle::new((point.x, point.interval.estimate), POINT_RADIUS, color.filled())),
            )
            .map_err(chart_error)?;
        root.present().map_err(chart_error)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(svg: &str) -> Vec<String> {
        let document = roxmltree::Document::parse(svg).unwrap();
        document
            .descendants()
            .filter(|node| node.has_tag_name("text"))
            .map(|node| node.text().unwrap_or_default().trim().to_string())
            .collect()
    }

    fn circles(svg: &str, tone: Tone) -> usize {
        let document = roxmltree::Document::parse(svg).unwrap();
        document
            .descendants()
            .filter(|node| node.has_tag_name("circle"))
            .filter(|node| node.attribute("fill") == Some(tone.svg_color().as_str()))
            .filter(|node| node.attribute("r") == Some(&POINT_RADIUS.to_string()))
            .count()
    }

    #[test]
    fn an_interval_plot_draws_each_point_and_names_its_axes() {
        let plot = IntervalPlot {
            panels: vec![
                Panel {
                    axis_title: "CPU time per iteration (ms)".into(),
                    rows: vec![
                        Row {
                            label: "base runs".into(),
                            tone: Tone::Base,
                            points: vec![5.0, 5.2, 4.9],
                            interval: None,
                        },
                        Row {
                            label: "head <runs> & co".into(),
                            tone: Tone::Head,
                            points: vec![5.5, 5.6],
                            interval: None,
                        },
                    ],
                    band: None,
                    reference: None,
                },
                Panel {
                    axis_title: "change, head against base (%)".into(),
                    rows: vec![Row {
                        label: "change".into(),
                        tone: Tone::Change,
                        points: vec![],
                        interval: Some(Interval { estimate: 8.0, low: 2.0, high: f64::INFINITY }),
                    }],
                    band: Some(Band { low: -5.0, high: 5.0, label: "±5 % threshold".into() }),
                    reference: Some(0.0),
                },
            ],
        };
        let svg = interval_plot_svg(&plot, 900).unwrap();
        if let Some(directory) = std::env::var_os("V8INLINE_CHART_DIR") {
            std::fs::write(std::path::Path::new(&directory).join("interval.svg"), &svg).unwrap();
        }
        let texts = texts(&svg);
        for expected in
            ["CPU time per iteration (ms)", "change, head against base (%)", "±5 % threshold", "head <runs> & co"]
        {
            assert!(texts.iter().any(|text| text == expected), "{expected}: {texts:?}");
        }
        assert_eq!(circles(&svg, Tone::Base), 3);
        assert_eq!(circles(&svg, Tone::Head), 2);
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }

    #[test]
    fn a_trend_draws_a_point_per_estimate() {
        let plot = TrendPlot {
            x_title: "commit".into(),
            y_title: "time per iteration (µs)".into(),
            points: (0..5)
                .map(|index| TrendPoint {
                    x: index as f64,
                    interval: Interval {
                        estimate: 10.0 + index as f64,
                        low: 9.0 + index as f64,
                        high: 11.5 + index as f64,
                    },
                })
                .collect(),
            x_labels: Some((0..5).map(|index| (index as f64, format!("c{index}"))).collect()),
            band: None,
        };
        let svg = trend_svg(&plot, 800, 300).unwrap();
        // To look at: V8INLINE_CHART_DIR=DIR cargo test --lib output::charts.
        if let Some(directory) = std::env::var_os("V8INLINE_CHART_DIR") {
            std::fs::write(std::path::Path::new(&directory).join("trend.svg"), &svg).unwrap();
        }
        assert_eq!(circles(&svg, Tone::Head), 5);
        let texts = texts(&svg);
        for expected in ["time per iteration (µs)", "commit", "c0", "c4"] {
            assert!(texts.iter().any(|text| text == expected), "{expected}: {texts:?}");
        }
    }

    #[test]
    fn units_and_ticks() {
        assert_eq!(time_unit(&[2.5e6, 3e6]), (1e6, "ms"));
        assert_eq!(time_unit(&[750.0]), (1.0, "ns"));
        assert_eq!(tick_label(-0.0001, 10.0), "0.0");
        assert_eq!(tick_label(12.345, 100.0), "12");
    }
}
