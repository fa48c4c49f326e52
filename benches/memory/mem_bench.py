#!/usr/bin/env python3
"""Resident memory per pooled connection, staunch beside each language's usual driver.

Each contender runs in a process of its own, at its defaults, against one
throwaway MariaDB server from the test kit, and reports its resident set
(VmRSS) at three points:

  base         the driver loaded and one connection made, used and closed
  idle         N connections open and idle
  after_large  each of the N connections has carried one answer of ROWS rows
               (`SELECT seq, REPEAT('x', 100) FROM seq_1_to_ROWS`, ~1.1 MB for
               10,000 rows) and gone back (a pool's return; a plain
               connection: the result freed), 12 s later (what a quiet pool
               keeps: mimalloc, the shipped library's allocator, purges what
               was freed 10 s after, at the housekeeper's next tick)

and the table gives (idle - base) / N and (after_large - base) / N in KB.

Usage (scripts/mem-bench.sh builds what it needs and calls this):

  mem_bench.py --testkit PATH [--sizes 1,100,1000] [--rows 10000]
               [--only a,b] [--json FILE] [--check-kb KB --check-n N]
               CONTENDER=COMMAND ...

A contender is a name and a command line; `{url}`, `{n}` and `{rows}` in it
are replaced. Every child prints JSON lines `{"phase": ..., "rss_kb": ...}`.
`python-child KIND` (this file with `--child KIND`) provides the Python
contenders: `staunch` (the binding as installed), `pymysql`, `mysqlclient`.

`--check-kb KB --check-n N [--check-after-kb KB2]`: exit 1 unless every
contender whose name starts with `staunch` holds at most KB per idle
connection at N connections (and at most KB2 per connection after the large
answers): the CI check on the shipped artifacts (scripts/dist-check.sh), a
bound on a figure, not a timing.
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import subprocess
import sys
import time


def status_field(name: str) -> int:
    """A field of /proc/self/status: kB for VmRSS, a count for Threads."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return -1


def emit(phase: str) -> None:
    print(json.dumps({"phase": phase, "rss_kb": status_field("VmRSS"), "threads": status_field("Threads")}), flush=True)


def raise_nofile() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def parse_url(url: str) -> dict:
    from urllib.parse import unquote, urlsplit

    u = urlsplit(url)
    return {
        "host": u.hostname,
        "port": u.port or 3306,
        "user": unquote(u.username or ""),
        "password": unquote(u.password or ""),
        "database": u.path.lstrip("/"),
    }


def large_sql(rows: int) -> str:
    return f"SELECT seq, REPEAT('x', 100) FROM seq_1_to_{rows}"


def child_staunch(url: str, n: int, rows: int) -> None:
    import staunch

    def wait_idle(pool, k):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            s = pool.stats()
            if s.idle >= k and s.pending_creates == 0:
                return
            time.sleep(0.01)
        raise SystemExit(f"the pool never reached {k} idle connections")

    pool = staunch.Pool(url, max_size=1, min_idle=1)
    wait_idle(pool, 1)
    with pool.connection(timeout=10) as c:
        c.cursor().execute("DO 1")
    pool.close()
    time.sleep(0.2)
    emit("base")
    pool = staunch.Pool(url, max_size=n, min_idle=n)
    wait_idle(pool, n)
    time.sleep(0.5)
    emit("idle")
    if rows:
        held = [pool.connection(timeout=30) for _ in range(n)]
        for c in held:
            cur = c.cursor()
            cur.execute(large_sql(rows))
            cur.fetchall()
            cur.close()
        for c in held:
            c.close()
        del held
        time.sleep(12)
        emit("after_large")
    pool.close()


def child_dbapi(module: str, url: str, n: int, rows: int) -> None:
    import importlib

    db = importlib.import_module("pymysql" if module == "pymysql" else "MySQLdb")

    def connect(p):
        return db.connect(
            host=p["host"], port=p["port"], user=p["user"], password=p["password"], database=p["database"]
        )

    p = parse_url(url)
    c = connect(p)
    c.cursor().execute("DO 1")
    c.close()
    time.sleep(0.2)
    emit("base")
    conns = [connect(p) for _ in range(n)]
    time.sleep(0.5)
    emit("idle")
    if rows:
        for c in conns:
            cur = c.cursor()
            cur.execute(large_sql(rows))
            cur.fetchall()
            cur.close()
            c.rollback()
        time.sleep(12)
        emit("after_large")
    for c in conns:
        c.close()


class Testkit:
    """One `staunch-testkit server` (its JSON protocol on stdin/stdout)."""

    def __init__(self, exe: str, args: list[str]):
        self.proc = subprocess.Popen([exe, "server", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("staunch-testkit exited before it was ready")
        self.ready = json.loads(line)
        if not self.ready.get("ready"):
            raise SystemExit(f"staunch-testkit did not start: {self.ready.get('error')}")

    def close(self) -> None:
        try:
            self.proc.stdin.close()  # EOF: the testkit stops its server and cleans up
            self.proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def run_child(cmd: list[str], timeout: float) -> dict:
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout)
    phases = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            phases[d["phase"]] = d["rss_kb"]
            if d["phase"] == "idle" and "threads" in d:
                phases["threads"] = d["threads"]
    if out.returncode != 0 or "idle" not in phases:
        raise RuntimeError(f"{shlex.join(cmd)} failed ({out.returncode}): {out.stderr.strip()[-2000:]}")
    return phases


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--testkit")
    ap.add_argument("--sizes", default="1,100,1000")
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--only", default="")
    ap.add_argument("--json")
    ap.add_argument("--check-kb", type=float)
    ap.add_argument("--check-n", type=int)
    ap.add_argument("--check-after-kb", type=float)
    ap.add_argument("rest", nargs="*")
    a = ap.parse_args()

    if a.child:
        raise_nofile()
        url, n, rows = a.rest[0], int(a.rest[1]), int(a.rest[2])
        if a.child == "staunch":
            child_staunch(url, n, rows)
        else:
            child_dbapi(a.child, url, n, rows)
        return 0

    contenders = []
    for spec in a.rest:
        name, _, cmd = spec.partition("=")
        if a.only and not any(name.startswith(o) for o in a.only.split(",")):
            continue
        contenders.append((name, cmd))
    sizes = [int(s) for s in a.sizes.split(",")]
    raise_nofile()
    # max_connections above the largest size (plus the probes and the
    # baseline's connection); the server raises its own open-files limit.
    kit = Testkit(
        a.testkit,
        [
            f"--arg=--max-connections={max(sizes) * 2 + 50}",
            "--arg=--open-files-limit=8192",
            "--arg=--thread-cache-size=0",
        ],
    )
    url = kit.ready["servers"][0]["url"]
    results = []
    try:
        for n in sizes:
            for name, cmd in contenders:
                argv = [w.format(url=url, n=n, rows=a.rows) for w in shlex.split(cmd)]
                t0 = time.monotonic()
                try:
                    ph = run_child(argv, timeout=300)
                except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                    print(f"{name} n={n}: {e}", file=sys.stderr)
                    results.append({"contender": name, "n": n, "error": str(e)[:500]})
                    continue
                r = {
                    "contender": name,
                    "n": n,
                    "base_kb": ph["base"],
                    "idle_kb_per_conn": round((ph["idle"] - ph["base"]) / n, 1),
                    "threads_idle": ph.get("threads"),
                }
                if "after_large" in ph:
                    r["after_large_kb_per_conn"] = round((ph["after_large"] - ph["base"]) / n, 1)
                r["seconds"] = round(time.monotonic() - t0, 1)
                results.append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
    finally:
        kit.close()

    names = [c[0] for c in contenders]

    def table(title: str, heads: list[str], cells) -> None:
        """One markdown table, a row per contender; `cells(r)` gives a
        result's cells (r is None when the contender did not run)."""
        print(f"\n{title}\n")
        print("| contender | " + " | ".join(heads) + " |")
        print("|---|" + "---:|" * len(heads))
        for name in names:
            row = []
            for n in sizes:
                r = next((x for x in results if x["contender"] == name and x["n"] == n), None)
                row += cells(None if r is None or "error" in r else r)
            print(f"| {name} | " + " | ".join(row) + " |")

    table(
        f"resident memory per connection, KB (VmRSS; idle / after each carried {a.rows} rows and went back)",
        [h for n in sizes for h in (f"{n} idle", f"{n} after")],
        lambda r: (
            ["failed", "failed"]
            if r is None
            else [f"{r['idle_kb_per_conn']:,.1f}", f"{r.get('after_large_kb_per_conn', float('nan')):,.1f}"]
        ),
    )
    table(
        "OS threads of the process with N idle connections",
        [f"N = {n}" for n in sizes],
        lambda r: ["-" if r is None or r.get("threads_idle") is None else str(r["threads_idle"])],
    )
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": a.rows, "results": results}, f, indent=1)

    if a.check_kb is not None:
        bad = []
        for r in results:
            if not r["contender"].startswith("staunch") or r["n"] != a.check_n:
                continue
            after = r.get("after_large_kb_per_conn", 0)
            if (
                "error" in r
                or r["idle_kb_per_conn"] > a.check_kb
                or (a.check_after_kb is not None and after > a.check_after_kb)
            ):
                bad.append(r)
        checked = [r for r in results if r["contender"].startswith("staunch") and r["n"] == a.check_n]
        if not checked:
            print(f"memory check: no staunch contender ran at N={a.check_n}", file=sys.stderr)
            return 1
        for r in bad:
            print(
                f"memory check FAILED: {r['contender']} at N={r['n']}: "
                f"{r.get('idle_kb_per_conn', 'no figure')} KB per idle connection (bound {a.check_kb} KB), "
                f"{r.get('after_large_kb_per_conn', 'no figure')} KB after the large answers "
                f"(bound {a.check_after_kb} KB)",
                file=sys.stderr,
            )
        if bad:
            return 1
        for r in checked:
            print(
                f"memory check: {r['contender']} at N={a.check_n}: {r['idle_kb_per_conn']} KB per idle "
                f"connection (bound {a.check_kb}), {r.get('after_large_kb_per_conn')} KB after the large "
                f"answers (bound {a.check_after_kb})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
