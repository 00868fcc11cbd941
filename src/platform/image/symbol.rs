//! What the system loader says of a code or data address.

/// The loaded object holding an address, as the loader names it
/// (`dladdr` on Unix).
pub struct AddressSymbol {
    /// The object's file name, as it was loaded.
    pub file: Option<Vec<u8>>,
    /// The object's base address.
    pub base: usize,
    /// The name of the dynamic symbol (Windows: the export) covering the
    /// address; none when no symbol does.
    pub symbol: Option<Vec<u8>>,
}
