#!/usr/bin/env python3
"""Where one benchmark operation's CPU goes: the client JVM's user and
kernel time and the server's (mariadbd), per operation, for one JMH
contender at a time. Called by `scripts/java-bench.sh cpu`, which builds
everything and starts the server; not meant to be run alone.

For each contender it starts one JMH fork (one warm-up, one long
measurement iteration), waits until the measurement has run for a while,
then reads utime/stime of the JMH fork and of mariadbd from /proc, and the
machine's idle time from /proc/stat, at the start and end of a window
inside that iteration; the operations in the window are the iteration's
throughput times the window's length. No profiler runs, so nothing is
slowed down.

The figures say how far any client could move the ratio. The server's work
per operation is the same statement for every driver; the client's is its
user CPU and its kernel time (staunch: one write and one read). The table's
ceiling line is HikariCP + Connector/J's operation with no client user CPU
at all and the least client kernel time measured among the contenders.
Where the cores are the limit (next to no idle time: 8 threads on this
2-core machine) the rate is at most total / (total - what that saves) times
HikariCP's; where they idle (1 thread) the operation is a chain of waits,
and the same saving comes off its wall time.

  jvm_cpu_per_op.py JSON-OUT CLASSPATH MARIADB-PID JVM-ARGS -- JDK:LABEL:METHOD:FLAG:THREADS ...
  jvm_cpu_per_op.py --summary JSON ...     (the table, medians over the files' rounds)
"""

import json
import os
import re
import select
import statistics
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
WARM_S, ITER_S = 3, 16  # JMH warm-up and measurement iteration
SETTLE_S, WINDOW_S = 3, 10  # into the measurement: wait, then sample for
START_BOUND_S = 120  # JVM start, JMH set-up and warm-up must fit in this
# Idle below this share of the machine's time per operation: the cores are the limit.
CPU_BOUND_IDLE = 0.1


def read(path):
    with open(path) as f:
        return f.read()


def proc_times(pid):
    """(user, system) CPU seconds of a process, all its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / HZ, int(fields[12]) / HZ


def idle_seconds():
    with open("/proc/stat") as f:
        cpu = f.readline().split()
    return (int(cpu[4]) + int(cpu[5])) / HZ  # idle + iowait, all CPUs


def fork_of(pid):
    """The JMH fork: the java child of the JMH main process."""
    for _ in range(400):
        kids = []
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                kids += read(f"/proc/{pid}/task/{task}/children").split()
            except OSError:
                pass
        for k in kids:
            try:
                if "ForkedMain" in read(f"/proc/{k}/cmdline"):
                    return int(k)
            except OSError:
                pass
        time.sleep(0.05)
    raise RuntimeError("no JMH fork found")


def one(cp, mariadbd, jvm_args, jdk, label, method, flag, threads):
    extra = "" if flag == "-" else flag
    cmd = [
        f"{jdk}/bin/java",
        "-cp",
        cp,
        "org.openjdk.jmh.Main",
        rf"GetSelectClose\.{method}$",
        "-f",
        "1",
        "-t",
        str(threads),
        "-wi",
        "1",
        "-w",
        f"{WARM_S}s",
        "-i",
        "1",
        "-r",
        f"{ITER_S}s",
        "-jvm",
        f"{jdk}/bin/java",
        "-jvmArgsAppend",
        f"{jvm_args} {extra}".strip(),
    ]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        fork = fork_of(p.pid)
        # JMH prints "Iteration   1: " when the measurement starts and the score
        # on the same line when it ends: read raw bytes, not lines.
        out = b""
        deadline = time.monotonic() + START_BOUND_S
        while b"\nIteration   1:" not in out:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
                raise RuntimeError(f"{label}: JMH did not start measuring within {START_BOUND_S} s")
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError(f"{label}: JMH ended before measuring:\n{out.decode(errors='replace')[-2000:]}")
            out += chunk
        time.sleep(SETTLE_S)
        c0, s0, i0, t0 = proc_times(fork), proc_times(mariadbd), idle_seconds(), time.monotonic()
        time.sleep(WINDOW_S)
        c1, s1, i1, t1 = proc_times(fork), proc_times(mariadbd), idle_seconds(), time.monotonic()
        out += p.communicate(timeout=ITER_S + 60)[0]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    text = out.decode(errors="replace")
    m = re.search(r"^Iteration   1: ([0-9.]+) ops/ms", text, re.MULTILINE)
    if not m:
        raise RuntimeError(f"{label}: no score in JMH's output:\n{text[-2000:]}")
    ops_per_ms = float(m.group(1))
    ops = ops_per_ms * 1000 * (t1 - t0)

    def us(a, b):
        return (b - a) * 1e6 / ops

    return {
        "label": label,
        "threads": threads,
        "ops_per_ms": ops_per_ms,
        "client_user": us(c0[0], c1[0]),
        "client_sys": us(c0[1], c1[1]),
        "server_user": us(s0[0], s1[0]),
        "server_sys": us(s0[1], s1[1]),
        "idle": us(i0, i1),
    }


def summary(paths):
    rows = [r for p in paths for r in json.loads(read(p))]
    keys = ("ops_per_ms", "client_user", "client_sys", "server_user", "server_sys", "idle")
    groups = {}
    for r in rows:
        groups.setdefault((r["jdk"], r["threads"]), {}).setdefault(r["label"], []).append(r)
    n = os.cpu_count()
    print(f"µs per operation (medians over rounds); total = client + server CPU; (total + idle) / {n}")
    print(f"is about the wall time per operation on this {n}-CPU machine")
    print()
    print(
        "| JDK | threads | contender | ops/ms | client user | client kernel "
        "| server user | server kernel | idle | total CPU |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (jdk, t), by in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        med = {lab: {k: statistics.median(r[k] for r in rs) for k in keys} for lab, rs in by.items()}
        for lab, m in med.items():
            total = m["client_user"] + m["client_sys"] + m["server_user"] + m["server_sys"]
            m["total"] = total
            print(
                f"| {os.path.basename(jdk)} | {t} | {lab} | {m['ops_per_ms']:.2f} | {m['client_user']:.2f} | "
                f"{m['client_sys']:.2f} | {m['server_user']:.2f} | {m['server_sys']:.2f} | "
                f"{m['idle']:.2f} | {total:.2f} |"
            )
        h = med.get("hikariConnectorJ")
        if h:
            # The fastest any client could be: HikariCP + Connector/J's operation
            # with no client user CPU at all and the least client kernel time
            # measured here (staunch's one write and one read, where Connector/J
            # also polls). Where the cores are the limit, the operation's CPU
            # shrinks by that much; where they idle, its wall time does.
            saved = h["client_user"] + h["client_sys"] - min(m["client_sys"] for m in med.values())
            cpu_bound = h["idle"] < CPU_BOUND_IDLE * (h["total"] + h["idle"])
            base = h["total"] if cpu_bound else 1000 / h["ops_per_ms"]
            ceil = base / (base - saved)
            print(
                f"| | | ceiling ({'CPU' if cpu_bound else 'wait'}-bound): no client user CPU, least client kernel "
                f"| {h['ops_per_ms'] * ceil:.2f} ({ceil:.3f}x) | 0 | | | | | |"
            )
    print()


def main():
    if sys.argv[1] == "--summary":
        summary(sys.argv[2:])
        return
    out_path, cp, mariadbd, jvm_args = sys.argv[1:5]
    assert sys.argv[5] == "--"
    rows = []
    for spec in sys.argv[6:]:
        jdk, label, method, flag, threads = spec.split(":")
        r = one(cp, int(mariadbd), jvm_args, jdk, label, method, flag, int(threads))
        r["jdk"] = jdk
        rows.append(r)
        print(f"  {os.path.basename(jdk)} {label} threads={threads}: {r['ops_per_ms']:.2f} ops/ms", flush=True)
    with open(out_path, "w") as f:
        json.dump(rows, f)


if __name__ == "__main__":
    main()
