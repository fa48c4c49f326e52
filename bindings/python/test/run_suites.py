"""Runs SQLAlchemy's dialect compliance suite (test_suite.py) through each
driver at once, each against a test-kit server of its own, and prints each
run's summary: staunch and PyMySQL as the reference, side by side, and the
asyncio engines: staunch.aio's and asyncmy's.

    python test/run_suites.py LOGDIR DRIVER... [-- PYTEST_ARGS...]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from conftest import Testkit  # noqa: E402

URLS = {
    "staunch": "mariadb+staunch://root@127.0.0.1:{port}/test",
    "pymysql": "mariadb+pymysql://root@127.0.0.1:{port}/test?charset=utf8mb4",
    # The async engines: staunch.aio beside asyncmy (SQLAlchemy drives an
    # async dialect's suite through its greenlet adapter).
    "staunch_async": "mariadb+staunch_async://root@127.0.0.1:{port}/test",
    "asyncmy": "mariadb+asyncmy://root@127.0.0.1:{port}/test?charset=utf8mb4",
}


#: The usual drivers, run beside staunch's for comparison.
REFERENCES = {"pymysql", "asyncmy"}


def main() -> int:
    args = sys.argv[1:]
    extra = args[args.index("--") + 1 :] if "--" in args else []
    args = args[: args.index("--")] if "--" in args else args
    logdir, drivers = Path(args[0]), args[1:]
    logdir.mkdir(parents=True, exist_ok=True)
    runs = []
    try:
        for driver in drivers:
            tk = Testkit("server")
            # The suite's databases (README.dialects.rst: the default one,
            # test_schema and test_schema_2), utf8mb4 as SQLAlchemy's MySQL
            # provisioning makes them.
            for db in ("test", "test_schema", "test_schema_2"):
                tk.sql(f"CREATE DATABASE {db} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
            url = URLS[driver].format(port=tk.server["port"])
            log = open(logdir / f"{driver}.log", "w")  # noqa: SIM115 (closed below)
            cmd = [sys.executable, "-m", "pytest", "test/test_suite.py", "-c", "setup.cfg", "--rootdir", "."]
            cmd += ["-p", "no:cacheprovider", "-q", "-rfEs", "--dburi", url, "-o", "timeout=120", *extra]
            proc = subprocess.Popen(cmd, cwd=HERE.parent, stdout=log, stderr=subprocess.STDOUT)
            runs.append((driver, tk, proc, log, time.monotonic()))
        status = 0
        for driver, _tk, proc, log, t0 in runs:
            rc = proc.wait()
            log.close()
            # The reference drivers' own failures are theirs (asyncmy fails
            # six date and time tests on MariaDB 10.11): shown, not fatal.
            if driver not in REFERENCES:
                status |= rc != 0
            text = (logdir / f"{driver}.log").read_text()
            summary = text[text.find("short test summary info") :] if "short test summary info" in text else text
            lines = [ln for ln in summary.splitlines() if not ln.startswith("SKIPPED")]
            print(f"== SQLAlchemy dialect compliance suite through {driver} ({time.monotonic() - t0:.0f} s)")
            print("\n".join(lines[-40:]))
            if driver in REFERENCES and rc != 0:
                print(f"   ({driver} is a reference driver: its failures are listed, they do not fail the run)")
        return status
    finally:
        for _driver, tk, proc, _log, _t0 in runs:
            if proc.poll() is None:
                proc.terminate()
            tk.close()


if __name__ == "__main__":
    sys.exit(main())
