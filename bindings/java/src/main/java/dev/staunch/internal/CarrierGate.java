package dev.staunch.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;

import dev.staunch.Status;
import dev.staunch.StaunchException;

/**
 * Keeps virtual threads that wait for a connection from pinning every carrier.
 *
 * <p>A native call (JNI or FFM) pins the virtual thread to its carrier for as
 * long as it runs, and a get may wait there for a connection. The virtual
 * threads holding the pool's connections may meanwhile need a carrier again
 * (on JDK 24+ one that blocks on a monitor gives up its own: the JDK's Cleaner
 * lock, taken when a connection is opened, is one such monitor). If every
 * carrier is pinned by a waiting get, no holder can run to give its connection
 * back, and every get waits out its timeout. So at most {@code parallelism - 1}
 * virtual threads per pool wait in native code at once; the others wait their
 * turn here, parked (which leaves the carrier free), in arrival order. With one
 * carrier, the one native waiter waits in slices, giving the carrier back
 * between them. Platform threads pass straight through.
 */
public final class CarrierGate {
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();
    /** How long a turn is waited for when the get gave no timeout: the pool's default connection_timeout. */
    public static final long DEFAULT_WAIT_MS = 10_000;
    private static final long SLICE_MS = 20;

    private final Semaphore turns;
    private final boolean sliced;

    public CarrierGate() {
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
                Runtime.getRuntime().availableProcessors());
        turns = new Semaphore(Math.max(1, carriers - 1), true);
        sliced = carriers <= 1;
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null; // before JDK 21: no virtual threads
        }
    }

    /** The current thread is a virtual thread. */
    public static boolean onVirtualThread() {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable t) {
            return false;
        }
    }

    /**
     * A get on a virtual thread: waits for a turn (bounded by the get's
     * {@code ms}, or {@link #DEFAULT_WAIT_MS} when {@code defaultTimeout}),
     * then runs {@code nativeGet} with the time left (the pool's default when
     * {@code defaultTimeout} and not sliced), in slices when there is one
     * carrier. Fails as the native get does: POOL_EXHAUSTED when the time is
     * up, CANCELLED when {@code cancelled} says so or the thread is interrupted.
     */
    public <T> T get(boolean defaultTimeout, int ms, BooleanSupplier cancelled, IntFunction<T> nativeGet) {
        long waitMs = defaultTimeout ? DEFAULT_WAIT_MS : ms;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        if (!enter(deadline, cancelled)) {
            if (cancelled.getAsBoolean() || Thread.currentThread().isInterrupted()) {
                throw new StaunchException(Status.CANCELLED, Thread.currentThread().isInterrupted()
                        ? "the thread was interrupted while waiting for a connection"
                        : "the get was cancelled while waiting for a connection", 0, "");
            }
            throw new StaunchException(Status.POOL_EXHAUSTED, "timed out after " + waitMs
                    + " ms waiting for a connection: other virtual threads were waiting for one first ("
                    + turns.getQueueLength() + " still waiting)", 0, "");
        }
        try {
            while (true) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (!sliced) {
                    return nativeGet.apply(defaultTimeout ? ms : (int) Math.max(0, Math.min(left, 0xFFFF_FFFEL)));
                }
                try {
                    return nativeGet.apply((int) Math.max(0, Math.min(left, SLICE_MS)));
                } catch (StaunchException e) {
                    if (e.status() != Status.POOL_EXHAUSTED || left <= SLICE_MS) {
                        throw e;
                    }
                    Thread.yield(); // one carrier: give it to the holders between slices
                }
            }
        } finally {
            turns.release();
        }
    }

    /**
     * Waits (parked) for a turn, until {@code deadline} ({@link System#nanoTime()}),
     * {@code cancelled} says so (checked every {@value #SLICE_MS} ms) or the
     * thread is interrupted (the flag set again); true when taken.
     */
    private boolean enter(long deadline, BooleanSupplier cancelled) {
        if (turns.tryAcquire()) {
            return true;
        }
        while (!cancelled.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            try {
                if (turns.tryAcquire(Math.min(left, TimeUnit.MILLISECONDS.toNanos(SLICE_MS)), TimeUnit.NANOSECONDS)) {
                    return true;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }
}
