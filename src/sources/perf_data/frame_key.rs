//! What a perf.data frame's name depends on, and a named frame: the small
//! types the reader's cache and every frame-naming part share.

use crate::model::sample::{AddressKind, Frame, KERNEL_ADDRESS_START, ModuleId, SampleInterner};

/// Whose code an address of a callchain is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Mode {
    Kernel,
    User,
}

impl Mode {
    /// The mode of an address without a context marker before it.
    pub(super) fn of_address(address: u64) -> Mode {
        if address >= KERNEL_ADDRESS_START { Mode::Kernel } else { Mode::User }
    }
}

/// What a frame's name depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct FrameKey {
    pub(super) pid: i32,
    pub(super) address: u64,
    pub(super) mode: Mode,
}

/// A frame of `module` named `symbol` (`symbol_offset` bytes into it),
/// before the reader numbers it.
pub(super) fn named_frame(
    interner: &mut SampleInterner,
    address: u64,
    module: ModuleId,
    symbol: &str,
    symbol_offset: Option<u64>,
) -> Frame {
    Frame {
        address,
        address_kind: AddressKind::ReturnAddress,
        module,
        symbol: Some(interner.intern(symbol)),
        symbol_offset,
        address_text: None,
        file_address: None,
        number: None,
    }
}
