//! The identity of the machine a perf.data was recorded on, as perf wrote it
//! (the kernel's release and the build ids of `[kernel.kallsyms]` and
//! `[vdso]`), rewritten so that a test can read one committed recording as
//! if it had been made on the machine running the test, or on another one.
//!
//! Layouts from the kernel's `tools/perf/util/header.c` and
//! `tools/perf/Documentation/perf.data-file-format.txt`: a file's feature
//! sections follow its data section, one `perf_file_section` per bit set in
//! the header's feature bitmap.

use std::path::Path;

/// `HEADER_BUILD_ID`: `build_id_event` records.
const FEATURE_BUILD_ID: u64 = 2;
/// `HEADER_OSRELEASE`: the kernel release, a `perf_header_string`.
const FEATURE_OSRELEASE: u64 = 4;
/// `build_id_event`: header (8 bytes), pid (4), then the build id.
const BUILD_ID_AT: usize = 12;
/// perf pads build ids to 20 bytes (24 with the size byte and padding).
const BUILD_ID_LENGTH: usize = 20;
/// `build_id_event`'s file name, after the 24 bytes of the build id.
const FILE_NAME_AT: usize = 36;

/// The kernel's name in perf's build id table.
pub const KERNEL: &str = "[kernel.kallsyms]";
/// The vDSO's name in perf's build id table.
pub const VDSO: &str = "[vdso]";

/// What a recording says of the machine it was made on.
#[derive(Debug, Clone, Default)]
pub struct MachineIdentity {
    /// The kernel release (`uname -r`); `None` keeps the recorded one.
    pub release: Option<String>,
    /// The kernel's build id; `None` keeps the recorded one.
    pub kernel_build_id: Option<Vec<u8>>,
    /// Drops the kernel's build id from the table (the file name is changed
    /// so that no reader takes it for the kernel's), as in a recording made
    /// where perf could not read one: the release is all that is left.
    pub without_kernel_build_id: bool,
    /// The vDSO's build id; `None` keeps the recorded one.
    pub vdso_build_id: Option<Vec<u8>>,
}

impl MachineIdentity {
    /// The machine running the test, as far as it tells: its release, its
    /// kernel's build id (`/sys/kernel/notes`) and its vDSO's build id (this
    /// process's own image, which every process of the machine shares).
    pub fn this_machine() -> MachineIdentity {
        MachineIdentity {
            release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .ok()
                .map(|release| release.trim().to_string()),
            kernel_build_id: std::fs::read("/sys/kernel/notes").ok().and_then(|notes| gnu_build_id(&notes)),
            without_kernel_build_id: false,
            vdso_build_id: own_vdso_build_id(),
        }
    }

    /// A machine that no real one is: a release no kernel has and build ids
    /// of repeated bytes.
    pub fn elsewhere() -> MachineIdentity {
        MachineIdentity {
            release: Some(OTHER_RELEASE.to_string()),
            kernel_build_id: Some(vec![0x5a; BUILD_ID_LENGTH]),
            without_kernel_build_id: false,
            vdso_build_id: Some(vec![0xa5; BUILD_ID_LENGTH]),
        }
    }
}

/// The release of [`MachineIdentity::elsewhere`].
pub const OTHER_RELEASE: &str = "0.0.0-elsewhere";

/// The perf.data `bytes` with `identity` written over what they say of the
/// recording machine. Panics on a file it cannot walk: a test fixture.
pub fn rewrite_machine_identity(bytes: &[u8], identity: &MachineIdentity) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    assert_eq!(&bytes[..8], b"PERFILE2", "not a little-endian perf.data");
    assert!(!is_pipe(&bytes), "a pipe's perf.data, which --perf-data does not read");
    rewrite_file(&mut bytes, identity);
    bytes
}

/// Writes `identity` into a copy of the gzipped perf.data `recording` at
/// `destination`.
pub fn write_with_identity(recording: &Path, destination: &Path, identity: &MachineIdentity) {
    let rewritten = rewrite_machine_identity(&super::gunzip(recording), identity);
    std::fs::write(destination, rewritten).unwrap();
}

/// Whether a perf.data was written to a pipe (`perf record -o -`): its
/// header is 16 bytes, its features come as records in the stream.
pub fn is_pipe(bytes: &[u8]) -> bool {
    word(bytes, 8) == 16
}

fn word(bytes: &[u8], offset: usize) -> u64 {
    u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap())
}

fn half_word(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap())
}

/// The file names perf recorded a build id for, in the file's order.
pub fn files_with_build_ids(bytes: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut copy = bytes.to_vec();
    walk_features(&mut copy, &mut |feature, section| {
        if feature == FEATURE_BUILD_ID {
            for_each_build_id_record(section, &mut |record| names.push(file_name(record).0));
        }
    });
    names
}

/// A build id record's file name and where it ends.
fn file_name(record: &[u8]) -> (String, usize) {
    let end = record[FILE_NAME_AT..].iter().position(|&byte| byte == 0).map_or(record.len(), |end| FILE_NAME_AT + end);
    (String::from_utf8_lossy(&record[FILE_NAME_AT..end]).into_owned(), end)
}

fn for_each_build_id_record(section: &mut [u8], each: &mut dyn FnMut(&mut [u8])) {
    let mut record = 0;
    while record < section.len() {
        let record_size = u16::from_le_bytes([section[record + 6], section[record + 7]]) as usize;
        assert!(record_size > FILE_NAME_AT, "a build id record of {record_size} bytes");
        each(&mut section[record..record + record_size]);
        record += record_size;
    }
}

/// A file: the feature sections after the data section, in bit order.
fn rewrite_file(bytes: &mut [u8], identity: &MachineIdentity) {
    walk_features(bytes, &mut |feature, section| match feature {
        FEATURE_BUILD_ID => for_each_build_id_record(section, &mut |record| rewrite_build_id(record, identity)),
        FEATURE_OSRELEASE => rewrite_release(section, identity),
        _ => {}
    });
}

/// Calls `each` with every feature section of a file and its feature bit.
fn walk_features(bytes: &mut [u8], each: &mut dyn FnMut(u64, &mut [u8])) {
    // perf_file_header: magic, size, attr_size, attrs, data {offset, size}
    // at 40, event_types, then the 256-bit feature bitmap at 72.
    // A recording whose perf was killed has a data size of 0 and no feature
    // sections: nothing of the machine to rewrite.
    if word(bytes, 48) == 0 {
        return;
    }
    let sections_at = (word(bytes, 40) + word(bytes, 48)) as usize;
    let mut section = 0;
    for feature in 0..256u64 {
        let bitmap_word = word(bytes, 72 + (feature / 64) as usize * 8);
        if bitmap_word & (1 << (feature % 64)) == 0 {
            continue;
        }
        let entry = sections_at + section * 16;
        let (offset, size) = (word(bytes, entry) as usize, word(bytes, entry + 8) as usize);
        section += 1;
        each(feature, &mut bytes[offset..offset + size]);
    }
}

/// One `build_id_event`.
fn rewrite_build_id(record: &mut [u8], identity: &MachineIdentity) {
    let (name, name_end) = file_name(record);
    let replacement = match name.as_str() {
        KERNEL if identity.without_kernel_build_id => {
            // `[kernel.kallsyms]` becomes `[kernel.kallsymz]`: no longer the kernel's.
            record[name_end - 2] = b'z';
            return;
        }
        KERNEL => identity.kernel_build_id.as_ref(),
        VDSO => identity.vdso_build_id.as_ref(),
        _ => None,
    };
    if let Some(build_id) = replacement {
        let mut padded = [0u8; BUILD_ID_LENGTH];
        padded[..build_id.len().min(BUILD_ID_LENGTH)].copy_from_slice(&build_id[..build_id.len().min(BUILD_ID_LENGTH)]);
        record[BUILD_ID_AT..BUILD_ID_AT + BUILD_ID_LENGTH].copy_from_slice(&padded);
        // Newer perf keeps the build id's length in the byte after it; older
        // perf leaves it 0 (then readers take all 20 bytes).
        if record[BUILD_ID_AT + BUILD_ID_LENGTH] != 0 {
            record[BUILD_ID_AT + BUILD_ID_LENGTH] = build_id.len().min(BUILD_ID_LENGTH) as u8;
        }
    }
}

/// A `perf_header_string`: its length (with the padding perf writes), then
/// the text, NUL-padded.
fn rewrite_release(section: &mut [u8], identity: &MachineIdentity) {
    let Some(release) = &identity.release else { return };
    let room = (half_word(section, 0) as usize).min(section.len() - 4);
    assert!(release.len() < room, "release {release:?} longer than the {room} bytes perf left");
    let text = &mut section[4..4 + room];
    text.fill(0);
    text[..release.len()].copy_from_slice(release.as_bytes());
}

/// The build id of an ELF note section (`/sys/kernel/notes`): the
/// descriptor of the `GNU` note of type `NT_GNU_BUILD_ID` (3).
pub fn gnu_build_id(notes: &[u8]) -> Option<Vec<u8>> {
    let align = |length: usize| length.div_ceil(4) * 4;
    let mut offset = 0;
    while offset + 12 <= notes.len() {
        let name_size = half_word(notes, offset) as usize;
        let descriptor_size = half_word(notes, offset + 4) as usize;
        let kind = half_word(notes, offset + 8);
        let name_at = offset + 12;
        let descriptor_at = name_at + align(name_size);
        let next = descriptor_at + align(descriptor_size);
        if next > notes.len() {
            return None;
        }
        if kind == 3 && &notes[name_at..name_at + name_size] == b"GNU\0" {
            return Some(notes[descriptor_at..descriptor_at + descriptor_size].to_vec());
        }
        offset = next;
    }
    None
}

/// This process's vDSO's build id, read from its own memory.
pub fn own_vdso_build_id() -> Option<Vec<u8>> {
    use object::Object as _;
    use std::io::{Read as _, Seek as _};
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|line| line.ends_with(VDSO))?;
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    let (start, end) = (u64::from_str_radix(start, 16).ok()?, u64::from_str_radix(end, 16).ok()?);
    let mut image = vec![0; end.checked_sub(start)? as usize];
    let mut memory = std::fs::File::open("/proc/self/mem").ok()?;
    memory.seek(std::io::SeekFrom::Start(start)).ok()?;
    memory.read_exact(&mut image).ok()?;
    object::File::parse(&*image).ok()?.build_id().ok()?.map(<[u8]>::to_vec)
}
