//! How a library file named by a path reaches the system loader: the
//! checks before and after it maps the file, and the route it takes (in
//! place or from a private copy). Each system's file says what its route
//! guarantees.
//!
//! Per system: `unix.rs` (the Unix route) with what `linux.rs` adds there
//! (or `elsewhere.rs` leaves out), `windows.rs` (the Windows route), and
//! `shared.rs` (the messages both give).
// Layers, lowest first: shared memfd, soname, elsewhere linux, unix windows.

#[cfg(not(any(target_os = "linux", windows)))]
mod elsewhere;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod memfd;
mod shared;
#[cfg(target_os = "linux")]
mod soname;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub(crate) use unix::{FileId, Handle, dlopen, open};
#[cfg(windows)]
pub(crate) use windows::{FileId, Handle, dlopen, open};

impl Handle {
    /// The address ranges of the image's loaded segments (empty where the
    /// system cannot say).
    pub(crate) fn segments(&self) -> Vec<core::ops::Range<usize>> {
        crate::platform::image::segments_of(self.raw())
    }

    /// The data objects named `prefix...` the image defines, read from the
    /// mapped image (`None` where the system cannot say).
    pub(crate) fn data_objects(
        &self,
        prefix: &[u8],
    ) -> Option<Vec<crate::platform::image::DataObject>> {
        crate::platform::image::data_objects_of(self.raw(), prefix)
    }
}
