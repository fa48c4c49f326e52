#!/usr/bin/env bash
# Every fenced code block of the README and docs/ is checked, by language:
#
#   fences  every block names a known language (below); the Rust ones are not
#           `ignore`d; every page with a Rust block is a doctest (src/lib.rs);
#           every relative link (here and in the other READMEs) points at a
#           file, and heading, that exists
#   rust    (checked here: each page is included) the blocks themselves are
#           doctests (`cargo test --doc`, in the rust stage of scripts/test.sh)
#   python  python3 -m py_compile on each block
#   sh      bash -n on each block
#   toml    parsed with Python's tomllib
#   c       each block compiled and linked as a whole program with
#           -std=c11 -Wall -Wextra -Wpedantic -Werror against include/staunch.h
#           and the library in $STAUNCH_LIBDIR (default target/debug); also
#           cbuild/README.md's C blocks
#   go      each block a `package main` in a module that requires the binding
#           (replaced by bindings/go), type-checked by `go vet` (needs cgo's
#           environment: scripts/go-env.sh, as scripts/go-tests.sh sets it)
#   java    each block compiled by javac --release 11 -Werror against the
#           binding's jar (bindings/java/target/staunch-*.jar, or $STAUNCH_JAR);
#           a block with no class is compiled as the body of a method
#   text, sql  not checked (program output; SQL for the server's console)
#   run-c, run-python, run-go, run-java
#           the README's quick start of that face run against a throwaway
#           server of the test kit ($STAUNCH_TESTKIT, default
#           target/debug/staunch-testkit), its URL in place of the README's
#           mysql://app:secret@127.0.0.1:3306/shop, with the table `t` the
#           quick starts use; each must exit 0. run-c needs $STAUNCH_LIBDIR,
#           run-python $PYTHON with the binding installed, run-go cgo's
#           environment, run-java the jar and $STAUNCH_LIBRARY.
#
# Usage: scripts/check-docs.sh [CHECK ...]
#   default: fences python sh toml (nothing to build; what .ci/run runs);
#   scripts/c-tests.sh runs `c run-c`, scripts/python-tests.sh `run-python`,
#   scripts/go-tests.sh `go run-go`, scripts/java-tests.sh `java run-java`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=(fences python sh toml)
pages=(README.md docs/*.md)

tmp=$(mktemp -d)
tk_pid=
cleanup() {
  if [ -n "$tk_pid" ]; then
    echo quit >&"${TK[1]}" 2>/dev/null || true
    wait "$tk_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# The README's quick starts connect here; run-* put the test kit's URL there.
QUICK_URL=mysql://app:secret@127.0.0.1:3306/shop
server_url=
server() { # starts one test kit server (once), with the quick starts' table
  [ -z "$server_url" ] || return 0
  local tk=${STAUNCH_TESTKIT:-$ROOT/target/debug/staunch-testkit} line
  [ -x "$tk" ] || { echo "check-docs: no test kit at $tk (cargo build -p staunch-testkit)" >&2; exit 1; }
  coproc TK { exec "$tk" server 2>"$tmp/testkit.log"; }
  tk_pid=$TK_PID
  read -t 120 -r line <&"${TK[0]}" || { cat "$tmp/testkit.log" >&2; exit 1; }
  server_url=$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["url"] if d.get("ready") else "")' "$line")
  [ -n "$server_url" ] || { echo "check-docs: the test kit did not start: $line" >&2; exit 1; }
  for stmt in "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL DEFAULT 0, v BIGINT)" \
    "INSERT INTO t (id) VALUES (42)"; do
    echo "sql 0 $stmt" >&"${TK[1]}"
    read -r line <&"${TK[0]}"
    case $line in *'"ok":true'*) ;; *) echo "check-docs: $stmt: $line" >&2; exit 1 ;; esac
  done
}
ran_some() { # CHECK: fails when it ran no quick start
  [ "$ran" -gt 0 ] || { echo "check-docs: $1: the README has no such block using $QUICK_URL" >&2; exit 1; }
}
# quick LANG EXT: the README's blocks of LANG, with the test kit's URL (call
# `server` first, in this shell: quick runs in a command substitution)
quick() {
  local f
  for f in $(blocks "$1" "$2"); do
    case $(where "$f") in README.md:*) ;; *) continue ;; esac
    grep -qF "$QUICK_URL" "$f" || continue
    sed -i "s|$QUICK_URL|${server_url%%\?*}|" "$f"
    echo "$f"
  done
}

# extract strict|lax FILE... : every block into
# $tmp/blocks/LANG/<page>_<n>.<ext>; strict fails on a block with no language
# or an unknown one (lax: other READMEs, whose C blocks are checked too).
extract() {
  python3 - "$tmp/blocks" "$@" <<'PY'
import os, re, sys
out, strict, pages = sys.argv[1], sys.argv[2] == "strict", sys.argv[3:]
ext = {"rust": "rs", "toml": "toml", "c": "c", "python": "py", "go": "go",
       "java": "java", "sh": "sh", "sql": "sql", "text": "txt"}
bad = []
for page in pages:
    tag = re.sub(r"[^A-Za-z0-9]", "_", page)
    lang, body, n, start = None, [], 0, 0
    for i, line in enumerate(open(page, encoding="utf-8"), 1):
        m = re.match(r"^(\s*)```(.*)$", line.rstrip("\n"))
        if lang is None and m:
            info = m.group(2).strip()
            lang = info.split(",")[0] or "?"
            if lang not in ext and strict:
                bad.append(f"{page}:{i}: a code block of language {info or '(none)'!r}")
            if lang == "rust" and "ignore" in info.split(","):
                bad.append(f"{page}:{i}: an ignored Rust block: make it compile (no_run)")
            indent, body, start = len(m.group(1)), [], i
            continue
        if lang is not None and m and m.group(2).strip() == "":
            n += 1
            if lang in ext:
                d = os.path.join(out, lang)
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, f"{tag}_{n}.{ext[lang]}"), "w") as f:
                    f.write("".join(body))
                with open(os.path.join(d, f"{tag}_{n}.where"), "w") as f:
                    f.write(f"{page}:{start}\n")
            lang = None
            continue
        if lang is not None:
            body.append(line[indent:] if line[:indent].strip() == "" else line)
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

blocks() { # LANG: the extracted files of that language
  ls "$tmp/blocks/$1"/*."$2" 2>/dev/null || true
}
where() { cat "${1%.*}.where"; }
fail() {
  echo "check-docs: $(where "$1"): $2" >&2
  cat -n "$1" >&2
  exit 1
}

extract strict "${pages[@]}"
for c in "${checks[@]}"; do
  case $c in
    fences)
      echo "== docs: code block languages, Rust pages as doctests, relative links"
      for p in "${pages[@]}"; do
        if grep -q '^\s*```rust' "$p"; then
          grep -qF "include_str!(\"../$p\")" src/lib.rs ||
            { echo "check-docs: $p has Rust blocks but is no doctest: include it in src/lib.rs" >&2; exit 1; }
        fi
      done
      # Links: the README, docs/ and the other READMEs, which link into them.
      python3 - "${pages[@]}" bindings/*/README.md benches/README.md cbuild/README.md \
        testkit/README.md fuzz/README.md <<'PY'
import os, re, sys
def prose(path):
    text = open(path, encoding="utf-8").read()
    return re.sub(r"(?ms)^\s*```.*?^\s*```", "", text)
def anchors(path):  # GitHub's heading ids
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"(?m)^#+ (.*)$", prose(path))}
bad = []
for page in sys.argv[1:]:
    for target in re.findall(r"\]\(([^)\s]+)\)", prose(page)):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
        if not os.path.exists(path):
            bad.append(f"{page}: a link to {target}, which does not exist")
        elif anchor and path.endswith(".md") and anchor not in anchors(path):
            bad.append(f"{page}: a link to {target}: no such heading in {path}")
for b in bad:
    print("check-docs:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
      ;;
    python)
      echo "== docs: Python blocks (py_compile)"
      for f in $(blocks python py); do
        python3 -m py_compile "$f" 2>"$tmp/err" || fail "$f" "$(cat "$tmp/err")"
      done ;;
    sh)
      echo "== docs: shell blocks (bash -n)"
      for f in $(blocks sh sh); do
        bash -n "$f" 2>"$tmp/err" || fail "$f" "$(cat "$tmp/err")"
      done ;;
    toml)
      echo "== docs: TOML blocks (tomllib)"
      for f in $(blocks toml toml); do
        python3 -c 'import sys, tomllib; tomllib.load(open(sys.argv[1], "rb"))' "$f" 2>"$tmp/err" ||
          fail "$f" "$(cat "$tmp/err")"
      done ;;
    rust)
      echo "== docs: Rust blocks are doctests: cargo test --doc -p staunch"
      cargo test -q -p staunch --doc ;;
    c)
      echo "== docs: C blocks (-std=c11 -Wall -Wextra -Wpedantic -Werror, linked)"
      extract lax cbuild/README.md
      libdir=${STAUNCH_LIBDIR:-$ROOT/target/debug}
      for f in $(blocks c c); do
        cc -std=c11 -Wall -Wextra -Wpedantic -Werror -Iinclude "$f" -L"$libdir" -lstaunch \
          -o "${f%.c}" 2>"$tmp/err" || fail "$f" "$(cat "$tmp/err")"
      done ;;
    go)
      echo "== docs: Go blocks (go vet, in a module requiring bindings/go)"
      mod=$tmp/gomod
      mkdir -p "$mod"
      cat >"$mod/go.mod" <<EOG
module staunch.example/docs

go 1.22

require github.com/staunch-db/staunch/bindings/go v0.0.0
replace github.com/staunch-db/staunch/bindings/go => $ROOT/bindings/go
EOG
      for f in $(blocks go go); do
        d=$mod/$(basename "${f%.go}")
        mkdir -p "$d"
        cp "$f" "$d/main.go"
      done
      (cd "$mod" && GOFLAGS=-mod=mod go vet ./... 2>"$tmp/err") || { cat "$tmp/err" >&2; exit 1; } ;;
    java)
      echo "== docs: Java blocks (javac --release 11 -Werror against the binding's jar)"
      jar=${STAUNCH_JAR:-$(ls bindings/java/target/staunch-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1)}
      [ -n "$jar" ] || { echo "check-docs: no binding jar (mvn package in bindings/java first)" >&2; exit 1; }
      n=0
      for f in $(blocks java java); do
        n=$((n + 1))
        d=$tmp/java/$n
        mkdir -p "$d"
        if grep -q '^\(public \)\?class ' "$f"; then
          cp "$f" "$d/$(sed -n 's/^\(public \)\?class \([A-Za-z0-9_]*\).*/\2/p' "$f" | head -1).java"
        else
          { echo "import dev.staunch.*; import dev.staunch.jdbc.*; import java.time.*;"
            echo "class Snippet$n { void run() throws Exception {"
            cat "$f"
            echo "} }"; } >"$d/Snippet$n.java"
        fi
        javac --release 11 -Xlint:all,-classfile -Werror -d "$d" -cp "$jar" "$d"/*.java 2>"$tmp/err" ||
          fail "$f" "$(cat "$tmp/err")"
      done ;;
    run-c)
      echo "== docs: the README's C quick start, run against a throwaway server"
      server
      libdir=${STAUNCH_LIBDIR:-$ROOT/target/debug}
      ran=0
      for f in $(quick c c); do
        cc -std=c11 -Wall -Wextra -Wpedantic -Werror -Iinclude "$f" -L"$libdir" -lstaunch \
          -Wl,-rpath,"$libdir" -o "${f%.c}" 2>"$tmp/err" || fail "$f" "$(cat "$tmp/err")"
        # The SONAME is libstaunch.so.1; cargo writes only libstaunch.so.
        mkdir -p "$tmp/lib"
        ln -sf "$libdir/libstaunch.so" "$tmp/lib/libstaunch.so.1"
        LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "${f%.c}" >"$tmp/out" 2>&1 ||
          fail "$f" "it exits $?: $(cat "$tmp/out")"
        sed 's/^/   | /' "$tmp/out"
        ran=$((ran + 1))
      done
      ran_some "$c" ;;
    run-python)
      echo "== docs: the README's Python quick start, run against a throwaway server"
      server
      ran=0
      for f in $(quick python py); do
        "${PYTHON:-python3}" "$f" >"$tmp/out" 2>&1 || fail "$f" "it exits $?: $(cat "$tmp/out")"
        sed 's/^/   | /' "$tmp/out"
        ran=$((ran + 1))
      done
      ran_some "$c" ;;
    run-go)
      echo "== docs: the README's Go quick start, run against a throwaway server"
      server
      mod=$tmp/gorun
      mkdir -p "$mod"
      printf 'module staunch.example/run\n\ngo 1.22\n\nrequire github.com/staunch-db/staunch/bindings/go v0.0.0\nreplace github.com/staunch-db/staunch/bindings/go => %s/bindings/go\n' \
        "$ROOT" >"$mod/go.mod"
      ran=0
      for f in $(quick go go); do
        cp "$f" "$mod/main.go"
        (cd "$mod" && GOFLAGS=-mod=mod go run . >"$tmp/out" 2>&1) || fail "$f" "it exits $?: $(cat "$tmp/out")"
        sed 's/^/   | /' "$tmp/out"
        ran=$((ran + 1))
      done
      ran_some "$c" ;;
    run-java)
      echo "== docs: the README's Java quick start, run against a throwaway server"
      server
      jar=${STAUNCH_JAR:-$(ls bindings/java/target/staunch-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1)}
      [ -n "$jar" ] || { echo "check-docs: no binding jar (mvn package in bindings/java first)" >&2; exit 1; }
      ran=0
      for f in $(quick java java); do
        d=$tmp/javarun/$(basename "${f%.java}")
        mkdir -p "$d"
        cls=$(sed -n 's/^\(public \)\?class \([A-Za-z0-9_]*\).*/\2/p' "$f" | head -1)
        cp "$f" "$d/$cls.java"
        javac -d "$d" -cp "$jar" "$d/$cls.java" 2>"$tmp/err" || fail "$f" "$(cat "$tmp/err")"
        java --enable-native-access=ALL-UNNAMED -cp "$jar:$d" "$cls" >"$tmp/out" 2>&1 ||
          fail "$f" "it exits $?: $(cat "$tmp/out")"
        sed 's/^/   | /' "$tmp/out"
        ran=$((ran + 1))
      done
      ran_some "$c" ;;
    *) echo "check-docs: unknown check $c" >&2; exit 2 ;;
  esac
done
echo "== docs: checked (${checks[*]})"
