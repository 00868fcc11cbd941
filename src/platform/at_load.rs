//! Code run when the image holding it is loaded, before any of its exports
//! can be called: an entry of the system's list of static initialisers.

/// Puts `$f`, an `extern "C" fn()`, in the image's static initialisers as
/// the static `$name`: `.init_array` on ELF systems, `__mod_init_func` on
/// Mach-O, the `.CRT$XCU` table the Windows C runtime runs as the DLL
/// attaches. The `tvmffi-macros` crate spells the same sections for
/// extensions (its `at_load`).
macro_rules! at_load {
    ($name:ident = $f:path) => {
        #[used]
        #[cfg_attr(
            not(any(target_vendor = "apple", windows)),
            unsafe(link_section = ".init_array")
        )]
        #[cfg_attr(
            target_vendor = "apple",
            unsafe(link_section = "__DATA,__mod_init_func")
        )]
        #[cfg_attr(windows, unsafe(link_section = ".CRT$XCU"))]
        static $name: extern "C" fn() = $f;
    };
}
pub(crate) use at_load;
