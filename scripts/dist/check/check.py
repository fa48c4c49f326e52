"""What scripts/dist-check.sh runs in a fresh venv where only the wheel is
installed (no cargo on PATH): open a pool on sys.argv[1], borrow, query with a
parameter, read a decimal and a datetime through the C row converter (built
into the package on this machine, which has a C compiler), cancel a running statement from another thread (staunch.Cancelled,
the connection goes on), return the connection, close the pool."""

import datetime
import decimal
import sys
import threading
import time

import staunch
from staunch import _convert

assert _convert._speedups is not None, "the package holds no staunch._speedups (the C row converter)"
url = sys.argv[1]
pool = staunch.Pool(url, max_size=2)
with pool.connection(timeout=5) as conn:
    cur = conn.cursor()
    cur.execute("SELECT %s + 1", (41,))
    assert cur.fetchone() == (42,), "SELECT 41 + 1"
    cur.execute("SELECT 12.50, TIMESTAMP'2026-12-07 10:11:12.5'")
    assert cur.fetchone() == (decimal.Decimal("12.50"), datetime.datetime(2026, 12, 7, 10, 11, 12, 500000))

    found = []
    canceller = threading.Timer(0.3, lambda: found.append(conn.cancel()))
    canceller.start()
    t0 = time.monotonic()
    try:
        cur.execute("SELECT SLEEP(%s)", (30,))
        raise SystemExit("the statement was not cancelled")
    except staunch.Cancelled:
        pass
    canceller.join()
    assert found == [True], found
    assert time.monotonic() - t0 < 10, "the cancel took too long"
    cur.execute("SELECT %s * 2", (21,))
    assert cur.fetchone() == (42,), "after the cancel"
pool.close()
print(f"staunch {staunch.__version__} (Python, {staunch.__file__}): borrowed, queried, converted in C, cancelled a statement, closed")
