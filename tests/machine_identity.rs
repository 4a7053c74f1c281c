//! The committed perf.data recordings carry the identity of the machine that
//! made them: its kernel's release and build id, its vDSO's build id. Read on
//! another machine, v8inline rightly refuses to name kernel and vDSO frames
//! from the wrong symbols, and says so. Nothing else may change: these tests
//! read each recording as if it were read where it was made and as if it
//! were read elsewhere (the identity rewritten, `common::machine`), and check
//! that every figure the other tests assert is the same and that exactly the
//! machine's notes appear. See docs/testing.md, "Tests on any machine".

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::machine::{MachineIdentity, OTHER_RELEASE, rewrite_machine_identity, write_with_identity};
use v8inline::internals::diagnostics::{Diagnostics, WarningKind};
use v8inline::{CodeLogOptions, FoldOptions, FoldedProfile, FrameKind, SampleInput};

/// Every directory of testdata/ that holds a perf.data.gz written to a file
/// (a pipe's, which `--perf-data` refuses, has no machine to read as).
fn recordings() -> Vec<PathBuf> {
    fn walk(directory: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(directory).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.file_name().is_some_and(|name| name == "perf.data.gz")
                && !common::machine::is_pipe(&common::gunzip(&path))
            {
                found.push(path.parent().unwrap().to_path_buf());
            }
        }
    }
    let mut found = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"), &mut found);
    found.sort();
    found
}

/// The files of `directory` whose names start with one of `prefixes`.
fn files_starting(directory: &Path, prefixes: &[&str]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            path.is_file() && prefixes.iter().any(|prefix| name.starts_with(prefix))
        })
        .collect();
    found.sort();
    found
}

/// The recording in `recording` folded from a copy of its perf.data with
/// `identity` written in, at `copy`; its code logs and jitdumps given.
fn fold_as(recording: &Path, copy: &Path, identity: &MachineIdentity) -> FoldedProfile {
    write_with_identity(&recording.join("perf.data.gz"), copy, identity);
    let mut code_logs = CodeLogOptions::default();
    code_logs.logs = files_starting(recording, &["isolate-", "codspeed-v8-"]);
    code_logs.jitdumps = files_starting(recording, &["jit-"]);
    let mut options = FoldOptions::default();
    options.code_logs = code_logs;
    options.timeline = true;
    v8inline::fold(&SampleInput::PerfData(copy.to_path_buf()), &options)
        .unwrap_or_else(|error| panic!("{}: {error}", recording.display()))
}

/// A sample as the other tests see it: when, whose, how much, and its
/// JavaScript frames (function, line, tier), innermost first.
#[derive(Debug, PartialEq, Eq)]
struct JavaScriptSample {
    time_nanoseconds: u64,
    pid: Option<u32>,
    tid: Option<u32>,
    period: Option<u64>,
    frames: Vec<String>,
}

fn javascript_samples(profile: &FoldedProfile) -> Vec<JavaScriptSample> {
    let timeline = profile.timeline().expect("a timeline was asked for");
    timeline
        .samples
        .iter()
        .map(|sample| {
            let thread = timeline.thread(sample.thread);
            JavaScriptSample {
                time_nanoseconds: sample.time_nanoseconds,
                pid: thread.pid,
                tid: thread.tid,
                period: sample.period,
                frames: timeline
                    .frames(sample.stack)
                    .filter(|frame| frame.kind.is_javascript())
                    .map(|frame| {
                        format!("{} {:?} {:?}", timeline.frames.function(frame.function), frame.line, frame.kind)
                    })
                    .collect(),
            }
        })
        .collect()
}

/// How many samples have a kernel frame, and how many of those frames are
/// named (an unnamed one is `[unknown]`, or `[[kernel.kallsyms]]` as
/// inferno names a frame by its module).
fn kernel_frames(profile: &FoldedProfile) -> (usize, usize) {
    let timeline = profile.timeline().unwrap();
    let (mut samples, mut named) = (0, 0);
    for sample in &timeline.samples {
        let kernel: Vec<_> = timeline.frames(sample.stack).filter(|frame| frame.kind == FrameKind::Kernel).collect();
        samples += usize::from(!kernel.is_empty());
        named += kernel.iter().filter(|frame| !timeline.function_name(frame).starts_with('[')).count();
    }
    (samples, named)
}

/// A diagnostics' warnings by kind (count and examples, the copy's folder
/// named `<recording>`), its notes and recovered defects likewise: what the
/// other tests read of them.
#[derive(Debug, PartialEq, Eq)]
struct Said {
    warnings: BTreeMap<WarningKind, (u64, Vec<String>)>,
    notes: Vec<String>,
    recovered_defects: Vec<String>,
}

fn said(diagnostics: &Diagnostics, copy_folder: &Path, keep: impl Fn(WarningKind) -> bool) -> Said {
    let folder = copy_folder.display().to_string();
    let clean = |text: &String| text.replace(&folder, "<recording>");
    Said {
        warnings: diagnostics
            .kinds()
            .filter(|(kind, _)| keep(*kind))
            .map(|(kind, tally)| (kind, (tally.count, tally.examples.iter().map(clean).collect())))
            .collect(),
        notes: diagnostics.notes().iter().map(clean).collect(),
        recovered_defects: diagnostics.recovered_defects().iter().map(clean).collect(),
    }
}

/// The examples of one kind of warning.
fn examples(diagnostics: &Diagnostics, kind: WarningKind) -> Vec<String> {
    diagnostics.tally(kind).map(|tally| tally.examples.clone()).unwrap_or_default()
}

/// Every committed recording, read as where it was made and as elsewhere
/// (another build id, and, for a recording with no kernel build id, another
/// release): the same samples with the same JavaScript frames, the same
/// expansion counts, the same warnings and notes but for the machine's, and
/// of those exactly the kernel's (where kernel frames were sampled) and the
/// vDSO's (where its frames were).
#[test]
fn every_recording_folds_alike_where_it_was_made_and_elsewhere() {
    let here = MachineIdentity::this_machine();
    let kernel_identity_readable = here.kernel_build_id.is_some();
    let scratch = common::temp_dir("machine_identity", "alike");
    let (mut with_kernel_frames, mut with_vdso_frames) = (0, 0);
    for recording in recordings() {
        let name = recording.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display().to_string();
        let folder = |variant: &str| {
            let folder = scratch.join(name.replace('/', "_")).join(variant);
            std::fs::create_dir_all(&folder).unwrap();
            folder
        };
        let variants = [
            ("here", here.clone()),
            ("elsewhere", MachineIdentity::elsewhere()),
            (
                "elsewhere-without-kernel-build-id",
                MachineIdentity { without_kernel_build_id: true, ..MachineIdentity::elsewhere() },
            ),
        ];
        let folded: Vec<(PathBuf, FoldedProfile)> = variants
            .iter()
            .map(|(variant, identity)| {
                let folder = folder(variant);
                let profile = fold_as(&recording, &folder.join("perf.data"), identity);
                (folder, profile)
            })
            .collect();
        let (here_folder, here_profile) = &folded[0];
        let here_samples = javascript_samples(here_profile);
        assert!(!here_samples.is_empty(), "{name}: no samples");
        let (kernel_samples, named_kernel_frames) = kernel_frames(here_profile);
        let bytes = common::gunzip(&recording.join("perf.data.gz"));
        let kernel_build_id_recorded =
            common::machine::files_with_build_ids(&bytes).iter().any(|file| file == common::machine::KERNEL);
        // A recording whose perf was killed before it wrote its features
        // says nothing of its machine: read anywhere as where it was made.
        let machine_recorded = rewrite_machine_identity(&bytes, &MachineIdentity::elsewhere()) != bytes;
        let here_diagnostics = here_profile.diagnostics();
        let not_machine = |kind: WarningKind| !kind.is_about_the_reading_machine();
        assert!(
            examples(here_diagnostics, WarningKind::OtherKernel).is_empty(),
            "{name}: read as here, yet {:?}",
            examples(here_diagnostics, WarningKind::OtherKernel)
        );
        if kernel_samples > 0 && here_diagnostics.tally(WarningKind::NoKernelSymbols).is_none() {
            assert!(named_kernel_frames > 0, "{name}: read as here, no kernel frame named");
        }
        eprintln!(
            "{name}: {} samples, {kernel_samples} with kernel frames ({named_kernel_frames} kernel frames named here), \
             kernel build id recorded: {kernel_build_id_recorded}, machine recorded: {machine_recorded}",
            here_samples.len()
        );
        let here_vdso = examples(here_diagnostics, WarningKind::BuildIdMismatch);
        assert!(!here_vdso.iter().any(|example| example.starts_with("[vdso]")), "{name}: {here_vdso:?}");

        for ((variant, _), (folder, profile)) in variants.iter().zip(&folded).skip(1) {
            // Every figure the other tests read: samples, their JavaScript
            // frames, what expanded, and what was said of the input.
            assert!(javascript_samples(profile) == here_samples, "{name} {variant}: other JavaScript samples");
            assert_eq!(profile.expansion(), here_profile.expansion(), "{name} {variant}");
            // Kernel frames named or not make more or fewer distinct stacks.
            let without_distinct_stacks = |profile: &FoldedProfile| {
                let mut summary = profile.summary().clone();
                summary.distinct_stacks = 0;
                summary
            };
            assert_eq!(without_distinct_stacks(profile), without_distinct_stacks(here_profile), "{name} {variant}");
            assert_eq!(
                said(profile.diagnostics(), folder, not_machine),
                said(here_diagnostics, here_folder, not_machine),
                "{name} {variant}"
            );
            // And of the machine, exactly what differs.
            let other_kernel = examples(profile.diagnostics(), WarningKind::OtherKernel);
            let expected_kernel_note = if *variant == "elsewhere" && kernel_build_id_recorded {
                format!("[kernel.kallsyms]: build id {} in the recording", "5a".repeat(20))
            } else {
                format!("[kernel.kallsyms]: release {OTHER_RELEASE} in the recording")
            };
            // Where this machine's build id cannot be read, only the release
            // tells another kernel, and only where no build id was recorded.
            let told =
                machine_recorded && (kernel_identity_readable || !kernel_build_id_recorded || *variant != "elsewhere");
            if kernel_samples > 0 && told {
                with_kernel_frames += usize::from(*variant == "elsewhere");
                assert_eq!(other_kernel.len(), 1, "{name} {variant}: {other_kernel:?}");
                let note = &other_kernel[0];
                assert!(note.starts_with(&format!("{}: ", folder.join("perf.data").display())), "{note}");
                assert!(note.contains(&expected_kernel_note), "{name} {variant}: {note}");
                assert_eq!(kernel_frames(profile), (kernel_samples, 0), "{name} {variant}: a kernel frame named");
            } else {
                assert!(other_kernel.is_empty(), "{name} {variant}: {other_kernel:?}");
            }
            let mismatched = examples(profile.diagnostics(), WarningKind::BuildIdMismatch);
            let new: Vec<&String> = mismatched.iter().filter(|example| !here_vdso.contains(example)).collect();
            match &new[..] {
                [] => {}
                [vdso] => {
                    with_vdso_frames += usize::from(*variant == "elsewhere");
                    let expected = format!("[vdso]: build id {} in the recording, ", "a5".repeat(20));
                    assert!(vdso.starts_with(&expected), "{name} {variant}: {vdso}");
                }
                more => panic!("{name} {variant}: build ids differ for {more:?}"),
            }
            for kind in [WarningKind::NoSymbols, WarningKind::NoKernelSymbols] {
                assert_eq!(
                    examples(profile.diagnostics(), kind),
                    examples(here_diagnostics, kind),
                    "{name} {variant}: {kind:?}"
                );
            }
        }
    }
    eprintln!(
        "{with_kernel_frames} recordings lose their kernel frames elsewhere, {with_vdso_frames} their vDSO frames"
    );
    // Not vacuous: the recordings have kernel and vDSO frames to lose.
    if kernel_identity_readable {
        assert!(with_kernel_frames >= 6, "{with_kernel_frames} recordings with kernel frames");
    }
    assert!(with_vdso_frames >= 1, "no recording with vDSO frames");
}
