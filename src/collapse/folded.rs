//! Naming the frames of samples, counting distinct stacks, writing them.

use crate::collapse::skip_after::names_function;
use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel};

use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::naming::{
    fix_partially_demangled_rust_symbol, push_function_or_module, push_marker_once, push_root_frame, tidy_generic,
    tidy_java, tidy_v8_name,
};
use super::process_roots::{ProcessRoots, RootOwner, SampleThread};
use super::stack_table::{FrameId, StackIndex, StackTable};
use super::task_root::{CodeOwner, TaskRoot, task_position};
use super::{CollapseOptions, CollapseSummary};
use crate::expansion::{ExpandedFrames, ExpandedSample, FrameContext, FrameExpander};
use crate::model::sample::{FrameNumberCache, ModuleId, Sample, SampleInterner, StringId};

/// The size of the buffer output is written through.
const OUTPUT_BUFFER_BYTES: usize = 64 * 1024;

/// The size of the pieces a second thread renders the folded text in while
/// the calling one writes them ([`Folder::write_folded_on`]): large enough
/// that handing one over costs nothing next to rendering it.
const RENDERED_PIECE_BYTES: usize = 256 * 1024;

/// Rendered pieces that may wait to be written.
const PIECES_AHEAD: usize = 2;

/// Where a frame of a detailed stack came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameOrigin {
    /// Named by inferno's rules (native, kernel, unexpanded JIT code, the
    /// root frame): the name is all there is.
    PassedThrough(PassedThroughKind),
    /// Produced by an expander for a code location it tagged (see
    /// [`ExpandedFrames::set_location`](crate::expansion::ExpandedFrames::set_location)).
    Expanded {
        /// The expander's location id.
        location: u32,
        /// The frame's index in that location's frames, 0 = innermost.
        inline_depth: u16,
    },
    /// Produced by an expander that gave no location.
    ExpandedWithoutLocation,
}

/// What a passed-through frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PassedThroughKind {
    /// The root frame: the command (process) name.
    Root,
    /// Kernel code.
    Kernel,
    /// JIT code (a perf map or `perf inject -j` image) that was not expanded.
    Jit,
    /// Any other code.
    Native,
}

/// One frame of a detailed stack: its folded name and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DetailedFrame {
    /// The interned folded name.
    pub frame: FrameId,
    /// Where it came from.
    pub origin: FrameOrigin,
}

/// The samples and count of one detailed stack.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct StackWeight {
    /// How many samples.
    samples: u64,
    /// The sum of their periods (or 1s).
    count: u64,
}

/// One distinct detailed stack: frames with their code locations, so two
/// samples at different PCs of the same functions stay apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetailedStack<'a> {
    /// The frames, leaf first, as in [`Folder::stack_frames`].
    pub frames: &'a [DetailedFrame],
    /// How many samples had this stack.
    pub samples: u64,
    /// The sum of their periods (or 1s).
    pub count: u64,
}

/// Counters a [`Folder`] keeps.
#[derive(Debug, Clone, Copy, Default)]
struct FolderCounters {
    /// Samples folded into a stack.
    samples_kept: u64,
    /// Samples that had no frame left.
    samples_without_frames: u64,
    /// Sum of the weights of kept samples.
    total_count: u64,
    /// Stack lines replaced by an expander.
    stack_lines_expanded: u64,
    /// Stack lines named as inferno does.
    stack_lines_passed_through: u64,
    /// Frames produced by expanders.
    expanded_frames: u64,
}

/// Folds samples into counted stacks: names each frame (inferno's rules, or
/// a [`FrameExpander`]'s frames), interns the names and counts each distinct
/// stack of name ids. Memory grows with distinct names and stacks only.
pub struct Folder {
    /// Name roots `comm-PID`.
    include_pid: bool,
    /// Name roots `comm-PID/TID`.
    include_tid: bool,
    /// Put addresses in names of unknown functions.
    include_addrs: bool,
    /// Suffix kernel frames with `_[k]`.
    annotate_kernel: bool,
    /// Suffix JIT frames with `_[j]`.
    annotate_jit: bool,
    /// Suffix expanded inlined frames with `_[i]`.
    annotate_inline: bool,
    /// Functions after which stacks are cut.
    skip_after: Vec<String>,
    /// Interned frame names; a name's index is its [`FrameId`].
    frame_names: IndexSet<Box<str>, FxBuildHasher>,
    /// The distinct stacks and their prefixes.
    stacks: StackTable,
    /// Count per distinct stack.
    stack_counts: FxHashMap<StackIndex, u64>,
    /// The stack being built, leaf first.
    stack: Vec<FrameId>,
    /// The frames of one stack line, outermost first.
    line_frames: Vec<FrameId>,
    /// Passed-through frames already named.
    line_names: FxHashMap<LineKey, NamedLine>,
    /// The same by the source's frame number, under whether the sample is a
    /// Java one (the rest of the key is the frame's): a vector lookup,
    /// where a hash lookup of the key is mostly a cache miss (forgotten
    /// with `line_names`).
    line_names_by_number: FrameNumberCache<bool, NamedLine>,
    /// The frames of `line_names`, outermost first per line.
    line_name_frames: Vec<FrameId>,
    /// The named frames of expanded lines, by the expander's location id.
    location_names: Vec<Option<NamedLocation>>,
    /// The frames of `location_names`, innermost first per location.
    location_name_frames: Vec<FrameId>,
    /// The frames of a location the expander left unnamed, as it names them.
    location_frames_named: ExpandedFrames,
    /// The frame name being built.
    name: String,
    /// The last root frame named, by the thread texts it was named from.
    last_root: Option<(RootKey, FrameId)>,
    /// One root per process (per thread with `include_tid`), when asked
    /// for ([`CollapseOptions::one_root_per_process`]).
    process_roots: Option<ProcessRoots>,
    /// Counters.
    counters: FolderCounters,
    /// Detailed stacks, when recorded (see [`Folder::record_details`]).
    details: Option<DetailRecorder>,
    /// The stacks named but not counted yet, when another folder counts
    /// them (see [`Folder::hand_stacks_over`]).
    handed_over: Option<HandedOverStacks>,
}

/// Stacks a folder named for another folder to count: the frames of each,
/// leaf first, one stack after another.
#[derive(Default)]
struct HandedOverStacks {
    frames: Vec<FrameId>,
    stacks: Vec<HandedOverStack>,
}

/// One stack of [`HandedOverStacks`].
struct HandedOverStack {
    /// Where its frames end in `HandedOverStacks::frames`.
    frames_end: usize,
    /// The sample's weight.
    weight: u64,
}

/// A folder's frame ids as another folder's: what [`Folder::count_handed_over`]
/// keeps from call to call for each folder that hands stacks over.
#[derive(Debug, Default)]
pub struct FrameIdTranslation {
    /// The other folder's id of each of this folder's frame names so far.
    ids: Vec<FrameId>,
}

/// At most this many frames are kept named by line address (about 40 MB
/// with their keys); then the cache starts over.
const LINE_NAME_FRAMES_LIMIT: usize = 1 << 20;

/// What a passed-through frame's name depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct LineKey {
    /// The symbol.
    symbol: Option<StringId>,
    /// The module.
    module: ModuleId,
    /// The address, when names include it (else 0).
    address: u64,
    /// The address as printed, when names include it and it was not
    /// printed as `{:x}`.
    address_text: Option<StringId>,
    /// Whether the sample is a Java one (names are tidied differently).
    is_java: bool,
}

/// What a root frame's name depends on: the sample's comm, pid and tid
/// texts (ids of the samples' interner).
type RootKey = [Option<StringId>; 3];

/// A passed-through frame as named before.
#[derive(Clone, Copy)]
struct NamedLine {
    /// Its frames in `Folder::line_name_frames`.
    frames_start: u32,
    /// The end of its frames there.
    frames_end: u32,
    /// Whether `skip_after` cuts the stack at this frame.
    cut: bool,
}

/// The frames an expanded location was named as.
#[derive(Debug, Clone, Copy)]
struct NamedLocation {
    /// Whether the sample was a Java one (names are tidied differently).
    is_java: bool,
    /// Its frames in `Folder::location_name_frames`.
    frames_start: u32,
    /// The end of its frames there.
    frames_end: u32,
}

/// The detailed stacks of a [`Folder`].
#[derive(Default)]
struct DetailRecorder {
    /// The detailed stack being built, parallel to `Folder::stack`.
    stack: Vec<DetailedFrame>,
    /// Samples and count per distinct detailed stack.
    weights: FxHashMap<Box<[DetailedFrame]>, StackWeight>,
}

impl Folder {
    /// An empty folder using `options` (its `event_filter` is the reader's
    /// business and is ignored here).
    pub fn new(options: &CollapseOptions) -> Folder {
        Folder {
            include_pid: options.include_pid || options.include_tid,
            include_tid: options.include_tid,
            include_addrs: options.include_addrs,
            annotate_kernel: options.annotate_kernel,
            annotate_jit: options.annotate_jit,
            annotate_inline: options.annotate_inline,
            skip_after: options.skip_after.clone(),
            frame_names: IndexSet::default(),
            stacks: StackTable::new(),
            stack_counts: FxHashMap::default(),
            stack: Vec::with_capacity(128),
            line_frames: Vec::with_capacity(8),
            line_names: FxHashMap::default(),
            line_names_by_number: FrameNumberCache::default(),
            line_name_frames: Vec::new(),
            location_names: Vec::new(),
            location_name_frames: Vec::new(),
            location_frames_named: ExpandedFrames::new(),
            name: String::with_capacity(256),
            last_root: None,
            process_roots: options.one_root_per_process.then(ProcessRoots::default),
            counters: FolderCounters::default(),
            details: None,
            handed_over: None,
        }
    }

    /// Keeps the stacks this folder names for another folder to count
    /// ([`Folder::count_handed_over`]) instead of counting them: threads
    /// that fold parts of one input then share one stack table, not one
    /// each, merged at the end.
    pub fn hand_stacks_over(&mut self) {
        self.handed_over.get_or_insert_with(HandedOverStacks::default);
    }

    /// Counts the stacks `other` (a folder with the same options that hands
    /// its stacks over) named since the last call as this folder's own
    /// stacks, and forgets them there. `translation` holds `other`'s frame
    /// ids as this folder's: one per folder handing over, kept between
    /// calls. Counters are not added (see [`Folder::add_counters`]).
    pub fn count_handed_over(&mut self, other: &mut Folder, translation: &mut FrameIdTranslation) {
        let Some(handed_over) = &mut other.handed_over else { return };
        for index in translation.ids.len()..other.frame_names.len() {
            translation.ids.push(intern(&mut self.frame_names, &other.frame_names[index]));
        }
        let mut frames_start = 0;
        for stack in &handed_over.stacks {
            // `stack` is the buffer `add_sample` builds a stack in; free here.
            self.stack.clear();
            let frames = &handed_over.frames[frames_start..stack.frames_end];
            self.stack.extend(frames.iter().map(|frame| translation.ids[frame.index()]));
            frames_start = stack.frames_end;
            if let Some(index) = self.stacks.intern(&self.stack) {
                let count = self.stack_counts.entry(index).or_default();
                *count = count.wrapping_add(stack.weight);
            }
        }
        handed_over.frames.clear();
        handed_over.stacks.clear();
    }

    /// Also keeps each distinct stack with the code location of every
    /// expanded frame and a sample count, for outputs that need more than
    /// folded text (pprof, reports). Call before adding samples.
    pub fn record_details(&mut self) {
        self.details.get_or_insert_with(DetailRecorder::default);
    }

    /// The detailed stacks, in no particular order (none unless
    /// [`Folder::record_details`] was called).
    pub fn detailed_stacks(&self) -> impl Iterator<Item = DetailedStack<'_>> + '_ {
        self.details.iter().flat_map(|details| {
            details.weights.iter().map(|(frames, weight)| DetailedStack {
                frames,
                samples: weight.samples,
                count: weight.count,
            })
        })
    }

    /// Records the origin of the frames pushed to `stack` since it had
    /// `previous_length` frames.
    fn record_origins(&mut self, previous_length: usize, origin: impl Fn(usize) -> FrameOrigin) {
        if let Some(details) = &mut self.details {
            for (index, &frame) in self.stack[previous_length..].iter().enumerate() {
                details.stack.push(DetailedFrame { frame, origin: origin(index) });
            }
        }
    }

    /// Names the frames of `sample` and counts its stack with the sample's
    /// weight (period or 1). A sample left without frames is not counted.
    /// The sample's ids are those of `interner`, which must be the same for
    /// every sample of one folder, and its frames' numbers
    /// ([`crate::model::sample::FrameNumber`]) those of one source: the folder
    /// keeps the names of passed-through frames by that number. Frames
    /// `expanded` left unnamed are named by `expander`, which expanded them.
    pub fn add_sample(
        &mut self,
        sample: &Sample,
        interner: &SampleInterner,
        expanded: &ExpandedSample,
        expander: &dyn FrameExpander,
    ) {
        let comm = interner.string_or_empty(sample.comm);
        let is_java = comm.starts_with("java");
        self.stack.clear();
        if let Some(details) = &mut self.details {
            details.stack.clear();
        }
        let mut cut = false;
        for (index, frame) in sample.frames.iter().enumerate() {
            let context = FrameContext { sample, frame, index, interner };
            let previous_length = self.stack.len();
            cut = if let Some(replacement) = expanded.replacement(index) {
                self.counters.stack_lines_expanded += 1;
                let cut = self.push_expanded_frames(&context, replacement, expander, is_java);
                let location = replacement.location();
                let native = replacement.is_native();
                self.record_origins(previous_length, |index| match location {
                    Some(location) => {
                        FrameOrigin::Expanded { location, inline_depth: u16::try_from(index).unwrap_or(u16::MAX) }
                    }
                    // A builtin of a binary without symbols, named from the
                    // code log: the native frame it is.
                    None if native => FrameOrigin::PassedThrough(PassedThroughKind::Native),
                    None => FrameOrigin::ExpandedWithoutLocation,
                });
                cut
            } else {
                self.counters.stack_lines_passed_through += 1;
                let cut = self.push_passed_through_frames(&context, is_java);
                let module_kind = interner.module_kind(frame.module);
                let kind = if module_kind.is_kernel() {
                    PassedThroughKind::Kernel
                } else if module_kind.is_jit() {
                    PassedThroughKind::Jit
                } else {
                    PassedThroughKind::Native
                };
                self.record_origins(previous_length, |_| FrameOrigin::PassedThrough(kind));
                cut
            };
            if cut {
                break;
            }
        }
        if self.stack.is_empty() {
            self.counters.samples_without_frames += 1;
            return;
        }
        if !cut {
            let key = [sample.comm, sample.pid_text, sample.tid_text];
            let root = match (&mut self.process_roots, sample.pid) {
                (Some(roots), Some(pid)) => {
                    let thread = SampleThread {
                        owner: RootOwner { pid, tid: if self.include_tid { sample.tid } else { None } },
                        is_main: self.include_tid || sample.tid == Some(pid),
                        comm,
                        pid_text: interner.string_or_empty(sample.pid_text),
                        tid_text: interner.string_or_empty(sample.tid_text),
                    };
                    let frame_names = &mut self.frame_names;
                    roots.root_of(thread, |placeholder| intern(frame_names, placeholder))
                }
                _ => match self.last_root {
                    Some((last, root)) if last == key => root,
                    _ => {
                        self.name.clear();
                        push_root_frame(
                            &mut self.name,
                            comm,
                            interner.string_or_empty(sample.pid_text),
                            interner.string_or_empty(sample.tid_text),
                            self.include_pid,
                            self.include_tid,
                        );
                        let root = intern(&mut self.frame_names, &self.name);
                        self.last_root = Some((key, root));
                        root
                    }
                },
            };
            self.stack.push(root);
            self.record_origins(self.stack.len() - 1, |_| FrameOrigin::PassedThrough(PassedThroughKind::Root));
        }
        let weight = sample.weight();
        if let Some(details) = &mut self.details {
            let entry = match details.weights.get_mut(details.stack.as_slice()) {
                Some(entry) => entry,
                None => details.weights.entry(details.stack.as_slice().into()).or_default(),
            };
            entry.samples += 1;
            entry.count = entry.count.wrapping_add(weight);
        }
        if let Some(handed_over) = &mut self.handed_over {
            handed_over.frames.extend_from_slice(&self.stack);
            handed_over.stacks.push(HandedOverStack { frames_end: handed_over.frames.len(), weight });
        } else if let Some(stack) = self.stacks.intern(&self.stack) {
            let count = self.stack_counts.entry(stack).or_default();
            *count = count.wrapping_add(weight);
        }
        self.counters.samples_kept += 1;
        self.counters.total_count = self.counters.total_count.wrapping_add(weight);
    }

    /// Names a frame as inferno does and pushes its frames. Returns whether
    /// `skip_after` cuts the stack here.
    ///
    /// Frames named before (same symbol and module, and address when names
    /// include it, in a sample of the same kind, Java or not) reuse their
    /// names: naming and interning is a third of the folding time, and most
    /// frames repeat.
    fn push_passed_through_frames(&mut self, context: &FrameContext<'_>, is_java: bool) -> bool {
        let frame = context.frame;
        let key = LineKey {
            symbol: frame.symbol,
            module: frame.module,
            address: if self.include_addrs { frame.address } else { 0 },
            address_text: if self.include_addrs { frame.address_text } else { None },
            is_java,
        };
        let named = match self.line_names_by_number.get(frame.number, &is_java) {
            Some(named) => Some(*named),
            None => {
                let named = self.line_names.get(&key).copied();
                if let Some(named) = named {
                    self.line_names_by_number.insert(frame.number, is_java, named);
                }
                named
            }
        };
        if let Some(named) = named {
            let frames = &self.line_name_frames[named.frames_start as usize..named.frames_end as usize];
            self.stack.extend(frames.iter().rev());
            return named.cut;
        }
        let cut = self.name_passed_through_line(context, is_java);
        self.stack.extend(self.line_frames.iter().rev());
        if self.line_name_frames.len() >= LINE_NAME_FRAMES_LIMIT {
            // Bounds the memory on inputs with ever new addresses.
            self.line_names.clear();
            self.line_names_by_number.clear();
            self.line_name_frames.clear();
        }
        let frames_start = self.line_name_frames.len() as u32;
        self.line_name_frames.extend_from_slice(&self.line_frames);
        let named = NamedLine { frames_start, frames_end: self.line_name_frames.len() as u32, cut };
        self.line_names.insert(key, named);
        self.line_names_by_number.insert(frame.number, is_java, named);
        cut
    }

    /// Names a frame as inferno does into `line_frames` (outermost first).
    /// Returns whether `skip_after` cuts the stack here.
    fn name_passed_through_line(&mut self, context: &FrameContext<'_>, is_java: bool) -> bool {
        self.line_frames.clear();
        let function = inferno_function(context);
        // inferno skips these ("process names"), without checking skip_after.
        if function.starts_with('(') {
            return false;
        }
        let function = fix_partially_demangled_rust_symbol(function);
        if !contains_arrow(&function) {
            let id = self.name_piece(&function, 0, context, is_java);
            self.line_frames.push(id);
        } else {
            // Java inlining: `a->b->c` is a calling b calling c, b and c inlined.
            for (piece_index, piece) in function.split("->").enumerate() {
                let id = self.name_piece(piece, piece_index, context, is_java);
                self.line_frames.push(id);
            }
        }
        !self.skip_after.is_empty() && self.skip_after.iter().any(|name| names_function(name, &function))
    }

    /// Names one `->`-separated piece of a passed-through frame as inferno
    /// does and interns the name.
    fn name_piece(&mut self, piece: &str, piece_index: usize, context: &FrameContext<'_>, is_java: bool) -> FrameId {
        self.name.clear();
        let module = context.interner.module_info(context.frame.module);
        let module_path = context.interner.string(module.path);
        if self.include_addrs {
            let address_text = match context.frame.address_text {
                Some(text) => context.interner.string(text).to_owned(),
                None => format!("{:x}", context.frame.address),
            };
            push_function_or_module(&mut self.name, piece, module_path, &address_text, true);
        } else {
            push_function_or_module(&mut self.name, piece, module_path, "", false);
        }
        tidy_generic(&mut self.name);
        if is_java {
            tidy_java(&mut self.name);
        }
        if piece_index > 0 {
            push_marker_once(&mut self.name, "_[i]");
        } else if self.annotate_kernel && module.kind.is_kernel() {
            self.name.push_str("_[k]");
        } else if self.annotate_jit && module.kind.is_jit() {
            push_marker_once(&mut self.name, "_[j]");
        }
        intern(&mut self.frame_names, &self.name)
    }

    /// Pushes the frames an expander produced for a frame. Returns whether
    /// `skip_after` cuts the stack here.
    fn push_expanded_frames(
        &mut self,
        context: &FrameContext<'_>,
        replacement: &ExpandedFrames,
        expander: &dyn FrameExpander,
        is_java: bool,
    ) -> bool {
        // A location's frames are named the same every time (without
        // skip_after, which also looks at the line): reuse them.
        let location = replacement.location().filter(|_| self.skip_after.is_empty());
        if let Some(location) = location
            && let Some(Some(named)) = self.location_names.get(location as usize)
            && named.is_java == is_java
        {
            let frames = &self.location_name_frames[named.frames_start as usize..named.frames_end as usize];
            self.counters.expanded_frames += frames.len() as u64;
            self.stack.extend_from_slice(frames);
            return false;
        }
        let stack_length = self.stack.len();
        let cut = match replacement.location().filter(|_| replacement.is_unnamed()) {
            Some(unnamed) => {
                let mut named = std::mem::take(&mut self.location_frames_named);
                named.clear();
                expander.name_location(unnamed, &mut named);
                let cut = self.name_expanded_frames(context, &named, is_java);
                self.location_frames_named = named;
                cut
            }
            None => self.name_expanded_frames(context, replacement, is_java),
        };
        if let Some(location) = location {
            let frames_start = self.location_name_frames.len() as u32;
            self.location_name_frames.extend_from_slice(&self.stack[stack_length..]);
            let index = location as usize;
            if self.location_names.len() <= index {
                self.location_names.resize(index + 1, None);
            }
            self.location_names[index] =
                Some(NamedLocation { is_java, frames_start, frames_end: self.location_name_frames.len() as u32 });
        }
        cut
    }

    /// Names the frames an expander produced and pushes them. Returns whether
    /// `skip_after` cuts the stack here.
    fn name_expanded_frames(
        &mut self,
        context: &FrameContext<'_>,
        replacement: &ExpandedFrames,
        is_java: bool,
    ) -> bool {
        let mut cut = false;
        for frame in replacement.iter() {
            self.counters.expanded_frames += 1;
            self.name.clear();
            self.name.push_str(frame.name);
            // V8's names: no C++ argument list to cut (a RegExp's source
            // keeps its groups).
            tidy_v8_name(&mut self.name);
            if is_java {
                tidy_java(&mut self.name);
            }
            if replacement.is_native() {
                // A builtin's symbol, as node's binary names it: no `_[j]`.
            } else if frame.inlined && self.annotate_inline {
                push_marker_once(&mut self.name, "_[i]");
            } else if self.annotate_jit {
                push_marker_once(&mut self.name, "_[j]");
            }
            let id = intern(&mut self.frame_names, &self.name);
            self.stack.push(id);
            if self.skip_after.iter().any(|name| names_function(name, frame.name)) {
                cut = true;
                break;
            }
        }
        if cut || self.skip_after.is_empty() {
            return cut;
        }
        let function = fix_partially_demangled_rust_symbol(inferno_function(context));
        self.skip_after.iter().any(|name| names_function(name, &function))
    }

    /// Every frame name, in no particular order.
    pub fn frame_names(&self) -> impl Iterator<Item = &str> {
        self.frame_names.iter().map(|name| &**name)
    }

    /// Names the roots of [`CollapseOptions::one_root_per_process`], once
    /// every sample is in ([`ProcessRoots`]): each placeholder takes its
    /// process's name. Roots that come to share a name (processes of one
    /// name, pids not shown) become one, as inferno's roots by name are.
    pub fn name_process_roots(&mut self) {
        let Some(roots) = self.process_roots.take() else { return };
        let mut same_as: FxHashMap<FrameId, FrameId> = FxHashMap::default();
        for (placeholder, name) in roots.name(self.include_pid, self.include_tid) {
            match self.frame_names.get_index_of(name.as_str()) {
                Some(index) => {
                    same_as.insert(placeholder, FrameId::from_index(index));
                }
                None => {
                    let _ = self.frame_names.replace_index(placeholder.index(), name.into_boxed_str());
                }
            }
        }
        if !same_as.is_empty() {
            self.merge_frames(&same_as);
        }
    }

    /// Counts every stack holding a frame of `same_as` as the stack with
    /// the frame it maps to instead.
    fn merge_frames(&mut self, same_as: &FxHashMap<FrameId, FrameId>) {
        let stacks: Vec<(StackIndex, u64)> = self.stacks().collect();
        let old_table = std::mem::replace(&mut self.stacks, StackTable::new());
        self.stack_counts.clear();
        let mut frames = Vec::with_capacity(128);
        for (stack, count) in stacks {
            old_table.frames(stack, &mut frames);
            for frame in &mut frames {
                *frame = same_as.get(frame).copied().unwrap_or(*frame);
            }
            if let Some(stack) = self.stacks.intern(&frames) {
                let total = self.stack_counts.entry(stack).or_default();
                *total = total.wrapping_add(count);
            }
        }
        if let Some(details) = &mut self.details {
            let mut merged: FxHashMap<Box<[DetailedFrame]>, StackWeight> = FxHashMap::default();
            for (mut stack, weight) in details.weights.drain() {
                for detailed in stack.iter_mut() {
                    detailed.frame = same_as.get(&detailed.frame).copied().unwrap_or(detailed.frame);
                }
                let entry = merged.entry(stack).or_default();
                entry.samples += weight.samples;
                entry.count = entry.count.wrapping_add(weight.count);
            }
            details.weights = merged;
        }
    }

    /// Makes every stack start at one root named `root` (a benchmark,
    /// [`super::task_root`]): a stack that holds a frame `is_task` names
    /// keeps it and what it called, the frames that ran it folded into the
    /// root; another stack keeps what lies past the longest start it shares
    /// with those (at least its first frame, the process's root, is
    /// folded). Without any such frame, only each stack's first frame is.
    /// Detailed stacks are changed alike. Returns what the root stands for.
    pub fn start_at_task(&mut self, root: &str, owner_of: impl Fn(&str) -> CodeOwner) -> TaskRoot {
        let owners: Vec<CodeOwner> = self.frame_names.iter().map(|name| owner_of(name)).collect();
        let task_of = |root_first: &mut dyn Iterator<Item = FrameId>| {
            task_position(root_first.map(|frame| owners[frame.index()]))
        };
        let stacks = self.sorted_stacks();
        // The starts folded (root first), as a tree of (parent, frame).
        let mut folded_starts: FxHashMap<(u32, FrameId), u32> = FxHashMap::default();
        let mut folded_frames: IndexSet<FrameId, FxBuildHasher> = IndexSet::default();
        let mut frames = Vec::with_capacity(128);
        for &(stack, _) in &stacks {
            self.stacks.frames(stack, &mut frames);
            let Some(task) = task_of(&mut frames.iter().rev().copied()) else { continue };
            let mut node = u32::MAX;
            for &frame in frames.iter().rev().take(task) {
                let next = folded_starts.len() as u32;
                node = *folded_starts.entry((node, frame)).or_insert(next);
                folded_frames.insert(frame);
            }
        }
        let task_found = !folded_starts.is_empty();
        // How many frames of a stack (root first) the root stands for.
        let folded_length = |root_first: &[FrameId]| -> usize {
            if !task_found {
                return 1;
            }
            if let Some(task) = task_of(&mut root_first.iter().copied()) {
                return task;
            }
            let mut node = u32::MAX;
            let mut length = 0;
            for &frame in root_first {
                match folded_starts.get(&(node, frame)) {
                    Some(&next) => {
                        node = next;
                        length += 1;
                    }
                    None => break,
                }
            }
            length.max(1)
        };
        if !task_found {
            for &(stack, _) in &stacks {
                self.stacks.frames(stack, &mut frames);
                if let Some(&first) = frames.last() {
                    folded_frames.insert(first);
                }
            }
        }
        let folded_names = folded_frames.iter().map(|&frame| self.frame_name(frame).to_string()).collect();
        let root_id = intern(&mut self.frame_names, root);
        let old_table = std::mem::replace(&mut self.stacks, StackTable::new());
        self.stack_counts.clear();
        for (stack, count) in stacks {
            old_table.frames(stack, &mut frames);
            let root_first: Vec<FrameId> = frames.iter().rev().copied().collect();
            let folded = folded_length(&root_first).min(frames.len());
            frames.truncate(frames.len() - folded);
            frames.push(root_id);
            if let Some(stack) = self.stacks.intern(&frames) {
                let total = self.stack_counts.entry(stack).or_default();
                *total = total.wrapping_add(count);
            }
        }
        if let Some(details) = &mut self.details {
            let mut started: FxHashMap<Box<[DetailedFrame]>, StackWeight> = FxHashMap::default();
            for (stack, weight) in details.weights.drain() {
                let root_first: Vec<FrameId> = stack.iter().rev().map(|detailed| detailed.frame).collect();
                let folded = folded_length(&root_first).min(stack.len());
                let mut stack = stack[..stack.len() - folded].to_vec();
                stack.push(DetailedFrame {
                    frame: root_id,
                    origin: FrameOrigin::PassedThrough(PassedThroughKind::Root),
                });
                let entry = started.entry(stack.into_boxed_slice()).or_default();
                entry.samples += weight.samples;
                entry.count = entry.count.wrapping_add(weight.count);
            }
            details.weights = started;
        }
        TaskRoot { name: root.to_string(), folded_frames: folded_names, task_found }
    }

    /// The name of an interned frame (empty for an id of another folder).
    pub fn frame_name(&self, id: FrameId) -> &str {
        self.frame_names.get_index(id.index()).map_or("", |name| name)
    }

    /// The number of distinct frame names.
    pub fn frame_count(&self) -> usize {
        self.frame_names.len()
    }

    /// The number of distinct stacks.
    pub fn distinct_stacks(&self) -> usize {
        self.stack_counts.len()
    }

    /// The sum of all counts.
    pub fn total_count(&self) -> u64 {
        self.counters.total_count
    }

    /// The distinct stacks and their counts, in no particular order; their
    /// frames via [`Folder::stack_frames`].
    pub fn stacks(&self) -> impl ExactSizeIterator<Item = (StackIndex, u64)> + '_ {
        self.stack_counts.iter().map(|(&stack, &count)| (stack, count))
    }

    /// Replaces the contents of `frames` by the frames of `stack`, leaf
    /// first; the last is the root frame (the process name) unless
    /// `skip_after` cut the stack. Names via [`Folder::frame_name`].
    pub fn stack_frames(&self, stack: StackIndex, frames: &mut Vec<FrameId>) {
        self.stacks.frames(stack, frames);
    }

    /// The stacks in the order of their folded text (byte order, as inferno
    /// sorts its lines), with the stacks that render to the same text
    /// (possible only through a comm containing `;`) merged, as inferno's
    /// string keys merge them. Nothing is rendered: the order comes from one
    /// walk of the stack tree ([`StackTable::in_text_order`]); only when a
    /// frame name holds `;` are stacks compared, by frame id until they
    /// differ and by text from there.
    fn sorted_stacks(&self) -> Vec<(StackIndex, u64)> {
        let name = |id: FrameId| self.frame_name(id);
        if let Some(order) = self.stacks.in_text_order(name) {
            // Prefixes that no sample ended at have no count.
            return order
                .into_iter()
                .filter_map(|stack| self.stack_counts.get(&stack).map(|&count| (stack, count)))
                .collect();
        }
        let mut stacks: Vec<(StackIndex, u64)> = self.stacks().collect();
        let mut buffers = [Vec::with_capacity(128), Vec::with_capacity(128)];
        stacks.sort_unstable_by(|left, right| self.stacks.compare_texts(left.0, right.0, &name, &mut buffers));
        stacks.dedup_by(|later, earlier| {
            let same = self.stacks.compare_texts(later.0, earlier.0, &name, &mut buffers).is_eq();
            if same {
                earlier.1 = earlier.1.wrapping_add(later.1);
            }
            same
        });
        stacks
    }

    /// Writes the folded stacks (`root;...;leaf count\n`, sorted as inferno
    /// sorts them) to `output`, then flushes it. Returns the number of lines.
    pub fn write_folded<W: Write>(&self, output: W) -> io::Result<u64> {
        self.write_folded_on(output, 1)
    }

    /// [`Folder::write_folded`]; with more than one thread, the text is
    /// rendered on a second thread while the calling one writes it: writing
    /// tens of megabytes of deep stacks to a file costs the kernel more than
    /// rendering them costs.
    pub fn write_folded_on<W: Write>(&self, output: W, threads: usize) -> io::Result<u64> {
        self.write_folded_in_pieces(output, threads, RENDERED_PIECE_BYTES)
    }

    /// [`Folder::write_folded_on`], rendering on a second thread in pieces of
    /// `piece_bytes` or a little more.
    fn write_folded_in_pieces<W: Write>(&self, mut output: W, threads: usize, piece_bytes: usize) -> io::Result<u64> {
        let stacks = self.sorted_stacks();
        if threads > 1 && !stacks.is_empty() {
            self.render_beside(&stacks, &mut output, piece_bytes)?;
        } else {
            let mut buffer = Vec::with_capacity(OUTPUT_BUFFER_BYTES + 1024);
            self.render(&stacks, OUTPUT_BUFFER_BYTES, &mut buffer, |buffer| {
                output.write_all(buffer)?;
                buffer.clear();
                Ok(())
            })?;
            output.write_all(&buffer)?;
        }
        output.flush()?;
        Ok(stacks.len() as u64)
    }

    /// Renders `stacks` into `buffer`, handing it to `full` whenever it holds
    /// `piece_bytes` or more (to empty or replace); the rest stays in it.
    fn render(
        &self,
        stacks: &[(StackIndex, u64)],
        piece_bytes: usize,
        buffer: &mut Vec<u8>,
        mut full: impl FnMut(&mut Vec<u8>) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut line = RenderedPath::default();
        let mut frames = Vec::with_capacity(128);
        for &(stack, count) in stacks {
            self.stacks.frames(stack, &mut frames);
            line.render(&frames, |id| self.frame_name(id));
            buffer.extend_from_slice(&line.text);
            // Writing into a Vec cannot fail.
            let _ = writeln!(buffer, " {count}");
            if buffer.len() >= piece_bytes {
                full(buffer)?;
            }
        }
        Ok(())
    }

    /// Renders `stacks` on a second thread, in pieces of about `piece_bytes`
    /// that this one writes to `output` in order; written pieces go back to
    /// be rendered into again.
    fn render_beside<W: Write>(
        &self,
        stacks: &[(StackIndex, u64)],
        output: &mut W,
        piece_bytes: usize,
    ) -> io::Result<()> {
        let (pieces, rendered) = sync_channel::<Vec<u8>>(PIECES_AHEAD);
        let (written, to_reuse) = channel::<Vec<u8>>();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let new_piece = || Vec::with_capacity(piece_bytes.saturating_add(1024).min(RENDERED_PIECE_BYTES * 2));
                let mut piece = new_piece();
                let handed_over = self.render(stacks, piece_bytes, &mut piece, |piece| {
                    let mut next = to_reuse.try_recv().unwrap_or_else(|_| new_piece());
                    next.clear();
                    // The writer stops taking pieces only when writing failed.
                    pieces.send(std::mem::replace(piece, next)).map_err(|_| io::Error::other("writing stopped"))
                });
                if handed_over.is_ok() {
                    let _ = pieces.send(piece);
                }
            });
            // The receiver is dropped on the way out, error or not, so that
            // the renderer stops instead of waiting to hand over a piece.
            let write_all = move || -> io::Result<()> {
                for piece in rendered {
                    output.write_all(&piece)?;
                    let _ = written.send(piece);
                }
                Ok(())
            };
            write_all()
        })
    }

    /// Adds the stacks and counters of `other`, a folder with the same
    /// options (another thread's), re-interning its frame names. Detailed
    /// stacks are not merged.
    pub fn merge(&mut self, other: &Folder) {
        let ids: Vec<FrameId> = (0..other.frame_names.len())
            .map(|index| intern(&mut self.frame_names, other.frame_name(FrameId::from_index(index))))
            .collect();
        let mut frames = Vec::with_capacity(128);
        for (stack, count) in other.stacks() {
            other.stacks.frames(stack, &mut frames);
            for frame in &mut frames {
                *frame = ids[frame.index()];
            }
            if let Some(stack) = self.stacks.intern(&frames) {
                let total = self.stack_counts.entry(stack).or_default();
                *total = total.wrapping_add(count);
            }
        }
        self.add_counters(other);
    }

    /// Adds the counters of `other` (samples kept, lines expanded, ...) to
    /// this folder's, as when its stacks were counted here.
    pub fn add_counters(&mut self, other: &Folder) {
        let counters = &mut self.counters;
        let others = &other.counters;
        counters.samples_kept += others.samples_kept;
        counters.samples_without_frames += others.samples_without_frames;
        counters.total_count = counters.total_count.wrapping_add(others.total_count);
        counters.stack_lines_expanded += others.stack_lines_expanded;
        counters.stack_lines_passed_through += others.stack_lines_passed_through;
        counters.expanded_frames += others.expanded_frames;
    }

    /// The folder's counters as a summary (the reader's fields left empty).
    pub fn summary(&self) -> CollapseSummary {
        CollapseSummary {
            samples_kept: self.counters.samples_kept,
            samples_without_frames: self.counters.samples_without_frames,
            total_count: self.counters.total_count,
            distinct_stacks: self.stack_counts.len() as u64,
            stack_lines_expanded: self.counters.stack_lines_expanded,
            stack_lines_passed_through: self.counters.stack_lines_passed_through,
            expanded_frames: self.counters.expanded_frames,
            ..CollapseSummary::default()
        }
    }
}

/// Whether `text` contains `->` (faster than a substring search for the
/// usual text without `-`).
fn contains_arrow(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'-', bytes).any(|dash| bytes.get(dash + 1) == Some(&b'>'))
}

/// The function of a frame as inferno sees it: the symbol without its
/// `+0x` offset, `" "` when perf printed no symbol.
fn inferno_function<'a>(context: &FrameContext<'a>) -> &'a str {
    match context.frame.symbol {
        Some(symbol) => context.interner.string(symbol),
        None => " ",
    }
}

/// The id of `name` in `frame_names`, adding it if new.
fn intern(frame_names: &mut IndexSet<Box<str>, FxBuildHasher>, name: &str) -> FrameId {
    let index = match frame_names.get_index_of(name) {
        Some(index) => index,
        None => frame_names.insert_full(name.into()).0,
    };
    FrameId::from_index(index)
}

/// The text of the stack rendered last (`root;...;leaf`), kept to render the
/// next one from: stacks are written in text order, so consecutive ones
/// mostly share their outer frames, and only the frames past the shared ones
/// are copied name by name (a deep stack's line is kilobytes of names).
#[derive(Default)]
struct RenderedPath {
    /// The frames of `text`, root first.
    frames: Vec<FrameId>,
    /// Where each frame's name ends in `text`.
    ends: Vec<usize>,
    /// The rendered stack, without its count.
    text: Vec<u8>,
}

impl RenderedPath {
    /// Renders the stack of `frames` (innermost first).
    fn render<'a>(&mut self, frames: &[FrameId], name: impl Fn(FrameId) -> &'a str) {
        let shared = frames.iter().rev().zip(&self.frames).take_while(|(new, old)| new == old).count();
        self.frames.truncate(shared);
        self.ends.truncate(shared);
        self.text.truncate(self.ends.last().copied().unwrap_or(0));
        for &frame in frames[..frames.len() - shared].iter().rev() {
            if !self.frames.is_empty() {
                self.text.push(b';');
            }
            self.text.extend_from_slice(name(frame).as_bytes());
            self.frames.push(frame);
            self.ends.push(self.text.len());
        }
    }
}

#[cfg(test)]
mod tests;
