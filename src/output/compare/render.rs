//! A comparison written out: an aligned text report, a markdown PR
//! comment under GitHub's size limit, and GitHub Actions annotations on
//! the functions whose own time grew.

use std::fmt::Write as _;

use super::across::{FunctionRuns, geometric_mean, median};
use super::noise::{Statistic, TimeChange, Timing, Verdict};
use super::runs::{ChangeMethod, RoundCost, RunsChange, decision_forecast};
use super::{BenchmarkComparison, FunctionChange, ProfileComparison, SuiteComparison};
use crate::output::annotations::{GithubAnnotation, Severity, SourceRoot, markdown_cell};

/// GitHub's limit on a pull request comment's body, in characters.
pub const MARKDOWN_LIMIT: usize = 65_536;

/// A share change in percentage points: `+1.25 pp`.
fn points(change: f64) -> String {
    format!("{:+.2} pp", change * 100.0)
}

/// A share in percent with two decimals.
fn share(value: f64) -> String {
    format!("{:.2}%", value * 100.0)
}

/// A relative change: `+24.7%`.
fn relative(change: f64) -> String {
    format!("{:+.1}%", change * 100.0)
}

/// A p-value for people: `p = 0.178`, `p < 0.001`.
fn p_value(p: f64) -> String {
    if p < 0.001 { "p < 0.001".to_string() } else { format!("p = {p:.3}") }
}

/// Nanoseconds per iteration, three significant digits: `12.3 µs`.
pub fn duration(nanoseconds: f64) -> String {
    let (value, unit) = match nanoseconds.abs() {
        value if value >= 1e9 => (nanoseconds / 1e9, "s"),
        value if value >= 1e6 => (nanoseconds / 1e6, "ms"),
        value if value >= 1e3 => (nanoseconds / 1e3, "µs"),
        _ => (nanoseconds, "ns"),
    };
    let decimals = match value.abs() {
        value if value >= 100.0 => 0,
        value if value >= 10.0 => 1,
        _ => 2,
    };
    format!("{value:.decimals$} {unit}")
}

/// Where a function is for people and annotations: its script relative
/// to the source root when its recorded path is under it, else as keyed
/// (relative to its project root), and its first line.
fn location(change: &FunctionChange, root: &SourceRoot) -> Option<(String, Option<u32>)> {
    let keyed = change.function.file.as_deref()?;
    let file = change.script().and_then(|script| root.relative(script)).unwrap_or_else(|| keyed.to_string());
    Some((file, change.function.start.map(|start| start.line)))
}

fn location_text(change: &FunctionChange, root: &SourceRoot) -> String {
    match location(change, root) {
        Some((file, Some(line))) => format!("{file}:{line}"),
        Some((file, None)) => file,
        None => String::new(),
    }
}

/// `clampPart (inlined into versionKey)`.
fn name_with_inlining(change: &FunctionChange) -> String {
    let callers = change.inlined_into();
    match callers.as_slice() {
        [] => change.function.name.clone(),
        [caller] => format!("{} (inlined into {caller})", change.function.name),
        [caller, rest @ ..] => format!("{} (inlined into {caller} and {} more)", change.function.name, rest.len()),
    }
}

/// `+16.20 pp ± 1.00 pp`.
fn self_change_text(change: &FunctionChange) -> String {
    if let Some(runs) = &change.across_runs {
        return format!("{}; {}", points(change.self_change.change), own_time_text(runs));
    }
    let share = format!("{} ± {:.2} pp", points(change.self_change.change), change.self_change.noise * 100.0);
    match change.self_change.own_time {
        // The share alone is within noise: say what was beyond it.
        Some(own) => format!(
            "{share}; own CPU time per iteration {} of the benchmark's (noise ± {:.1}%)",
            relative(own.relative),
            own.noise * 100.0
        ),
        None => share,
    }
}

/// `own CPU time per iteration 0.41 ms → 7.52 ms, +19.8% of the
/// benchmark (interval …)`, or for shares, the share's change over runs.
fn own_time_text(runs: &FunctionRuns) -> String {
    let what = if runs.per_iteration {
        format!(
            "own CPU time per iteration {} → {} (medians of runs)",
            duration(median(&runs.base_own)),
            duration(median(&runs.head_own))
        )
    } else {
        format!("self share {} → {} (medians of runs)", share(median(&runs.base_own)), share(median(&runs.head_own)))
    };
    format!("{what}, {} of the benchmark", runs_change_text(&runs.change))
}

/// A function's verdict as its row says it: V8's choice when the runs
/// that ran it alike do not show its change.
fn function_verdict(change: &FunctionChange) -> String {
    match &change.across_runs {
        Some(runs) if runs.explained_by_choices => format!("{}, V8's choice", runs.verdict.name()),
        _ => change.self_change.verdict.name().to_string(),
    }
}

/// The lines under a function's row: how V8 ran it differently between
/// base and head, and where its runs disagree.
fn ran_as_notes(profile: &ProfileComparison, change: &FunctionChange) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(mix) = profile.ran_as_change(change) {
        notes.push(mix);
    }
    if let Some(disagreement) = change.across_runs.as_ref().and_then(|runs| runs.choices.describe()) {
        let explained = change.across_runs.as_ref().is_some_and(|runs| runs.explained_by_choices);
        notes.push(if explained {
            format!("{disagreement}; the runs that ran it alike do not show the change: not a regression")
        } else {
            disagreement
        });
    }
    notes
}

/// How functions were matched across scripts, and which scripts were not.
fn matching_notes(profile: &ProfileComparison) -> Vec<String> {
    let mut notes = Vec::new();
    let scripts = &profile.matching.scripts;
    if !scripts.is_empty() {
        let functions: usize = scripts.iter().map(|script| script.functions).sum();
        let mut shown: Vec<String> =
            scripts.iter().take(3).map(|script| format!("base's {} as head's {}", script.base, script.head)).collect();
        if scripts.len() > 3 {
            shown.push(format!("{} more", scripts.len() - 3));
        }
        notes.push(format!(
            "{functions} functions matched by name across {} scripts whose paths differ (another checkout without its \
             project root, or one side read through a source map): {}",
            scripts.len(),
            shown.join(", ")
        ));
    }
    let unmatched: Vec<String> = profile
        .matching
        .unmatched_scripts
        .iter()
        .map(|script| {
            format!(
                "{} {} ({} functions)",
                if script.in_head { "head's" } else { "base's" },
                script.script,
                script.functions
            )
        })
        .collect();
    if !unmatched.is_empty() {
        notes.push(format!(
            "could not match these scripts to the other side's (they are shown as new or gone): {}",
            unmatched.join(", ")
        ));
    }
    notes
}

/// `465 µs → 568 µs median per iteration, +22.2% (noise ± 10.0%); mean
/// +7.7% (Welch p = 0.18): regressed`.
fn time_text(benchmark: &BenchmarkComparison, round_cost: RoundCost) -> String {
    if let Some(runs) = &benchmark.runs {
        let forecast = decision_forecast(&runs.change, round_cost)
            .filter(|_| benchmark.verdict() == Verdict::Undecided)
            .map(|forecast| format!("; {forecast}"))
            .unwrap_or_default();
        // A fastest timing is judged with the CPU time beside it.
        let guard = runs
            .guard
            .as_ref()
            .map(|guard| {
                format!(
                    "; CPU {} → {}, {}",
                    duration(geometric_mean(&guard.base)),
                    duration(geometric_mean(&guard.head)),
                    runs_change_text(&guard.change)
                )
            })
            .unwrap_or_default();
        return format!(
            "{} → {} runs{}, {} → {} {} per iteration (geometric means of runs), {}{guard}: {}{forecast}",
            runs.base.len(),
            runs.head.len(),
            if runs.change.paired { " in duets" } else { "" },
            duration(geometric_mean(&runs.base)),
            duration(geometric_mean(&runs.head)),
            runs.statistic.name(),
            runs_change_text(&runs.change),
            verdict_with_reason(benchmark)
        );
    }
    match (benchmark.base_timing, benchmark.head_timing, benchmark.time) {
        (Some(base), Some(head), Some(time)) => {
            let statistic = |timing: Timing| time.statistic.of(timing);
            let wall_median = match (time.statistic, base.median, head.median) {
                (Statistic::Cpu, Some(base_median), Some(head_median)) if base_median > 0.0 => {
                    format!("; wall median {},", relative(head_median / base_median - 1.0))
                }
                (Statistic::Cpu, ..) => ";".to_string(),
                _ => String::new(),
            };
            let mean = if time.statistic != Statistic::Mean {
                let separator = if wall_median.is_empty() { ";" } else { "" };
                format!(
                    "{wall_median}{separator} mean {} (Welch {})",
                    relative(time.mean_relative),
                    p_value(time.p_value)
                )
            } else {
                format!(" (Welch {})", p_value(time.p_value))
            };
            format!(
                "{} → {} {} per iteration, {} (noise ± {:.1}%){mean}: {}",
                duration(statistic(base)),
                duration(statistic(head)),
                time.statistic.name(),
                relative(time.relative),
                time.noise * 100.0,
                time.verdict.name()
            )
        }
        _ => format!("no time per iteration on both sides; profile: {}", profile_verdict(&benchmark.profile).name()),
    }
}

/// `+2.4% (interval -3.1% to +8.0%, minimum detectable change 6.2%)`.
fn runs_change_text(change: &RunsChange) -> String {
    format!(
        "{} (interval {} to {}, minimum detectable change {:.1}%)",
        relative(change.change),
        relative(change.interval.low),
        relative(change.interval.high),
        change.minimum_detectable * 100.0
    )
}

/// Each run's value: `4.98 ms, 5.24 ms, 7.60 ms`.
fn run_values(values: &[f64]) -> String {
    values.iter().map(|value| duration(*value)).collect::<Vec<_>>().join(", ")
}

/// Said wherever a verdict is, when a side has one run.
pub const ONE_RUN_NOTE: &str = "one run per side: the noise between runs (a neighbour slowing the machine for a \
    second, V8 deciding differently in another process) is not seen; `v8inline bench` runs several";

fn profile_verdict(profile: &ProfileComparison) -> Verdict {
    if profile.regressed() { Verdict::Regressed } else { Verdict::Unchanged }
}

/// The rows shown for a profile: the functions beyond noise, then others
/// whose shares moved, `limit` in all.
fn shown_changes(profile: &ProfileComparison, limit: usize) -> Vec<&FunctionChange> {
    const ROUNDING: f64 = 1e-6;
    profile
        .changes
        .iter()
        .filter(|change| change.self_change.change.abs() > ROUNDING || change.inclusive_change().abs() > ROUNDING)
        .take(limit)
        .collect()
}

/// `text` cut to `limit` characters, `…` ending a cut one: native symbols
/// run to hundreds.
fn shortened(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(limit - 1).collect();
    cut.push('…');
    cut
}

/// The comparison as aligned text: per benchmark (or for the whole
/// profile) its verdict and the `limit` first function changes.
pub fn text(comparison: &SuiteComparison, root: &SourceRoot, limit: usize) -> String {
    let mut text = String::new();
    for benchmark in &comparison.benchmarks {
        let _ = writeln!(text, "benchmark {:?}: {}", benchmark.name, time_text(benchmark, comparison.round_cost));
        if let Some(runs) = &benchmark.runs {
            let name = runs.statistic.name();
            let _ = writeln!(text, "  {name} per iteration of each run: base {}", run_values(&runs.base));
            let _ = writeln!(text, "  {name} per iteration of each run: head {}", run_values(&runs.head));
        }
        for note in matching_notes(&benchmark.profile) {
            let _ = writeln!(text, "  {note}");
        }
        text.push_str(&text_table(&benchmark.profile, root, limit));
        text.push('\n');
    }
    for unmatched in &comparison.unmatched {
        let side = if unmatched.in_head { "head" } else { "base" };
        let _ = writeln!(text, "benchmark {:?}: only in {side}", unmatched.name);
    }
    if let Some(whole) = &comparison.whole {
        let _ = writeln!(
            text,
            "profile: {:.0} → {:.0} samples; {}",
            whole.base_samples,
            whole.head_samples,
            profile_verdict(whole).name()
        );
        for note in matching_notes(whole) {
            let _ = writeln!(text, "  {note}");
        }
        text.push_str(&text_table(whole, root, limit));
    }
    if !comparison.across_runs() {
        let _ = writeln!(text, "note: {ONE_RUN_NOTE}");
    }
    text
}

fn text_table(profile: &ProfileComparison, root: &SourceRoot, limit: usize) -> String {
    let changes = shown_changes(profile, limit);
    let rows: Vec<[String; 8]> = changes
        .iter()
        .map(|change| {
            [
                points(change.self_change.change),
                // Over runs, the run-to-run noise of the share; else the
                // samples' binomial noise.
                match &change.across_runs {
                    Some(runs) if runs.share_noise.is_finite() => format!("±{:.2}", runs.share_noise * 100.0),
                    Some(_) => "±∞".to_string(),
                    None => format!("±{:.2}", change.self_change.noise * 100.0),
                },
                format!("{} → {}", share(change.base_self_share), share(change.head_self_share)),
                points(change.inclusive_change()),
                function_verdict(change),
                shortened(&name_with_inlining(change), 100),
                location_text(change, root),
                String::new(),
            ]
        })
        .collect();
    let header =
        ["self Δ", "noise", "self base → head", "incl Δ", "verdict", "function", "location", ""].map(str::to_string);
    let mut widths = header.clone().map(|cell| cell.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    if rows.is_empty() {
        text.push_str("  no function's share changed\n");
        return text;
    }
    for (row, change) in std::iter::once((&header, None)).chain(rows.iter().zip(changes.iter().map(Some))) {
        let mut line = String::from("  ");
        for (column, (cell, width)) in row.iter().zip(widths).enumerate() {
            if column >= 4 {
                let _ = write!(line, "{cell:<width$}  ");
            } else {
                let _ = write!(line, "{cell:>width$}  ");
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
        if let Some(change) = change {
            // How V8 ran it at base and head, under a change beyond noise;
            // where its runs disagree, always.
            let notes = ran_as_notes(profile, change);
            let disagree = change.across_runs.as_ref().is_some_and(|runs| runs.choices.disagree());
            for note in notes.iter().filter(|_| change.beyond_noise() || disagree) {
                let _ = writeln!(text, "    {note}");
            }
            if let Some(runs) = change.across_runs.as_ref().filter(|_| change.beyond_noise()) {
                let _ = writeln!(text, "    {}", own_time_text(runs));
            }
        }
    }
    text
}

/// The verdict as a PR reader scans it.
fn verdict_cell(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Regressed => "🔴 regressed",
        Verdict::Improved => "🟢 improved",
        Verdict::Unchanged => "⚪ within noise",
        Verdict::Undecided => "🟡 undecided",
    }
}

/// A benchmark's verdict, with the function whose own time decided it
/// where its time alone did not: `regressed by `parse`'s own time +17.1%`.
fn verdict_with_reason(benchmark: &BenchmarkComparison) -> String {
    match own_time_reason(benchmark) {
        Some(reason) => format!("{} by {reason}", benchmark.verdict().name()),
        None => benchmark.verdict().name().to_string(),
    }
}

/// `` `parse`'s own time +17.1% ``: the function that regressed a
/// benchmark its time alone did not, and its own time's change (of the
/// benchmark's time, or of its share).
fn own_time_reason(benchmark: &BenchmarkComparison) -> Option<String> {
    let function = benchmark.regressed_by_function()?;
    let change = match &function.across_runs {
        Some(runs) if runs.per_iteration => format!("own time {}", relative(runs.change.change)),
        _ => format!("self share {}", points(function.self_change.change)),
    };
    Some(format!("`{}`'s {change}", markdown_cell(&function.function.name)))
}

/// The comparison as a pull request comment: a table of benchmarks (base,
/// head, change, verdict), the functions that explain each benchmark
/// beyond noise (at most `limit` each), the rest in a collapsed
/// `<details>`; never longer than [`MARKDOWN_LIMIT`].
pub fn markdown(comparison: &SuiteComparison, root: &SourceRoot, limit: usize) -> String {
    let mut text = String::new();
    let mut details: Vec<String> = Vec::new();
    if comparison.whole.is_none() {
        let regressed =
            comparison.benchmarks.iter().filter(|benchmark| benchmark.verdict() == Verdict::Regressed).count();
        let _ = writeln!(
            text,
            "### v8inline: {regressed} of {} benchmarks regressed beyond noise\n",
            comparison.benchmarks.len()
        );
        text.push_str("| Benchmark | Base | Head | Change | Verdict |\n|---|---:|---:|---:|---|\n");
        for benchmark in &comparison.benchmarks {
            let (base, head, change) = match &benchmark.runs {
                // Over runs: the figures the change is computed from (the
                // geometric means of the runs, whose ratio it is for a
                // mean of log ratios), the change with its interval.
                Some(runs) => (
                    duration(geometric_mean(&runs.base)),
                    duration(geometric_mean(&runs.head)),
                    format!(
                        "{} ({} to {}; detectable {:.1}%){}",
                        relative(runs.change.change),
                        relative(runs.change.interval.low),
                        relative(runs.change.interval.high),
                        runs.change.minimum_detectable * 100.0,
                        // The fastest timing's guard, which may decide.
                        runs.guard.as_ref().map_or_else(String::new, |guard| format!(
                            "; CPU {} ({} to {})",
                            relative(guard.change.change),
                            relative(guard.change.interval.low),
                            relative(guard.change.interval.high)
                        ))
                    ),
                ),
                None => {
                    // The statistic judged: CPU per iteration, else medians.
                    let statistic = benchmark.time.map_or(Statistic::Mean, |time| time.statistic);
                    let timing = |timing: Option<Timing>| {
                        timing.map(|timing| duration(statistic.of(timing))).unwrap_or_else(|| "–".into())
                    };
                    let change = benchmark
                        .time
                        .map(|time: TimeChange| format!("{} ± {:.1}%", relative(time.relative), time.noise * 100.0))
                        .unwrap_or_else(|| "–".into());
                    (timing(benchmark.base_timing), timing(benchmark.head_timing), change)
                }
            };
            let forecast = benchmark
                .runs
                .as_ref()
                .filter(|_| benchmark.verdict() == Verdict::Undecided)
                .and_then(|runs| decision_forecast(&runs.change, comparison.round_cost))
                .map(|forecast| format!(": {forecast}"))
                .unwrap_or_default();
            let reason = own_time_reason(benchmark).map(|reason| format!(": {reason}")).unwrap_or_default();
            let _ = writeln!(
                text,
                "| {} | {base} | {head} | {change} | {}{reason}{forecast} |",
                markdown_cell(&benchmark.name),
                verdict_cell(benchmark.verdict())
            );
        }
        for unmatched in &comparison.unmatched {
            let side = if unmatched.in_head { "head" } else { "base" };
            let _ = writeln!(text, "| {} | | | | only in {side} |", markdown_cell(&unmatched.name));
        }
        text.push('\n');
        if comparison.across_runs() {
            let duets = comparison
                .benchmarks
                .iter()
                .any(|benchmark| benchmark.runs.as_ref().is_some_and(|runs| runs.change.paired));
            // How the rounds were combined, where it was by ranks.
            let by_ranks = comparison.benchmarks.iter().find_map(|benchmark| {
                benchmark.runs.as_ref().filter(|runs| runs.change.method == ChangeMethod::HodgesLehmann)
            });
            let method = by_ranks.map(|runs| format!(" ({})", runs.change.method.name())).unwrap_or_default();
            let _ = writeln!(
                text,
                "{} → {} runs per side{}{}{method}; each change with its interval and the smallest change this \
                 comparison could have detected.\n",
                comparison.base_runs,
                comparison.head_runs,
                match comparison.round_cost.parallel_outputs {
                    1 => String::new(),
                    outputs => format!(" from {outputs} bench outputs"),
                },
                match (duets, comparison.round_cost.parallel_outputs) {
                    (false, _) => "",
                    (true, 1) => ", base and head at the same time in each round (duets), judged as pairs",
                    (true, _) => {
                        ", base and head at the same time in each round (duets), judged as pairs within each output"
                    }
                }
            );
        } else {
            let _ = writeln!(text, "_Note: {ONE_RUN_NOTE}._\n");
        }
        for benchmark in &comparison.benchmarks {
            for note in matching_notes(&benchmark.profile) {
                let _ = writeln!(text, "> {}: {}\n", markdown_cell(&benchmark.name), markdown_cell(&note));
            }
        }
        // Each benchmark beyond noise with the functions that explain it,
        // while the comment has room (a quarter is kept for the rest).
        for benchmark in &comparison.benchmarks {
            let explaining: Vec<&FunctionChange> = benchmark.profile.explaining().collect();
            let shown = limit.min(explaining.len());
            let mut section = String::new();
            if benchmark.verdict() != Verdict::Unchanged && shown > 0 {
                let _ = writeln!(
                    section,
                    "**{}**: {}\n",
                    markdown_cell(&benchmark.name),
                    markdown_cell(&time_text(benchmark, comparison.round_cost))
                );
                section.push_str(&markdown_functions(&benchmark.profile, &explaining[..shown], root));
                section.push('\n');
            }
            if !section.is_empty() && text.len() + section.len() <= MARKDOWN_LIMIT * 3 / 4 {
                text.push_str(&section);
                details.extend(markdown_rows(&explaining[shown..], root, Some(&benchmark.name)));
            } else {
                details.extend(markdown_rows(&explaining, root, Some(&benchmark.name)));
            }
        }
    }
    if let Some(whole) = &comparison.whole {
        let _ = writeln!(
            text,
            "### v8inline: profile {}\n\n{:.0} → {:.0} samples; functions whose own (self) share moved beyond noise:\n",
            profile_verdict(whole).name(),
            whole.base_samples,
            whole.head_samples
        );
        for note in matching_notes(whole) {
            let _ = writeln!(text, "> {}\n", markdown_cell(&note));
        }
        if !comparison.across_runs() {
            let _ = writeln!(text, "_Note: {ONE_RUN_NOTE}._\n");
        }
        let explaining: Vec<&FunctionChange> = whole.explaining().collect();
        if explaining.is_empty() {
            text.push_str("none.\n");
        } else {
            text.push_str(&markdown_functions(whole, &explaining[..explaining.len().min(limit)], root));
        }
        details.extend(markdown_rows(&explaining[explaining.len().min(limit)..], root, None));
    }
    if !details.is_empty() {
        let opening = "<details><summary>All other changes beyond noise</summary>\n\n\
                       | Benchmark | Self Δ | Self base → head | Own time per iteration | Function | Location |\n\
                       |---|---:|---:|---|---|---|\n";
        let closing = "\n</details>\n";
        let omitted_note = |count: usize| format!("\n{count} more rows not shown (GitHub's comment size limit).\n");
        let reserve = opening.len() + closing.len() + omitted_note(details.len()).len();
        if text.len() + reserve < MARKDOWN_LIMIT {
            text.push_str(opening);
            let mut shown = 0;
            for row in &details {
                if text.len() + row.len() + reserve > MARKDOWN_LIMIT {
                    break;
                }
                text.push_str(row);
                shown += 1;
            }
            if shown < details.len() {
                text.push_str(&omitted_note(details.len() - shown));
            }
            text.push_str(closing);
        }
    }
    if text.len() > MARKDOWN_LIMIT {
        // The main part alone past the limit (thousands of benchmarks): cut
        // at a line.
        let mut end = MARKDOWN_LIMIT - 80;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let end = text[..end].rfind('\n').map_or(end, |newline| newline + 1);
        text.truncate(end);
        text.push_str("\n… cut at GitHub's comment size limit.\n");
    }
    text
}

/// A table of functions that explain a change, each with how V8 ran it
/// when that changed (or its runs disagree).
fn markdown_functions(profile: &ProfileComparison, changes: &[&FunctionChange], root: &SourceRoot) -> String {
    let mut text = String::from(
        "| Self Δ | Self base → head | Own time per iteration | Function | Location |\n|---:|---:|---|---|---|\n",
    );
    let mut notes = String::new();
    for change in changes {
        let _ = writeln!(text, "| {} |", function_cells(change, root));
        for note in ran_as_notes(profile, change) {
            let _ = writeln!(notes, "> `{}`: {}", markdown_cell(&change.function.name), markdown_cell(&note));
        }
    }
    if !notes.is_empty() {
        text.push('\n');
        text.push_str(&notes);
    }
    text
}

/// A function's cells, formatted once for both tables: self change, self
/// shares, own time, name (and where it was inlined), location. Each cell
/// short: the text output says the rest.
fn function_cells(change: &FunctionChange, root: &SourceRoot) -> String {
    let self_change = match &change.across_runs {
        Some(_) => points(change.self_change.change),
        None => format!("{} ± {:.2} pp", points(change.self_change.change), change.self_change.noise * 100.0),
    };
    format!(
        "{self_change} | {} → {} | {} | `{}`{} | {}",
        share(change.base_self_share),
        share(change.head_self_share),
        own_time_cell(change),
        markdown_cell(&change.function.name),
        inlined_note(change),
        markdown_cell(&location_text(change, root)),
    )
}

/// `185 µs → 3.71 ms, +17.1% of the benchmark (+9.0% to +25.2%)`: a
/// function's own time per iteration over runs (medians) and its change as
/// a part of the benchmark's time; for one run a side, the change alone
/// where the share's was within noise; `–` where there is none.
fn own_time_cell(change: &FunctionChange) -> String {
    match (&change.across_runs, change.self_change.own_time) {
        (Some(runs), _) if runs.per_iteration => format!(
            "{} → {}, {} of the benchmark ({} to {})",
            duration(median(&runs.base_own)),
            duration(median(&runs.head_own)),
            relative(runs.change.change),
            relative(runs.change.interval.low),
            relative(runs.change.interval.high)
        ),
        (None, Some(own)) => format!("{} of the benchmark (noise ± {:.1}%)", relative(own.relative), own.noise * 100.0),
        _ => "–".to_string(),
    }
}

fn inlined_note(change: &FunctionChange) -> String {
    let callers = change.inlined_into();
    match callers.as_slice() {
        [] => String::new(),
        [caller] => format!(" inlined into `{}`", markdown_cell(caller)),
        [caller, rest @ ..] => format!(" inlined into `{}` and {} more", markdown_cell(caller), rest.len()),
    }
}

/// The collapsed table's rows: the benchmark, then [`function_cells`].
fn markdown_rows(changes: &[&FunctionChange], root: &SourceRoot, benchmark: Option<&str>) -> Vec<String> {
    changes
        .iter()
        .map(|change| format!("| {} | {} |\n", markdown_cell(benchmark.unwrap_or("")), function_cells(change, root)))
        .collect()
}

/// One annotation per JavaScript function whose self share grew beyond
/// noise in a regressed benchmark (or, without benchmarks, a regressed
/// profile), naming each such benchmark; at `file=` its script relative
/// to `root` and `line=` its first line; the largest growth first, at most
/// `limit`. Callers whose inclusive share grew through a callee are not
/// annotated: only self time counts.
pub fn annotations(
    comparison: &SuiteComparison,
    root: &SourceRoot,
    least_growth: f64,
    limit: usize,
) -> Vec<GithubAnnotation> {
    struct Slowed<'comparison> {
        change: &'comparison FunctionChange,
        profile: &'comparison ProfileComparison,
        benchmark: Option<&'comparison BenchmarkComparison>,
    }
    let mut by_function: Vec<(crate::model::frames::Function, Vec<Slowed>)> = Vec::new();
    let mut sources: Vec<(&ProfileComparison, Option<&BenchmarkComparison>)> = Vec::new();
    if let Some(whole) = comparison.whole.as_ref().filter(|whole| whole.regressed()) {
        sources.push((whole, None));
    }
    for benchmark in &comparison.benchmarks {
        if benchmark.verdict() == Verdict::Regressed {
            sources.push((&benchmark.profile, Some(benchmark)));
        }
    }
    for (profile, benchmark) in sources {
        for change in profile.regressions().filter(|change| change.self_change.change >= least_growth) {
            let slowed = Slowed { change, profile, benchmark };
            match by_function.iter_mut().find(|(function, _)| *function == change.function) {
                Some((_, list)) => list.push(slowed),
                None => by_function.push((change.function.clone(), vec![slowed])),
            }
        }
    }
    let largest = |list: &[Slowed]| list.iter().map(|slowed| slowed.change.self_change.change).fold(0.0, f64::max);
    by_function.sort_by(|left, right| largest(&right.1).total_cmp(&largest(&left.1)).then(left.0.cmp(&right.0)));
    by_function
        .iter()
        .filter_map(|(_, list)| {
            let first = list
                .iter()
                .max_by(|left, right| left.change.self_change.change.total_cmp(&right.change.self_change.change))?;
            let (file, line) = location(first.change, root)?;
            let line = line?;
            let name = name_with_inlining(first.change);
            let mut message = String::new();
            for slowed in list {
                match slowed.benchmark {
                    Some(benchmark) => {
                        let time = match (&benchmark.runs, benchmark.time) {
                            (Some(runs), _) => format!(
                                ", {} time per iteration over {} → {} runs {}",
                                runs.statistic.name(),
                                runs.base.len(),
                                runs.head.len(),
                                runs_change_text(&runs.change)
                            ),
                            (None, Some(time)) => format!(
                                ", {} time per iteration {} ± {:.1}%",
                                time.statistic.name(),
                                relative(time.relative),
                                time.noise * 100.0
                            ),
                            (None, None) => String::new(),
                        };
                        let _ = writeln!(
                            message,
                            "{name}: self time {} ({} → {}) in benchmark \"{}\"{time}",
                            self_change_text(slowed.change),
                            share(slowed.change.base_self_share),
                            share(slowed.change.head_self_share),
                            benchmark.name,
                        );
                    }
                    None => {
                        let _ = writeln!(
                            message,
                            "{name}: self time {} ({} → {} of the profile)",
                            self_change_text(slowed.change),
                            share(slowed.change.base_self_share),
                            share(slowed.change.head_self_share),
                        );
                    }
                }
                for note in ran_as_notes(slowed.profile, slowed.change) {
                    let _ = writeln!(message, "{note}");
                }
            }
            if !comparison.across_runs() {
                let _ = writeln!(message, "({ONE_RUN_NOTE})");
            }
            let benchmarks: Vec<&str> =
                list.iter().filter_map(|slowed| slowed.benchmark.map(|benchmark| benchmark.name.as_str())).collect();
            let title = match benchmarks.as_slice() {
                [] => {
                    format!("v8inline: {} self {}", first.change.function.name, points(first.change.self_change.change))
                }
                names => format!(
                    "v8inline: {} self {} in {}",
                    first.change.function.name,
                    points(first.change.self_change.change),
                    names.join(", ")
                ),
            };
            Some(GithubAnnotation {
                severity: Severity::Warning,
                file,
                line,
                title,
                message: message.trim_end().to_string(),
            })
        })
        .take(limit)
        .collect()
}
