//! The subcommands: `lookup`, `compare`, `record`, `repair-jitdump`.

use std::io::Write;
use std::path::Path;

use crate::args::{CompareArgs, CompareFormat, LookupArgs, RecordArgs, RepairJitDumpArgs};
use crate::failure::{Failure, report_warnings, standard_output_failure, write_file, write_output};
use v8inline::commands::lookup::{AddressQuery, LookupError};
use v8inline::commands::record::RecordOptions;
use v8inline::diagnostics::Diagnostics;
use v8inline::input::read_file;
use v8inline::output::annotations::SourceRoot;
use v8inline::output::compare::{
    Shares, github_annotations as compare_annotations, markdown_table, text_table, write_differential_svg,
};
use v8inline::pipeline::thread_count;
use v8inline::v8::profile::ProfileOptions;

pub(crate) fn lookup(args: LookupArgs) -> Result<(), Failure> {
    let queries = args
        .addresses
        .iter()
        .map(|text| AddressQuery::parse(text, args.time))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| Failure::Usage(error.to_string()))?;
    let read_threads = thread_count(args.threads);
    let options = ProfileOptions { read_threads, ..args.inputs.profile_options() };
    let answer = match v8inline::commands::lookup::lookup(options, &queries) {
        Ok(answer) => answer,
        Err(LookupError::NotOneProcess { diagnostics, processes }) => {
            report_warnings(&diagnostics, args.inputs.strict)?;
            return Err(Failure::Usage(LookupError::NotOneProcess { diagnostics, processes }.to_string()));
        }
        Err(LookupError::NoInputs) => return Err(Failure::Usage(LookupError::NoInputs.to_string())),
        Err(LookupError::Input(error)) => return Err(error.into()),
    };
    report_warnings(&answer.diagnostics, args.inputs.strict)?;
    std::io::stdout().lock().write_all(answer.text.as_bytes()).map_err(standard_output_failure)?;
    // Millions of code objects: the process's exit frees them at once,
    // faster than dropping them one by one.
    std::mem::forget(answer);
    Ok(())
}

pub(crate) fn compare(args: CompareArgs) -> Result<(), Failure> {
    let read = |path: &Path| -> Result<(String, Shares), Failure> {
        let bytes = read_file(path)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let shares = Shares::parse(&text, path).map_err(|error| Failure::Input(error.to_string()))?;
        Ok((text, shares))
    };
    let (base_text, base) = read(&args.base)?;
    let (head_text, head) = read(&args.head)?;
    let changes = v8inline::output::compare::compare(&base, &head);
    let root = SourceRoot::new(&args.source_root);
    let text = match args.format {
        CompareFormat::Text => text_table(&changes, &root, args.top),
        CompareFormat::Markdown => markdown_table(&changes, &root, args.top),
        CompareFormat::Github => compare_annotations(&changes, &root, args.threshold / 100.0, args.top)
            .iter()
            .map(|annotation| annotation.command() + "\n")
            .collect(),
    };
    write_output(args.output.as_deref(), text.as_bytes(), false)?;
    if let Some(svg_path) = &args.flamegraph {
        if [&base_text, &head_text].iter().any(|text| text.trim_start().starts_with('{')) {
            return Err(Failure::Usage(
                "a differential flame graph needs two folded files, not JSON reports".to_string(),
            ));
        }
        let title = format!("v8inline: {} → {}", args.base.display(), args.head.display());
        let mut svg = Vec::new();
        write_differential_svg(&base_text, &head_text, &title, &mut svg)?;
        write_file(svg_path, &svg)?;
    }
    Ok(())
}

pub(crate) fn record(args: RecordArgs) -> Result<(), Failure> {
    let options = RecordOptions {
        frequency: args.frequency,
        output_dir: args.output_dir,
        command: args.command,
        perf: "perf".into(),
    };
    let mut announce = |message: &str| eprintln!("v8inline: {message}");
    let recording = v8inline::commands::record::record(&options, &mut announce)
        .map_err(|error| Failure::Input(error.to_string()))?;
    eprint!("{}", recording.report());
    Ok(())
}

pub(crate) fn repair_jitdump(args: RepairJitDumpArgs) -> Result<(), Failure> {
    let same_file = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same_file(&args.jitdump, &args.output) {
        return Err(Failure::Usage(format!(
            "repair-jitdump does not overwrite its input {}: give another -o",
            args.jitdump.display()
        )));
    }
    let bytes = read_file(&args.jitdump)?;
    let repaired = v8inline::formats::jitdump::repair(&bytes)
        .map_err(|error| Failure::Input(format!("{}: {error}", args.jitdump.display())))?;
    let mut diagnostics = Diagnostics::new();
    diagnostics.add_jitdump(&args.jitdump, &repaired.original);
    eprint!("{diagnostics}");
    write_file(&args.output, &repaired.bytes)?;
    eprintln!(
        "v8inline: {}: corrected {} DEBUG_INFO record(s) mis-sized by V8; wrote {} ({} bytes)",
        args.jitdump.display(),
        repaired.original.mis_sized_debug_infos.len(),
        args.output.display(),
        repaired.bytes.len()
    );
    Ok(())
}
