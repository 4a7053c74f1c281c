//! `history report --format html`: one self-contained page (no script, no
//! request: the charts are inline SVG drawn with plotters' SVG backend).
//! Per benchmark, its trend over commits with each commit's interval and
//! its change points marked and labelled (commit, function); then the
//! functions whose own time per iteration changed most over the range, as
//! trends. A table lists every change point first.
//!
//! The trend chart is drawn here until `src/output/charts.rs` (the
//! `report-html` branch) lands; its `trend_svg` has no change point marks
//! yet.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::output::compare::html::escape;

use super::report::{HistoryReport, ReportedChange, TrendStatistic, benchmark_names, self_times};
use super::{FunctionKey, HistoryEntry};

/// Functions drawn per benchmark.
pub const FUNCTION_TRENDS: usize = 4;

const WIDTH: u32 = 900;
const HEIGHT: u32 = 320;
const FONT: &str = "sans-serif";

/// Colours of the function lines (Tableau 10).
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd9, 0x5f, 0x02),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
];

/// A commit's short name: 10 characters of a SHA, else as given.
fn short(commit: &str) -> &str {
    if commit.len() == 40 && commit.bytes().all(|byte| byte.is_ascii_hexdigit()) { &commit[..10] } else { commit }
}

/// The unit to show values in: the divisor and its name.
fn unit(statistic: TrendStatistic, values: &[f64]) -> (f64, &'static str) {
    if !statistic.is_time() {
        return (1.0, "samples");
    }
    crate::output::charts::time_unit(values)
}

/// A line over commits: its label and (commit index, value, low, high).
struct Series {
    label: String,
    points: Vec<(f64, f64, f64, f64)>,
}

/// A change point mark: the x of its commit and its label.
struct Mark {
    x: f64,
    label: String,
}

/// Draws series over commits (`x_labels[i]` names commit `i`), with their
/// intervals as error bars and the change points as labelled vertical
/// lines. Plotters' errors (none for a string backend) come back as text.
fn trend_svg(series: &[Series], marks: &[Mark], x_labels: &[String], y_title: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|error| error.to_string())?;
        let count = x_labels.len().max(1) as f64;
        let (y_low, y_high) = crate::output::charts::axis_range(
            series.iter().flat_map(|series| series.points.iter().flat_map(|point| [point.1, point.2, point.3])),
            0.1,
        )
        .map_err(|error| error.0)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .margin_top(34)
            .x_label_area_size(46)
            .y_label_area_size(72)
            .build_cartesian_2d(-0.5..count - 0.5, y_low..y_high)
            .map_err(|error| error.to_string())?;
        let labels = x_labels.to_vec();
        let x_formatter = move |value: &f64| {
            let index = value.round();
            if (value - index).abs() > 1e-6 || index < 0.0 {
                return String::new();
            }
            labels.get(index as usize).cloned().unwrap_or_default()
        };
        chart
            .configure_mesh()
            .x_labels(x_labels.len().clamp(2, 12))
            .x_label_formatter(&x_formatter)
            .x_desc("commit")
            .y_desc(y_title)
            .axis_desc_style((FONT, 14))
            .label_style((FONT, 12))
            .light_line_style(RGBColor(0xee, 0xee, 0xee))
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .draw()
            .map_err(|error| error.to_string())?;
        let red = RGBColor(0xc0, 0x1c, 0x28);
        for (number, mark) in marks.iter().enumerate() {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(mark.x - 0.5, y_low), (mark.x - 0.5, y_high)],
                    red.stroke_width(2),
                )))
                .map_err(|error| error.to_string())?;
            // Above the plot (no legend or point under it): right of its
            // line in the left half, left of it in the right half (a change
            // at the last commit is labelled inside the page); every other
            // label a row higher, so that two changes a few commits apart
            // do not write over each other.
            let (line_x, plot_top) = chart.backend_coord(&(mark.x - 0.5, y_high));
            let (x, anchor) = if mark.x < count / 2.0 { (line_x + 3, HPos::Left) } else { (line_x - 3, HPos::Right) };
            let y = plot_top - 3 - 14 * (number % 2) as i32;
            root.draw(&Text::new(
                mark.label.clone(),
                (x, y),
                (FONT, 12).into_font().color(&red).pos(Pos::new(anchor, VPos::Bottom)),
            ))
            .map_err(|error| error.to_string())?;
        }
        for (index, line) in series.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            // Several lines are named by the page's legend under the plot
            // ([`legend`]): drawn in the plot, a legend hid its first commits.
            chart
                .draw_series(LineSeries::new(line.points.iter().map(|point| (point.0, point.1)), color.stroke_width(2)))
                .map_err(|error| error.to_string())?;
            chart
                .draw_series(
                    line.points.iter().filter(|point| point.2 < point.3).map(|point| {
                        ErrorBar::new_vertical(point.0, point.2, point.1, point.3, color.stroke_width(1), 6)
                    }),
                )
                .map_err(|error| error.to_string())?;
            chart
                .draw_series(line.points.iter().map(|point| Circle::new((point.0, point.1), 3, color.filled())))
                .map_err(|error| error.to_string())?;
        }
        root.present().map_err(|error| error.to_string())?;
    }
    Ok(svg)
}

/// The functions of a benchmark whose own time per iteration changed most
/// over the history (the largest minus the smallest over its commits, 0
/// at a commit where it was not kept), most first.
fn most_changed(entries: &[&super::BenchmarkEntry]) -> Vec<(FunctionKey, String, Vec<f64>)> {
    let mut labels: BTreeMap<FunctionKey, String> = BTreeMap::new();
    for entry in entries {
        for function in entry.functions.iter().filter(|function| function.self_per_iteration.is_some()) {
            labels.entry(function.key()).or_insert_with(|| function.label());
        }
    }
    let mut changed: Vec<(f64, FunctionKey, String, Vec<f64>)> = labels
        .into_iter()
        .map(|(key, label)| {
            let times = self_times(entries, &key);
            let (low, high) = times
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), time| (low.min(*time), high.max(*time)));
            (high - low, key, label, times)
        })
        .collect();
    changed.sort_by(|left, right| right.0.total_cmp(&left.0).then_with(|| left.1.cmp(&right.1)));
    changed.into_iter().take(FUNCTION_TRENDS).map(|(_, key, label, times)| (key, label, times)).collect()
}

fn percent(value: f64) -> String {
    format!("{:+.1} %", value * 100.0)
}

/// One change point's row of the table.
fn change_row(page: &mut String, change: &ReportedChange) {
    let functions: Vec<String> = change
        .functions
        .iter()
        .map(|function| {
            let share =
                function.share_of_change.map(|share| format!(" ({:.0} % of it)", share * 100.0)).unwrap_or_default();
            format!("{}{}", escape(&function.function), share)
        })
        .collect();
    let v8: Vec<String> = change
        .v8
        .iter()
        .map(|change| format!("{}: {}", escape(&change.function), escape(&change.description)))
        .collect();
    let _ = writeln!(
        page,
        "<tr><td>{}</td><td><code>{}</code></td><td>{} [{}, {}]</td><td class=\"functions\">{}</td><td class=\"functions\">{}</td></tr>",
        escape(&change.benchmark),
        escape(short(&change.commit)),
        percent(change.change.relative),
        percent(change.change.low),
        percent(change.change.high),
        functions.join("<br/>"),
        if v8.is_empty() { "—".to_string() } else { v8.join("<br/>") },
    );
}

/// The page.
pub fn page(history: &[HistoryEntry], report: &HistoryReport) -> String {
    let mut page = String::new();
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n");
    page.push_str("<title>v8inline: benchmark history</title>\n<style>\n");
    page.push_str(
        "body{font-family:sans-serif;margin:1.5em auto;max-width:960px;padding:0 1em;color:#222}\n\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}\n\
         th{background:#f4f4f4}figure{margin:0.5em 0}svg{max-width:100%;height:auto}.note{color:#555}\n\
         td.functions{font-size:0.85em}\n\
         ul.legend{list-style:none;padding:0;margin:0.2em 0 0.4em 5em;font-size:0.85em}\n\
         .swatch{display:inline-block;width:1.6em;height:0.3em;vertical-align:middle;margin-right:0.5em}\n",
    );
    page.push_str("</style>\n</head>\n<body>\n<h1>Benchmark history</h1>\n");
    let (first, last) = (history.first(), history.last());
    let _ = writeln!(
        page,
        "<p>{} commits, {} to {} ({} to {}). Change points by {} (p ≤ {}, windows of {} commits, at least {} commit{} a side: docs/history.md).</p>",
        history.len(),
        escape(first.map_or("", |entry| short(&entry.commit))),
        escape(last.map_or("", |entry| short(&entry.commit))),
        escape(first.map_or("", |entry| entry.date.as_str())),
        escape(last.map_or("", |entry| entry.date.as_str())),
        escape(&report.method.name),
        report.method.significance,
        report.method.window,
        report.method.least_segment,
        if report.method.least_segment == 1 { "" } else { "s" },
    );
    page.push_str("<h2 id=\"change-points\">Change points</h2>\n");
    if report.change_points.is_empty() {
        page.push_str("<p>None: no benchmark changed beyond its commits' spread.</p>\n");
    } else {
        page.push_str(
            "<table class=\"change-points\">\n<tr><th>benchmark</th><th>from commit</th><th>change [95 % interval]</th><th>functions whose own time moved most</th><th>V8's choice changed</th></tr>\n",
        );
        for change in &report.change_points {
            change_row(&mut page, change);
        }
        page.push_str("</table>\n");
    }
    let names = benchmark_names(history);
    for (number, trend) in report.benchmarks.iter().enumerate() {
        let _ = writeln!(page, "<section id=\"benchmark-{}\">\n<h2>{}</h2>", number + 1, escape(&trend.name));
        let commit_index: BTreeMap<&str, usize> =
            trend.points.iter().enumerate().map(|(index, point)| (point.commit.as_str(), index)).collect();
        let x_labels: Vec<String> = trend.points.iter().map(|point| short(&point.commit).to_string()).collect();
        let changes: Vec<&ReportedChange> =
            report.change_points.iter().filter(|change| change.benchmark == trend.name).collect();
        let marks: Vec<Mark> = changes
            .iter()
            .filter_map(|change| {
                let x = *commit_index.get(change.commit.as_str())? as f64;
                let function = change.functions.first().map(|function| function.function.as_str());
                let name = function.map(|function| function.split(' ').next().unwrap_or(function));
                let mut label = match name {
                    Some(name) => format!("{} {} {}", short(&change.commit), percent(change.change.relative), name),
                    None => format!("{} {}", short(&change.commit), percent(change.change.relative)),
                };
                // V8's changed choice for the function named, where there is one.
                if let Some(v8) = change.v8.iter().find(|v8| Some(v8.function.as_str()) == function) {
                    let _ = write!(label, ": {}", v8.description);
                }
                Some(Mark { x, label })
            })
            .collect();
        let values: Vec<f64> = trend.points.iter().map(|point| point.high).collect();
        let (divisor, unit_name) = unit(trend.statistic, &values);
        let statistic_title = trend.statistic.title();
        let series = [Series {
            label: trend.name.clone(),
            points: trend
                .points
                .iter()
                .enumerate()
                .map(|(index, point)| (index as f64, point.value / divisor, point.low / divisor, point.high / divisor))
                .collect(),
        }];
        let title = format!("{statistic_title} ({unit_name})");
        match trend_svg(&series, &marks, &x_labels, &title) {
            Ok(svg) => {
                let _ = writeln!(
                    page,
                    "<figure class=\"trend\">{}<figcaption>{} of each commit: the geometric mean of its runs, its 95 % interval; red lines: change points.</figcaption></figure>",
                    svg_body(&svg),
                    escape(statistic_title)
                );
            }
            Err(error) => {
                let _ = writeln!(page, "<p class=\"note\">No chart: {}</p>", escape(&error));
            }
        }
        // The functions, over the same commits.
        if names.contains(&trend.name) {
            let entries: Vec<&super::BenchmarkEntry> = history
                .iter()
                .filter_map(|entry| entry.benchmarks.iter().find(|benchmark| benchmark.name == trend.name))
                .collect();
            let functions = most_changed(&entries);
            if functions.is_empty() {
                page.push_str("<p class=\"note\">No profiles were kept: no function trends.</p>\n");
            } else {
                let all: Vec<f64> = functions.iter().flat_map(|(_, _, times)| times.iter().copied()).collect();
                let (divisor, unit_name) = unit(TrendStatistic::Cpu, &all);
                let series: Vec<Series> = functions
                    .iter()
                    .map(|(_, label, times)| Series {
                        label: label.clone(),
                        points: times
                            .iter()
                            .enumerate()
                            .map(|(index, time)| {
                                let value = time / divisor;
                                (index as f64, value, value, value)
                            })
                            .collect(),
                    })
                    .collect();
                let title = format!("own time per iteration ({unit_name})");
                if let Ok(svg) = trend_svg(&series, &marks, &x_labels, &title) {
                    let _ = writeln!(
                        page,
                        "<figure class=\"functions\">{}{}<figcaption>The {} functions whose own (self) time per iteration changed most over these commits (the median of each commit's runs; 0 where a function was not among a commit's {} kept).</figcaption></figure>",
                        svg_body(&svg),
                        legend(&series),
                        functions.len(),
                        super::TOP_FUNCTIONS,
                    );
                }
            }
        }
        page.push_str("</section>\n");
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// The lines' names, each after a swatch of its colour, as a list under
/// the plot (function names are long: in the plot they hid its first
/// commits).
fn legend(series: &[Series]) -> String {
    let mut list = String::from("<ul class=\"legend\">");
    for (index, line) in series.iter().enumerate() {
        let RGBColor(red, green, blue) = PALETTE[index % PALETTE.len()];
        let _ = write!(
            list,
            "<li><span class=\"swatch\" style=\"background:#{red:02x}{green:02x}{blue:02x}\"></span>{}</li>",
            escape(&line.label)
        );
    }
    list.push_str("</ul>");
    list
}

/// The SVG element of plotters' output (it writes no XML declaration, but
/// be sure).
fn svg_body(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |start| &svg[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_commits_shortened() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        // A control character (in a benchmark's name) would make the page
        // ill-formed XML: the compare page's escape, shared, replaces it.
        assert_eq!(escape("a\u{1}b"), "a\u{FFFD}b");
        assert_eq!(short("0123456789abcdef0123456789abcdef01234567"), "0123456789");
        assert_eq!(short("c21"), "c21");
    }
}
