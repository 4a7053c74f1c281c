//! Which samples the main job reads when the command line names none.
//!
//! `perf script` text comes on standard input, as in `perf script |
//! v8inline ...`. Typed in a terminal without a pipe, that would wait
//! silently for text the user will never type; instead v8inline reads
//! `./perf.data` directly, as `perf script` and `perf report` default to
//! it, and says so; with no `./perf.data` it stops with a usage message.

use std::path::{Path, PathBuf};

use crate::pipeline::SampleInput;

/// The samples chosen, and what to tell the user about the choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChosenInput {
    /// The samples to read.
    pub input: SampleInput,
    /// One line for standard error when the choice is not what the command
    /// line says (without the `v8inline: ` prefix).
    pub note: Option<String>,
}

/// No samples named, standard input a terminal, and no `perf.data` to read
/// instead. The message names the three ways to give samples.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no samples to read: standard input is a terminal and there is no {perf_data}. Give samples one of three ways:\n  \
     perf script | v8inline --log LOG --jitdump DUMP          a perf script on standard input\n  \
     v8inline --log LOG --jitdump DUMP PERF_SCRIPT            a perf script file (.gz too)\n  \
     v8inline --log LOG --jitdump DUMP --perf-data perf.data  a perf.data, read directly\n\
Or record a program and read it in one step: v8inline record -- node app.js (or npm run bench, deno run app.js)",
    perf_data = perf_data.display()
)]
pub struct NoSampleInput {
    /// The `perf.data` that was looked for.
    pub perf_data: PathBuf,
}

/// Chooses the samples of the main job from the `PERF_SCRIPT` argument
/// (`None` when absent; `-` is standard input), whether standard input is a
/// terminal, and the working `directory` (where `perf.data` is looked for).
///
/// - a named file: that file;
/// - `-`, or nothing named and standard input not a terminal: standard
///   input (with a note when it is a terminal, which must end the text with
///   Ctrl-D);
/// - nothing named and standard input a terminal: `DIRECTORY/perf.data` read
///   as `--perf-data` reads it, with a note; [`NoSampleInput`] when there is
///   none.
pub fn choose_input(
    perf_script: Option<&Path>,
    standard_input_is_terminal: bool,
    directory: &Path,
) -> Result<ChosenInput, NoSampleInput> {
    let standard_input = Path::new("-");
    match perf_script {
        Some(path) if path != standard_input => {
            Ok(ChosenInput { input: SampleInput::PerfScript(path.to_owned()), note: None })
        }
        Some(_) if standard_input_is_terminal => Ok(ChosenInput {
            input: SampleInput::PerfScript(standard_input.to_owned()),
            note: Some("reading perf script text from the terminal (standard input); end it with Ctrl-D".to_string()),
        }),
        _ if !standard_input_is_terminal => {
            Ok(ChosenInput { input: SampleInput::PerfScript(standard_input.to_owned()), note: None })
        }
        _ => {
            let perf_data = directory.join("perf.data");
            if !perf_data.is_file() {
                return Err(NoSampleInput { perf_data });
            }
            let note = format!(
                "no PERF_SCRIPT given and standard input is a terminal: reading {0} as --perf-data {0} would",
                perf_data.display()
            );
            Ok(ChosenInput { input: SampleInput::PerfData(perf_data), note: Some(note) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chooses_by_argument_terminal_and_perf_data() {
        let directory = std::env::temp_dir().join(format!("v8inline-default-input-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let perf_data = directory.join("perf.data");
        let _ = std::fs::remove_file(&perf_data);
        let script = Path::new("perf.script");
        let standard_input = ChosenInput { input: SampleInput::PerfScript("-".into()), note: None };
        assert_eq!(
            choose_input(Some(script), true, &directory),
            Ok(ChosenInput { input: SampleInput::PerfScript(script.to_owned()), note: None })
        );
        assert_eq!(choose_input(None, false, &directory), Ok(standard_input.clone()));
        assert_eq!(choose_input(Some(Path::new("-")), false, &directory), Ok(standard_input));
        assert_eq!(
            choose_input(Some(Path::new("-")), true, &directory).unwrap().note.as_deref(),
            Some("reading perf script text from the terminal (standard input); end it with Ctrl-D")
        );
        let missing = choose_input(None, true, &directory).unwrap_err();
        assert_eq!(missing, NoSampleInput { perf_data: perf_data.clone() });
        assert_eq!(
            missing.to_string(),
            format!(
                "no samples to read: standard input is a terminal and there is no {}. Give samples one of three ways:\n  \
                 perf script | v8inline --log LOG --jitdump DUMP          a perf script on standard input\n  \
                 v8inline --log LOG --jitdump DUMP PERF_SCRIPT            a perf script file (.gz too)\n  \
                 v8inline --log LOG --jitdump DUMP --perf-data perf.data  a perf.data, read directly\n\
Or record a program and read it in one step: v8inline record -- node app.js (or npm run bench, deno run app.js)",
                perf_data.display()
            )
        );
        std::fs::write(&perf_data, b"").unwrap();
        assert_eq!(
            choose_input(None, true, &directory),
            Ok(ChosenInput {
                input: SampleInput::PerfData(perf_data.clone()),
                note: Some(format!(
                    "no PERF_SCRIPT given and standard input is a terminal: reading {0} as --perf-data {0} would",
                    perf_data.display()
                )),
            })
        );
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
