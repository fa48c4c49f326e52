"""`pip wheel ./bindings/python` gives a wheel that holds libstaunch.so and
the C row converter, is tagged for the glibc that library needs and for
CPython's stable ABI, and installs and works in a fresh venv where no Rust
toolchain is on PATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(900)  # a release build of the library when target/ is cold
def test_wheel_installs_and_imports_without_cargo(tmp_path, server):
    env = dict(os.environ)
    env.pop("STAUNCH_LIBRARY", None)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(PACKAGE)],
        env=env,
        check=True,
        timeout=900,
    )
    (wheel,) = (tmp_path / "dist").glob("staunch-*.whl")
    # This machine has a C compiler: the optional converter is built, and
    # the wheel is for CPython 3.9+ (the stable ABI).
    m = re.fullmatch(r"staunch-([\d.]+)-cp39-abi3-(manylinux_2_(\d+)_x86_64|linux_x86_64)\.whl", wheel.name)
    assert m, wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        lib = z.read("staunch/libstaunch.so")
    assert {"staunch/__init__.py", "staunch/mysqldb/__init__.py", "staunch/provision.py"} <= names
    assert "staunch/_speedups.abi3.so" in names, sorted(names)
    if m.group(3):  # the tag is the newest glibc symbol version the library asks for
        assert max(int(v) for v in re.findall(rb"GLIBC_2\.(\d+)", lib)) == int(m.group(3))

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # No cargo, no rustc: only the system's directories and the new venv.
    bare = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    assert subprocess.run(["sh", "-c", "command -v cargo"], env=bare, check=False).returncode != 0
    subprocess.run(
        [venv / "bin/python", "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)],
        env=bare,
        check=True,
        timeout=300,
    )
    check = (
        "import importlib.metadata as md, staunch, sys\n"
        "assert staunch.__file__.startswith(sys.prefix), staunch.__file__\n"
        "assert staunch.__version__ == md.version('staunch'), (staunch.__version__, md.version('staunch'))\n"
        "from staunch import _convert; assert _convert._speedups is not None\n"
        "with staunch.Pool(sys.argv[1]) as p, p.connection() as c:\n"
        "    cur = c.cursor(); cur.execute('SELECT 1'); print(staunch.__version__, cur.fetchone()[0])\n"
    )
    out = subprocess.run(
        [venv / "bin/python", "-c", check, server.direct_url],
        env=bare,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [m.group(1), "1"], out.stdout
