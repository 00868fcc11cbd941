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

/// A data object an image defines (`STT_OBJECT`): its name, address and
/// size.
pub struct DataObject {
    /// The symbol's name.
    pub name: String,
    /// Its address in this process.
    pub addr: usize,
    /// Its size, as the symbol table records it.
    pub size: usize,
}
