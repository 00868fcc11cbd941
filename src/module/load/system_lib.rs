//! `ffi.SystemLib(prefix)`: the process-wide system library, a library
//! module over the symbols registered with
//! `TVMFFIEnvModRegisterSystemLibSymbol` (`symbols`), one per prefix.

use super::image::lock;
use super::library::library_module;
use super::symbols::Symbols;
use crate::module::objects::module::Module;
use crate::runtime::model::error::Result;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

/// `ffi.SystemLib` modules, one per prefix.
static SYSTEM_LIBS: LazyLock<Mutex<HashMap<String, Module>>> = LazyLock::new(Default::default);

/// `ffi.SystemLib(prefix)`: one module per prefix, made on first use.
/// The tree is built unlocked (an embedded tree calls registered loaders);
/// threads that build one at once keep the first.
pub fn system_lib(prefix: &str) -> Result<Module> {
    if let Some(m) = lock(&SYSTEM_LIBS).get(prefix) {
        return Ok(m.clone());
    }
    let made = library_module(Arc::new(Symbols::System(prefix.to_string())))?;
    let mut libs = lock(&SYSTEM_LIBS);
    let m = libs
        .entry(prefix.to_string())
        .or_insert(made.clone())
        .clone();
    drop(libs);
    drop(made);
    Ok(m)
}
