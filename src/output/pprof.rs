//! pprof output: google/pprof's `profile.proto`, gzipped, with one Location
//! per sampled PC whose Lines are the inline frames there.
//!
//! The messages mirror
//! <https://github.com/google/pprof/blob/main/proto/profile.proto>; prost
//! encodes them. As the format defines, a Location's last Line is the
//! outermost function (the code object's own), the earlier ones were inlined
//! into it; a Sample's first location is the leaf.

use std::io::{self, Write};

use indexmap::IndexSet;
use prost::Message;

use crate::model::stack_profile::StackProfile;

/// `profile.proto`'s `Profile`.
#[derive(Clone, PartialEq, Message)]
pub struct Profile {
    /// What each sample value is.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<PprofSample>,
    /// Mapped binaries (none: JIT code has no file).
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    /// Code locations.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<PprofLocation>,
    /// Functions.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<PprofFunction>,
    /// All strings; index 0 is the empty string.
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    /// Frames to drop (a regex string index).
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    /// Frames to keep (a regex string index).
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    /// When the profile was collected.
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    /// How long it was collected for.
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    /// What `period` counts.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    /// The sampling period.
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Free-form comments (string indexes).
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// The sample type shown by default (a string index).
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

/// `profile.proto`'s `ValueType`: a type and unit, as string indexes.
#[derive(Clone, PartialEq, Message)]
pub struct ValueType {
    /// e.g. `samples`, `cpu`.
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// e.g. `count`, `nanoseconds`.
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// `profile.proto`'s `Sample`.
#[derive(Clone, PartialEq, Message)]
pub struct PprofSample {
    /// Location ids, leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One value per sample type.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Labels.
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// `profile.proto`'s `Label`.
#[derive(Clone, PartialEq, Message)]
pub struct Label {
    /// Key (string index).
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// String value (string index).
    #[prost(int64, tag = "2")]
    pub str: i64,
    /// Numeric value.
    #[prost(int64, tag = "3")]
    pub num: i64,
    /// Unit of `num` (string index).
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

/// `profile.proto`'s `Mapping`.
#[derive(Clone, PartialEq, Message)]
pub struct Mapping {
    /// Unique nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Start address.
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    /// End address.
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    /// File offset of the start.
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    /// File name (string index).
    #[prost(int64, tag = "5")]
    pub filename: i64,
    /// Build id (string index).
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    /// Whether functions are resolved.
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    /// Whether file names are resolved.
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    /// Whether line numbers are resolved.
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    /// Whether inline frames are resolved.
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// `profile.proto`'s `Location`.
#[derive(Clone, PartialEq, Message)]
pub struct PprofLocation {
    /// Unique nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// The mapping (0: none).
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    /// The instruction address (0: none).
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// The functions at this address: the last is the outermost, the
    /// earlier ones were inlined into it.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<PprofLine>,
    /// Whether the frames were folded (recursion elided).
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

/// `profile.proto`'s `Line`.
#[derive(Clone, PartialEq, Message)]
pub struct PprofLine {
    /// The function.
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// 1-based line (0: unknown).
    #[prost(int64, tag = "2")]
    pub line: i64,
    /// 1-based column (0: unknown).
    #[prost(int64, tag = "3")]
    pub column: i64,
}

/// `profile.proto`'s `Function`.
#[derive(Clone, PartialEq, Message)]
pub struct PprofFunction {
    /// Unique nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Human-readable name (string index).
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// Name as the system knows it (string index): V8's
    /// `name script:line:column`.
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// Source file (string index).
    #[prost(int64, tag = "4")]
    pub filename: i64,
    /// Line where the function starts.
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

/// The string table being built: index 0 is `""`, as the format requires.
struct StringTable {
    strings: IndexSet<String>,
}

impl StringTable {
    fn new() -> StringTable {
        let mut strings = IndexSet::new();
        strings.insert(String::new());
        StringTable { strings }
    }

    fn index(&mut self, text: &str) -> i64 {
        let index = match self.strings.get_index_of(text) {
            Some(index) => index,
            None => self.strings.insert_full(text.to_string()).0,
        };
        i64::try_from(index).unwrap_or(i64::MAX)
    }
}

/// Converts a stack profile to pprof. The sample types are `samples/count`
/// and the summed perf periods: `cpu/nanoseconds` for the `cpu-clock` and
/// `task-clock` events (whose periods are nanoseconds), else `EVENT/events`.
pub fn to_pprof(profile: &StackProfile) -> Profile {
    let mut strings = StringTable::new();
    let (period_type, period_unit) = match profile.event.as_deref() {
        None | Some("cpu-clock") | Some("task-clock") => ("cpu", "nanoseconds"),
        Some(event) => (event, "events"),
    };
    let samples_type = ValueType { r#type: strings.index("samples"), unit: strings.index("count") };
    let period_value_type = ValueType { r#type: strings.index(period_type), unit: strings.index(period_unit) };
    let function = profile
        .functions
        .iter()
        .enumerate()
        .map(|(index, function)| PprofFunction {
            id: index as u64 + 1,
            name: strings.index(&function.name),
            system_name: strings.index(&function.to_string()),
            filename: function.file.as_deref().map_or(0, |file| strings.index(file)),
            start_line: function.start.map_or(0, |start| i64::from(start.line)),
        })
        .collect();
    let location = profile
        .locations
        .iter()
        .enumerate()
        .map(|(index, location)| PprofLocation {
            id: index as u64 + 1,
            mapping_id: 0,
            address: location.address.unwrap_or(0),
            line: location
                .frames
                .iter()
                .map(|frame| PprofLine {
                    function_id: u64::from(frame.function.0) + 1,
                    line: frame.line.map_or(0, |line| i64::from(line.line)),
                    column: frame.line.and_then(|line| line.column).map_or(0, i64::from),
                })
                .collect(),
            is_folded: false,
        })
        .collect();
    let sample = profile
        .stacks
        .iter()
        .map(|stack| PprofSample {
            location_id: stack.locations.iter().map(|location| u64::from(location.0) + 1).collect(),
            value: vec![saturating_i64(stack.samples), saturating_i64(stack.count)],
            label: Vec::new(),
        })
        .collect();
    let total_samples = profile.total_samples();
    let period = profile.total_count().checked_div(total_samples).map_or(0, saturating_i64);
    let comment = vec![strings.index("v8inline: JavaScript frames expanded into their inlined functions")];
    Profile {
        sample_type: vec![samples_type, period_value_type.clone()],
        sample,
        mapping: Vec::new(),
        location,
        function,
        drop_frames: 0,
        keep_frames: 0,
        time_nanos: 0,
        duration_nanos: 0,
        period_type: Some(period_value_type),
        period,
        comment,
        default_sample_type: 0,
        string_table: strings.strings.into_iter().collect(),
    }
}

fn saturating_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Writes `profile` as gzipped `profile.proto` bytes, the form `go tool
/// pprof` and other readers expect in a `.pb.gz` file. Deterministic: the
/// gzip header carries no time.
pub fn write_pprof<W: Write>(profile: &StackProfile, output: W) -> io::Result<()> {
    let bytes = to_pprof(profile).encode_to_vec();
    let mut encoder = flate2::GzBuilder::new().mtime(0).write(output, flate2::Compression::default());
    encoder.write_all(&bytes)?;
    encoder.finish()?.flush()
}

/// Reads gzipped (or plain) `profile.proto` bytes.
pub fn read_pprof(bytes: &[u8]) -> io::Result<Profile> {
    let mut plain = Vec::new();
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut plain)?;
        &plain[..]
    } else {
        bytes
    };
    Profile::decode(bytes).map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))
}
