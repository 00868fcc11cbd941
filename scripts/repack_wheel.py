"""Repacks the official apache-tvm-ffi wheel around our libtvm_ffi.so.

usage: python3 scripts/repack_wheel.py OFFICIAL_WHEEL OUR_LIB OUT_DIR LOCAL

Writes OUT_DIR/apache_tvm_ffi-<version>+<LOCAL>-<tags>.whl: the official
package (Python code, Cython core, headers, CMake config, tvm-ffi-config)
with tvm_ffi/lib/libtvm_ffi.so replaced by OUR_LIB, under the local version
`<version>+<LOCAL>` (so pip shows which runtime is installed, and packages
that require apache-tvm-ffi==<version> are satisfied), with its RECORD
recomputed. Prints the wheel's path."""
import base64
import hashlib
import pathlib
import sys
import zipfile


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def main() -> None:
    official, our_lib, out_dir, local = sys.argv[1:5]
    official = pathlib.Path(official)
    name, version, *tags = official.name[: -len(".whl")].split("-")
    new_version = f"{version}+{local}"
    old_info, new_info = f"{name}-{version}.dist-info/", f"{name}-{new_version}.dist-info/"
    lib = pathlib.Path(our_lib).read_bytes()
    out = pathlib.Path(out_dir) / f"{name}-{new_version}-{'-'.join(tags)}.whl"
    out.parent.mkdir(parents=True, exist_ok=True)
    records = []
    with zipfile.ZipFile(official) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            path = info.filename
            if path == old_info + "RECORD":
                continue
            data = src.read(info)
            if path.startswith(old_info):
                path = new_info + path[len(old_info):]
            if path == "tvm_ffi/lib/libtvm_ffi.so":
                data = lib
            elif path == new_info + "METADATA":
                lines = data.decode().split("\n")
                lines = [f"Version: {new_version}" if l.startswith("Version: ") else l for l in lines]
                data = "\n".join(lines).encode()
            entry = zipfile.ZipInfo(path, date_time=info.date_time)
            entry.external_attr = info.external_attr
            entry.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(entry, data)
            if not path.endswith("/"):
                records.append(f"{path},{record_hash(data)},{len(data)}")
        records.append(f"{new_info}RECORD,,")
        dst.writestr(zipfile.ZipInfo(new_info + "RECORD"), "\n".join(records) + "\n")
    print(out)


if __name__ == "__main__":
    main()
