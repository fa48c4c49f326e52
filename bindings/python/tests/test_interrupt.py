"""Ctrl-C (SIGINT) while the main thread waits for a connection or runs a
statement: KeyboardInterrupt promptly, through the ABI's cancellation, and
the pool left consistent. Each case runs in a child process that receives a
real SIGINT."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

CHILD = textwrap.dedent(
    """
    import json, signal, sys, time
    # As in an interactive program: a shell's background job inherits SIGINT
    # ignored, and Python then keeps it ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import staunch
    url, case = sys.argv[1], sys.argv[2]
    pool = staunch.Pool(url, max_size=1)
    held = pool.connection()
    report = {}
    t0 = time.monotonic()
    try:
        if case == "get":
            print("waiting", flush=True)
            pool.connection(timeout=60)
        else:
            print("running", flush=True)
            held.cursor().execute("SELECT SLEEP(30) AS slept_in_" + case)
        report["outcome"] = "returned"
    except KeyboardInterrupt:
        report["outcome"] = "KeyboardInterrupt"
    except BaseException as e:
        report["outcome"] = repr(e)
    report["took"] = time.monotonic() - t0
    s = pool.stats()
    report.update(waiting=s.waiting, active=s.active, acquires_cancelled=s.acquires_cancelled)
    cur = held.cursor()
    cur.execute("SELECT 41 + 1")
    report["after"] = cur.fetchone()[0]
    held.close()
    with pool.connection(timeout=5) as c:
        cur = c.cursor()
        cur.execute("SELECT 7")
        report["next_borrow"] = cur.fetchone()[0]
    pool.close()
    print(json.dumps(report), flush=True)
    """
)


def run_child(url: str, case: str, server=None) -> dict:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, url, case],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline().strip()
        assert first in ("waiting", "running"), (first, proc.stderr.read())
        time.sleep(1.0)  # well inside the blocking call
        if server is not None:
            rows = server.query(
                f"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%slept_in_{case}%'"
                " AND INFO NOT LIKE '%PROCESSLIST%'"
            )
            assert rows == [["1"]], rows  # the statement is running
        t0 = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        exited_after = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    report["exited_after"] = exited_after
    return report


def test_ctrl_c_while_waiting_for_a_connection(url):
    r = run_child(url, "get")
    assert r["outcome"] == "KeyboardInterrupt", r
    assert r["took"] < 1.0 + 1.5, r  # promptly after the signal, not after the 60 s timeout
    assert r["waiting"] == 0 and r["active"] == 1 and r["acquires_cancelled"] == 1, r
    assert r["after"] == 42 and r["next_borrow"] == 7


def test_ctrl_c_while_a_statement_runs(url, server):
    r = run_child(url, "stmt", server)
    assert r["outcome"] == "KeyboardInterrupt", r
    assert r["took"] < 1.0 + 2.0, r  # not the 30 s of the SLEEP
    assert r["after"] == 42 and r["next_borrow"] == 7, r
    # The server no longer runs it: KILL QUERY reached it.
    rows = server.query(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%slept_in_stmt%'"
        " AND INFO NOT LIKE '%PROCESSLIST%'"
    )
    assert rows == [["0"]], rows
