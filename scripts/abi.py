#!/usr/bin/env python3
"""The C ABI of a staunch release, as a small text file, and the check of a
new build against the previous release's (the 1.x promise in include/staunch.h).

    scripts/abi.py dump LIBRARY            print the ABI of LIBRARY + include/
    scripts/abi.py update LIBRARY          write abi/<major>.<minor>.txt (a release's)
    scripts/abi.py check LIBRARY           compare with the newest abi/*.txt at or below
                                           this version: exit 1 on what 1.x forbids

What a file holds (x86_64 Linux), one fact a line:

    symbol NAME                      a staunch_ function the library exports (nm -D --defined-only)
    function PROTOTYPE               as declared in include/staunch_cdef.h
    typedef NAME = DECLARATION       a typedef that is not a struct
    const NAME VALUE                 a #define (the version macros aside)
    struct NAME size N               sizeof, from a C program compiled against the header
    field STRUCT.NAME TYPE @OFFSET +SIZE

Forbidden within a major version: a symbol, function, typedef, constant, struct
or field removed; a prototype, typedef, constant value, or a field's type, offset
or size changed; a struct's size changed, except growth of the size-prefixed
structs and of staunch_event and staunch_trace_event (which take fields at
their end). Allowed and
reported: everything added.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CDEF = ROOT / "include" / "staunch_cdef.h"
ABI_DIR = ROOT / "abi"
# Fields may be added at their end (the caller sets .size, or the library
# owns the struct and the caller reads it by pointer).
GROWABLE = {"staunch_stats", "staunch_result", "staunch_batch", "staunch_column_info", "staunch_txn_options", "staunch_event", "staunch_trace_event"}
VERSION_MACROS = {"STAUNCH_VERSION_MAJOR", "STAUNCH_VERSION_MINOR", "STAUNCH_VERSION_PATCH", "STAUNCH_VERSION"}


def crate_version() -> str:
    return subprocess.run([ROOT / "scripts" / "version.sh"], check=True, capture_output=True, text=True).stdout.strip()


def parse_header(text: str):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    consts, typedefs, structs, functions = {}, {}, {}, []
    for m in re.finditer(r"^#define (STAUNCH_\w+) (\S+)$", text, flags=re.M):
        if m.group(1) not in VERSION_MACROS:
            consts[m.group(1)] = m.group(2)
    for m in re.finditer(r"^typedef struct (\w+) \{(.*?)\} (\w+);", text, flags=re.M | re.S):
        fields = []
        for line in m.group(2).strip().splitlines():
            fm = re.match(r"\s*(.*?)\s*\**\s*(\w+)(\[\d+\])?;$", line)
            if not fm:
                raise SystemExit(f"abi.py: cannot read field {line!r} of {m.group(1)}")
            decl = line.strip().rstrip(";")
            ftype = re.sub(r"\s+", " ", decl[: decl.rfind(fm.group(2))] + (fm.group(3) or "")).strip()
            fields.append((fm.group(2), ftype))
        structs[m.group(3)] = fields
    body = re.sub(r"^typedef struct (\w+) \{.*?\} \w+;", "", text, flags=re.M | re.S)
    body = re.sub(r"^#.*$", "", body, flags=re.M)
    for stmt in body.split(";"):
        stmt = re.sub(r"\s+", " ", stmt).strip()
        if not stmt:
            continue
        if stmt.startswith("typedef "):
            tm = re.match(r"typedef struct (\w+) (\w+)$", stmt)
            if tm:
                typedefs[tm.group(2)] = f"struct {tm.group(1)} (opaque)"
                continue
            tm = re.search(r"\(\*(\w+)\)", stmt) or re.search(r"(\w+)$", stmt)
            typedefs[tm.group(1)] = unnamed(stmt[len("typedef ") :]) if "(" in stmt else stmt[len("typedef ") :]
        elif "(" in stmt:
            functions.append(unnamed(stmt) + ";")
    return consts, typedefs, structs, functions


def unnamed(decl: str) -> str:
    """A prototype with its parameters' names left out (renaming one is no ABI change)."""
    m = re.match(r"(.*?\()(.*)(\).*)$", decl)
    head, params, tail = m.groups()
    # A function-pointer typedef: its own parameter list is the last one.
    if "(*" in head and ")(" in decl:
        m = re.match(r"(.*\)\()(.*)(\).*)$", decl)
        head, params, tail = m.groups()
    kept = [re.sub(r"(?<=[\s*])\w+$", "", p.strip()).strip() for p in params.split(",")]
    return head + ", ".join(kept) + tail


def layout(structs) -> dict:
    """sizeof and offsetof/sizeof of every field, from a C program compiled
    against the header (so the compiler's layout, not a guess)."""
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "staunch.h"', "int main(void) {"]
    for name, fields in structs.items():
        lines.append(f'    printf("struct {name} size %zu\\n", sizeof({name}));')
        for f, _ in fields:
            lines.append(
                f'    printf("field {name}.{f} @%zu +%zu\\n", offsetof({name}, {f}), sizeof((({name} *)0)->{f}));'
            )
    lines += ["    return 0;", "}"]
    with tempfile.TemporaryDirectory() as d:
        src, exe = Path(d) / "layout.c", Path(d) / "layout"
        src.write_text("\n".join(lines) + "\n")
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", str(ROOT / "include"), "-o", exe, src], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    result = {}
    for line in out.splitlines():
        parts = line.split()
        result[(parts[0], parts[1])] = " ".join(parts[2:])
    return result


def symbols(library: str) -> list[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] == "T" and p[2].startswith("staunch_"):
            names.add(p[2])
    return sorted(names)


def dump(library: str) -> list[str]:
    consts, typedefs, structs, functions = parse_header(CDEF.read_text())
    lay = layout(structs)
    lines = [f"symbol {s}" for s in symbols(library)]
    lines += [f"function {f}" for f in sorted(functions, key=lambda f: re.search(r"(\w+)\(", f).group(1))]
    lines += [f"typedef {n} = {d}" for n, d in sorted(typedefs.items())]
    lines += [f"const {n} {v}" for n, v in sorted(consts.items())]
    for name in sorted(structs):
        lines.append(f"struct {name} {lay[('struct', name)]}")
        for f, t in structs[name]:
            lines.append(f"field {name}.{f} {t} {lay[('field', f'{name}.{f}')]}")
    return lines


def keyed(lines):
    """Each line by what it is about: (kind, name) -> the rest."""
    out = {}
    for line in lines:
        if not line or line.startswith("#"):
            continue
        kind, rest = line.split(" ", 1)
        if kind == "function":
            key = re.search(r"(\w+)\(", rest).group(1)
        elif kind == "typedef":
            key = rest.split(" = ", 1)[0]
        else:
            key = rest.split(" ", 1)[0]
        out[(kind, key)] = rest
    return out


def previous(version: str) -> Path:
    def vkey(p: Path):
        return tuple(int(x) for x in p.stem.split("."))

    want = tuple(int(x) for x in version.split("."))[:2]
    files = [p for p in ABI_DIR.glob("*.txt") if re.fullmatch(r"\d+\.\d+", p.stem) and vkey(p) <= want]
    if not files:
        raise SystemExit(f"abi.py: no abi/<major>.<minor>.txt at or below {version}")
    return max(files, key=vkey)


def check(library: str) -> int:
    version = crate_version()
    base_file = previous(version)
    base, new = keyed(base_file.read_text().splitlines()), keyed(dump(library))
    major = version.split(".")[0]
    problems, added = [], []
    same_major = base_file.stem.split(".")[0] == major
    for key, old in base.items():
        kind, name = key
        if key not in new:
            problems.append(f"removed: {kind} {name}")
        elif new[key] != old:
            if kind == "struct" and name in GROWABLE:
                osize, nsize = int(old.split()[-1]), int(new[key].split()[-1])
                if nsize >= osize:
                    if nsize > osize:
                        added.append(f"{kind} {name}: size {osize} -> {nsize} (grows at its end)")
                    continue
            problems.append(f"changed: {kind} {name}: {old!r} -> {new[key]!r}")
    for key in new:
        if key not in base:
            added.append(f"{key[0]} {new[key]}")
    print(f"ABI of {library} against abi/{base_file.name} (release {base_file.stem}):")
    for a in added:
        print(f"   added   {a}")
    for p in problems:
        print(f"   FORBIDDEN {p}")
    if problems and same_major:
        print(f"abi: {len(problems)} change(s) that {major}.x forbids (see include/staunch.h, 'the ABI promise')")
        return 1
    if problems:
        print(f"abi: a new major version ({major}): the changes above are allowed")
    else:
        print(f"abi: compatible: {len(added)} addition(s), nothing removed or changed")
    return 0


def main(argv):
    if len(argv) != 3 or argv[1] not in ("dump", "update", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    cmd, lib = argv[1], argv[2]
    if cmd == "dump":
        print("\n".join(dump(lib)))
    elif cmd == "update":
        version = crate_version()
        mm = ".".join(version.split(".")[:2])
        path = ABI_DIR / f"{mm}.txt"
        ABI_DIR.mkdir(exist_ok=True)
        head = [
            f"# The C ABI of staunch {version} (x86_64 Linux): what later {version.split('.')[0]}.x releases must keep.",
            "# Written by `scripts/abi.py update LIBRARY`; `scripts/abi.py check LIBRARY` (scripts/dist.sh) compares.",
        ]
        path.write_text("\n".join(head + dump(lib)) + "\n")
        print(f"wrote {path.relative_to(ROOT)}")
    else:
        return check(lib)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
