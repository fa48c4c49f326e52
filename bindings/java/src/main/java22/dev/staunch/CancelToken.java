package dev.staunch;

import dev.staunch.internal.Call;
import dev.staunch.internal.Mem;
import dev.staunch.internal.Native;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * Cancels the {@link Pool#get(java.time.Duration, CancelToken)} calls waiting
 * with it, from any thread; they fail promptly with {@link Status#CANCELLED}.
 * A token stays cancelled: make a new one per request. Close it when no call
 * uses it any more (a Cleaner frees it otherwise).
 */
public final class CancelToken implements AutoCloseable {
    final MemorySegment handle;
    private final Cleaner.Cleanable cleanable;
    private final Object lock = new Object();
    private boolean closed;

    public CancelToken() {
        Native.check();
        try (Mem.Scope a = new Mem.Scope()) {
            MemorySegment out = a.allocate(ADDRESS);
            MemorySegment err = Call.errSlot(a);
            Call.check((int) Native.cancel_token_new.invokeExact(out, err), err);
            handle = out.get(ADDRESS, 0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        MemorySegment h = handle;
        cleanable = Mem.CLEANER.register(this, () -> free(h));
    }

    private static void free(MemorySegment h) {
        try {
            Native.cancel_token_free.invokeExact(h);
        } catch (Throwable t) {
            // never fails
        }
    }

    /** Cancels every get waiting with this token, and every later one. Thread-safe; idempotent. */
    public void cancel() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            try (Mem.Scope a = new Mem.Scope()) {
                MemorySegment err = Call.errSlot(a);
                Call.check((int) Native.cancel_token_cancel.invokeExact(handle, err), err);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        }
    }

    public boolean isCancelled() {
        synchronized (lock) {
            if (closed) {
                return true;
            }
            try {
                return (boolean) Native.cancel_token_is_cancelled.invokeExact(handle);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
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
