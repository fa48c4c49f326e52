package dev.staunch.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Lets a virtual thread wait for a descriptor without holding its carrier.
 *
 * <p>A native call pins a virtual thread to its carrier for as long as it
 * runs, so a borrow that waited inside the library would hold an OS thread
 * for the whole wait. Instead the borrow is started apart
 * ({@code staunch_pool_get_start}), and the virtual thread parks; one daemon
 * platform thread per JVM waits in {@code epoll_wait} on every parked
 * thread's descriptor and unparks the thread whose descriptor turned
 * readable, as the JDK's own poller does for sockets. Each descriptor is
 * armed one-shot: a thread re-arms it before it parks again.
 *
 * <p>A borrow waits on an eventfd of the poller's ({@link #signal}), which
 * stays registered from borrow to borrow, so a wait costs one re-arm rather
 * than an eventfd made, registered, removed and closed.
 *
 * <p>An unpark may come late (after the thread stopped waiting): like every
 * {@link LockSupport#park} caller, each waiter treats a wake-up as a hint and
 * checks its borrow again.
 */
public final class Poller {
    private static final Object INIT = new Object();
    private static volatile Poller instance;
    private static volatile boolean unavailable;

    private final int epfd;
    private final ConcurrentHashMap<Long, Watch> waiters = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong wakeups = new AtomicLong();
    /** Idle signals (eventfds registered here), at most {@link #SPARE_SIGNALS}. */
    private final ConcurrentLinkedQueue<Watch> signals = new ConcurrentLinkedQueue<>();
    private final AtomicInteger spareSignals = new AtomicInteger();
    private static final int SPARE_SIGNALS = 256;
    private static final long RECHECK_NS = 1_000_000_000L;

    private Poller(int epfd) {
        this.epfd = epfd;
    }

    /** The JVM's poller, started on first use; null where epoll is not available (the caller waits in the blocking call). */
    public static Poller get() {
        Poller p = instance;
        if (p != null || unavailable) {
            return p;
        }
        synchronized (INIT) {
            if (instance == null && !unavailable) {
                int epfd = Native.pollerCreate();
                if (epfd < 0) {
                    unavailable = true;
                    return null;
                }
                Poller made = new Poller(epfd);
                Thread t = new Thread(made::run, "staunch-poller");
                t.setDaemon(true);
                t.start();
                instance = made;
            }
            return instance;
        }
    }

    /** How many times the poller unparked a waiting thread since the JVM started (for tests). */
    public long wakeups() {
        return wakeups.get();
    }

    /**
     * Watches {@code fd} for the current thread, armed once: the thread is
     * unparked when it turns readable. Null if epoll refused it.
     */
    private Watch watch(int fd) {
        Watch w = new Watch(fd, ids.incrementAndGet(), Thread.currentThread(), false);
        waiters.put(w.id, w);
        if (Native.pollerArm(epfd, fd, w.id, true) != 0) {
            waiters.remove(w.id);
            return null;
        }
        return w;
    }

    /**
     * Parks the current (virtual) thread until {@code fd} turns readable: a
     * statement's socket, whose wait the library bounds as it bounds the
     * statement (its time limit, the liveness check and a cancel each end it
     * by making the socket readable). An interrupt does not end it (as it
     * does not end a statement waited for in the library); the thread's
     * interrupt status is kept. False if epoll refused the descriptor (the
     * caller then waits in the library).
     */
    public boolean awaitReadable(int fd) {
        return awaitReadable(fd, Long.MAX_VALUE);
    }

    /**
     * {@link #awaitReadable(int)} for at most {@code timeoutNanos}: false
     * when that passed first (or epoll refused the descriptor). For a wait
     * the library does not bound itself (a streamed answer's next rows).
     */
    public boolean awaitReadable(int fd, long timeoutNanos) {
        Watch w = watch(fd);
        if (w == null) {
            return false;
        }
        boolean interrupted = false;
        long start = System.nanoTime();
        try {
            while (!w.fired) {
                long left = timeoutNanos - (System.nanoTime() - start);
                if (left <= 0) {
                    return false;
                }
                // In slices: after each, arm it again, which reports it at once if it is
                // readable, so not even a wake-up lost would leave the thread parked.
                LockSupport.parkNanos(this, Math.min(left, RECHECK_NS));
                if (Thread.interrupted()) {
                    interrupted = true; // park would return at once while the status is set
                }
                if (!w.fired && !w.rearm()) {
                    return false; // epoll refused it: the caller waits in the library
                }
            }
        } finally {
            w.close();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return true;
    }

    /**
     * An eventfd registered here, for the current thread to wait on as a
     * borrow's {@code signal_fd}; give it back with {@link #release}. Null if
     * none could be made (the caller lets the borrow make its own).
     */
    public Watch signal() {
        Watch w = signals.poll();
        if (w != null) {
            spareSignals.decrementAndGet();
            w.thread = Thread.currentThread();
            return w;
        }
        int fd = Native.pollerEventfd();
        if (fd < 0) {
            return null;
        }
        w = new Watch(fd, ids.incrementAndGet(), Thread.currentThread(), true);
        waiters.put(w.id, w);
        if (Native.pollerArm(epfd, fd, w.id, true) != 0) {
            waiters.remove(w.id);
            Native.pollerClose(fd);
            return null;
        }
        return w;
    }

    /**
     * Gives back a signal once the borrow that used it finished or was freed
     * (the library then never writes to it again). Kept registered for the
     * next borrow; closed beyond {@link #SPARE_SIGNALS} spares.
     */
    public void release(Watch w) {
        w.thread = null;
        if (spareSignals.incrementAndGet() <= SPARE_SIGNALS) {
            signals.add(w);
        } else {
            spareSignals.decrementAndGet();
            Native.pollerDisarm(epfd, w.fd);
            waiters.remove(w.id);
            Native.pollerClose(w.fd);
        }
    }

    /**
     * One descriptor watched for one thread: a statement's socket (close it
     * before the socket is closed), or a signal (close gives it back).
     */
    public final class Watch implements AutoCloseable {
        private final int fd;
        private final long id;
        /** One of the poller's own eventfds ({@link #signal}), kept from borrow to borrow. */
        private final boolean signal;
        /** The thread to unpark (null while a signal is spare). */
        private volatile Thread thread;
        /** The descriptor turned readable since it was last armed. */
        private volatile boolean fired;

        private Watch(int fd, long id, Thread thread, boolean signal) {
            this.fd = fd;
            this.id = id;
            this.thread = thread;
            this.signal = signal;
        }

        /** The descriptor (a signal's eventfd, to hand the library). */
        public int fd() {
            return fd;
        }

        /** Arms the descriptor again (one-shot): false if epoll refused. Readiness is checked at once. */
        public boolean rearm() {
            fired = false;
            return Native.pollerArm(epfd, fd, id, false) == 0;
        }

        @Override
        public void close() {
            if (signal) {
                release(this);
                return;
            }
            Native.pollerDisarm(epfd, fd);
            waiters.remove(id);
        }
    }

    private void run() {
        long[] ready = new long[64];
        while (true) {
            int n;
            try {
                n = Native.pollerWait(epfd, ready, -1);
            } catch (Throwable t) {
                n = -1; // never let the poller end: every parked thread depends on it
            }
            if (n < 0) {
                LockSupport.parkNanos(1_000_000L); // EINTR: at once again; anything else must not spin
            }
            for (int i = 0; i < n; i++) {
                Watch w = waiters.get(ready[i]);
                Thread t;
                if (w != null && (t = w.thread) != null) {
                    wakeups.incrementAndGet();
                    w.fired = true;
                    LockSupport.unpark(t);
                }
            }
        }
    }
}
