package dev.staunch;

import dev.staunch.internal.Abi;
import dev.staunch.internal.Cleanup;
import dev.staunch.internal.BorrowerStack;
import dev.staunch.internal.Call;
import dev.staunch.internal.Events;
import dev.staunch.internal.InterruptWatcher;
import dev.staunch.internal.Mem;
import dev.staunch.internal.Native;
import dev.staunch.internal.Poller;
import dev.staunch.internal.VirtualThreads;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * A pool of connections to one MySQL/MariaDB server (or a replication
 * topology). Thread-safe. Open with {@link Staunch#open(String)} or
 * {@link Staunch#builder()}; close with {@link #close()} (a Cleaner closes a
 * pool that became unreachable without it, without blocking).
 *
 * <p>Every get is bounded by its timeout whatever the network does, and can be
 * cancelled: by a {@link CancelToken}, or by interrupting the waiting thread.
 */
public final class Pool implements AutoCloseable {
    private final long handle;
    private final long id;
    private final State state;
    private final Cleaner.Cleanable cleanable;
    private final LongAdder inFlight = new LongAdder();
    private volatile boolean closed;
    /** The room the last metricsText() needed: the next call asks for it at once (the first is told its length). */
    private volatile long metricsRoom = 1024;
    /**
     * leak_detection_threshold is set (read once at open): each borrow gives the library its
     * Java stack (BorrowerStack) for the leak report.
     */
    private final boolean leakStacks;

    /** What the Cleaner needs, without a reference to the Pool. */
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
                    Native.pool_free_nowait(handle);
                } catch (Throwable t) {
                    // never fails
                }
            }
        }
    }

    Pool(long handle) {
        this.handle = handle;
        this.id = Native.pool_id(handle);
        this.leakStacks = Native.pool_leak_threshold_ms(handle) > 0;
        this.state = new State(handle);
        this.cleanable = Cleanup.CLEANER.register(this, state);
    }

    /** This pool's number among the pools the process opened (the {@code poolId} of its events). */
    public long id() {
        return id;
    }

    private void enter() {
        inFlight.increment();
        if (closed) {
            inFlight.decrement();
            throw new StaunchException(Status.CLOSED, "the pool is closed", 0, "");
        }
    }

    private void exit() {
        inFlight.decrement();
    }

    static int timeoutMs(Duration timeout) {
        if (timeout == null) {
            return Abi.TIMEOUT_DEFAULT;
        }
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
        long ms;
        try {
            ms = timeout.toMillis();
        } catch (ArithmeticException e) {
            ms = Long.MAX_VALUE;
        }
        if (ms == 0 && !timeout.isZero()) {
            ms = 1;
        }
        // UINT32_MAX means "the pool's default": clamp just below it.
        return (int) Math.min(ms, 0xFFFF_FFFEL);
    }

    /**
     * Borrows a connection, waiting at most {@code timeout} ({@code null}: the
     * pool's connection_timeout, 10 s unless configured; zero: only an idle
     * one). Fails with {@link Status#POOL_EXHAUSTED} or {@link Status#UNREACHABLE}
     * (the message says why) when the time is up, {@link Status#CONNECT_REJECTED}
     * at once for bad credentials, {@link Status#CANCELLED} when the thread is
     * interrupted while it waits (the interrupt flag stays set).
     */
    public Conn get(Duration timeout) {
        return get(timeout, null, false);
    }

    /** {@link #get(Duration)} with the pool's connection_timeout. */
    public Conn get() {
        return get(null, null, false);
    }

    /** {@link #get(Duration)} that {@code token.cancel()} (any thread) ends with {@link Status#CANCELLED}. */
    public Conn get(Duration timeout, CancelToken token) {
        return get(timeout, token, false);
    }

    /** Borrows a connection for reading: a healthy replica of a topology pool, else the writer. */
    public Conn getRead(Duration timeout) {
        return get(timeout, null, true);
    }

    public Conn getRead(Duration timeout, CancelToken token) {
        return get(timeout, token, true);
    }

    private Conn get(Duration timeout, CancelToken userToken, boolean read) {
        int ms = timeoutMs(timeout);
        if (Thread.currentThread().isInterrupted()) {
            throw new StaunchException(Status.CANCELLED, "the thread was interrupted before the get", 0, "");
        }
        Poller poller;
        Poller.Watch signal;
        // A virtual thread parks while it waits, on an eventfd of the poller's; without
        // one (epoll or eventfd refused) it waits in the library as a platform thread does.
        if (ms == 0 || !VirtualThreads.current() || (poller = Poller.get()) == null
                || (signal = poller.signal()) == null) {
            return getNative(ms, userToken, read);
        }
        return getParked(signal, ms, userToken, read);
    }

    /**
     * A get on a virtual thread, which must not hold its carrier while it
     * waits (a native call pins it): the borrow is started apart, and when no
     * connection is idle the thread parks until the poller sees the borrow's
     * descriptor turn readable, its bound passes, or it is cancelled (an
     * interrupt, or {@code userToken.cancel()}, each unparks it). Giving up
     * frees the pending borrow, which leaves the pool's queue as a cancelled
     * get does.
     */
    private Conn getParked(Poller.Watch signal, int ms, CancelToken userToken, boolean read) {
        Thread self = Thread.currentThread();
        boolean entered = false;
        long pending = 0;
        if (userToken != null) {
            userToken.parked.add(self);
        }
        try (Mem.Scope a = new Mem.Scope()) {
            enter();
            entered = true;
            Mem.Seg out = a.allocate(8);
            Mem.Seg pendingOut = a.allocate(8);
            Mem.Seg err = a.errSlot();
            int st = Native.pool_get_start(handle, ms, read, signal.fd(), out.address(), pendingOut.address(),
                    err.address());
            pending = pendingOut.getAddress(0);
            while (st == 0 && out.getAddress(0) == 0) {
                if (self.isInterrupted()) {
                    throw new StaunchException(Status.CANCELLED,
                            "the thread was interrupted while waiting for a connection", 0, "");
                }
                if (userToken != null && userToken.isCancelled()) {
                    throw new StaunchException(Status.CANCELLED,
                            "the wait for a connection was cancelled by its CancelToken", 0, "");
                }
                // Arm the signal again (epoll reports it at once if it turned readable
                // since the last look), then park until it does or the bound passes.
                long left = Math.max(1, Native.pending_get_remaining_ms(pending));
                if (!signal.rearm()) {
                    left = Math.min(left, 10); // epoll refused it: look again every 10 ms
                }
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(left));
                st = Native.pending_get_finish(pending, out.address(), err.address());
            }
            if (st != 0) {
                throw Call.error(st, err);
            }
            return borrowed(out.getAddress(0));
        } finally {
            if (userToken != null) {
                userToken.parked.remove(self);
            }
            Native.pending_get_free(pending); // NULL (ready at once) is a no-op; an unfinished borrow is given up
            signal.close(); // after the free: the library no longer writes to it
            if (entered) {
                exit();
            }
        }
    }

    private Conn getNative(int ms, CancelToken userToken, boolean read) {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg out = a.allocate(8);
            Mem.Seg err = a.errSlot();
            long token;
            ThreadToken own = null;
            if (userToken != null) {
                token = userToken.handle;
            } else {
                // A token of this thread's own, which the interrupt watcher cancels on
                // Thread.interrupt(); reused by the thread's next gets until it is cancelled.
                own = ThreadToken.get();
                token = own.handle;
            }
            InterruptWatcher.Waiter w = InterruptWatcher.register(new TokenWaiter(token));
            int st;
            try {
                st = read ? Native.pool_get_read_cancellable(handle, ms, token, out.address(), err.address())
                        : Native.pool_get_cancellable(handle, ms, token, out.address(), err.address());
            } finally {
                InterruptWatcher.unregister(w);
                if (own != null && w.cancelledByInterrupt()) {
                    ThreadToken.discard(own); // a token stays cancelled: the next get makes a new one
                }
            }
            if (st != 0) {
                StaunchException e = Call.error(st, err);
                if (st == Status.CANCELLED && w.cancelledByInterrupt()) {
                    throw new StaunchException(Status.CANCELLED,
                            "the thread was interrupted while waiting for a connection: " + e.rawMessage(), 0, "");
                }
                throw e;
            }
            return borrowed(out.getAddress(0));
        } finally {
            exit();
        }
    }

    /** The Conn of a handle just borrowed, which has the borrower's stack when leak detection is on. */
    private Conn borrowed(long c) {
        Conn conn = new Conn(this, c);
        if (leakStacks) {
            try {
                BorrowerStack.give(c);
            } catch (RuntimeException | Error e) {
                conn.close();
                throw e;
            }
        }
        return conn;
    }

    /** A connection if one is idle right now (never waits, never connects). */
    public Optional<Conn> tryGet() {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg out = a.allocate(8);
            Mem.Seg err = a.errSlot();
            Call.check(Native.pool_try_get(handle, out.address(), err.address()), err);
            long c = out.getAddress(0);
            return c == 0 ? Optional.empty() : Optional.of(borrowed(c));
        } finally {
            exit();
        }
    }

    /** A snapshot of the gauges and counters (works on a closed pool too). Never blocks. */
    public Stats stats() {
        inFlight.increment();
        try (Mem.Scope a = new Mem.Scope()) {
            if (state.freed) {
                throw new StaunchException(Status.CLOSED, "the pool is closed and freed", 0, "");
            }
            Mem.Seg s = a.allocate(Abi.STATS_SIZE);
            s.putLong(0, Abi.STATS_SIZE);
            Mem.Seg err = a.errSlot();
            Call.check(Native.pool_stats(handle, s.address(), err.address()), err);
            long[] v = new long[Abi.STATS_FIELDS.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = s.getLong(8L + 8L * i);
            }
            return new Stats(v);
        } finally {
            inFlight.decrement();
        }
    }

    /**
     * The pool's name: its {@code pool_name} knob, or {@code staunch-N} (the library numbers the unnamed pools
     * of the process from 1: N is not {@link #id()}). It labels the
     * pool's series in {@link #metricsText()} ({@code db_client_connection_pool_name}) and tags its Micrometer
     * meters ({@code name}). Works on a closed pool. Never blocks.
     */
    public String name() {
        return text(false);
    }

    /**
     * The pool's figures as Prometheus text (exposition format 0.0.4), written by the library, so every binding
     * exports the same names: OpenTelemetry's {@code db_client_connection_*} and
     * {@code db_client_operation_duration_seconds}, and staunch's own {@code staunch_*}, each series labelled with
     * the pool's name and its host. The first call turns timings on (borrows and statements are timed from then
     * on for the use-time and operation histograms; {@code timings=on} in the URL does so from the start). Serve
     * it as is from an HTTP endpoint with content type {@code text/plain; version=0.0.4}. Works on a closed pool.
     * Never blocks.
     */
    public String metricsText() {
        return text(true);
    }

    /** staunch_pool_metrics or staunch_pool_name: snprintf's rules, called again with more room when cut. */
    private String text(boolean metrics) {
        inFlight.increment();
        Mem.Seg buf = null;
        try (Mem.Scope a = new Mem.Scope()) {
            if (state.freed) {
                throw new StaunchException(Status.CLOSED, "the pool is closed and freed", 0, "");
            }
            Mem.Seg len = a.allocate(8);
            Mem.Seg err = a.errSlot();
            long cap = metrics ? metricsRoom : 256;
            for (int tries = 0; ; tries++) {
                buf = Mem.malloc(cap);
                int st = metrics ? Native.pool_metrics(handle, buf.address(), cap, len.address(), err.address())
                        : Native.pool_name(handle, buf.address(), cap, len.address(), err.address());
                Call.check(st, err);
                long n = len.getLong(0);
                if (n < cap) {
                    if (metrics) {
                        metricsRoom = cap;
                    }
                    return Native.string(buf.address(), n);
                }
                if (tries >= 8) {
                    throw new StaunchException(Status.INTERNAL, "the pool's text kept growing past " + cap + " bytes", 0, "");
                }
                Mem.free(buf);
                buf = null;
                // The figures move between the calls: a little more than asked.
                cap = n + n / 8 + 256;
            }
        } finally {
            Mem.free(buf);
            inFlight.decrement();
        }
    }

    /** Retires every current connection (idle ones now, borrowed ones on release). Never blocks. */
    public void softEvict() {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Call.check(Native.pool_soft_evict(handle, err.address()), err);
        } finally {
            exit();
        }
    }

    /**
     * Changes max_size while the pool runs (HikariCP's setMaximumPoolSize):
     * from 1 up to the max_size_cap knob (fixed at open; by default twice
     * max_size, at least 64), not below the current min_idle; otherwise a
     * {@link Status#INVALID_CONFIG} exception naming the knob, and nothing
     * changes. Lowering it takes no borrowed connection away: connections
     * above it close as they are released (idle ones at once), counted in
     * {@link Stats#closedEvicted()}; raising it makes connections for the
     * callers waiting now. Never blocks.
     */
    public void setMaxSize(int n) {
        sizeCall(n, "max_size", true);
    }

    /**
     * Changes min_idle while the pool runs (HikariCP's setMinimumIdle): from
     * 0 up to the current max_size, else a {@link Status#INVALID_CONFIG}
     * exception. Never blocks.
     */
    public void setMinIdle(int n) {
        sizeCall(n, "min_idle", false);
    }

    private void sizeCall(int n, String knob, boolean max) {
        if (n < 0) {
            throw new StaunchException(Status.INVALID_CONFIG, knob + " must not be negative, got " + n, 0, "");
        }
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            int st = max ? Native.pool_set_max_size(handle, n, err.address())
                    : Native.pool_set_min_idle(handle, n, err.address());
            Call.check(st, err);
        } finally {
            exit();
        }
    }

    /**
     * Stops lending connections until {@link #resume()} (HikariCP's
     * suspendPool): borrows wait, within their timeout; borrowed connections
     * are unaffected. Idempotent; never blocks.
     */
    public void suspend() {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Call.check(Native.pool_suspend(handle, err.address()), err);
        } finally {
            exit();
        }
    }

    /** Ends a {@link #suspend()}: waiting borrows proceed. Idempotent. */
    public void resume() {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Call.check(Native.pool_resume(handle, err.address()), err);
        } finally {
            exit();
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * Closes the pool: waiting gets fail with {@link Status#CLOSED}, idle
     * connections close now, borrowed ones when released. Idempotent. Blocks
     * at most about validation_timeout + 2 s.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (state.freed) {
                return;
            }
            closed = true;
            int ignored = Native.pool_close(handle, 0);
            // Calls already inside end promptly now (the pool is closed); free comes last.
            while (inFlight.sum() != 0) {
                Thread.onSpinWait();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            if (inFlight.sum() != 0) {
                // Interrupted while calls are still inside: free without blocking later, from the Cleaner.
                return;
            }
            state.freed = true;
            Native.pool_free(handle);
            cleanable.clean();
        }
    }

    @Override
    public String toString() {
        return "staunch.Pool#" + id + (closed ? " (closed)" : "");
    }

    static Pool open(String url, java.util.Map<String, String> knobs, java.util.Map<String, String> defaults,
            EventListener listener, TraceListener tracer) {
        Native.check();
        if (url == null && knobs.isEmpty()) {
            throw new IllegalArgumentException("a URL is needed (mysql://user:pass@host:port/db?knob=value)");
        }
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Mem.Seg slot = a.allocate(8);
            Call.check(Native.options_new(slot.address(), err.address()), err);
            long opts = slot.getAddress(0);
            try {
                if (url != null) {
                    Call.check(Native.options_set_url(opts, a.allocateFrom(url).address(), err.address()), err);
                }
                for (java.util.Map.Entry<String, String> e : knobs.entrySet()) {
                    if (e.getKey() == null || e.getValue() == null) {
                        throw new IllegalArgumentException("knob names and values must not be null: " + e);
                    }
                    Call.check(Native.options_set(opts, a.allocateFrom(e.getKey()).address(),
                            a.allocateFrom(e.getValue()).address(), err.address()), err);
                }
                for (java.util.Map.Entry<String, String> e : defaults.entrySet()) {
                    Call.check(Native.options_set_default(opts, a.allocateFrom(e.getKey()).address(),
                            a.allocateFrom(e.getValue()).address(), err.address()), err);
                }
                if (listener != null) {
                    long reg = Events.register(ev -> listener.onEvent(Staunch.event(ev)));
                    int st = Native.options_set_event_callback(opts, Events.callback(), reg, Events.finalizer(), err.address());
                    if (st != 0) {
                        Events.unregister(reg);
                        Call.check(st, err);
                    }
                }
                if (tracer != null) {
                    long reg = Events.registerTracer(tracer.statementText(), (kind, code, pool, server, conn, sql, us, e) -> {
                        TraceEvent ev = TraceEvent.of(kind, code, pool, server, conn, sql, us, e);
                        if (ev != null) {
                            tracer.onTrace(ev);
                        }
                    });
                    int st = Native.options_set_tracer(opts, Events.traceCallback(), reg, Events.finalizer(), err.address());
                    if (st != 0) {
                        Events.unregister(reg);
                        Call.check(st, err);
                    }
                }
                Call.check(Native.pool_open_options(opts, slot.address(), err.address()), err);
                return new Pool(slot.getAddress(0));
            } finally {
                Native.options_free(opts);
            }
        }
    }

    /** The interrupt watcher's registration of a get waiting with {@code token}. */
    private static final class TokenWaiter extends InterruptWatcher.Waiter {
        private final long token;

        TokenWaiter(long token) {
            this.token = token;
        }

        @Override
        protected void cancel() {
            int ignored = Native.cancel_token_cancel(token, 0);
        }
    }

    /** A cancel token per thread (freed by the Cleaner when the thread is gone, or once cancelled). */
    private static final class ThreadToken {
        private static final ThreadLocal<ThreadToken> CURRENT = new ThreadLocal<>();
        final long handle;
        final Cleaner.Cleanable cleanable;

        private ThreadToken() {
            try (Mem.Scope a = new Mem.Scope()) {
                Mem.Seg slot = a.allocate(8);
                Mem.Seg err = a.errSlot();
                Call.check(Native.cancel_token_new(slot.address(), err.address()), err);
                handle = slot.getAddress(0);
            }
            long h = handle;
            cleanable = Cleanup.CLEANER.register(this, () -> {
                Native.cancel_token_free(h);
            });
        }

        static ThreadToken get() {
            ThreadToken t = CURRENT.get();
            if (t == null) {
                t = new ThreadToken();
                CURRENT.set(t);
            }
            return t;
        }

        static void discard(ThreadToken t) {
            if (CURRENT.get() == t) {
                CURRENT.remove();
            }
            t.cleanable.clean();
        }
    }
}
