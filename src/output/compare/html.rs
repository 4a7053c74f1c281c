//! The comparison as one self-contained page (`compare --html FILE`,
//! `bench`'s `report.html`): the table of benchmarks as the markdown
//! comment has it ([`render::verdict_rows`]); per benchmark a plot of what
//! its verdict was computed from (each run of both sides, each duet
//! round's ratio head/base, the change with its interval against the
//! ±threshold band: [`crate::output::charts`]); the functions whose own
//! time moved, each plotted the same way, with its location and how V8 ran
//! it; the differential flame graphs and links to the files of the
//! comparison, all relative.
//!
//! The page loads nothing from the network: no script, no font, no style
//! sheet from elsewhere; the plots are inline SVG. Every text from the
//! recordings (benchmark and function names, paths) is escaped. The markup
//! is well-formed XML (XHTML served as HTML), so that a strict XML reader
//! can check it.

use std::fmt::Write as _;

use super::across::{FunctionRuns, RunsTime, geometric_mean};
use super::noise::{Statistic, Verdict};
use super::render::{self, VerdictRow};
use super::runs::{RunPair, RunsChange};
use super::{BenchmarkComparison, FunctionChange, ProfileComparison, SuiteComparison};
use crate::output::annotations::SourceRoot;
use crate::output::charts::{Band, Interval, IntervalPlot, Panel, Row, Tone, interval_plot_svg, time_unit};

/// A link of the page, relative to its directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The `href`, relative and percent-encoded ([`relative_href`]).
    pub href: String,
    /// What the link shows (a path relative to the page).
    pub label: String,
}

/// What the page links to besides the comparison itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageFiles {
    /// A line naming what was compared: `base → head`.
    pub compared: String,
    /// The whole comparison's differential flame graph.
    pub flame_graph: Option<Link>,
    /// Each benchmark's differential flame graph, by benchmark name.
    pub benchmark_flame_graphs: Vec<(String, Link)>,
    /// The files of the comparison as a whole (bench.json, runs.json, each
    /// run's recording).
    pub files: Vec<Link>,
    /// Each benchmark's files (its profile in each run), by benchmark name.
    pub benchmark_files: Vec<(String, Vec<Link>)>,
}

/// Width of the plots, pixels (they shrink with the page).
const PLOT_WIDTH: u32 = 1100;

/// `text` with `&`, `<`, `>`, `"` and `'` escaped: safe in an element and
/// in a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            // Characters XML 1.0 forbids (a control character in a name).
            character if (character as u32) < 0x20 && !matches!(character, '\t' | '\n' | '\r') => {
                escaped.push('\u{FFFD}')
            }
            character => escaped.push(character),
        }
    }
    escaped
}

/// A link from a page in the directory `from` to the file `to`, labelled
/// with the relative path.
pub fn relative_link(from: &std::path::Path, to: &std::path::Path) -> Link {
    Link { href: relative_href(from, to), label: relative_path(from, to, false) }
}

/// The path `to` as a relative, percent-encoded URL from the directory
/// `from` (both made absolute against the working directory, `.` and `..`
/// resolved as written).
pub fn relative_href(from: &std::path::Path, to: &std::path::Path) -> String {
    relative_path(from, to, true)
}

fn relative_path(from: &std::path::Path, to: &std::path::Path, encode: bool) -> String {
    use std::path::Component;
    let absolute = |path: &std::path::Path| {
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(path)
        };
        let mut parts: Vec<std::ffi::OsString> = Vec::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    parts.pop();
                }
                Component::Normal(part) => parts.push(part.to_os_string()),
                _ => {}
            }
        }
        parts
    };
    let (from, to) = (absolute(from), absolute(to));
    let common = from.iter().zip(&to).take_while(|(left, right)| left == right).count();
    let mut segments: Vec<String> = std::iter::repeat_n("..".to_string(), from.len() - common).collect();
    if !encode {
        segments.extend(to[common..].iter().map(|part| part.to_string_lossy().into_owned()));
        return if segments.is_empty() { ".".to_string() } else { segments.join("/") };
    }
    for part in &to[common..] {
        let mut encoded = String::new();
        for byte in part.as_encoded_bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(byte) {
                encoded.push(*byte as char);
            } else {
                let _ = write!(encoded, "%{byte:02X}");
            }
        }
        segments.push(encoded);
    }
    if segments.is_empty() { ".".to_string() } else { segments.join("/") }
}

/// The verdict's word and its CSS class.
fn verdict_badge(verdict: Verdict) -> String {
    let class = match verdict {
        Verdict::Regressed => "regressed",
        Verdict::Improved => "improved",
        Verdict::Unchanged => "noise",
        Verdict::Undecided => "undecided",
    };
    format!("<span class=\"verdict {class}\">{}</span>", escape(verdict.name()))
}

const STYLE: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; margin: 0 auto; max-width: 1180px;
  padding: 12px 24px 48px; color: #222; line-height: 1.4; }
h1 { font-size: 1.45em; margin: 8px 0 4px; }
h2 { font-size: 1.25em; margin: 32px 0 6px; border-top: 1px solid #ddd; padding-top: 16px; }
h3 { font-size: 1.05em; margin: 20px 0 6px; }
p.compared, p.note, figcaption, .small { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
td.number { text-align: right; white-space: nowrap; }
.verdict { font-weight: 600; padding: 1px 7px; border-radius: 9px; white-space: nowrap; }
.verdict.regressed { background: #fde0dc; color: #a50e0e; }
.verdict.improved { background: #dcf5e3; color: #0b6b2b; }
.verdict.noise { background: #eeeeee; color: #444; }
.verdict.undecided { background: #fff3c4; color: #7a5a00; }
figure { margin: 8px 0 16px; }
figure svg { max-width: 100%; height: auto; display: block; }
img.flamegraph { max-width: 100%; border: 1px solid #ddd; }
code { font-size: 0.92em; background: #f5f5f5; padding: 0 3px; border-radius: 3px; }
div.function { margin: 12px 0 20px; padding-left: 12px; border-left: 3px solid #ddd; }
div.function h4 { margin: 4px 0; font-size: 1em; }
ul.files { columns: 2; font-size: 0.88em; }
";

/// The page: the table of benchmarks, then each benchmark (or the whole
/// profile) with its plots, functions, flame graphs and files; at most
/// `limit` functions per benchmark.
pub fn page(comparison: &SuiteComparison, root: &SourceRoot, limit: usize, files: &PageFiles) -> String {
    let mut html = String::new();
    let regressed = comparison.benchmarks.iter().filter(|benchmark| benchmark.verdict() == Verdict::Regressed).count();
    let title = match &comparison.whole {
        Some(whole) => format!("v8inline: profile {}", profile_verdict(whole).name()),
        None => format!("v8inline: {regressed} of {} benchmarks regressed beyond noise", comparison.benchmarks.len()),
    };
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    if !files.compared.is_empty() {
        let _ = writeln!(html, "<p class=\"compared\">{}</p>", escape(&files.compared));
    }
    if comparison.whole.is_none() {
        verdict_table(&mut html, comparison);
    }
    let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(&runs_note(comparison)));
    if let Some(link) = &files.flame_graph {
        let _ = writeln!(
            html,
            "<p>Differential flame graph of the whole run (red: grew, blue: shrank): <a href=\"{}\">{}</a></p>",
            escape(&link.href),
            escape(&link.label)
        );
    }
    for (index, benchmark) in comparison.benchmarks.iter().enumerate() {
        benchmark_section(&mut html, comparison, benchmark, index, root, limit, files);
    }
    if let Some(whole) = &comparison.whole {
        let _ = writeln!(
            html,
            "<section class=\"profile\">\n<h2>The whole profile: {}</h2>\n<p>{:.0} → {:.0} samples.</p>",
            verdict_badge(profile_verdict(whole)),
            whole.base_samples,
            whole.head_samples
        );
        for note in render::matching_notes(whole) {
            let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(&note));
        }
        functions(&mut html, whole, root, limit);
        html.push_str("</section>\n");
    }
    if !files.files.is_empty() {
        html.push_str("<h2 id=\"files\">Files</h2>\n");
        run_flame_graphs(&mut html, &files.files);
        let _ = writeln!(html, "<details>\n<summary>{} files</summary>", files.files.len());
        link_list(&mut html, &files.files);
        html.push_str("</details>\n");
    }
    html.push_str("</body>\n</html>\n");
    html
}

fn profile_verdict(profile: &ProfileComparison) -> Verdict {
    if profile.regressed() { Verdict::Regressed } else { Verdict::Unchanged }
}

/// How many runs per side and how they were combined (the markdown's note).
fn runs_note(comparison: &SuiteComparison) -> String {
    if !comparison.across_runs() {
        return format!("Note: {}.", render::ONE_RUN_NOTE);
    }
    render::runs_note(comparison)
}

fn verdict_table(html: &mut String, comparison: &SuiteComparison) {
    html.push_str(
        "<table class=\"verdicts\">\n<thead><tr><th>Benchmark</th><th>Base</th><th>Head</th><th>Change</th>\
         <th>Verdict</th></tr></thead>\n<tbody>\n",
    );
    for (index, row) in render::verdict_rows(comparison).into_iter().enumerate() {
        let VerdictRow { name, base, head, change, verdict, regressed_by, forecast } = row;
        let regressed_by = regressed_by
            .map(|reason| format!(": <code>{}</code>'s {}", escape(&reason.function), escape(&reason.change)));
        let forecast = forecast.map(|forecast| format!(" <span class=\"small\">{}</span>", escape(&forecast)));
        let _ = writeln!(
            html,
            "<tr><td><a href=\"#benchmark-{}\">{}</a></td><td class=\"number\">{}</td><td class=\"number\">{}</td>\
             <td>{}</td><td>{}{}{}</td></tr>",
            index + 1,
            escape(&name),
            escape(&base),
            escape(&head),
            escape(&change),
            verdict_badge(verdict),
            regressed_by.unwrap_or_default(),
            forecast.unwrap_or_default()
        );
    }
    for unmatched in &comparison.unmatched {
        let side = if unmatched.in_head { "head" } else { "base" };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td></td><td></td><td></td><td>only in {side}</td></tr>",
            escape(&unmatched.name)
        );
    }
    html.push_str("</tbody>\n</table>\n");
}

fn benchmark_section(
    html: &mut String,
    comparison: &SuiteComparison,
    benchmark: &BenchmarkComparison,
    index: usize,
    root: &SourceRoot,
    limit: usize,
    files: &PageFiles,
) {
    let _ = writeln!(
        html,
        "<section class=\"benchmark\" id=\"benchmark-{}\">\n<h2>{} {}</h2>\n<p>{}</p>",
        index + 1,
        escape(&benchmark.name),
        verdict_badge(benchmark.verdict()),
        escape(&render::time_text(benchmark, comparison.round_cost))
    );
    if let Some((plot, caption)) = benchmark_plot(benchmark) {
        figure(html, "benchmark-plot", &plot, &caption);
    } else {
        html.push_str("<p class=\"note\">No time per iteration on both sides: nothing to plot.</p>\n");
    }
    for note in render::matching_notes(&benchmark.profile) {
        let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(&note));
    }
    functions(html, &benchmark.profile, root, limit);
    if let Some((_, link)) = files.benchmark_flame_graphs.iter().find(|(name, _)| *name == benchmark.name) {
        let _ = writeln!(
            html,
            "<h3>Differential flame graph</h3>\n<p class=\"small\">Head's stacks, red where they grew and blue where \
             they shrank against base; <a href=\"{href}\">open it</a> to search and zoom.</p>\n\
             <a href=\"{href}\"><img class=\"flamegraph\" src=\"{href}\" alt=\"differential flame graph of {name}\" \
             /></a>",
            href = escape(&link.href),
            name = escape(&benchmark.name)
        );
    }
    if let Some((_, links)) = files.benchmark_files.iter().find(|(name, _)| *name == benchmark.name) {
        run_flame_graphs(html, links);
    }
    if let Some((_, links)) = files.benchmark_files.iter().find(|(name, _)| *name == benchmark.name)
        && !links.is_empty()
    {
        let _ = writeln!(html, "<details>\n<summary>This benchmark's files ({})</summary>", links.len());
        link_list(html, links);
        html.push_str("</details>\n");
    }
    html.push_str("</section>\n");
}

/// The flame graphs `record` drew of each run (`flamegraph.svg`), in
/// sight rather than among the files.
fn run_flame_graphs(html: &mut String, links: &[Link]) {
    let graphs: Vec<&Link> = links.iter().filter(|link| link.label.ends_with("flamegraph.svg")).collect();
    if graphs.is_empty() {
        return;
    }
    let shown: Vec<String> =
        graphs.iter().map(|link| format!("<a href=\"{}\">{}</a>", escape(&link.href), escape(&link.label))).collect();
    let _ = writeln!(html, "<p class=\"small\">Each run's flame graph, as record drew it: {}</p>", shown.join(", "));
}

fn link_list(html: &mut String, links: &[Link]) {
    html.push_str("<ul class=\"files\">\n");
    for link in links {
        let _ = writeln!(html, "<li><a href=\"{}\">{}</a></li>", escape(&link.href), escape(&link.label));
    }
    html.push_str("</ul>\n");
}

fn figure(html: &mut String, class: &str, plot: &IntervalPlot, caption: &str) {
    match interval_plot_svg(plot, PLOT_WIDTH) {
        Ok(svg) => {
            let _ = writeln!(
                html,
                "<figure class=\"{class}\">\n{}\n<figcaption>{}</figcaption>\n</figure>",
                svg.trim(),
                escape(caption)
            );
        }
        Err(error) => {
            let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(&error.to_string()));
        }
    }
}

/// A change as a percentage: 0.05 → 5.
fn percent(value: f64) -> f64 {
    value * 100.0
}

/// Each duet round's change, head/base − 1, in percent.
fn round_changes(pairs: &[RunPair]) -> Vec<f64> {
    pairs.iter().filter(|pair| pair.base > 0.0).map(|pair| percent(pair.head / pair.base - 1.0)).collect()
}

fn change_interval(change: &RunsChange) -> Interval {
    Interval {
        estimate: percent(change.change),
        low: percent(change.interval.low),
        high: percent(change.interval.high),
    }
}

fn threshold_band(threshold: f64, what: &str) -> Band {
    let threshold = percent(threshold);
    Band { low: -threshold, high: threshold, label: format!("±{} % {what}", trim_number(threshold)) }
}

/// `5`, `2.5`: a percentage without trailing zeros.
fn trim_number(value: f64) -> String {
    let text = format!("{value:.1}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The benchmark's plot: its runs' values in one panel, the change with
/// its interval (and each duet round's ratio) against ±threshold in the
/// other; with a caption that says how to read it.
fn benchmark_plot(benchmark: &BenchmarkComparison) -> Option<(IntervalPlot, String)> {
    if let Some(runs) = &benchmark.runs {
        return Some((runs_plot(runs), runs_caption(runs)));
    }
    let time = benchmark.time?;
    let (base, head) = (benchmark.base_timing?, benchmark.head_timing?);
    let (base_value, head_value) = (time.statistic.of(base), time.statistic.of(head));
    let (divisor, unit) = time_unit(&[base_value, head_value]);
    let name = time.statistic.name();
    let plot = IntervalPlot {
        panels: vec![
            Panel {
                axis_title: format!("{name} time per iteration ({unit})"),
                rows: vec![
                    Row {
                        label: "base run".into(),
                        tone: Tone::Base,
                        points: vec![base_value / divisor],
                        interval: None,
                    },
                    Row {
                        label: "head run".into(),
                        tone: Tone::Head,
                        points: vec![head_value / divisor],
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
                    points: Vec::new(),
                    interval: Some(Interval {
                        estimate: percent(time.relative),
                        low: percent(time.relative),
                        high: percent(time.relative),
                    }),
                }],
                band: Some(threshold_band(time.noise, "noise floor")),
                reference: Some(0.0),
            },
        ],
    };
    let caption = format!(
        "One run per side: left, each side's {name} time per iteration; right, the change against the noise floor \
         (±{} %): beyond it the benchmark regressed or improved.",
        trim_number(percent(time.noise))
    );
    Some((plot, caption))
}

fn runs_plot(runs: &RunsTime) -> IntervalPlot {
    let mut all: Vec<f64> = runs.base.iter().chain(&runs.head).copied().collect();
    if let Some(guard) = &runs.guard {
        all.extend(guard.base.iter().chain(&guard.head));
    }
    let (divisor, unit) = time_unit(&all);
    let scaled = |values: &[f64]| values.iter().map(|value| value / divisor).collect::<Vec<f64>>();
    let mean = |values: &[f64]| {
        let mean = geometric_mean(values) / divisor;
        Some(Interval { estimate: mean, low: mean, high: mean })
    };
    let short = match runs.statistic {
        Statistic::Minimum => "fastest",
        Statistic::Cpu => "CPU",
        Statistic::Median => "median",
        Statistic::Mean => "mean",
    };
    let mut time_rows = vec![
        Row {
            label: format!("base, {short}"),
            tone: Tone::Base,
            points: scaled(&runs.base),
            interval: mean(&runs.base),
        },
        Row {
            label: format!("head, {short}"),
            tone: Tone::Head,
            points: scaled(&runs.head),
            interval: mean(&runs.head),
        },
    ];
    let mut change_rows = Vec::new();
    if let Some(pairs) = &runs.pairs {
        change_rows.push(Row {
            label: format!("rounds, {short}"),
            tone: Tone::Change,
            points: round_changes(pairs),
            interval: None,
        });
    }
    change_rows.push(Row {
        label: format!("change, {short}"),
        tone: Tone::Change,
        points: Vec::new(),
        interval: Some(change_interval(&runs.change)),
    });
    if let Some(guard) = &runs.guard {
        time_rows.push(Row {
            label: "base, CPU".into(),
            tone: Tone::Base,
            points: scaled(&guard.base),
            interval: mean(&guard.base),
        });
        time_rows.push(Row {
            label: "head, CPU".into(),
            tone: Tone::Head,
            points: scaled(&guard.head),
            interval: mean(&guard.head),
        });
        if let Some(pairs) = &guard.pairs {
            change_rows.push(Row {
                label: "rounds, CPU".into(),
                tone: Tone::Change,
                points: round_changes(pairs),
                interval: None,
            });
        }
        change_rows.push(Row {
            label: "change, CPU".into(),
            tone: Tone::Change,
            points: Vec::new(),
            interval: Some(change_interval(&guard.change)),
        });
    }
    IntervalPlot {
        panels: vec![
            Panel { axis_title: format!("time per iteration ({unit})"), rows: time_rows, band: None, reference: None },
            Panel {
                axis_title: "change, head against base (%)".into(),
                rows: change_rows,
                band: Some(threshold_band(runs.change.threshold, "threshold")),
                reference: Some(0.0),
            },
        ],
    }
}

fn runs_caption(runs: &RunsTime) -> String {
    let rounds = if runs.pairs.is_some() { " and each duet round's ratio head/base (\"rounds\")" } else { "" };
    let guard = if runs.guard.is_some() {
        "; the CPU time per iteration is judged beside the fastest timing, as its guard"
    } else {
        ""
    };
    format!(
        "Left: each run's {} time per iteration (a dot per run, in run order from the top; the bar is the geometric \
         mean). Right: the change{rounds}, and the estimate with its 95 % interval against the ±{} % threshold: \
         wholly above it regressed, wholly below improved, wholly inside within noise, else undecided{guard}.",
        runs.statistic.name(),
        trim_number(percent(runs.change.threshold))
    )
}

/// A function's plot over runs: its own time (or self share) in each run,
/// and the change the benchmark would show if it alone had changed.
fn function_plot(runs: &FunctionRuns) -> IntervalPlot {
    let (values, axis_title) = if runs.per_iteration {
        let (divisor, unit) = time_unit(&runs.base_own.iter().chain(&runs.head_own).copied().collect::<Vec<f64>>());
        let scaled = |values: &[f64]| values.iter().map(|value| value / divisor).collect::<Vec<f64>>();
        ((scaled(&runs.base_own), scaled(&runs.head_own)), format!("own CPU time per iteration ({unit})"))
    } else {
        let scaled = |values: &[f64]| values.iter().map(|value| percent(*value)).collect::<Vec<f64>>();
        ((scaled(&runs.base_own), scaled(&runs.head_own)), "self share of the samples (%)".to_string())
    };
    let mut change_rows = Vec::new();
    if let Some(pairs) = &runs.pairs {
        change_rows.push(Row {
            label: "rounds".into(),
            tone: Tone::Change,
            points: round_changes(pairs),
            interval: None,
        });
    }
    change_rows.push(Row {
        label: "change".into(),
        tone: Tone::Change,
        points: Vec::new(),
        interval: Some(change_interval(&runs.change)),
    });
    IntervalPlot {
        panels: vec![
            Panel {
                axis_title,
                rows: vec![
                    Row { label: "base runs".into(), tone: Tone::Base, points: values.0, interval: None },
                    Row { label: "head runs".into(), tone: Tone::Head, points: values.1, interval: None },
                ],
                band: None,
                reference: None,
            },
            Panel {
                axis_title: "benchmark's change if only this function changed (%)".into(),
                rows: change_rows,
                band: Some(threshold_band(runs.change.threshold, "threshold")),
                reference: Some(0.0),
            },
        ],
    }
}

/// The functions whose own time moved beyond noise (at most `limit`), each
/// with its plot over runs, location and V8's choices; else a word that
/// none did, and the largest moves in a small table.
fn functions(html: &mut String, profile: &ProfileComparison, root: &SourceRoot, limit: usize) {
    let explaining: Vec<&FunctionChange> = profile.explaining().take(limit).collect();
    html.push_str("<h3>Functions whose own time moved</h3>\n");
    if explaining.is_empty() {
        html.push_str("<p class=\"note\">None beyond noise.</p>\n");
    }
    for change in &explaining {
        let location = render::location_text(change, root);
        let _ = writeln!(
            html,
            "<div class=\"function\">\n<h4><code>{}</code>{} {}</h4>",
            escape(&render::name_with_inlining(change)),
            if location.is_empty() { String::new() } else { format!(" at <code>{}</code>", escape(&location)) },
            verdict_badge_text(&render::function_verdict(change), change.self_change.verdict)
        );
        let _ = writeln!(
            html,
            "<p>Self time {} → {} of the samples: {}.</p>",
            escape(&render::share(change.base_self_share)),
            escape(&render::share(change.head_self_share)),
            escape(&render::self_change_text(change))
        );
        let mut notes = Vec::new();
        match &change.across_runs {
            Some(runs) => notes.push(format!("V8 ran it: {}", runs.choices.summary())),
            None => {
                let (base, head) = change.ran_as_mix();
                let side = |mix: String| if mix.is_empty() { "not run".to_string() } else { mix };
                notes.push(format!("V8 ran it: base {}; head {}", side(base), side(head)));
            }
        }
        notes.extend(render::ran_as_notes(profile, change));
        html.push_str("<ul>\n");
        for note in notes {
            let _ = writeln!(html, "<li>{}</li>", escape(&note));
        }
        html.push_str("</ul>\n");
        if let Some(runs) = &change.across_runs {
            figure(
                html,
                "function-plot",
                &function_plot(runs),
                "Left: this function's own time in each run of each side. Right: the change of the benchmark if this \
                 function alone had changed, run by run, with its 95 % interval against the threshold (the own-time \
                 rule).",
            );
        }
        html.push_str("</div>\n");
    }
    // The other moves, as the text report lists them.
    let others: Vec<&FunctionChange> =
        render::shown_changes(profile, limit).into_iter().filter(|change| !change.beyond_noise()).collect();
    if !others.is_empty() {
        html.push_str(
            "<details>\n<summary>Other functions whose share moved (within noise)</summary>\n<table>\n<thead><tr>\
             <th>Self Δ</th><th>Self base → head</th><th>Function</th><th>Location</th></tr></thead>\n<tbody>\n",
        );
        for change in others {
            let _ = writeln!(
                html,
                "<tr><td class=\"number\">{}</td><td class=\"number\">{} → {}</td><td><code>{}</code></td>\
                 <td><code>{}</code></td></tr>",
                escape(&render::points(change.self_change.change)),
                escape(&render::share(change.base_self_share)),
                escape(&render::share(change.head_self_share)),
                escape(&render::name_with_inlining(change)),
                escape(&render::location_text(change, root))
            );
        }
        html.push_str("</tbody>\n</table>\n</details>\n");
    }
}

/// A function's verdict as its row says it (`regressed, V8's choice`),
/// coloured by its verdict.
fn verdict_badge_text(text: &str, verdict: Verdict) -> String {
    let class = match verdict {
        Verdict::Regressed => "regressed",
        Verdict::Improved => "improved",
        Verdict::Unchanged => "noise",
        Verdict::Undecided => "undecided",
    };
    format!("<span class=\"verdict {class}\">{}</span>", escape(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_escaped() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(escape("a\u{1}b"), "a\u{FFFD}b");
    }

    #[test]
    fn a_page_shows_each_run_s_flame_graph_and_escapes_names() {
        use crate::output::compare::profile::SideProfile;
        use crate::output::compare::{compare_benchmark, compare_profiles};
        let name = "<b>bold</b> & \"quoted\"";
        let benchmark =
            compare_benchmark(name, None, None, compare_profiles(&SideProfile::default(), &SideProfile::default()));
        let suite = SuiteComparison {
            benchmarks: vec![benchmark],
            unmatched: Vec::new(),
            whole: None,
            base_runs: 1,
            head_runs: 1,
            round_cost: Default::default(),
        };
        let graph = Link { href: "base/run%2001/flamegraph.svg".into(), label: "base/run 01/flamegraph.svg".into() };
        let files = PageFiles { benchmark_files: vec![(name.to_string(), vec![graph])], ..Default::default() };
        let page = page(&suite, &SourceRoot::new(std::path::Path::new("/")), 3, &files);
        let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
        let document = roxmltree::Document::parse_with_options(&page, options).unwrap();
        let heading = document.descendants().find(|node| node.has_tag_name("h2")).unwrap();
        assert_eq!(heading.first_child().and_then(|node| node.text()), Some("<b>bold</b> & \"quoted\" "));
        assert!(
            page.contains(
                "<p class=\"small\">Each run's flame graph, as record drew it: <a href=\"base/run%2001/flamegraph.svg\">\
                 base/run 01/flamegraph.svg</a></p>"
            ),
            "{page}"
        );
        assert!(page.contains("No time per iteration on both sides: nothing to plot."));
    }

    #[test]
    fn hrefs_are_relative_and_encoded() {
        use std::path::Path;
        assert_eq!(
            relative_href(Path::new("/out"), Path::new("/out/base/run-01/profile.folded")),
            "base/run-01/profile.folded"
        );
        assert_eq!(relative_href(Path::new("/out/page"), Path::new("/out/diff a#1.svg")), "../diff%20a%231.svg");
        assert_eq!(relative_href(Path::new("/a/b"), Path::new("/a/./c/../d")), "../d");
    }
}
