"""Builds libstaunch.so with cargo (release) and puts it inside the package.

pip builds this directory in place (pip >= 21.3), so the staunch crate is two
levels up (bindings/python -> the repository); in the sdist that
scripts/dist.sh makes, it is the packaged crate in crate/. Environment:

- STAUNCH_PREBUILT_LIBRARY: copy this libstaunch.so instead of running cargo.
- CARGO (default: cargo), CARGO_TARGET_DIR (default: <repo>/target).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
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
    cmd = [cargo, "build", "--release", "-p", "staunch", "--lib"]
    print("staunch: building the library:", " ".join(cmd), flush=True)
    try:
        subprocess.run(cmd, cwd=repo, check=True)
    except FileNotFoundError:
        raise SystemExit("staunch: cargo not found (install Rust: https://rustup.rs, or set CARGO)") from None
    target = Path(os.environ.get("CARGO_TARGET_DIR") or repo / "target")
    if not target.is_absolute():
        target = repo / target
    return target / "release" / "libstaunch.so"


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


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: platform-specific, not pure."""

    def has_ext_modules(self):
        return True


try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70
    from wheel.bdist_wheel import bdist_wheel


class WheelForAnyPython(bdist_wheel):
    """ctypes loads the library: the wheel fits any CPython 3, one platform."""

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(
    cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": WheelForAnyPython},
    distclass=BinaryDistribution,
)
