//! Native symbols: function names from the ELF symbol tables of the
//! executables and libraries a process had mapped, for sample sources that
//! carry raw addresses (V8's `tick` records, perf.data).
//!
//! The rules follow perf's own ELF symbolizer (`tools/perf/util/symbol-elf.c`
//! and `symbol.c` in the Linux tree) so that the names equal what `perf
//! script` prints:
//!
//! * functions only (`STT_FUNC`, `STT_GNU_IFUNC`), from `.symtab` when the
//!   file has one, else from `.dynsym`;
//! * of several symbols at one address, perf's `choose_best_symbol` picks:
//!   non-zero size, then non-weak, then global, then fewer leading
//!   underscores, then the longer name;
//! * a symbol of size 0 reaches up to the next symbol (`symbols__fixup_end`);
//! * C++ names are demangled without parameters or return type, as perf
//!   does by default (`v8::internal::StrDup`, not `v8::internal::StrDup(char
//!   const*)`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use object::{Object, ObjectSegment, ObjectSymbol, SymbolFlags};
use rustc_hash::{FxHashMap, FxHashSet};

use object::elf::{STB_GLOBAL, STB_WEAK, STT_FUNC, STT_GNU_IFUNC};

use crate::diagnostics::{Diagnostics, WarningKind};
use crate::error::{Error, ErrorCause};

/// One function symbol.
#[derive(Debug)]
struct FunctionSymbol {
    /// Its virtual address in the file.
    address: u64,
    /// Its size (after the zero-size fixup).
    size: u64,
    /// Its raw (mangled) name.
    raw_name: Box<str>,
    /// Its demangled name, computed on first use.
    demangled: OnceLock<Box<str>>,
}

/// A `PT_LOAD` segment: where a range of the file lands in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSegment {
    /// Offset of the segment in the file.
    pub file_offset: u64,
    /// Bytes of the file in the segment.
    pub file_size: u64,
    /// Virtual address of the segment's first byte.
    pub virtual_address: u64,
}

/// The function a native address is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolHit<'file> {
    /// Demangled name, e.g. `v8::internal::Heap::CollectGarbage`.
    pub name: &'file str,
    /// Offset of the address from the function's start.
    pub offset: u64,
}

/// The function symbols and load segments of one ELF file.
#[derive(Debug)]
pub struct ElfSymbols {
    /// Function symbols by ascending address, one per address.
    symbols: Vec<FunctionSymbol>,
    /// The `PT_LOAD` segments.
    segments: Vec<LoadSegment>,
    /// The GNU build id, if the file has one.
    pub build_id: Option<Vec<u8>>,
}

impl ElfSymbols {
    /// Reads the symbols of the ELF file at `path`. When a separate debug
    /// file is installed for it (`/usr/lib/debug/.build-id/xx/rest.debug`,
    /// matched by build id, as perf and gdb look for it), its fuller symbol
    /// table is used: distributions strip local functions from libraries.
    pub fn read(path: &Path) -> Result<ElfSymbols, Error> {
        let mut symbols = ElfSymbols::read_sections(path).map_err(Error::at(path))?;
        if let Some(debug_path) = symbols.build_id.as_deref().and_then(debug_file_path)
            && let Ok(debug_symbols) = ElfSymbols::read_sections(&debug_path)
            && debug_symbols.build_id == symbols.build_id
            && debug_symbols.symbols.len() > symbols.symbols.len()
        {
            symbols.symbols = debug_symbols.symbols;
        }
        Ok(symbols)
    }

    /// Reads the symbols of an ELF file, reading only the parts needed (a
    /// binary with debug info is mostly other sections: node's is 99 MB).
    fn read_sections(path: &Path) -> Result<ElfSymbols, ErrorCause> {
        // A recording may name any path: opening a FIFO would wait for a
        // writer forever, a device would be read as long as it gives bytes.
        if !std::fs::metadata(path)?.is_file() {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file").into());
        }
        let file = std::fs::File::open(path)?;
        let cache = object::ReadCache::new(file);
        // Symbol and string tables are read whole, one read each: through
        // the cache alone every symbol name would be a read of its own
        // (node has ~100,000).
        let tables = {
            use object::{Object, ObjectSection};
            let elf = object::File::parse(&cache)?;
            let tables: Vec<(u64, u64)> = elf
                .sections()
                .filter(|section| {
                    matches!(section.name(), Ok(".symtab" | ".strtab" | ".dynsym" | ".dynstr" | ".rela.plt"))
                })
                .filter_map(|section| section.file_range())
                .collect();
            tables
        };
        let loaded = tables
            .into_iter()
            .filter_map(|(offset, size)| {
                object::ReadRef::read_bytes_at(&cache, offset, size).ok().map(|bytes| LoadedRange { offset, bytes })
            })
            .collect();
        Ok(ElfSymbols::parse_data(&PartlyLoadedFile { loaded, rest: &cache })?)
    }

    /// Parses the symbols of an ELF file in memory.
    pub fn parse(bytes: &[u8]) -> Result<ElfSymbols, object::read::Error> {
        ElfSymbols::parse_data(bytes)
    }

    /// Parses the symbols of an ELF file from `data`.
    fn parse_data<'data, Data: object::ReadRef<'data>>(data: Data) -> Result<ElfSymbols, object::read::Error> {
        let file = object::File::parse(data)?;
        let mut candidates = Vec::new();
        push_function_symbols(&file, file.symbols(), &mut candidates);
        if candidates.is_empty() {
            push_function_symbols(&file, file.dynamic_symbols(), &mut candidates);
        }
        drop_labels_inside_functions(&mut candidates);
        push_plt_symbols(data, &mut candidates);
        let segments = file
            .segments()
            .map(|segment| {
                let (file_offset, file_size) = segment.file_range();
                LoadSegment { file_offset, file_size, virtual_address: segment.address() }
            })
            .collect();
        let build_id = file.build_id().ok().flatten().map(<[u8]>::to_vec);
        Ok(ElfSymbols { symbols: best_per_address(candidates), segments, build_id })
    }

    /// The number of function symbols.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether the file has no function symbol.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The `PT_LOAD` segments.
    pub fn segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// The virtual address at which byte `file_offset` of the file is
    /// loaded, through the segment holding it.
    pub fn virtual_address_of_file_offset(&self, file_offset: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|segment| file_offset >= segment.file_offset && file_offset - segment.file_offset < segment.file_size)
            .map(|segment| (file_offset - segment.file_offset).wrapping_add(segment.virtual_address))
    }

    /// The function containing the virtual address `address`, if any.
    pub fn lookup(&self, address: u64) -> Option<SymbolHit<'_>> {
        let after = self.symbols.partition_point(|symbol| symbol.address <= address);
        let symbol = self.symbols.get(after.checked_sub(1)?)?;
        let offset = address - symbol.address;
        (offset < symbol.size).then(|| SymbolHit { name: symbol.demangled_name(), offset })
    }
}

impl FunctionSymbol {
    fn demangled_name(&self) -> &str {
        self.demangled.get_or_init(|| demangle(&self.raw_name))
    }
}

/// A symbol before duplicates are resolved.
struct Candidate {
    address: u64,
    size: u64,
    binding: object::elf::SymbolBind,
    name: Box<str>,
    /// An untyped symbol of no size: names only code no function covers.
    is_label: bool,
}

/// Where distributions install the debug file of a build id.
fn debug_file_path(build_id: &[u8]) -> Option<PathBuf> {
    let (first, rest) = build_id.split_first()?;
    let hex = |bytes: &[u8]| bytes.iter().map(|byte| format!("{byte:02x}")).collect::<String>();
    Some(PathBuf::from(format!("/usr/lib/debug/.build-id/{first:02x}/{}.debug", hex(rest))))
}

/// Appends the defined, named function symbols of `symbols`, and the
/// labels in code that perf names frames by too (`_dl_start_user` in
/// ld.so): untyped symbols of no size, defined in an executable section,
/// visible (`elf_sym__is_label` in perf's `symbol-elf.c`).
fn push_function_symbols<'data>(
    file: &object::File<'data, impl object::ReadRef<'data>>,
    symbols: impl Iterator<Item = impl ObjectSymbol<'data>>,
    candidates: &mut Vec<Candidate>,
) {
    use object::{Object, ObjectSection, SectionFlags, SymbolSection};
    // SHF_EXECINSTR, also in a debug file, whose code sections hold no bytes.
    let in_code = |section: SymbolSection| match section {
        SymbolSection::Section(index) => file.section_by_index(index).is_ok_and(|section| {
            matches!(section.flags(), SectionFlags::Elf { sh_flags, .. }
                if sh_flags.0 & object::elf::SHF_EXECINSTR.0 != 0)
        }),
        _ => false,
    };
    for symbol in symbols {
        let SymbolFlags::Elf { st_info, st_other } = symbol.flags() else { continue };
        let symbol_type = st_info.st_type();
        let visibility = st_other.visibility();
        // STT_GNU_IFUNC: an indirect function, code too.
        let is_function = symbol_type == STT_FUNC || symbol_type == STT_GNU_IFUNC;
        let is_label = symbol_type == object::elf::STT_NOTYPE
            && symbol.size() == 0
            && visibility != object::elf::STV_HIDDEN
            && visibility != object::elf::STV_INTERNAL
            && in_code(symbol.section());
        if !(is_function || is_label) || symbol.is_undefined() {
            continue;
        }
        let Ok(name) = symbol.name() else { continue };
        if name.is_empty() {
            continue;
        }
        candidates.push(Candidate {
            address: symbol.address(),
            size: symbol.size(),
            binding: st_info.st_bind(),
            name: name.into(),
            is_label: !is_function,
        });
    }
}

/// Drops the labels inside a function: perf's lookup finds the function
/// there (node's `construct_stub_create_deopt_addr` is inside
/// `Builtins_JSConstructStubGeneric`), a label names only the code between
/// functions (ld.so's `_dl_start_user`).
fn drop_labels_inside_functions(candidates: &mut Vec<Candidate>) {
    let mut functions: Vec<(u64, u64)> = candidates
        .iter()
        .filter(|candidate| !candidate.is_label && candidate.size > 0)
        .map(|candidate| (candidate.address, candidate.address.saturating_add(candidate.size)))
        .collect();
    functions.sort_unstable();
    // The furthest end of the functions up to each one (they may overlap).
    let mut furthest_end = 0;
    for function in &mut functions {
        furthest_end = furthest_end.max(function.1);
        function.1 = furthest_end;
    }
    let covered = |address: u64| {
        let before = functions.partition_point(|&(start, _)| start <= address);
        before > 0 && functions[before - 1].1 > address
    };
    candidates.retain(|candidate| !candidate.is_label || !covered(candidate.address));
}

/// Appends `name@plt` for each PLT entry of an x86-64 ELF file, as perf
/// synthesizes them (`dso__synthesize_plt_symbols` in `symbol-elf.c`): the
/// n-th `.rela.plt` relocation is the n-th 16-byte entry of `.plt.sec`, or of
/// `.plt` after its 16-byte header.
fn push_plt_symbols<'data, Data: object::ReadRef<'data>>(data: Data, candidates: &mut Vec<Candidate>) {
    use object::elf::{EM_X86_64, FileHeader64};
    use object::read::elf::{FileHeader, SectionHeader};
    const ENTRY_SIZE: u64 = 16;
    let Ok(header) = FileHeader64::<object::Endianness>::parse(data) else { return };
    let Ok(endian) = header.endian() else { return };
    if header.e_machine(endian) != EM_X86_64 {
        return;
    }
    let Ok(sections) = header.sections(endian, data) else { return };
    let entries_start = match sections.section_by_name(endian, b".plt.sec") {
        Some((_, section)) => section.sh_addr(endian),
        None => match sections.section_by_name(endian, b".plt") {
            Some((_, section)) => section.sh_addr(endian).wrapping_add(ENTRY_SIZE),
            None => return,
        },
    };
    let Some((_, relocation_section)) = sections.section_by_name(endian, b".rela.plt") else { return };
    let Ok(Some((relocations, symbol_section))) = relocation_section.rela(endian, data) else { return };
    let Ok(symbols) = sections.symbol_table_by_index(endian, data, symbol_section) else { return };
    for (index, relocation) in relocations.iter().enumerate() {
        let symbol_index = object::SymbolIndex(relocation.r_sym(endian, false) as usize);
        let Ok(symbol) = symbols.symbol(symbol_index) else { continue };
        let Ok(name) = symbols.symbol_name(endian, symbol) else { continue };
        candidates.push(Candidate {
            address: entries_start.wrapping_add(ENTRY_SIZE.wrapping_mul(index as u64)),
            size: ENTRY_SIZE,
            binding: object::elf::STB_GLOBAL,
            name: format!("{}@plt", String::from_utf8_lossy(name)).into(),
            is_label: false,
        });
    }
}

/// Sorts by address, keeps perf's best symbol per address and extends
/// zero-size symbols to the next one.
fn best_per_address(mut candidates: Vec<Candidate>) -> Vec<FunctionSymbol> {
    candidates.sort_by_key(|candidate| candidate.address);
    let mut kept: Vec<Candidate> = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        match kept.last_mut() {
            Some(last) if last.address == candidate.address => {
                if is_better(&candidate, last) {
                    *last = candidate;
                }
            }
            _ => kept.push(candidate),
        }
    }
    let next_addresses: Vec<Option<u64>> =
        (0..kept.len()).map(|index| kept.get(index + 1).map(|next| next.address)).collect();
    kept.into_iter()
        .zip(next_addresses)
        .map(|(candidate, next_address)| {
            let size = match (candidate.size, next_address) {
                (0, Some(next)) => next - candidate.address,
                (size, _) => size,
            };
            FunctionSymbol { address: candidate.address, size, raw_name: candidate.name, demangled: OnceLock::new() }
        })
        .collect()
}

/// perf's `choose_best_symbol`: whether `challenger` beats `incumbent`.
fn is_better(challenger: &Candidate, incumbent: &Candidate) -> bool {
    let underscores = |name: &str| name.bytes().take_while(|&byte| byte == b'_').count();
    let key = |candidate: &Candidate| {
        (
            candidate.size > 0,
            candidate.binding != STB_WEAK,
            candidate.binding == STB_GLOBAL,
            std::cmp::Reverse(underscores(&candidate.name)),
            candidate.name.len(),
        )
    };
    key(challenger) > key(incumbent)
}

/// Demangles a C++ (Itanium ABI) name without parameters or return type,
/// as perf prints it; other names are returned as they are.
pub fn demangle(raw_name: &str) -> Box<str> {
    // perf demangles a PLT entry's target and appends `@plt` again
    // (`dso__synthesize_plt_symbols`).
    if let Some(target) = raw_name.strip_suffix("@plt") {
        return format!("{}@plt", demangle(target)).into();
    }
    if !raw_name.starts_with("_Z") {
        return raw_name.into();
    }
    let options = cpp_demangle::DemangleOptions::new().no_params().no_return_type();
    match cpp_demangle::Symbol::new(raw_name).ok().and_then(|symbol| symbol.demangle_with_options(&options).ok()) {
        // cpp_demangle prints an empty template parameter pack as `, >`
        // where binutils (and so perf) prints nothing.
        Some(demangled) => binutils_thunk_name(raw_name, &binutils_literals(&demangled.replace(", >", ">"))).into(),
        None => raw_name.into(),
    }
}

/// Integer literals of template arguments as binutils prints them (`0ul`,
/// `3u`, `true`; `d_print_comp`'s `DEMANGLE_COMPONENT_LITERAL` in
/// libiberty's cp-demangle.c) rather than cpp_demangle (`(unsigned long)0`).
fn binutils_literals(demangled: &str) -> String {
    const SUFFIXES: [(&str, &str); 6] = [
        ("(int)", ""),
        ("(unsigned int)", "u"),
        ("(long)", "l"),
        ("(unsigned long)", "ul"),
        ("(long long)", "ll"),
        ("(unsigned long long)", "ull"),
    ];
    if !demangled.contains(")") {
        return demangled.to_string();
    }
    let mut result = String::with_capacity(demangled.len());
    let mut rest = demangled;
    'outer: while let Some(open) = rest.find('(') {
        result.push_str(&rest[..open]);
        let candidate = &rest[open..];
        let digits_of = |after: &str| {
            let sign = usize::from(after.starts_with('-'));
            let length = after[sign..].bytes().take_while(u8::is_ascii_digit).count();
            (length > 0).then_some(sign + length)
        };
        for (cast, suffix) in SUFFIXES {
            if let Some(after) = candidate.strip_prefix(cast)
                && let Some(length) = digits_of(after)
            {
                result.push_str(&after[..length]);
                result.push_str(suffix);
                rest = &after[length..];
                continue 'outer;
            }
        }
        for (literal, word) in [("(bool)0", "false"), ("(bool)1", "true")] {
            if let Some(after) = candidate.strip_prefix(literal)
                && !after.starts_with(|character: char| character.is_ascii_digit())
            {
                result.push_str(word);
                rest = after;
                continue 'outer;
            }
        }
        result.push('(');
        rest = &candidate[1..];
    }
    result.push_str(rest);
    result
}

/// Thunks as binutils names them (`non-virtual thunk to X`) rather than
/// cpp_demangle (`{virtual override thunk({offset(-8)}, X)}`).
fn binutils_thunk_name(raw_name: &str, demangled: &str) -> String {
    let prefix = if raw_name.starts_with("_ZTh") {
        "non-virtual thunk to "
    } else if raw_name.starts_with("_ZTv") {
        "virtual thunk to "
    } else if raw_name.starts_with("_ZTc") {
        "covariant return thunk to "
    } else {
        return demangled.to_string();
    };
    // `{virtual override thunk({OFFSET}, TARGET)}`: the target follows the
    // offsets' closing brace.
    let target = demangled
        .strip_suffix(")}")
        .and_then(|inner| inner.find("}, ").map(|comma| &inner[comma + 3..]))
        .unwrap_or(demangled);
    format!("{prefix}{target}")
}

/// A range of a file read whole.
struct LoadedRange<'data> {
    offset: u64,
    bytes: &'data [u8],
}

impl LoadedRange<'_> {
    /// The loaded bytes from `offset` on, if it lies in this range.
    fn from(&self, offset: u64) -> Option<&[u8]> {
        let start = usize::try_from(offset.checked_sub(self.offset)?).ok()?;
        self.bytes.get(start..)
    }
}

/// A file whose symbol and string tables are in memory; other reads go
/// through object's [`object::ReadCache`].
struct PartlyLoadedFile<'data, R: object::ReadCacheOps> {
    loaded: Vec<LoadedRange<'data>>,
    rest: &'data object::ReadCache<R>,
}

impl<'data, R: object::ReadCacheOps> object::ReadRef<'data> for &'data PartlyLoadedFile<'data, R> {
    fn len(self) -> Result<u64, ()> {
        self.rest.len()
    }

    fn read_bytes_at(self, offset: u64, size: u64) -> Result<&'data [u8], ()> {
        let size_in_memory = usize::try_from(size).map_err(|_| ())?;
        for range in &self.loaded {
            if let Some(bytes) = range.from(offset).filter(|bytes| bytes.len() >= size_in_memory) {
                return Ok(&bytes[..size_in_memory]);
            }
        }
        self.rest.read_bytes_at(offset, size)
    }

    fn read_bytes_at_until(self, range: std::ops::Range<u64>, delimiter: u8) -> Result<&'data [u8], ()> {
        for loaded in &self.loaded {
            if let Some(bytes) = loaded.from(range.start) {
                let limit =
                    usize::try_from(range.end.checked_sub(range.start).ok_or(())?).map_err(|_| ())?.min(bytes.len());
                let end = memchr::memchr(delimiter, &bytes[..limit]).ok_or(())?;
                return Ok(&bytes[..end]);
            }
        }
        self.rest.read_bytes_at_until(range, delimiter)
    }
}

/// The symbols of every file looked up so far, each read once.
#[derive(Debug, Default)]
pub struct SymbolCache {
    files: FxHashMap<PathBuf, Option<ElfSymbols>>,
    /// Files being read on another thread ([`SymbolCache::read_ahead`]).
    ahead: Option<ReadAhead>,
    /// Whether files are read at all (see [`SymbolCache::reading_no_files`]).
    reads_no_files: bool,
    /// Files that could not be read ([`WarningKind::NoSymbols`], once per
    /// file).
    pub diagnostics: Diagnostics,
}

impl SymbolCache {
    /// An empty cache.
    pub fn new() -> SymbolCache {
        SymbolCache::default()
    }

    /// A cache that reads no file and names no frame: for fuzzing the
    /// readers that name mapped libraries, whose inputs would otherwise
    /// make every run read whatever ELF file they happen to name (node's
    /// 99 MB binary took 30 ms per run).
    pub fn reading_no_files() -> SymbolCache {
        SymbolCache { reads_no_files: true, ..SymbolCache::default() }
    }

    /// Starts reading the symbols of `paths` on other threads, taken in the
    /// order given, for [`SymbolCache::get`] to take when it is first asked
    /// for them: a recording lists the files its samples hit (perf.data's
    /// build ids), and node's symbols (20 ms) are then read while this
    /// thread waits for the kernel's. Files already read are left out; the
    /// files of an earlier read-ahead not taken yet are read again.
    pub fn read_ahead(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        if self.reads_no_files {
            return;
        }
        let paths: Vec<PathBuf> = paths.into_iter().filter(|path| !self.files.contains_key(path)).collect();
        if paths.is_empty() {
            return;
        }
        let (sender, results) = std::sync::mpsc::channel();
        let queue = std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::from(paths.clone())));
        for _ in 0..READ_AHEAD_THREADS {
            let (queue, sender) = (queue.clone(), sender.clone());
            // A thread that cannot be started leaves its share to the others,
            // or to `get`.
            let _ = std::thread::Builder::new().name("symbols".to_string()).spawn(move || {
                while let Some(path) = queue.lock().ok().and_then(|mut queue| queue.pop_front()) {
                    let read = read_file_symbols(&path);
                    // The reads are only a head start: once the cache is
                    // gone, nobody waits for them.
                    if sender.send((path, read)).is_err() {
                        break;
                    }
                }
            });
        }
        self.ahead = Some(ReadAhead { results, waiting: paths.into_iter().collect(), arrived: FxHashMap::default() });
    }

    /// The symbols of `path`, read on first use; `None` (warned about once)
    /// when the file cannot be read or is not ELF.
    pub fn get(&mut self, path: &Path) -> Option<&ElfSymbols> {
        if !self.files.contains_key(path) {
            let read = if let Some(read) = self.ahead.as_mut().and_then(|ahead| ahead.take(path)) {
                read
            } else if self.reads_no_files {
                let off = std::io::Error::new(std::io::ErrorKind::Unsupported, "not read (reading files is off)");
                Err(Error::new(path, off))
            } else {
                read_file_symbols(path)
            };
            let symbols = match read {
                Ok(symbols) => Some(symbols),
                Err(error) => {
                    self.diagnostics.warn(WarningKind::NoSymbols, || error.to_string());
                    None
                }
            };
            self.files.insert(path.to_owned(), symbols);
        }
        self.files.get(path).and_then(Option::as_ref)
    }
}

/// The threads [`SymbolCache::read_ahead`] reads files on: two, so that a
/// small file asked for first does not wait behind node's 100 MB binary.
const READ_AHEAD_THREADS: usize = 2;

/// Symbols read on another thread ([`SymbolCache::read_ahead`]).
#[derive(Debug)]
struct ReadAhead {
    /// Each file's symbols, as soon as one of the threads has read them.
    results: std::sync::mpsc::Receiver<(PathBuf, Result<ElfSymbols, Error>)>,
    /// The files not taken yet.
    waiting: FxHashSet<PathBuf>,
    /// Files read but not asked for yet.
    arrived: FxHashMap<PathBuf, Result<ElfSymbols, Error>>,
}

impl ReadAhead {
    /// The symbols of `path` if it is being read ahead, once they are read;
    /// `None` when it is not (or the reading thread is gone).
    fn take(&mut self, path: &Path) -> Option<Result<ElfSymbols, Error>> {
        if !self.waiting.remove(path) {
            return None;
        }
        while !self.arrived.contains_key(path) {
            let (read_path, read) = self.results.recv().ok()?;
            self.arrived.insert(read_path, read);
        }
        self.arrived.remove(path)
    }
}

/// The symbols of the file at `path`, or of this process's vDSO for
/// [`VDSO`].
fn read_file_symbols(path: &Path) -> Result<ElfSymbols, Error> {
    if path == Path::new(VDSO) { read_own_vdso() } else { ElfSymbols::read(path) }
}

/// The name of the kernel's virtual shared object in mappings.
pub const VDSO: &str = "[vdso]";

/// The symbols of this process's own vDSO: the kernel maps the same image
/// into every process, so it names the vDSO frames of the profiled one
/// (perf saves a copy of it for the same reason). Build ids tell if the
/// kernel changed since the recording.
fn read_own_vdso() -> Result<ElfSymbols, Error> {
    let error = Error::at::<std::io::Error>(Path::new(VDSO));
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(error)?;
    let range = maps
        .lines()
        .find(|line| line.ends_with(VDSO))
        .and_then(|line| line.split_whitespace().next())
        .and_then(|range| range.split_once('-'))
        .and_then(|(start, end)| Some((u64::from_str_radix(start, 16).ok()?, u64::from_str_radix(end, 16).ok()?)))
        .ok_or_else(|| error(std::io::Error::new(std::io::ErrorKind::NotFound, "not mapped in this process")))?;
    let mut image = vec![0; range.1.saturating_sub(range.0) as usize];
    let mut memory = std::fs::File::open("/proc/self/mem").map_err(error)?;
    std::io::Seek::seek(&mut memory, std::io::SeekFrom::Start(range.0)).map_err(error)?;
    std::io::Read::read_exact(&mut memory, &mut image).map_err(error)?;
    ElfSymbols::parse(&image).map_err(Error::at(Path::new(VDSO)))
}

/// A file mapped into a process's address space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMapping {
    /// First mapped address.
    pub start: u64,
    /// End of the mapping (exclusive).
    pub end: u64,
    /// The file offset mapped at `start`.
    pub file_offset: u64,
    /// The file's path as the process saw it.
    pub path: Box<str>,
}

impl FileMapping {
    /// Whether `address` lies in the mapping.
    pub fn contains(&self, address: u64) -> bool {
        self.start <= address && address < self.end
    }

    /// Whether the mapping has ELF symbols to read: a file (not `//anon`,
    /// `[heap]`, ...), or the kernel's `[vdso]` image.
    pub fn has_symbols(&self) -> bool {
        (self.path.starts_with('/') && !self.path.starts_with("//")) || &*self.path == VDSO
    }
}

impl SymbolCache {
    /// The function at `address` of `mapping`: the address is turned into a
    /// file offset, then into the ELF virtual address of that byte.
    pub fn symbolize(&mut self, mapping: &FileMapping, address: u64) -> Option<SymbolHit<'_>> {
        if !mapping.has_symbols() {
            return None;
        }
        let file_offset = address.checked_sub(mapping.start)?.checked_add(mapping.file_offset)?;
        let symbols = self.get(Path::new(&*mapping.path))?;
        let virtual_address = symbols.virtual_address_of_file_offset(file_offset)?;
        symbols.lookup(virtual_address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(address: u64, size: u64, binding: object::elf::SymbolBind, name: &str) -> Candidate {
        Candidate { address, size, binding, name: name.into(), is_label: false }
    }

    #[test]
    fn labels_in_code_name_frames_as_perf_names_them() {
        use object::write::{Object as WriteObject, Symbol, SymbolSection as WriteSection};
        use object::{Architecture, BinaryFormat, Endianness, SectionKind, SymbolFlags as Flags, SymbolKind};
        let mut elf = WriteObject::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        let text = elf.add_section(Vec::new(), b".text".to_vec(), SectionKind::Text);
        elf.append_section_data(text, &[0x90; 64], 16);
        let data = elf.add_section(Vec::new(), b".data".to_vec(), SectionKind::Data);
        elf.append_section_data(data, &[0; 16], 8);
        let symbol = |name: &str, value, size, kind, section| Symbol {
            name: name.as_bytes().to_vec(),
            value,
            size,
            kind,
            scope: object::SymbolScope::Compilation,
            weak: false,
            section: WriteSection::Section(section),
            flags: Flags::None,
        };
        elf.add_symbol(symbol("_dl_start", 0, 16, SymbolKind::Text, text));
        // An assembly label: untyped, no size (ld.so's _dl_start_user).
        elf.add_symbol(symbol("_dl_start_user", 32, 0, SymbolKind::Label, text));
        elf.add_symbol(symbol("after", 48, 16, SymbolKind::Text, text));
        // A label inside a function: the function names its code.
        elf.add_symbol(symbol("inside_after", 52, 0, SymbolKind::Label, text));
        elf.add_symbol(symbol("a_data_label", 0, 0, SymbolKind::Label, data));
        let symbols = ElfSymbols::parse(&elf.write().unwrap()).unwrap();
        assert_eq!(symbols.lookup(4).map(|hit| hit.name), Some("_dl_start"));
        assert_eq!(symbols.lookup(40).map(|hit| (hit.name, hit.offset)), Some(("_dl_start_user", 8)));
        // A label reaches up to the next symbol, as perf's symbols__fixup_end.
        assert_eq!(symbols.lookup(47).map(|hit| hit.name), Some("_dl_start_user"));
        assert_eq!(symbols.lookup(48).map(|hit| hit.name), Some("after"));
        assert_eq!(symbols.lookup(56).map(|hit| (hit.name, hit.offset)), Some(("after", 8)));
        assert_eq!(symbols.len(), 3, "labels outside code are not frames");
    }

    #[test]
    fn demangles_like_perf() {
        assert_eq!(&*demangle("_ZN2v88internal6StrDupEPKc"), "v8::internal::StrDup");
        assert_eq!(&*demangle("main"), "main");
        assert_eq!(
            &*demangle("_ZTv0_n24_N2v88internal8OFStreamD1Ev"),
            "virtual thunk to v8::internal::OFStream::~OFStream"
        );
        assert_eq!(
            &*demangle(
                "_ZThn8_N2v88internal23PointersUpdatingVisitor16VisitRootPointerENS0_4RootEPKcNS0_14FullObjectSlotE"
            ),
            "non-virtual thunk to v8::internal::PointersUpdatingVisitor::VisitRootPointer"
        );
        // An empty parameter pack, as binutils prints it.
        assert_eq!(
            &*demangle("_ZN2v88internal8compiler12PipelineImpl3RunINS1_17GraphBuilderPhaseEJEEEDaDpOT0_"),
            "v8::internal::compiler::PipelineImpl::Run<v8::internal::compiler::GraphBuilderPhase>"
        );
        assert_eq!(&*demangle("_Znot a name"), "_Znot a name");
        // PLT entries and template literals, as perf script printed them
        // for the same addresses of testdata/realapp.
        assert_eq!(&*demangle("_ZdlPv@plt"), "operator delete@plt");
        assert_eq!(&*demangle("_ZNSo6sentryC1ERSo@plt"), "std::ostream::sentry::sentry@plt");
        assert_eq!(&*demangle("memcpy@plt"), "memcpy@plt");
        assert_eq!(
            &*demangle("_ZN2v88internal8compiler14GraphAssembler4BindILm0EEEvPNS2_5LabelIXT_EEE"),
            "v8::internal::compiler::GraphAssembler::Bind<0ul>"
        );
        assert_eq!(
            binutils_literals("f<(int)-3, (bool)1, (unsigned int)7, (char)65>(x)"),
            "f<-3, true, 7u, (char)65>(x)"
        );
    }

    #[test]
    fn picks_perfs_best_symbol_and_fixes_zero_sizes() {
        let symbols = best_per_address(vec![
            candidate(0x100, 0x10, STB_WEAK, "weak"),
            candidate(0x100, 0x10, STB_GLOBAL, "__global"),
            candidate(0x100, 0x10, object::elf::STB_LOCAL, "local"),
            candidate(0x200, 0, STB_GLOBAL, "zero"),
            candidate(0x300, 0x8, STB_GLOBAL, "last"),
        ]);
        let elf = ElfSymbols { symbols, segments: Vec::new(), build_id: None };
        assert_eq!(elf.lookup(0x104), Some(SymbolHit { name: "__global", offset: 4 }));
        assert_eq!(elf.lookup(0x110), None);
        assert_eq!(elf.lookup(0x2ff), Some(SymbolHit { name: "zero", offset: 0xff }));
        assert_eq!(elf.lookup(0x307), Some(SymbolHit { name: "last", offset: 7 }));
        assert_eq!(elf.lookup(0x308), None);
        assert_eq!(elf.lookup(0xff), None);
    }

    /// What a cache says of `paths`, in that order: each file's symbol
    /// count, segments, build id and first symbol's name, and the warnings.
    fn cache_answers(cache: &mut SymbolCache, paths: &[PathBuf]) -> (Vec<String>, Diagnostics) {
        let answers = paths
            .iter()
            .map(|path| match cache.get(path) {
                Some(symbols) => format!(
                    "{} symbols, {:?}, {:?}, {:?}",
                    symbols.len(),
                    symbols.segments(),
                    symbols.build_id,
                    symbols.symbols.first().map(|symbol| &symbol.raw_name)
                ),
                None => "none".to_string(),
            })
            .collect();
        (answers, cache.diagnostics.clone())
    }

    #[test]
    fn files_read_ahead_give_what_files_read_when_asked_give() {
        let paths: Vec<PathBuf> = [
            std::env::current_exe().unwrap(),
            PathBuf::from("/bin/true"),
            PathBuf::from("/nonexistent/library.so"),
            PathBuf::from(VDSO),
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"),
        ]
        .into();
        let (expected, expected_warnings) = cache_answers(&mut SymbolCache::new(), &paths);
        assert!(expected[0].contains("symbols") && expected[2] == "none" && expected[4] == "none", "{expected:?}");
        assert_eq!(expected_warnings.total(), 2, "{expected_warnings:?}");
        // All read ahead and asked for in another order; some read ahead,
        // and one asked for twice; none read ahead but asked for.
        let mut all_ahead = SymbolCache::new();
        all_ahead.read_ahead(paths.iter().rev().cloned());
        assert_eq!(cache_answers(&mut all_ahead, &paths), (expected.clone(), expected_warnings.clone()));
        let mut some_ahead = SymbolCache::new();
        some_ahead.read_ahead([paths[2].clone(), paths[0].clone()]);
        some_ahead.read_ahead([paths[0].clone(), paths[4].clone()]);
        assert_eq!(cache_answers(&mut some_ahead, &paths), (expected.clone(), expected_warnings.clone()));
        assert_eq!(cache_answers(&mut some_ahead, &paths), (expected, expected_warnings));
        // A cache that reads no file reads none ahead either.
        let mut reading_none = SymbolCache::reading_no_files();
        reading_none.read_ahead(paths.clone());
        assert!(reading_none.ahead.is_none());
        assert!(cache_answers(&mut reading_none, &paths).0.iter().all(|answer| answer == "none"));
    }

    #[test]
    fn only_regular_files_are_read() {
        let directory = std::env::temp_dir().join(format!("v8inline-symbols-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let fifo = directory.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let fifo_name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo_name.as_ptr(), 0o600) }, 0);
        for path in [fifo.clone(), directory.clone(), PathBuf::from("/dev/zero")] {
            let error = ElfSymbols::read(&path).err().unwrap_or_else(|| panic!("{} read", path.display()));
            assert_eq!(error.to_string(), format!("{}: not a regular file", path.display()));
        }
        // Read ahead, likewise: no thread waits for a writer.
        let mut cache = SymbolCache::new();
        cache.read_ahead([fifo.clone()]);
        assert!(cache.get(&fifo).is_none());
        assert_eq!(cache.diagnostics.total(), 1);
        std::fs::remove_dir_all(&directory).unwrap();
    }

    #[test]
    fn cut_or_damaged_elf_files_never_panic() {
        let Ok(bytes) = std::fs::read("/bin/true") else { return };
        let whole = ElfSymbols::parse(&bytes).unwrap();
        assert!(whole.build_id.is_some());
        for cut in (0..bytes.len()).step_by(bytes.len() / 97 + 1) {
            let _ = ElfSymbols::parse(&bytes[..cut]);
        }
        for position in (0..bytes.len()).step_by(bytes.len() / 97 + 1) {
            let mut damaged = bytes.clone();
            damaged[position] ^= 0xff;
            if let Ok(symbols) = ElfSymbols::parse(&damaged) {
                let _ = symbols.lookup(0x1000);
                let _ = symbols.virtual_address_of_file_offset(0x1000);
            }
        }
    }

    #[test]
    fn not_elf_is_an_error() {
        assert!(ElfSymbols::parse(b"not an elf file").is_err());
        assert!(ElfSymbols::parse(b"").is_err());
    }
}
