//! The checked-in headers under `include/` are exactly what cbindgen makes
//! from the sources. `UPDATE_HEADERS=1 cargo test --test header_fresh`
//! rewrites them.

use std::path::{Path, PathBuf};

/// One generated header: where it goes, what it is made from, how its
/// configuration differs from `cbindgen.toml`, and which of its integer
/// typedefs become enums.
struct Pass {
    out: &'static str,
    sources: &'static [&'static str],
    adjust: fn(&mut cbindgen::Config),
    enums: &'static [(&'static str, EnumStyle)],
}

/// How the reference declares an enum, in C++ / in C.
#[derive(Clone, Copy)]
enum EnumStyle {
    /// `enum T : int32_t {...};` / `typedef enum {...} T;` (TVM-FFI).
    Named,
    /// `typedef enum : int32_t {...} T;` / `typedef enum {...} T;`.
    Anonymous,
    /// `typedef enum {...} T;` in both.
    Plain,
}

/// The reference declares these as enums (`enum T : int32_t` in C++,
/// `typedef enum {...} T` in C), and its C++ headers use the enumerators
/// as such (`StaticTypeKey::kTVMFFINone`): cbindgen writes an `i32` type
/// alias and `#define`s, which [`as_enums`] rewrites.
const ENUMS: &[(&str, EnumStyle)] = &[
    ("TVMFFISEqHashKind", EnumStyle::Named),
    ("TVMFFITypeIndex", EnumStyle::Named),
    ("TVMFFIObjectDeleterFlagBitMask", EnumStyle::Named),
    ("TVMFFIBacktraceUpdateMode", EnumStyle::Named),
    ("TVMFFIFieldFlagBitMask", EnumStyle::Named),
    ("TVMFFIDefRegionKind", EnumStyle::Named),
];

const PASSES: &[Pass] = &[
    Pass {
        out: "include/tvm/ffi/c_api.h",
        sources: &[
            "src/abi/mod.rs",
            "src/capi/object.rs",
            "src/capi/function.rs",
            "src/capi/error.rs",
            "src/capi/string.rs",
            "src/capi/dtype.rs",
            "src/capi/scalar.rs",
            "src/capi/tensor.rs",
            "src/capi/type_table.rs",
            "src/capi/init_once.rs",
        ],
        adjust: |_| {},
        enums: ENUMS,
    },
    Pass {
        out: "include/tvm/ffi/extra/c_env_api.h",
        sources: &["src/capi/env.rs"],
        adjust: |c| {
            c.include_guard = Some("TVM_FFI_EXTRA_C_ENV_API_H_".into());
            c.sys_includes = vec!["tvm/ffi/c_api.h".into()];
            c.after_includes = None;
            c.trailer = None;
        },
        enums: &[],
    },
    Pass {
        out: "include/tvm/ffi/extra/artifact.h",
        sources: &["src/capi/artifact.rs"],
        adjust: |c| {
            c.include_guard = Some("TVM_FFI_EXTRA_ARTIFACT_H_".into());
            c.sys_includes = vec!["tvm/ffi/c_api.h".into()];
            c.after_includes = None;
            c.trailer = None;
        },
        enums: &[],
    },
    Pass {
        out: "include/dlpack/dlpack.h",
        sources: &["src/abi/dlpack.rs"],
        adjust: |c| {
            c.include_guard = Some("DLPACK_DLPACK_H_".into());
            c.sys_includes = vec!["stdint.h".into(), "stddef.h".into()];
            c.trailer = None;
            c.after_includes = Some(
                "\n#ifdef __cplusplus\n#define DLPACK_EXTERN_C extern \"C\"\n#else\n#define DLPACK_EXTERN_C\n#endif\n#define DLPACK_DLL\n"
                    .into(),
            );
            c.export.include = vec![
                "DLManagedTensor".into(),
                "DLPackManagedTensorAllocator".into(),
            ];
        },
        enums: &[
            ("DLDeviceType", EnumStyle::Anonymous),
            ("DLDataTypeCode", EnumStyle::Plain),
        ],
    },
];

/// The constants of type `ty` in the ABI sources, in declaration order.
fn constants_of(root: &Path, ty: &str) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(root.join("src/abi"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let suffix = format!(": {ty} = ");
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .filter_map(|l| {
                    let rest = l.trim().strip_prefix("pub const ")?;
                    let (name, _) = rest.split_once(&suffix)?;
                    Some(name.to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Rewrites each integer `typedef ... T;` of `enums` and the `#define`s of
/// the constants of type `T` (with their doc comments) into one enum,
/// declared where the typedef was, as the reference declares it.
fn as_enums(root: &Path, header: &str, enums: &[(&str, EnumStyle)]) -> String {
    let mut lines: Vec<String> = header.lines().map(str::to_string).collect();
    for &(ty, style) in enums {
        let mut body = Vec::new();
        for name in constants_of(root, ty) {
            let prefix = format!("#define {name} ");
            let at = lines
                .iter()
                .position(|l| l.starts_with(&prefix))
                .unwrap_or_else(|| panic!("no #define of {name} in the generated header"));
            let value = lines[at][prefix.len()..].to_string();
            // The doc comment right above (`/**` ... ` */`), then one blank.
            let mut start = at;
            if start > 0 && lines[start - 1] == " */" {
                while !lines[start - 1].starts_with("/**") {
                    start -= 1;
                }
                start -= 1;
            }
            let end = if lines.get(at + 1).is_some_and(String::is_empty) {
                at + 2
            } else {
                at + 1
            };
            for doc in &lines[start..at] {
                body.push(format!("  {doc}").trim_end().to_string());
            }
            body.push(format!("  {name} = {value},"));
            lines.drain(start..end);
        }
        let suffix = format!(" {ty};");
        let at = lines
            .iter()
            .position(|l| l.starts_with("typedef ") && l.ends_with(&suffix) && !l.contains('{'))
            .unwrap_or_else(|| panic!("no integer typedef of {ty} in the generated header"));
        let lines_of = |text: &[&str]| {
            text.iter()
                .map(|l| l.replace("{ty}", ty))
                .collect::<Vec<_>>()
        };
        let (open, close) = match style {
            EnumStyle::Named => (
                lines_of(&[
                    "#ifdef __cplusplus",
                    "enum {ty} : int32_t {",
                    "#else",
                    "typedef enum {",
                    "#endif",
                ]),
                lines_of(&["#ifdef __cplusplus", "};", "#else", "} {ty};", "#endif"]),
            ),
            EnumStyle::Anonymous => (
                lines_of(&[
                    "#ifdef __cplusplus",
                    "typedef enum : int32_t {",
                    "#else",
                    "typedef enum {",
                    "#endif",
                ]),
                lines_of(&["} {ty};"]),
            ),
            EnumStyle::Plain => (lines_of(&["typedef enum {"]), lines_of(&["} {ty};"])),
        };
        lines.splice(at..=at, open.into_iter().chain(body).chain(close));
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn generate(root: &Path, pass: &Pass) -> String {
    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml parses");
    (pass.adjust)(&mut config);
    let mut builder = cbindgen::Builder::new().with_config(config);
    for src in pass.sources {
        builder = builder.with_src(root.join(src));
    }
    let mut out = Vec::new();
    builder
        .generate()
        .expect("cbindgen generates")
        .write(&mut out);
    let header = String::from_utf8(out).expect("header is UTF-8");
    as_enums(root, &header, pass.enums)
}

#[test]
fn headers_are_fresh() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("UPDATE_HEADERS").is_some();
    let mut stale = Vec::new();
    for pass in PASSES {
        let path = root.join(pass.out);
        let want = generate(&root, pass);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
            stale.push(pass.out);
        }
    }
    assert!(
        stale.is_empty(),
        "stale headers {stale:?}: run `UPDATE_HEADERS=1 cargo test --test header_fresh` and commit"
    );
}
