package dev.staunch.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

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

    /** How a wait for a turn ended. */
    public enum Turn { TAKEN, TIMED_OUT, CANCELLED }

    /**
     * Waits (parked) for a turn to wait in native code, until {@code deadline}
     * ({@link System#nanoTime()}), {@code cancelled} says so (checked every
     * {@value #SLICE_MS} ms), or the thread is interrupted (CANCELLED, the flag
     * set again). A taken turn must be given back with {@link #leave()}.
     */
    public Turn enter(long deadline, BooleanSupplier cancelled) {
        if (turns.tryAcquire()) {
            return Turn.TAKEN;
        }
        while (true) {
            if (cancelled.getAsBoolean()) {
                return Turn.CANCELLED;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return Turn.TIMED_OUT;
            }
            try {
                if (turns.tryAcquire(Math.min(left, TimeUnit.MILLISECONDS.toNanos(SLICE_MS)), TimeUnit.NANOSECONDS)) {
                    return Turn.TAKEN;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Turn.CANCELLED;
            }
        }
    }

    public void leave() {
        turns.release();
    }

    /** With one carrier, a native wait is cut into slices of this many ms (0: not cut). */
    public long sliceMs() {
        return sliced ? SLICE_MS : 0;
    }

    /** Virtual threads waiting for a turn now (for the error message). */
    public int queued() {
        return turns.getQueueLength();
    }
}
