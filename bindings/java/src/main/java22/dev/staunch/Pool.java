package dev.staunch;

import dev.staunch.internal.CarrierGate;
import dev.staunch.internal.Call;
import dev.staunch.internal.Events;
import dev.staunch.internal.InterruptWatcher;
import dev.staunch.internal.Mem;
import dev.staunch.internal.Native;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

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
    private final MemorySegment handle;
    private final long id;
    private final State state;
    private final Cleaner.Cleanable cleanable;
    /** At most carriers - 1 virtual threads wait for a connection in native code at once (see CarrierGate). */
    private final CarrierGate carrierGate = new CarrierGate();
    private final LongAdder inFlight = new LongAdder();
    private volatile boolean closed;

    /** What the Cleaner needs, without a reference to the Pool. */
    private static final class State implements Runnable {
        final MemorySegment handle;
        volatile boolean freed;

        State(MemorySegment handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            if (!freed) {
                freed = true;
                try {
                    Native.pool_free_nowait.invokeExact(handle);
                } catch (Throwable t) {
                    // never fails
                }
            }
        }
    }

    Pool(MemorySegment handle) {
        this.handle = handle;
        try {
            this.id = (long) Native.pool_id.invokeExact(handle);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        this.state = new State(handle);
        this.cleanable = Mem.CLEANER.register(this, state);
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
            return Native.TIMEOUT_DEFAULT;
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
        if (ms == 0 || !CarrierGate.onVirtualThread()) {
            return getNative(ms, userToken, read);
        }
        // A virtual thread: waits its turn to wait in native code (see CarrierGate).
        return carrierGate.get(timeout == null, ms, () -> userToken != null && userToken.isCancelled(),
                now -> getNative(now, userToken, read));
    }

    private Conn getNative(int ms, CancelToken userToken, boolean read) {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            MemorySegment out = a.allocate(ADDRESS);
            MemorySegment err = Call.errSlot(a);
            MemorySegment token;
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
                st = read ? (int) Native.pool_get_read_cancellable.invokeExact(handle, ms, token, out, err)
                        : (int) Native.pool_get_cancellable.invokeExact(handle, ms, token, out, err);
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
            return new Conn(this, out.get(ADDRESS, 0));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** A connection if one is idle right now (never waits, never connects). */
    public Optional<Conn> tryGet() {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            MemorySegment out = a.allocate(ADDRESS);
            MemorySegment err = Call.errSlot(a);
            Call.check((int) Native.pool_try_get.invokeExact(handle, out, err), err);
            MemorySegment c = out.get(ADDRESS, 0);
            return c.address() == 0 ? Optional.empty() : Optional.of(new Conn(this, c));
        } catch (Throwable t) {
            throw Native.rethrow(t);
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
            MemorySegment s = a.allocate(Native.STATS);
            s.set(JAVA_LONG, 0, Native.STATS.byteSize());
            MemorySegment err = Call.errSlot(a);
            Call.check((int) Native.pool_stats.invokeExact(handle, s, err), err);
            long[] v = new long[Native.STATS_FIELDS.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = s.get(JAVA_LONG, 8L + 8L * i);
            }
            return new Stats(v);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            inFlight.decrement();
        }
    }

    /** Retires every current connection (idle ones now, borrowed ones on release). Never blocks. */
    public void softEvict() {
        enter();
        try (Mem.Scope a = new Mem.Scope()) {
            MemorySegment err = Call.errSlot(a);
            Call.check((int) Native.pool_soft_evict.invokeExact(handle, err), err);
        } catch (Throwable t) {
            throw Native.rethrow(t);
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
            try {
                int ignored = (int) Native.pool_close.invokeExact(handle, MemorySegment.NULL);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
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
            try {
                Native.pool_free.invokeExact(handle);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
            cleanable.clean();
        }
    }

    @Override
    public String toString() {
        return "staunch.Pool#" + id + (closed ? " (closed)" : "");
    }

    static Pool open(String url, java.util.Map<String, String> knobs, EventListener listener) {
        Native.check();
        if (url == null && knobs.isEmpty()) {
            throw new IllegalArgumentException("a URL is needed (mysql://user:pass@host:port/db?knob=value)");
        }
        try (Mem.Scope a = new Mem.Scope()) {
            MemorySegment err = Call.errSlot(a);
            MemorySegment slot = a.allocate(ADDRESS);
            Call.check((int) Native.options_new.invokeExact(slot, err), err);
            MemorySegment opts = slot.get(ADDRESS, 0);
            try {
                if (url != null) {
                    Call.check((int) Native.options_set_url.invokeExact(opts, a.allocateFrom(url), err), err);
                }
                for (var e : knobs.entrySet()) {
                    if (e.getKey() == null || e.getValue() == null) {
                        throw new IllegalArgumentException("knob names and values must not be null: " + e);
                    }
                    Call.check((int) Native.options_set.invokeExact(opts, a.allocateFrom(e.getKey()),
                            a.allocateFrom(e.getValue()), err), err);
                }
                if (listener != null) {
                    long reg = Events.register(ev -> listener.onEvent(Staunch.event(ev)));
                    int st = (int) Native.options_set_event_callback.invokeExact(opts, Events.CALLBACK,
                            MemorySegment.ofAddress(reg), Events.FINALIZER, err);
                    if (st != 0) {
                        Events.unregister(reg);
                        Call.check(st, err);
                    }
                }
                Call.check((int) Native.pool_open_options.invokeExact(opts, slot, err), err);
                return new Pool(slot.get(ADDRESS, 0));
            } finally {
                Native.options_free.invokeExact(opts);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The interrupt watcher's registration of a get waiting with {@code token}. */
    private static final class TokenWaiter extends InterruptWatcher.Waiter {
        private final MemorySegment token;

        TokenWaiter(MemorySegment token) {
            this.token = token;
        }

        @Override
        protected void cancel() {
            try {
                int ignored = (int) Native.cancel_token_cancel.invokeExact(token, MemorySegment.NULL);
            } catch (Throwable t) {
                // a cancel that fails leaves the get to its own timeout
            }
        }
    }

    /** A cancel token per thread (freed by the Cleaner when the thread is gone, or once cancelled). */
    private static final class ThreadToken {
        private static final ThreadLocal<ThreadToken> CURRENT = new ThreadLocal<>();
        final MemorySegment handle;
        final Cleaner.Cleanable cleanable;

        private ThreadToken() {
            try (Mem.Scope a = new Mem.Scope()) {
                MemorySegment slot = a.allocate(ADDRESS);
                MemorySegment err = Call.errSlot(a);
                Call.check((int) Native.cancel_token_new.invokeExact(slot, err), err);
                handle = slot.get(ADDRESS, 0);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
            MemorySegment h = handle;
            cleanable = Mem.CLEANER.register(this, () -> {
                try {
                    Native.cancel_token_free.invokeExact(h);
                } catch (Throwable t) {
                    // never fails
                }
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
