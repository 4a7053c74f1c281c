//! The outputs a command line asks for, as plain choices, made into the
//! [`OutputRequest`]s the one writer ([`crate::pipeline::outputs`]) writes:
//! the main job's (the folded stacks on standard output unless another
//! output goes there) and `record`'s (the folded stacks, flame graph,
//! `.cpuprofile` and Firefox profile in the recording's directory unless
//! asked elsewhere).

use std::path::{Path, PathBuf};

use crate::commands::record::{CPUPROFILE_FILE, FIREFOX_PROFILE_FILE, FLAMEGRAPH_FILE, FOLDED_FILE};
use crate::output::cpuprofile::ThreadSelection;
use crate::output::flamegraph::FlameGraphStyle;
use crate::pipeline::outputs::{Destination, OutputRequest, UsageError, check_outputs};

/// What to write, each output `None` (or `false`) when not asked for.
/// Built from its `Default`, field by field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OutputChoices {
    /// The folded stacks' file (`--output`); the main job writes them to
    /// standard output without one, unless another output goes there.
    pub folded: Option<PathBuf>,
    /// A flame graph SVG (`--flamegraph`).
    pub flamegraph: Option<PathBuf>,
    /// How the flame graph is drawn.
    pub flamegraph_style: FlameGraphStyle,
    /// A pprof profile (`--pprof`).
    pub pprof: Option<PathBuf>,
    /// The JSON report (`--report json`) and where it goes.
    pub report_json: Option<Destination>,
    /// The markdown summary (`--summary markdown`) and where it goes.
    pub summary_markdown: Option<Destination>,
    /// Rows per table of the summary.
    pub summary_top: usize,
    /// GitHub annotations (`--annotate github`) and where they go.
    pub github_annotations: Option<Destination>,
    /// At most this many annotations.
    pub annotations_top: usize,
    /// Annotations and summaries name files relative to this directory.
    pub source_root: PathBuf,
    /// A `.cpuprofile` (`--cpuprofile`).
    pub cpuprofile: Option<PathBuf>,
    /// Which thread the `.cpuprofile` holds.
    pub cpuprofile_thread: ThreadSelection,
    /// The `.cpuprofile` keeps JavaScript frames only (`--js-only`).
    pub javascript_only: bool,
    /// A Firefox Profiler profile (`--firefox-profile`).
    pub firefox_profile: Option<PathBuf>,
    /// The fold's counts, told as text (`--stats`).
    pub stats: bool,
}

/// Choices that ask for what cannot be done.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputChoiceError {
    /// A choice that shapes the `.cpuprofile` without one asked for.
    #[error("{0} shapes a .cpuprofile: give --cpuprofile <FILE>")]
    ShapesNoCpuProfile(&'static str),
    /// Outputs that cannot go together.
    #[error(transparent)]
    Usage(#[from] UsageError),
}

impl OutputChoices {
    /// The main job's outputs, in the order they are written: the folded
    /// stacks (to standard output without a file, unless another output
    /// goes there), the flame graph, the outputs beside them, `--stats`.
    pub fn main_job_requests(&self) -> Result<Vec<OutputRequest>, OutputChoiceError> {
        if self.cpuprofile.is_none() {
            let shaping = [
                (self.javascript_only, "--js-only"),
                (self.cpuprofile_thread.pid.is_some(), "--cpuprofile-pid"),
                (self.cpuprofile_thread.tid.is_some(), "--cpuprofile-tid"),
            ];
            if let Some((_, option)) = shaping.iter().find(|(given, _)| *given) {
                return Err(OutputChoiceError::ShapesNoCpuProfile(option));
            }
        }
        let standard_output = Some(Destination::StandardOutput);
        let others_on_standard_output =
            [&self.report_json, &self.summary_markdown, &self.github_annotations].contains(&&standard_output);
        let mut requests = Vec::new();
        match &self.folded {
            Some(path) => requests.push(OutputRequest::Folded(Destination::File(path.clone()))),
            None if !others_on_standard_output => requests.push(OutputRequest::Folded(Destination::StandardOutput)),
            None => {}
        }
        if let Some(path) = &self.flamegraph {
            requests.push(OutputRequest::FlameGraph { path: path.clone(), style: self.flamegraph_style });
        }
        requests.extend(self.requests_beside_folded(self.cpuprofile.clone(), self.firefox_profile.clone()));
        check_outputs(&requests)?;
        if self.stats {
            requests.push(OutputRequest::Stats);
        }
        Ok(requests)
    }

    /// `record`'s outputs: the folded stacks, flame graph, `.cpuprofile`
    /// and Firefox profile in `output_dir` (the last two where asked
    /// instead), and the outputs beside them. `folded` and `flamegraph` are
    /// not read: a recording's are always in its directory.
    pub fn record_requests(&self, output_dir: &Path) -> Result<Vec<OutputRequest>, OutputChoiceError> {
        let in_directory = |given: &Option<PathBuf>, name: &str| given.clone().unwrap_or_else(|| output_dir.join(name));
        let mut requests = vec![
            OutputRequest::Folded(Destination::File(output_dir.join(FOLDED_FILE))),
            OutputRequest::FlameGraph { path: output_dir.join(FLAMEGRAPH_FILE), style: self.flamegraph_style },
        ];
        requests.extend(self.requests_beside_folded(
            Some(in_directory(&self.cpuprofile, CPUPROFILE_FILE)),
            Some(in_directory(&self.firefox_profile, FIREFOX_PROFILE_FILE)),
        ));
        check_outputs(&requests)?;
        if self.stats {
            requests.push(OutputRequest::Stats);
        }
        Ok(requests)
    }

    /// pprof, the report, the summary, the annotations, the `.cpuprofile`
    /// and the Firefox profile (at these paths, if any): what the main job
    /// and `record` share.
    fn requests_beside_folded(
        &self,
        cpuprofile: Option<PathBuf>,
        firefox_profile: Option<PathBuf>,
    ) -> Vec<OutputRequest> {
        let mut requests = Vec::new();
        if let Some(path) = &self.pprof {
            requests.push(OutputRequest::Pprof(path.clone()));
        }
        if let Some(to) = &self.report_json {
            requests.push(OutputRequest::ReportJson(to.clone()));
        }
        if let Some(to) = &self.summary_markdown {
            let (to, top, source_root) = (to.clone(), self.summary_top, self.source_root.clone());
            requests.push(OutputRequest::SummaryMarkdown { to, top, source_root });
        }
        if let Some(to) = &self.github_annotations {
            let (to, top, source_root) = (to.clone(), self.annotations_top, self.source_root.clone());
            requests.push(OutputRequest::GithubAnnotations { to, top, source_root });
        }
        if let Some(path) = cpuprofile {
            let (thread, javascript_only) = (self.cpuprofile_thread, self.javascript_only);
            requests.push(OutputRequest::CpuProfile { path, thread, javascript_only });
        }
        if let Some(path) = firefox_profile {
            requests.push(OutputRequest::FirefoxProfile(path));
        }
        requests
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folded_stacks_leave_standard_output_to_another_output() {
        let mut choices = OutputChoices::default();
        assert_eq!(choices.main_job_requests().unwrap(), [OutputRequest::Folded(Destination::StandardOutput)]);
        choices.report_json = Some(Destination::StandardOutput);
        assert_eq!(choices.main_job_requests().unwrap(), [OutputRequest::ReportJson(Destination::StandardOutput)]);
        choices.summary_markdown = Some(Destination::StandardOutput);
        let error = choices.main_job_requests().unwrap_err().to_string();
        assert!(error.starts_with("--report and --summary would all write to standard output"), "{error}");
        choices.javascript_only = true;
        let error = choices.main_job_requests().unwrap_err().to_string();
        assert_eq!(error, "--js-only shapes a .cpuprofile: give --cpuprofile <FILE>");
    }

    #[test]
    fn a_recording_writes_its_four_files_in_its_directory() {
        let choices = OutputChoices {
            firefox_profile: Some(PathBuf::from("elsewhere.json.gz")),
            stats: true,
            ..OutputChoices::default()
        };
        let requests = choices.record_requests(Path::new("out")).unwrap();
        assert_eq!(
            requests,
            [
                OutputRequest::Folded(Destination::File(PathBuf::from("out/profile.folded"))),
                OutputRequest::FlameGraph { path: PathBuf::from("out/flamegraph.svg"), style: FlameGraphStyle::Icicle },
                OutputRequest::CpuProfile {
                    path: PathBuf::from("out/profile.cpuprofile"),
                    thread: ThreadSelection::default(),
                    javascript_only: false
                },
                OutputRequest::FirefoxProfile(PathBuf::from("elsewhere.json.gz")),
                OutputRequest::Stats,
            ]
        );
    }
}
