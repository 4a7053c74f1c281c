//! Which processes a perf.data shows running and what they executed: what
//! `record` needs to tell which node processes ran without its flags. A
//! light pass of its own, apart from the reading that names frames.

use std::collections::BTreeMap;
use std::path::Path;

use linux_perf_data::linux_perf_event_reader::EventRecord;
use linux_perf_data::{PerfFileReader, PerfFileRecord};

use super::framing::record_the_crate_mishandles;
use super::records::PROT_EXEC;
use crate::error::Error;
use crate::formats::perf_data::{PerfDataError, check_architecture, check_header};

/// A process of a perf.data: the programs it executed and its samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessActivity {
    /// Its pid.
    pub pid: u32,
    /// The names of the programs it executed (`execve`), in order, as the
    /// kernel names them: the file name, at most 15 bytes.
    pub programs: Vec<String>,
    /// The path of the last program it executed: its first executable
    /// mapping after the `execve`, when the recording has it.
    pub executable: Option<String>,
    /// Its samples, of every event.
    pub samples: u64,
}

/// The processes of the perf.data at `path` that executed a program or were
/// sampled, by pid: what `record` needs to tell which node processes ran
/// without its flags. Reads the records of a whole file up to the first it
/// cannot read; none of a damaged one (the main read reports the damage).
pub fn recorded_processes(path: &Path) -> Result<Vec<ProcessActivity>, Error> {
    let file = std::fs::File::open(path).map_err(Error::at(path))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    // Only a whole perf.data: the main read frames a damaged one record by
    // record (`PerfDataReader::read`) and reports it; this pass does not
    // repeat those guards.
    match check_header(&mut reader) {
        Ok(Some(header)) if !header.is_cut() && !header.is_unfinished() => {}
        _ => return Ok(Vec::new()),
    }
    let PerfFileReader { mut perf_file, mut record_iter } =
        PerfFileReader::parse_file(reader).map_err(|error| Error::at(path)(PerfDataError::Format(error)))?;
    check_architecture(&perf_file).map_err(Error::at(path))?;
    let mut processes: BTreeMap<u32, ProcessActivity> = BTreeMap::new();
    while let Ok(Some(record)) = record_iter.next_record(&mut perf_file) {
        let PerfFileRecord::EventRecord { record, .. } = record else { continue };
        if record_the_crate_mishandles(&record).is_none()
            && let Ok(record) = record.parse()
        {
            note_activity(&mut processes, record);
        }
    }
    Ok(processes.into_values().collect())
}

/// What one record tells of its process: an `execve`, its first executable
/// mapping after, a sample.
fn note_activity(processes: &mut BTreeMap<u32, ProcessActivity>, record: EventRecord<'_>) {
    match record {
        EventRecord::Comm(comm) if comm.is_execve && comm.pid == comm.tid => {
            let process = process(processes, comm.pid);
            process.programs.push(String::from_utf8_lossy(&comm.name.as_slice()).into_owned());
            process.executable = None;
        }
        EventRecord::Mmap2(mmap) if mmap.protection & PROT_EXEC != 0 => {
            let process = process(processes, mmap.pid);
            if process.executable.is_none() && !process.programs.is_empty() {
                process.executable = Some(String::from_utf8_lossy(&mmap.path.as_slice()).into_owned());
            }
        }
        EventRecord::Sample(sample) => {
            if let Some(pid) = sample.pid {
                process(processes, pid).samples += 1;
            }
        }
        _ => {}
    }
}

/// The activity of `pid`, new when none was seen.
fn process(processes: &mut BTreeMap<u32, ProcessActivity>, pid: i32) -> &mut ProcessActivity {
    let pid = pid as u32;
    processes.entry(pid).or_insert_with(|| ProcessActivity { pid, ..ProcessActivity::default() })
}
