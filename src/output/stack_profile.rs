//! The stack profile's types by their old paths: the data model
//! ([`crate::model::frames`], [`crate::model::stack_profile`]). A folder's
//! profile is built in [`crate::collapse::details`], one of folded text by
//! [`crate::formats::folded`].

pub use crate::model::frames::{
    FrameKind, FrameTable, Function, FunctionId, Location, LocationId, ProfileFrame, SourceLine,
};
pub use crate::model::stack_profile::{Stack, StackProfile};
