package dev.staunch;

import dev.staunch.internal.Call;
import dev.staunch.internal.Cleanup;
import dev.staunch.internal.Mem;
import dev.staunch.internal.Native;
import java.lang.ref.Cleaner;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Cancels the {@link Pool#get(java.time.Duration, CancelToken)} calls waiting
 * with it, from any thread; they fail promptly with {@link Status#CANCELLED}.
 * A token stays cancelled: make a new one per request. Close it when no call
 * uses it any more (a Cleaner frees it otherwise).
 */
public final class CancelToken implements AutoCloseable {
    final long handle;
    private final Cleaner.Cleanable cleanable;
    private final Object lock = new Object();
    private boolean closed;
    /** Virtual threads parked in a get with this token (Pool's parked wait), unparked by cancel(). */
    final Set<Thread> parked = ConcurrentHashMap.newKeySet();

    public CancelToken() {
        Native.check();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg out = a.allocate(8);
            Mem.Seg err = a.errSlot();
            Call.check(Native.cancel_token_new(out.address(), err.address()), err);
            handle = out.getAddress(0);
        }
        long h = handle;
        cleanable = Cleanup.CLEANER.register(this, () -> free(h));
    }

    private static void free(long h) {
        Native.cancel_token_free(h);
    }

    /** Cancels every get waiting with this token, and every later one. Thread-safe; idempotent. */
    public void cancel() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            try (Mem.Scope a = new Mem.Scope()) {
                Mem.Seg err = a.errSlot();
                Call.check(Native.cancel_token_cancel(handle, err.address()), err);
            }
        }
        for (Thread t : parked) {
            LockSupport.unpark(t);
        }
    }

    public boolean isCancelled() {
        synchronized (lock) {
            if (closed) {
                return true;
            }
            return Native.cancel_token_is_cancelled(handle);
        }
    }

    /** Frees the token; it must not be in use by a get. */
    @Override
    public void close() {
        synchronized (lock) {
            if (!closed) {
                closed = true;
                cleanable.clean();
            }
        }
    }
}
