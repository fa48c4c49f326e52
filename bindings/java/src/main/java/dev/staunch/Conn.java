package dev.staunch;

import dev.staunch.internal.Abi;
import dev.staunch.internal.Call;
import dev.staunch.internal.Cleanup;
import dev.staunch.internal.Mem;
import dev.staunch.internal.Native;
import dev.staunch.internal.Params;
import dev.staunch.internal.Poller;
import dev.staunch.internal.Utf8;
import dev.staunch.internal.VirtualThreads;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A connection borrowed from a {@link Pool}. Used by one thread at a time (a
 * call while another thread is inside one fails with
 * {@link Status#CONN_BUSY}); {@link #cancel()} is the exception, made to be
 * called from another thread. {@link #close()} gives it back to the pool (a
 * transaction left open is rolled back, a changed session reset); a Cleaner
 * discards one that became unreachable without it.
 */
public final class Conn implements AutoCloseable {
    /** Transaction isolation levels (STAUNCH_ISOLATION_*). */
    public enum Isolation { DEFAULT, READ_UNCOMMITTED, READ_COMMITTED, REPEATABLE_READ, SERIALIZABLE }

    /**
     * What an {@link #execute} did.
     *
     * <br>{@code affectedRows}: rows affected
     * <br>{@code lastInsertId}: the first AUTO_INCREMENT id it generated, or 0
     * <br>{@code warnings}: warnings raised
     * <br>{@code inTransaction}: a transaction is open in the session
     * <br>{@code autocommit}: autocommit is on in the session
     * <br>{@code info}: the server's info string, "" if none
     */
    public static final class Result {
        private final long affectedRows;
        private final long lastInsertId;
        private final int warnings;
        private final boolean inTransaction;
        private final boolean autocommit;
        private final String info;

        public Result(long affectedRows, long lastInsertId, int warnings, boolean inTransaction, boolean autocommit, String info) {
            this.affectedRows = affectedRows;
            this.lastInsertId = lastInsertId;
            this.warnings = warnings;
            this.inTransaction = inTransaction;
            this.autocommit = autocommit;
            this.info = info;
        }

        public long affectedRows() {
            return affectedRows;
        }

        public long lastInsertId() {
            return lastInsertId;
        }

        public int warnings() {
            return warnings;
        }

        public boolean inTransaction() {
            return inTransaction;
        }

        public boolean autocommit() {
            return autocommit;
        }

        public String info() {
            return info;
        }

        @Override
        public boolean equals(Object other) {
            if (this == other) {
                return true;
            }
            if (!(other instanceof Result)) {
                return false;
            }
            Result o = (Result) other;
            return affectedRows == o.affectedRows && lastInsertId == o.lastInsertId && warnings == o.warnings && inTransaction == o.inTransaction && autocommit == o.autocommit && Objects.equals(info, o.info);
        }

        @Override
        public int hashCode() {
            return Objects.hash(affectedRows, lastInsertId, warnings, inTransaction, autocommit, info);
        }

        @Override
        public String toString() {
            return "Result[affectedRows=" + affectedRows + ", lastInsertId=" + lastInsertId + ", warnings=" + warnings + ", inTransaction=" + inTransaction + ", autocommit=" + autocommit + ", info=" + info + "]";
        }
    }

    private final Pool pool;
    private final long handle;
    private final State state;
    private final Cleaner.Cleanable cleanable;
    /** Held for every call on the handle (the ABI's one-thread-at-a-time rule, and close after the last one). */
    private final ReentrantLock lock = new ReentrantLock();
    /** Held by cancel() and by free, so a cancel never meets a freed handle. */
    private final Object cancelLock = new Object();

    private static final class State implements Runnable {
        final long handle;
        volatile boolean freed;

        State(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            if (!freed) {
                freed = true;
                try {
                    // From the Cleaner: must not block, so close rather than return it.
                    int ignored = Native.conn_discard(handle, 0);
                    Native.conn_free(handle);
                } catch (Throwable t) {
                    // never fails
                }
            }
        }
    }

    Conn(Pool pool, long handle) {
        this.pool = pool;
        this.handle = handle;
        this.state = new State(handle);
        this.cleanable = Cleanup.CLEANER.register(this, state);
    }

    /** The pool it came from. */
    public Pool pool() {
        return pool;
    }

    private void enter() {
        if (!lock.tryLock()) {
            throw new StaunchException(Status.CONN_BUSY,
                    "the connection is in use by another thread (a Conn is used by one thread at a time)", 0, "");
        }
        if (state.freed) {
            lock.unlock();
            throw new StaunchException(Status.USE_AFTER_RELEASE,
                    "the connection was closed (given back to the pool): get another one", 0, "");
        }
    }

    private void exit() {
        lock.unlock();
    }

    /** Runs a statement that returns no rows; {@code params} bind to its {@code ?} placeholders. */
    public Result execute(String sql, Object... params) {
        Objects.requireNonNull(sql, "sql");
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Mem.Seg ps = Params.encode(a, params);
            long n = params == null ? 0 : params.length;
            long text = a.allocateFrom(sql).address();
            Poller poller = parks();
            if (poller != null) {
                Mem.Seg out = a.allocate(8);
                sendParked(poller, a, text, ps, n, 0, err);
                Call.check(Native.conn_query_recv(handle, 0, out.address(), err.address()), err);
                Native.rows_free(out.getAddress(0));
            } else {
                Call.check(Native.conn_execute(handle, text, ps.address(), n, 0, 0, err.address()), err);
            }
            Mem.Seg r = a.allocate(Abi.RESULT_SIZE);
            r.putLong(0, Abi.RESULT_SIZE);
            Call.check(Native.conn_last_result(handle, r.address(), err.address()), err);
            return new Result(
                    r.getLong(Abi.R_AFFECTED),
                    r.getLong(Abi.R_LAST_ID),
                    r.getInt(Abi.R_WARNINGS),
                    r.getBoolean(Abi.R_IN_TXN),
                    r.getBoolean(Abi.R_AUTOCOMMIT),
                    Native.string(r.getAddress(Abi.R_INFO)));
        } finally {
            exit();
        }
    }

    /**
     * Runs a query (prepared, values typed; {@code params} bind to {@code ?})
     * and reads its whole answer; iterate the returned {@link Rows}, then close it.
     */
    public Rows query(String sql, Object... params) {
        return query(0, sql, params);
    }

    /**
     * Runs a statement as text (the text protocol: any statement, including
     * several separated by {@code ;}, SHOW, CALL with OUT parameters); no parameters.
     */
    public Rows queryText(String sql) {
        return query(Abi.QUERY_TEXT, sql, (Object[]) null);
    }

    /**
     * Runs a query and reads its rows as they arrive instead of whole (for
     * answers too large to hold): as {@link #query} with parameters, as
     * {@link #queryText} without. Until the returned {@link Rows} is read to
     * the end of its first result set, moved past it, or closed, it holds the
     * connection: every other call on this Conn fails with
     * {@link Status#CONN_BUSY}. Each {@link Rows#next()} may wait for rows,
     * bounded as the statement is; closing it early reads off the rest.
     */
    public Rows queryStream(String sql, Object... params) {
        boolean text = params == null || params.length == 0;
        return query(Abi.QUERY_STREAM | (text ? Abi.QUERY_TEXT : 0), sql, text ? null : params);
    }

    Rows query(int flags, String sql, Object... params) {
        Objects.requireNonNull(sql, "sql");
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Mem.Seg out = a.allocate(8);
            Mem.Seg ps = Params.encode(a, params);
            long n = params == null ? 0 : params.length;
            long text = a.allocateFrom(sql).address();
            Poller poller = parks();
            if (poller != null) {
                sendParked(poller, a, text, ps, n, flags & ~Abi.QUERY_STREAM, err);
                Call.check(Native.conn_query_recv(handle, flags & Abi.QUERY_STREAM, out.address(), err.address()), err);
            } else {
                Call.check(Native.conn_query_ex(handle, text, ps.address(), n, flags, out.address(), err.address()), err);
            }
            return new Rows(out.getAddress(0));
        } finally {
            exit();
        }
    }

    /**
     * The poller, when this thread is a virtual thread: its statements are
     * sent apart and it parks until the answer begins to arrive (a native call
     * would hold its carrier for the whole round trip), then receives it.
     */
    private static Poller parks() {
        return VirtualThreads.current() ? Poller.get() : null;
    }

    /**
     * Sends a statement apart ({@code staunch_conn_query_send_ex}: a first
     * prepare on this connection is waited for in the call) and parks until
     * its answer begins to arrive; the caller then receives it.
     */
    private void sendParked(Poller poller, Mem.Scope a, long sql, Mem.Seg ps, long n, int flags, Mem.Seg err) {
        Mem.Seg fd = a.allocate(8);
        fd.putInt(0, -1);
        Call.check(Native.conn_query_send_ex(handle, sql, ps.address(), n, flags, fd.address(), err.address()), err);
        int wait = fd.getInt(0);
        if (wait >= 0) {
            poller.awaitReadable(wait); // false: epoll refused it, and the receive waits in the library
        }
    }

    /**
     * The number of {@code ?} placeholders in {@code sql} as this connection's
     * server reads it under the session's current {@code sql_mode} (the
     * library's one SQL scanner: quotes, backticks, comments,
     * NO_BACKSLASH_ESCAPES, ANSI_QUOTES). Sends nothing, except one round trip
     * when the session's {@code sql_mode} is not known.
     */
    public int countParams(String sql) {
        Objects.requireNonNull(sql, "sql");
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Mem.Seg out = a.allocate(8);
            Call.check(Native.conn_count_params(handle, a.allocateFrom(sql).address(), out.address(), err.address()), err);
            return Math.toIntExact(out.getLong(0));
        } finally {
            exit();
        }
    }

    /**
     * Where the {@code ?} placeholders of {@code sql} are (char indexes into {@code sql}, in order), by the scanner
     * and rules of {@link #countParams}, in one native call. Round trips as for {@link #countParams}.
     */
    public int[] placeholders(String sql) {
        Objects.requireNonNull(sql, "sql");
        int cap = 0;
        for (int i = sql.indexOf('?'); i >= 0; i = sql.indexOf('?', i + 1)) {
            cap++;
        }
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Mem.Seg text = a.allocateFrom(sql);
            Mem.Seg count = a.allocate(8);
            while (true) {
                Mem.Seg offsets = a.allocate(8L * Math.max(1, cap));
                Call.check(Native.conn_param_offsets(handle, text.address(), offsets.address(), cap,
                        count.address(), err.address()), err);
                int n = Math.toIntExact(count.getLong(0));
                if (n <= cap) {
                    long[] bytes = new long[n];
                    for (int i = 0; i < n; i++) {
                        bytes[i] = offsets.getLong(8L * i);
                    }
                    int[] at = Utf8.charIndexes(sql, bytes);
                    for (int i = 0; i < n; i++) {
                        if (at[i] < 0 || sql.charAt(at[i]) != '?') {
                            throw new StaunchException(Status.INTERNAL, "placeholder offset " + bytes[i]
                                    + " is not a ? of the statement", 0, "");
                        }
                    }
                    return at;
                }
                cap = n; // more than the '?' chars: only if UTF-8 made a '?' of an unpaired surrogate
            }
        } finally {
            exit();
        }
    }

    private interface Simple {
        int call(long handle, long err);
    }

    private void simple(Simple h) {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Call.check(h.call(handle, err.address()), err);
        } finally {
            exit();
        }
    }

    /** START TRANSACTION. */
    public void begin() {
        if (parks() != null) {
            execute("START TRANSACTION"); // a virtual thread: sent apart, as staunch_conn_begin sends it
            return;
        }
        simple(Native::conn_begin);
    }

    /**
     * Starts a transaction with an isolation level and/or read only; the level
     * applies to this transaction only, nothing stays in the session.
     */
    public void begin(Isolation isolation, boolean readOnly) {
        Objects.requireNonNull(isolation, "isolation");
        if (isolation == Isolation.DEFAULT && !readOnly) {
            begin();
            return;
        }
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Mem.Seg o = a.allocate(Abi.TXN_OPTIONS_SIZE);
            o.putLong(0, Abi.TXN_OPTIONS_SIZE);
            o.putInt(Abi.O_ISOLATION, isolation.ordinal());
            o.putBoolean(Abi.O_READ_ONLY, readOnly);
            Call.check(Native.conn_begin_ex(handle, o.address(), err.address()), err);
        } finally {
            exit();
        }
    }

    public void commit() {
        if (parks() != null) {
            execute("COMMIT"); // a virtual thread: sent apart, parked until the answer (as staunch_conn_commit sends it)
            return;
        }
        simple(Native::conn_commit);
    }

    /**
     * Whether a transaction is open in the session, as the library last saw
     * it (no round trip): from the server's status flags after each text
     * statement on a plain connection, so a read that opened none (
     * {@code SELECT 1} under autocommit=0) leaves nothing to commit; taken as
     * open after any statement under autocommit=0 where the library cannot
     * see the flags (TLS, prepared statements).
     */
    public boolean transactionOpen() {
        return sessionFlag(Abi.R_IN_TXN);
    }

    /** Whether {@code autocommit} is on in the session, as the library last saw it (no round trip). */
    public boolean sessionAutocommit() {
        return sessionFlag(Abi.R_AUTOCOMMIT);
    }

    private boolean sessionFlag(long offset) {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Mem.Seg r = a.allocate(Abi.RESULT_SIZE);
            r.putLong(0, Abi.RESULT_SIZE);
            Call.check(Native.conn_last_result(handle, r.address(), err.address()), err);
            return r.getBoolean(offset);
        } finally {
            exit();
        }
    }

    public void rollback() {
        if (parks() != null) {
            execute("ROLLBACK");
            return;
        }
        simple(Native::conn_rollback);
    }

    /** COM_PING: one round trip, bounded by the connection's time limit if any. */
    public void ping() {
        simple(Native::conn_ping);
    }

    /**
     * This connection's statement time limit until it is closed ({@code null}:
     * the pool's query_timeout; zero: none). The server ends a statement past
     * it ({@link Status#STATEMENT_TIMEOUT}, the connection stays usable); one
     * whose server has not answered 1 s later is cut off (the connection is then broken).
     */
    public void setTimeout(Duration limit) {
        int ms = limit == null ? Abi.TIMEOUT_DEFAULT : Pool.timeoutMs(limit);
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Call.check(Native.conn_set_timeout(handle, ms, err.address()), err);
        } finally {
            exit();
        }
    }

    /**
     * Cancels the statement running on this connection, from any thread
     * ({@code KILL QUERY} over a connection of its own): it fails with
     * {@link Status#CANCELLED} and the connection stays usable. Returns
     * whether a statement was running. Blocks at most connect_timeout + 1 s.
     */
    public boolean cancel() {
        synchronized (cancelLock) {
            if (state.freed) {
                return false;
            }
            try (Mem.Scope a = new Mem.Scope()) {
                Mem.Seg err = a.errSlot();
                Mem.Seg out = a.allocate(8);
                Call.check(Native.conn_cancel(handle, out.address(), err.address()), err);
                return out.getBoolean(0);
            }
        }
    }

    /** Whether an earlier statement broke this connection (it is then closed, not returned). Never blocks. */
    public boolean isBroken() {
        synchronized (cancelLock) {
            if (state.freed) {
                return false;
            }
            return Native.conn_is_broken(handle);
        }
    }

    public boolean isClosed() {
        return state.freed;
    }

    /** The pool-wide number of this connection (as in events). */
    public long id() {
        synchronized (cancelLock) {
            if (state.freed) {
                return 0;
            }
            return Native.conn_id(handle);
        }
    }

    /** The server's id of this session (CONNECTION_ID()). */
    public long serverId() {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Mem.Seg out = a.allocate(8);
            Call.check(Native.conn_server_id(handle, out.address(), err.address()), err);
            return out.getLong(0);
        } finally {
            exit();
        }
    }

    /** Closes the connection instead of returning it to the pool (JDBC's abort). Idempotent. */
    public void discard() {
        lock.lock();
        try {
            if (state.freed) {
                return;
            }
            int ignored = Native.conn_discard(handle, 0);
            free();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Gives the connection back to the pool (rolls back a transaction left
     * open, resets a changed session: a few round trips at most, each bounded
     * by validation_timeout). Idempotent. From another thread while a
     * statement runs, it waits for the statement to end.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (!state.freed) {
                free();
            }
        } finally {
            lock.unlock();
        }
    }

    private void free() {
        synchronized (cancelLock) {
            state.freed = true;
        }
        Native.conn_free(handle);
        cleanable.clean();
    }

    /** Runs {@code body} in a transaction: commit if it returns, rollback if it throws. */
    public <T> T inTransaction(java.util.function.Function<Conn, T> body) {
        begin();
        boolean ok = false;
        try {
            T r = body.apply(this);
            commit();
            ok = true;
            return r;
        } finally {
            if (!ok) {
                try {
                    rollback();
                } catch (StaunchException e) {
                    // the original failure matters more
                }
            }
        }
    }

    @Override
    public String toString() {
        return "staunch.Conn#" + (state.freed ? "closed" : Long.toString(id()));
    }
}
