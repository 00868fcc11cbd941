//! The checked-in headers under `include/` are exactly what cbindgen makes
//! from the sources. `UPDATE_HEADERS=1 cargo test --test header_fresh`
//! rewrites them.

use std::path::{Path, PathBuf};

/// One generated header: where it goes, what it is made from, and how its
/// configuration differs from `cbindgen.toml`.
struct Pass {
    out: &'static str,
    sources: &'static [&'static str],
    adjust: fn(&mut cbindgen::Config),
}

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
    },
];

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
    String::from_utf8(out).expect("header is UTF-8")
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
