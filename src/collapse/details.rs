//! The stack profile of a folder that recorded details
//! ([`StackProfile::from_folder`]): built at the end of a fold, beside the
//! folder, from what the expander says of each expanded code location
//! ([`FrameExpander::location_details`]); the other frames are known by
//! their names. The renderers (pprof, the reports) get the finished
//! [`StackProfile`] and never see the expander.

use crate::collapse::{DetailedFrame, Folder, FrameOrigin, PassedThroughKind};
use crate::expansion::{FrameExpander, LocationDetails, SourceFrame};
use crate::formats::folded::strip_annotation;
use crate::model::frames::{FrameKind, FrameTable, Function, Location, LocationId, ProfileFrame, SourceLine};
use crate::model::stack_profile::{ProfileBuilder, StackProfile};

impl StackProfile {
    /// Builds the profile from `folder`'s detailed stacks (see
    /// [`Folder::record_details`]), describing expanded frames through
    /// `expander`, whose location ids tagged them.
    pub fn from_folder(folder: &Folder, expander: &dyn FrameExpander, event: Option<String>) -> StackProfile {
        let mut builder = ProfileBuilder::default();
        let mut locations = Vec::new();
        for detailed in folder.detailed_stacks() {
            locations.clear();
            let mut rest = detailed.frames;
            while let Some((first, _)) = rest.split_first() {
                let taken = match first.origin {
                    FrameOrigin::Expanded { location, .. } => {
                        // The frames of one location: depths 0, 1, ... (a cut
                        // by skip_after may end them early).
                        let length = 1 + rest[1..]
                            .iter()
                            .enumerate()
                            .take_while(|(index, frame)| {
                                frame.origin
                                    == FrameOrigin::Expanded {
                                        location,
                                        inline_depth: u16::try_from(index + 1).unwrap_or(u16::MAX),
                                    }
                            })
                            .count();
                        match expander.location_details(location) {
                            Some(details) => locations.push(builder.frames.expanded_location(&details, length)),
                            None => {
                                for frame in &rest[..length] {
                                    locations.push(folder_location(&mut builder, folder, frame, FrameKind::Jit));
                                }
                            }
                        }
                        length
                    }
                    FrameOrigin::ExpandedWithoutLocation => {
                        locations.push(folder_location(&mut builder, folder, first, FrameKind::Jit));
                        1
                    }
                    FrameOrigin::PassedThrough(kind) => {
                        let kind = match kind {
                            PassedThroughKind::Root => FrameKind::Root,
                            PassedThroughKind::Kernel => FrameKind::Kernel,
                            PassedThroughKind::Jit => FrameKind::Jit,
                            PassedThroughKind::Native => FrameKind::Native,
                        };
                        locations.push(folder_location(&mut builder, folder, first, kind));
                        1
                    }
                };
                rest = &rest[taken..];
            }
            builder.add_stack(&locations, detailed.samples, detailed.count);
        }
        builder.finish(event)
    }
}

impl FrameTable {
    /// The location of an expanded code location: its first `frame_count`
    /// inline frames (all of them unless `skip_after` cut the stack).
    pub fn expanded_location(&mut self, details: &LocationDetails<'_>, frame_count: usize) -> LocationId {
        let frames = details.frames[..frame_count.min(details.frames.len())]
            .iter()
            .map(|frame| self.source_frame(frame))
            .collect();
        self.intern_location(Location { address: Some(details.address), frames })
    }

    /// A frame of an expanded location.
    pub fn source_frame(&mut self, frame: &SourceFrame<'_>) -> ProfileFrame {
        let name = if frame.function_name.is_empty() { "(anonymous)" } else { frame.function_name };
        let function = self.intern_function(Function {
            name: name.to_string(),
            file: (!frame.script_name.is_empty()).then(|| frame.script_name.to_string()),
            start: frame.function_start.map(|start| SourceLine { line: start.line, column: Some(start.column) }),
        });
        let kind = match (frame.inlined, frame.tier) {
            (true, _) => FrameKind::Inlined,
            (false, Some(tier)) => FrameKind::from_tier(tier),
            (false, None) => FrameKind::Jit,
        };
        let line = frame.position.map(|position| SourceLine { line: position.line, column: Some(position.column) });
        ProfileFrame { function, line, kind }
    }
}

/// A location for a frame of a folder known by its folded name only.
fn folder_location(
    builder: &mut ProfileBuilder,
    folder: &Folder,
    frame: &DetailedFrame,
    kind: FrameKind,
) -> LocationId {
    let (name, _) = strip_annotation(folder.frame_name(frame.frame));
    builder.frames.named_location(name, kind)
}
