package dev.staunch.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Makes {@link Thread#interrupt()} cancel a waiting get. A thread that waits
 * in a get registers its cancel token here; one daemon thread
 * (staunch-interrupt-watcher) looks at the registered threads every
 * {@value #POLL_MS} ms while gets come (it parks after {@value #IDLE_MS} ms
 * without any, and the next registration wakes it) and cancels the token of
 * an interrupted one. The get then ends with
 * STAUNCH_CANCELLED, which the caller reports as an interrupt.
 *
 * <p>One class for both native paths (JNI before JDK 22, FFM from 22): a
 * path says how to cancel its token in its {@link Waiter}.
 */
public final class InterruptWatcher {
    private InterruptWatcher() {}

    static final long POLL_MS = 5;
    static final long IDLE_MS = 1000;

    /**
     * One registration: the waiting thread and its token, guarded by itself.
     * A native path subclasses it with its token and how to cancel it.
     */
    public abstract static class Waiter {
        final Thread thread = Thread.currentThread();
        boolean done;
        volatile boolean cancelledByInterrupt;

        protected Waiter() {}

        /**
         * Cancels the token the get waits with (the C ABI's
         * staunch_cancel_token_cancel). Called at most once, on the watcher's
         * thread, never after {@link #unregister}; must not throw.
         */
        protected abstract void cancel();

        public boolean cancelledByInterrupt() {
            return cancelledByInterrupt;
        }

        /**
         * The thread's id: a thread waits in one get at a time, so it spreads
         * the map's keys as well as the identity hash does, which the JVM makes
         * on first use with a call into the runtime, once per get (equality
         * stays identity).
         */
        @Override
        public int hashCode() {
            @SuppressWarnings("deprecation") // threadId() is JDK 19+; this class is built for 11
            long id = thread.getId();
            return (int) (id ^ (id >>> 32));
        }

        @Override
        public boolean equals(Object o) {
            return this == o;
        }
    }

    private static final Map<Waiter, Boolean> WAITERS = new ConcurrentHashMap<>();
    private static volatile Thread watcher;
    /** The watcher parks without a deadline: a registration must wake it. */
    private static volatile boolean sleeping;
    private static volatile long lastRegistration;

    /** Registers the calling thread's waiter; returns it. */
    public static <W extends Waiter> W register(W w) {
        WAITERS.put(w, Boolean.TRUE);
        long now = System.nanoTime();
        if (now - lastRegistration > 100_000_000L) { // written rarely: every get reads it, few write it
            lastRegistration = now;
        }
        Thread t = watcher;
        if (t == null) {
            t = start();
        }
        if (sleeping) {
            LockSupport.unpark(t);
        }
        return w;
    }

    /** Ends a registration; afterwards the watcher never touches the token. */
    public static void unregister(Waiter w) {
        synchronized (w) {
            w.done = true;
        }
        WAITERS.remove(w);
    }

    private static synchronized Thread start() {
        if (watcher == null) {
            Thread t = new Thread(InterruptWatcher::run, "staunch-interrupt-watcher");
            t.setDaemon(true);
            t.start();
            watcher = t;
        }
        return watcher;
    }

    private static void run() {
        while (true) {
            try {
                if (WAITERS.isEmpty() && System.nanoTime() - lastRegistration > IDLE_MS * 1_000_000L) {
                    sleeping = true;
                    if (WAITERS.isEmpty()) { // a registration between the check and the flag is seen here
                        LockSupport.park();
                    }
                    sleeping = false;
                    continue;
                }
                for (Waiter w : WAITERS.keySet()) {
                    if (w.thread.isInterrupted()) {
                        synchronized (w) {
                            if (!w.done && !w.cancelledByInterrupt) {
                                w.cancelledByInterrupt = true;
                                w.cancel();
                            }
                        }
                    }
                }
                LockSupport.parkNanos(POLL_MS * 1_000_000L);
            } catch (Throwable t) {
                // keep watching
            }
        }
    }
}
