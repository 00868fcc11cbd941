"""pytest plugin: fails the session unless the process maps the
libtvm_ffi.so named by TVM_FFI_EXPECT_LIB (the library under test)."""

import os

import pytest


def pytest_sessionstart(session):
    expect = os.environ.get("TVM_FFI_EXPECT_LIB")
    if not expect:
        return
    import tvm_ffi  # noqa: F401  (maps the library)

    with open("/proc/self/maps") as f:
        mapped = {line.split()[-1] for line in f if line.rstrip().endswith("/libtvm_ffi.so")}
    if mapped != {os.path.realpath(expect)}:
        pytest.exit(f"expected to run on {expect}, but the process maps {sorted(mapped)}", 3)
