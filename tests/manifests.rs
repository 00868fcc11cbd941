//! The rlib-only package (`tvm-ffi-rs-rlib/Cargo.toml`) builds the same sources as the
//! top package: it must keep the same library name, build script and
//! dependencies, or a Rust dependent would get a different library. Its
//! sources, build script and headers are links inside it to the top
//! package's (so that `cargo package` can hold them).

use std::path::Path;

/// The lines of `[section]` in a manifest, without comments and blanks.
fn section(manifest: &str, name: &str) -> Vec<String> {
    let header = format!("[{name}]");
    manifest
        .lines()
        .skip_while(|l| l.trim() != header)
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn the_rlib_package_builds_what_the_top_package_builds() {
    let (top, rlib) = (read("Cargo.toml"), read("tvm-ffi-rs-rlib/Cargo.toml"));
    for name in ["dependencies", "build-dependencies"] {
        assert_eq!(
            section(&top, name),
            section(&rlib, name),
            "[{name}] differs"
        );
    }
    let lib = section(&rlib, "lib");
    assert!(lib.contains(&r#"name = "tvm_ffi""#.to_owned()), "{lib:?}");
    assert!(
        lib.contains(&r#"path = "src/lib.rs""#.to_owned()),
        "{lib:?}"
    );
    assert!(
        lib.contains(&r#"crate-type = ["rlib"]"#.to_owned()),
        "{lib:?}"
    );
    let package = section(&rlib, "package");
    assert!(
        package.contains(&r#"build = "build.rs""#.to_owned()),
        "{package:?}"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for link in ["src", "build.rs", "include"] {
        let (inside, top) = (root.join("tvm-ffi-rs-rlib").join(link), root.join(link));
        assert_eq!(
            inside.canonicalize().unwrap(),
            top.canonicalize().unwrap(),
            "tvm-ffi-rs-rlib/{link} is not the top package's {link}"
        );
    }
    assert!(section(&top, "lib").contains(&r#"name = "tvm_ffi""#.to_owned()));
}
