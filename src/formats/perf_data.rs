//! The header of a perf.data (`perf record`'s file), checked before the
//! `linux-perf-data` crate reads it, and why a perf.data cannot be read at all.
//!
//! The crate allocates buffers of the sizes the header declares: a damaged
//! size would abort the process for lack of memory. [`check_header`] checks
//! that every section the header and its tables declare lies inside the
//! file, that the attributes are ones the crate reads to their end, and
//! tells a file cut short or never finished ([`PerfFileHeader`]) from a
//! damaged one ([`PerfDataError`]). Layouts: `struct perf_file_header` in the
//! kernel's `tools/perf/util/header.h`. The records and samples are read by
//! the perf.data sample source.

use std::io::{Read, Seek};

/// Why a perf.data cannot be read at all. Displays as what is wrong, often
/// `byte offset N: ...`; the source that opened the file puts its path
/// before it.
#[derive(Debug, thiserror::Error)]
pub enum PerfDataError {
    /// Reading or seeking in it failed.
    #[error("{0}")]
    Read(#[from] std::io::Error),
    /// A section the header declares does not lie inside the file.
    #[error(
        "the {section} section ({size} bytes at byte offset {offset}) does not fit in the file ({file_length} bytes)"
    )]
    SectionOutsideFile {
        /// Which section.
        section: Section,
        /// Where the header says it starts.
        offset: u64,
        /// Its declared size.
        size: u64,
        /// The file's length.
        file_length: u64,
    },
    /// Reading bytes the header declares failed.
    #[error("byte offset {offset}: {error}")]
    ReadAt {
        /// Where the read started.
        offset: u64,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// A perf.data written to a pipe (`perf record -o -`): its header is
    /// 16 bytes and its attributes and features come as records.
    #[error(
        "a perf.data written to a pipe (perf record -o -; header of 16 bytes), which --perf-data does not read: \
         record to a file (perf record -o perf.data), or pipe it through perf script (perf record -o - ... | \
         perf script -i - | v8inline)"
    )]
    PipeMode,
    /// The header's `attr_size` (at byte offset 16) is not that of a
    /// `perf_event_attr`.
    #[error("byte offset 16: implausible attribute size {size}")]
    AttributeSize {
        /// The size found.
        size: u64,
    },
    /// An event attribute declares a size that the attribute reader would
    /// not read to its end (see `attribute_is_read_whole`): what follows
    /// it would be read from the wrong place.
    #[error(
        "byte offset {offset}: an event attribute of {size} bytes (perf_event_attr is 64, 72, 80, 96, 104, 112, 120, 128 or more bytes, at most the header's {slot})"
    )]
    EventAttributeSize {
        /// Where the attribute starts.
        offset: u64,
        /// The size it declares.
        size: u64,
        /// The room for it: the header's `attr_size`.
        slot: u64,
    },
    /// The event descriptions feature section (`HEADER_EVENT_DESC`) does not
    /// hold what its counts say.
    #[error("byte offset {offset}: event descriptions: {problem}")]
    EventDescriptions {
        /// Where the section starts.
        offset: u64,
        /// What does not fit.
        problem: EventDescriptionProblem,
    },
    /// Recorded on another architecture (its `HEADER_ARCH` feature, `uname
    /// -m` of the recording machine): its addresses, kernel layout and
    /// jitdump code are not x86-64's, and reading them as such would give
    /// wrong frames without a word.
    #[error(
        "recorded on {arch} (the header's arch feature): v8inline reads perf.data recorded on x86_64; fold it where \
         it was recorded (perf script there, piped to v8inline)"
    )]
    Architecture {
        /// The architecture the header names.
        arch: String,
    },
    /// `linux-perf-data` refused the file (not perf's format, attributes it
    /// cannot use, ...).
    #[error("{0}")]
    Format(#[from] linux_perf_data::Error),
}

/// The architecture a perf.data must be recorded on to be read (`uname -m`).
pub const READ_ARCHITECTURE: &str = "x86_64";

/// Refuses a perf.data whose header names an architecture other than
/// [`READ_ARCHITECTURE`]; one that names none (an old perf) is read.
pub fn check_architecture(perf_file: &linux_perf_data::PerfFile) -> Result<(), PerfDataError> {
    match perf_file.arch() {
        Ok(Some(arch)) if arch != READ_ARCHITECTURE => Err(PerfDataError::Architecture { arch: arch.to_owned() }),
        _ => Ok(()),
    }
}

/// A section of a perf.data that [`PerfDataError::SectionOutsideFile`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// `struct perf_file_header` itself, or a table it points to.
    Header,
    /// The attributes (`attrs`).
    Attributes,
    /// The event types (`event_types`).
    EventTypes,
    /// The ids of one event type.
    EventIds,
    /// A feature section, by its bit (`HEADER_*`).
    Feature(usize),
}

impl std::fmt::Display for Section {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Section::Header => write!(formatter, "header"),
            Section::Attributes => write!(formatter, "attrs"),
            Section::EventTypes => write!(formatter, "event_types"),
            Section::EventIds => write!(formatter, "event ids"),
            Section::Feature(bit) => write!(formatter, "feature {bit}"),
        }
    }
}

/// What does not fit in the event descriptions feature section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EventDescriptionProblem {
    /// It ends inside a count.
    #[error("cut short")]
    CutShort,
    /// Its event count times the smallest event is more than its size.
    #[error("{count} events of at least {minimum_size} bytes do not fit")]
    TooManyEvents {
        /// The events declared.
        count: u64,
        /// The smallest an event can be.
        minimum_size: u64,
    },
    /// A length runs past its end.
    #[error("a length past the end")]
    LengthPastEnd,
    /// An event's attribute declares a size the attribute reader would not
    /// read to its end (`attribute_is_read_whole`).
    #[error("an event attribute of {size} bytes in a slot of {slot}")]
    AttributeSize {
        /// The size it declares.
        size: u64,
        /// The room for it (the section's `attr_size`).
        slot: u64,
    },
}

/// Whether `linux-perf-event-reader` reads an attribute that declares `size`
/// bytes (its `size` field) to exactly that many, inside a slot of `slot`
/// bytes. It reads the fields of each `perf_event_attr` version up to `size`
/// and steps over the rest only past the last version (128 bytes), so an
/// attribute of, say, 102 bytes is read as 96: `linux-perf-data` then takes
/// the 6 bytes after it, and every count after them, from the wrong place
/// (a fuzzed file had it allocate 40 PB for event ids). Versions:
/// `PERF_ATTR_SIZE_VER0` to `VER7` of `include/uapi/linux/perf_event.h`.
fn attribute_is_read_whole(size: u64, slot: u64) -> bool {
    const VERSION_SIZES: [u64; 8] = [64, 72, 80, 96, 104, 112, 120, 128];
    size <= slot && (VERSION_SIZES.contains(&size) || size > 128)
}

/// `HEADER_EVENT_DESC`, the feature bit of the event descriptions.
const FEATURE_EVENT_DESC: usize = 12;
/// `HEADER_SIMPLEPERF_META_INFO`: simpleperf's event names and types.
const FEATURE_SIMPLEPERF_META_INFO: usize = 129;
/// `struct perf_file_header`: magic, size, attr_size, three sections, the
/// 256-bit feature bitmap.
const FILE_HEADER_SIZE: u64 = 104;
/// `struct perf_pipe_file_header` (`perf record -o -`): magic and size.
const PIPE_HEADER_SIZE: u64 = 16;
/// `struct perf_file_section`: offset and size.
const SECTION_SIZE: u64 = 16;

/// What [`check_header`] read of a perf.data's header.
#[derive(Debug, Clone)]
pub struct PerfFileHeader {
    /// The header's bytes (`struct perf_file_header`).
    bytes: Vec<u8>,
    /// Whether the file is little-endian (magic `PERFILE2`).
    pub little_endian: bool,
    /// The data section, as the header declares it.
    pub data: FileSection,
    /// The file's length.
    pub file_length: u64,
}

impl PerfFileHeader {
    /// Whether the data section goes past the end of the file: the file was
    /// cut short (the feature sections after it are lost).
    pub fn is_cut(&self) -> bool {
        self.data.offset.checked_add(self.data.size).is_none_or(|end| end > self.file_length)
    }

    /// Whether `perf record` never finished the file (it was killed, or
    /// still runs): the header it writes first declares a data section of 0
    /// bytes, and records follow it up to wherever the writing stopped, with
    /// no feature sections after them (`perf_session__write_header` writes
    /// the real size and the features only at the end of the recording).
    pub fn is_unfinished(&self) -> bool {
        self.data.size == 0 && self.data.offset > 0 && self.data.offset < self.file_length
    }

    /// Where the data section ends, or the file if sooner; the file's end
    /// for an unfinished recording.
    pub fn data_end(&self) -> u64 {
        if self.is_unfinished() {
            return self.file_length;
        }
        self.data.offset.saturating_add(self.data.size).min(self.file_length)
    }

    /// The header with the data section ending at `data_end` and no feature
    /// sections: what `linux-perf-data` reads of a cut file.
    pub fn cut_at(&self, data_end: u64) -> Vec<u8> {
        let mut bytes = self.bytes.clone();
        let size = data_end.saturating_sub(self.data.offset);
        let size = if self.little_endian { size.to_le_bytes() } else { size.to_be_bytes() };
        bytes[48..56].copy_from_slice(&size);
        bytes[72..104].fill(0);
        bytes
    }
}

/// Checks that every size in the header and section tables of a perf.data
/// stays inside the file, before `linux-perf-data` allocates buffers of those
/// sizes (a damaged size would abort the process for lack of memory).
/// Mirrors `struct perf_file_header` and `perf_header__read_build_ids`'s
/// neighbours in the kernel's `tools/perf/util/header.c`. A data section
/// past the end of the file is a cut file, not an error (the feature sections
/// after it are then not checked: they are lost). `None`: not perf's format.
pub fn check_header<R: Read + Seek>(input: &mut R) -> Result<Option<PerfFileHeader>, PerfDataError> {
    let file_length = input.seek(std::io::SeekFrom::End(0))?;
    // `struct perf_pipe_file_header`, the start of either form: magic, size.
    let start = read_at(input, 0, PIPE_HEADER_SIZE, file_length)?;
    let little_endian = match &start[..8] {
        b"PERFILE2" => true,
        b"2ELIFREP" => false,
        _ => return Ok(None), // not perf's format: the reader says so
    };
    let word = |bytes: &[u8], offset: usize| -> u64 {
        let mut value = [0; 8];
        value.copy_from_slice(&bytes[offset..offset + 8]);
        if little_endian { u64::from_le_bytes(value) } else { u64::from_be_bytes(value) }
    };
    if word(&start, 8) == PIPE_HEADER_SIZE {
        return Err(PerfDataError::PipeMode);
    }
    let header = read_at(input, 0, FILE_HEADER_SIZE, file_length)?;
    let section =
        |bytes: &[u8], offset: usize| FileSection { offset: word(bytes, offset), size: word(bytes, offset + 8) };
    let attribute_size = word(&header, 16);
    // perf_event_attr is 64 bytes in its first version and a few hundred now.
    if !(64..=4096).contains(&attribute_size) {
        return Err(PerfDataError::AttributeSize { size: attribute_size });
    }
    let data = section(&header, 40);
    let file_header = PerfFileHeader { bytes: header.clone(), little_endian, data, file_length };
    for (name, field_offset) in [(Section::Attributes, 24), (Section::EventTypes, 56)] {
        section(&header, field_offset).check(name, file_length)?;
    }
    // Entries of an attribute (in a slot of `slot` bytes) and the section
    // of its event ids, as linux-perf-data reads them.
    let check_attribute_entries = |entries: FileSection, slot: u64, input: &mut R| -> Result<(), PerfDataError> {
        let bytes = read_at(input, entries.offset, entries.size, file_length)?;
        let entry_size = slot + SECTION_SIZE;
        for (index, entry) in bytes.chunks_exact(entry_size as usize).enumerate() {
            let size_field = [entry[4], entry[5], entry[6], entry[7]];
            let size =
                u64::from(if little_endian { u32::from_le_bytes(size_field) } else { u32::from_be_bytes(size_field) });
            if !attribute_is_read_whole(size, slot) {
                let offset = entries.offset + index as u64 * entry_size;
                return Err(PerfDataError::EventAttributeSize { offset, size, slot });
            }
            section(entry, slot as usize).check(Section::EventIds, file_length)?;
        }
        Ok(())
    };
    let event_types = section(&header, 56);
    if event_types.size > 0 {
        check_attribute_entries(event_types, attribute_size, input)?;
    }
    if file_header.is_cut() || file_header.is_unfinished() {
        input.seek(std::io::SeekFrom::Start(0))?;
        return Ok(Some(file_header));
    }
    let features: Vec<usize> = (0..256)
        .filter(|&bit| {
            let feature_word = word(&header, 72 + bit / 64 * 8);
            feature_word >> (bit % 64) & 1 == 1
        })
        .collect();
    // Not cut (above): the data section ends inside the file.
    let table_offset = data.offset.saturating_add(data.size);
    let table = read_at(input, table_offset, SECTION_SIZE * features.len() as u64, file_length)?;
    for (index, &feature) in features.iter().enumerate() {
        let feature_section = section(&table, index * SECTION_SIZE as usize);
        feature_section.check(Section::Feature(feature), file_length)?;
        if feature == FEATURE_EVENT_DESC {
            let contents = read_at(input, feature_section.offset, feature_section.size, file_length)?;
            check_event_descriptions(&contents, little_endian)
                .map_err(|problem| PerfDataError::EventDescriptions { offset: feature_section.offset, problem })?;
        }
    }
    // Simpleperf's files keep each attribute's event ids in the last 16
    // bytes of its `attr_size` slot; `linux-perf-data` reads them so when
    // neither event descriptions nor event types name the events.
    if features.contains(&FEATURE_SIMPLEPERF_META_INFO)
        && !features.contains(&FEATURE_EVENT_DESC)
        && event_types.size == 0
    {
        check_attribute_entries(section(&header, 24), attribute_size.saturating_sub(SECTION_SIZE), input)?;
    }
    input.seek(std::io::SeekFrom::Start(0))?;
    Ok(Some(file_header))
}

/// A `perf_file_section`: where a section of the file lies.
#[derive(Debug, Clone, Copy)]
pub struct FileSection {
    /// Where it starts.
    pub offset: u64,
    /// Its size in bytes.
    pub size: u64,
}

impl FileSection {
    /// An error unless the section lies inside a file of `file_length` bytes.
    pub fn check(self, section: Section, file_length: u64) -> Result<(), PerfDataError> {
        match self.offset.checked_add(self.size) {
            Some(end) if end <= file_length => Ok(()),
            _ => Err(PerfDataError::SectionOutsideFile { section, offset: self.offset, size: self.size, file_length }),
        }
    }
}

/// Walks `HEADER_EVENT_DESC`: `nr, attr_size`, then per event the
/// attribute, `nr_ids`, a string (`len`, bytes) and `nr_ids` ids; every
/// count must fit in the section.
fn check_event_descriptions(contents: &[u8], little_endian: bool) -> Result<(), EventDescriptionProblem> {
    let mut position = 0usize;
    let next_u32 = |position: &mut usize| -> Result<u64, EventDescriptionProblem> {
        let bytes = contents.get(*position..*position + 4).ok_or(EventDescriptionProblem::CutShort)?;
        *position += 4;
        let value = [bytes[0], bytes[1], bytes[2], bytes[3]];
        Ok(u64::from(if little_endian { u32::from_le_bytes(value) } else { u32::from_be_bytes(value) }))
    };
    let count = next_u32(&mut position)?;
    let attribute_size = next_u32(&mut position)?;
    let minimum_event_size = attribute_size + 8;
    if count.saturating_mul(minimum_event_size) > contents.len() as u64 {
        return Err(EventDescriptionProblem::TooManyEvents { count, minimum_size: minimum_event_size });
    }
    let skip = |position: &mut usize, length: u64| -> Result<(), EventDescriptionProblem> {
        let end = (*position as u64).checked_add(length).filter(|&end| end <= contents.len() as u64);
        *position = end.ok_or(EventDescriptionProblem::LengthPastEnd)? as usize;
        Ok(())
    };
    for _ in 0..count {
        let mut size_field = position + 4;
        let size = next_u32(&mut size_field)?;
        if !attribute_is_read_whole(size, attribute_size) {
            return Err(EventDescriptionProblem::AttributeSize { size, slot: attribute_size });
        }
        skip(&mut position, attribute_size)?;
        let id_count = next_u32(&mut position)?;
        let string_length = next_u32(&mut position)?;
        skip(&mut position, string_length)?;
        skip(&mut position, id_count.saturating_mul(8))?;
    }
    Ok(())
}

/// `length` bytes at `offset`, which must lie inside the file.
pub fn read_at<R: Read + Seek>(
    input: &mut R,
    offset: u64,
    length: u64,
    file_length: u64,
) -> Result<Vec<u8>, PerfDataError> {
    FileSection { offset, size: length }.check(Section::Header, file_length)?;
    input.seek(std::io::SeekFrom::Start(offset))?;
    let mut bytes = vec![0; length as usize];
    input.read_exact(&mut bytes).map_err(|error| PerfDataError::ReadAt { offset, error })?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attribute sizes the attribute reader reads whole, and the event
    /// descriptions that hold others (the sample source's tests read whole
    /// files with them).
    #[test]
    fn attributes_the_reader_would_not_read_whole_are_found() {
        let sizes: Vec<u64> = (0..=200).filter(|&size| attribute_is_read_whole(size, 144)).collect();
        let mut expected = vec![64, 72, 80, 96, 104, 112, 120, 128];
        expected.extend(129..=144);
        assert_eq!(sizes, expected);

        // The same in the event descriptions feature section.
        let mut descriptions = Vec::new();
        descriptions.extend(1u32.to_le_bytes()); // one event
        descriptions.extend(144u32.to_le_bytes()); // attr_size
        let mut attribute = vec![0u8; 144];
        attribute[4..8].copy_from_slice(&100u32.to_le_bytes());
        descriptions.extend(attribute);
        descriptions.extend([0u8; 8]); // no ids, an empty name
        assert!(matches!(
            check_event_descriptions(&descriptions, true),
            Err(EventDescriptionProblem::AttributeSize { size: 100, slot: 144 })
        ));
        descriptions[12..16].copy_from_slice(&128u32.to_le_bytes());
        assert!(check_event_descriptions(&descriptions, true).is_ok());
    }
}
