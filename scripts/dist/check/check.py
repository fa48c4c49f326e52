"""What scripts/dist-check.sh runs in a fresh venv where only the wheel is
installed (no cargo on PATH): open a pool on sys.argv[1], borrow, query with a
parameter, cancel a running statement from another thread (staunch.Cancelled,
the connection goes on), return the connection, close the pool."""

import sys
import threading
import time

import staunch

url = sys.argv[1]
pool = staunch.Pool(url, max_size=2)
with pool.connection(timeout=5) as conn:
    cur = conn.cursor()
    cur.execute("SELECT %s + 1", (41,))
    assert cur.fetchone() == (42,), "SELECT 41 + 1"

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
print(f"staunch {staunch.__version__} (Python, {staunch.__file__}): borrowed, queried, cancelled a statement, closed")
