//! A TVM-FFI extension in safe Rust: a typed function, a tensor kernel, an
//! object type with reflected fields, a Rust error and a panic. Built as
//! `librust_ext.so`, it exports only the functions below
//! (`__tvm_ffi_<name>` with their docs and type schemas).

use std::collections::HashMap;
use tvmffi::{
    DeviceView, Object, ObjectRef, Result, Slice, SliceMut, Tensor, Writable, bail, ensure, export,
    global,
};
// Only with the feature tests/rust-api/extension uses to show the refusal.
#[cfg(feature = "runtime-inside-by-mistake")]
use tvmffi_host as _;

/// Adds one to `x`.
#[export]
fn add_one(x: i64) -> i64 {
    x + 1
}

/// Greets `who` `times` times, joined by spaces.
#[export]
fn greet(who: &str, times: i64) -> Result<String> {
    ensure!(
        times >= 0,
        ValueError,
        "times must be non-negative, got {times}"
    );
    Ok(vec![format!("hello {who}"); times as usize].join(" "))
}

/// Greets `who`: the global `rust_ext.hello`, registered when the library
/// loads (no registration call).
#[global("rust_ext.hello")]
fn hello(who: &str) -> String {
    format!("hello {who}, from Rust")
}

/// Writes `x + 1` into `y`, a float32 array of the same shape that the
/// caller allocated (the in-place kernel of every TVM-FFI example).
#[export]
fn add_one_into(x: Slice<f32>, mut y: SliceMut<f32>) -> Result<()> {
    y.expect_shape("y", x.shape())?;
    for (y, x) in y.iter_mut().zip(x.iter()) {
        *y = x + 1.0;
    }
    Ok(())
}

/// What a device kernel launch sees of a tensor on any device: where its
/// data is, its layout and the caller's current stream on that device.
#[export]
fn locate(x: DeviceView) -> String {
    let device = x.device();
    format!(
        "data {:#x} on device ({}, {}), shape {:?}, strides {:?}, dtype {}, stream {:#x}",
        x.data_ptr() as usize,
        device.kind,
        device.id,
        x.shape(),
        x.strides(),
        x.dtype(),
        x.stream() as usize
    )
}

/// Computes `a * x + y` over two float32 arrays of one shape, into a new
/// array.
#[export]
fn saxpy(a: f64, x: Slice<f32>, y: Slice<f32>) -> Result<Tensor> {
    ensure!(
        x.shape() == y.shape(),
        ValueError,
        "saxpy: shapes differ: {:?} and {:?}",
        x.shape(),
        y.shape()
    );
    let out: Vec<f32> = x
        .iter()
        .zip(y.iter())
        .map(|(x, y)| a as f32 * x + y)
        .collect();
    Tensor::from_vec(out, x.shape())
}

/// Sums the values of a map of names to integers.
#[export]
fn total(counts: HashMap<String, i64>, names: Vec<String>) -> i64 {
    names.iter().filter_map(|n| counts.get(n)).sum()
}

/// A point with a label; Python builds it with `Point(x=.., y=.., label=..)`.
#[derive(Object, Default, Debug)]
#[type_key = "rust_ext.Point"]
struct Point {
    /// Horizontal coordinate.
    x: i64,
    /// Vertical coordinate.
    #[field(default = 0.5)]
    y: f64,
    /// A name other languages may change.
    label: Writable<String>,
    /// Rust-only state, not seen by other languages.
    #[field(skip)]
    moved: bool,
}

/// Makes a point.
#[export]
fn make_point(x: i64, y: f64, label: &str) -> Result<ObjectRef<Point>> {
    ObjectRef::new(Point {
        x,
        y,
        label: Writable::new(label.to_owned()),
        moved: false,
    })
}

/// The point moved by (dx, dy), a new object.
#[export]
fn move_point(p: ObjectRef<Point>, dx: i64, dy: f64) -> Result<ObjectRef<Point>> {
    ObjectRef::new(Point {
        x: p.x + dx,
        y: p.y + dy,
        label: Writable::new(p.label.get()),
        moved: true,
    })
}

/// Describes a point from Rust's side.
#[export]
fn describe(p: ObjectRef<Point>) -> String {
    format!(
        "Point at ({}, {}) labelled {:?}, moved: {}",
        p.x,
        p.y,
        p.label.get(),
        p.moved
    )
}

/// Fails with a ValueError from Rust.
#[export]
fn fail(code: i64) -> Result<()> {
    if code != 0 {
        bail!(ValueError, "failed with code {code}");
    }
    Ok(())
}

/// Panics: the caller sees a RuntimeError, the process lives on.
#[export]
fn panics(message: &str) -> i64 {
    panic!("{message}")
}

// `cargo test` runs these in a host: the dev-dependency on tvmffi-host links
// a runtime into the test program (never into the library itself).
#[cfg(test)]
mod tests {
    use super::*;
    use tvmffi::Function;
    use tvmffi_host as _;

    #[test]
    fn functions_answer_from_rust() {
        assert_eq!(add_one(41), 42);
        assert_eq!(greet("you", 2).unwrap(), "hello you hello you");
        let err = greet("you", -1).unwrap_err();
        assert_eq!(err.kind(), "ValueError");
        assert_eq!(err.message(), "times must be non-negative, got -1");
    }

    #[test]
    fn globals_are_registered_and_called_through_the_runtime() -> Result<()> {
        let hello = Function::get_global("rust_ext.hello")?;
        assert_eq!(hello.call::<_, String>(("Ada",))?, "hello Ada, from Rust");
        Ok(())
    }

    #[test]
    fn objects_live_in_the_runtime() -> Result<()> {
        let p = make_point(1, 2.0, "a")?;
        let q = move_point(p.clone(), 2, 0.5)?;
        assert_eq!(describe(q), "Point at (3, 2.5) labelled \"a\", moved: true");
        assert_eq!(p.x, 1);
        Ok(())
    }
}
