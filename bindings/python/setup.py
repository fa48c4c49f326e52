"""Builds libstaunch.so with cargo (release) and puts it inside the package;
the wheel's platform tag says which glibc it needs (manylinux_2_N).

pip builds this directory in place (pip >= 21.3), so the staunch crate is two
levels up (bindings/python -> the repository); in the sdist that
scripts/dist.sh makes, it is the packaged crate in crate/. Environment:

- STAUNCH_PREBUILT_LIBRARY: copy this libstaunch.so instead of running cargo.
- CARGO (default: cargo), CARGO_TARGET_DIR (default: <repo>/target).

It also compiles staunch._speedups, the row converter in C, against
CPython's stable ABI (one build for every CPython >= 3.9), with the C
compiler setuptools finds and the crate's include/staunch.h. It is optional:
where it cannot be built, the package works without it (the converter in
Python, about three times slower on a large fetch) and the wheel says
py3-none instead of cp39-abi3.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent


def _repo() -> Path:
    for d in [HERE / "crate", HERE, *HERE.parents]:
        cargo = d / "Cargo.toml"
        if cargo.is_file() and 'name = "staunch"' in cargo.read_text():
            return d
    raise SystemExit(
        'staunch: the Rust crate (Cargo.toml with name = "staunch") is not above '
        f"{HERE}; install from the repository (`pip install ./bindings/python`) or set "
        "STAUNCH_PREBUILT_LIBRARY to a built libstaunch.so"
    )


def _build_library() -> Path:
    pre = os.environ.get("STAUNCH_PREBUILT_LIBRARY")
    if pre:
        return Path(pre)
    repo = _repo()
    cargo = os.environ.get("CARGO") or shutil.which("cargo") or str(Path.home() / ".cargo/bin/cargo")
    # The library as the packages ship it: mimalloc as its allocator (the
    # crate's `mimalloc` feature; see its Cargo.toml).
    cmd = [cargo, "build", "--release", "-p", "staunch", "--lib", "--features", "mimalloc"]
    print("staunch: building the library:", " ".join(cmd), flush=True)
    try:
        subprocess.run(cmd, cwd=repo, check=True)
    except FileNotFoundError:
        raise SystemExit("staunch: cargo not found (install Rust: https://rustup.rs, or set CARGO)") from None
    target = Path(os.environ.get("CARGO_TARGET_DIR") or repo / "target")
    if not target.is_absolute():
        target = repo / target
    return target / "release" / "libstaunch.so"


#: The libstaunch.so put into the package, for the wheel's platform tag.
_bundled: list = []

#: The shared libraries a manylinux wheel may link against without bundling
#: them (PEP 600 / auditwheel's policy; staunch needs only these).
_MANYLINUX_LIBS = {
    b"libc.so.6",
    b"libm.so.6",
    b"libgcc_s.so.1",
    b"libpthread.so.0",
    b"libdl.so.2",
    b"librt.so.1",
    b"ld-linux-x86-64.so.2",
    b"ld-linux-aarch64.so.1",
}


def _platform_tag(lib: Path, fallback: str) -> str:
    """manylinux_2_N_<arch> when the library asks glibc for symbol versions up
    to 2.N only and links nothing outside the manylinux set; else fallback.

    The GLIBC_2.N names in the library are the symbol versions it needs (a
    shared library built by rustc defines none of its own), which is what
    `objdump -T` lists; NEEDED entries come from `objdump -p` when it exists.
    """
    data = lib.read_bytes()
    minors = [int(m) for m in re.findall(rb"GLIBC_2\.(\d+)", data)]
    if not minors or not fallback.startswith("linux_"):
        return fallback
    objdump = shutil.which("objdump")
    if objdump:
        out = subprocess.run([objdump, "-p", str(lib)], capture_output=True, check=False).stdout
        needed = set(re.findall(rb"NEEDED\s+(\S+)", out))
        if not needed or not needed <= _MANYLINUX_LIBS:
            return fallback
    return f"manylinux_2_{max(minors)}_{platform.machine()}"


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        lib = _build_library()
        if not lib.is_file():
            raise SystemExit(f"staunch: {lib} was not built")
        dest = Path(self.build_lib) / "staunch" / "libstaunch.so"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lib, dest)
        strip = shutil.which("strip")
        if strip:  # the release profile keeps line tables; the wheel needs none
            subprocess.run([strip, "--strip-debug", str(dest)], check=False)
        _bundled[:] = [dest]


#: Whether staunch._speedups was built (it is optional).
_speedups_built: list = []


class BuildExtOptional(build_ext):
    def build_extension(self, ext):
        super().build_extension(ext)  # raises when it fails; setuptools then skips it
        _speedups_built.append(ext.name)


def _speedups() -> Extension:
    try:
        include = str(_repo() / "include")
    except SystemExit:  # no crate (a prebuilt library): the header is not here
        include = str(HERE / "include")
    return Extension(
        "staunch._speedups",
        ["src/staunch/_speedups.c"],
        include_dirs=[include],
        define_macros=[("Py_LIMITED_API", "0x03090000")],
        extra_compile_args=["-std=c11", "-O2"],
        py_limited_api=True,
        optional=True,
    )


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: platform-specific, not pure."""

    def has_ext_modules(self):
        return True


try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70
    from wheel.bdist_wheel import bdist_wheel


class WheelForAnyPython(bdist_wheel):
    """ctypes loads the library: the wheel fits any CPython 3.9 or later
    (staunch._speedups uses the stable ABI), or any Python 3 without it; the
    platform is the oldest glibc the bundled library runs on (manylinux_2_N)."""

    def get_tag(self):
        _, _, plat = super().get_tag()
        if _bundled and _bundled[0].is_file():
            plat = _platform_tag(_bundled[0], plat)
        if _speedups_built:
            return "cp39", "abi3", plat
        return "py3", "none", plat


setup(
    ext_modules=[_speedups()],
    cmdclass={"build_py": BuildPyWithLibrary, "build_ext": BuildExtOptional, "bdist_wheel": WheelForAnyPython},
    distclass=BinaryDistribution,
)
