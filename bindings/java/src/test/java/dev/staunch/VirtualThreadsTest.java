package dev.staunch;

import dev.staunch.internal.Poller;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Virtual threads that wait for a connection park (the poller unparks them),
 * so they hold no carrier while they wait (issue 48).
 */
class VirtualThreadsTest {
    private static final int WAITERS = 10_000;
    private static final int SIZE = 8;

    /**
     * 10,000 virtual threads wait for a pool of 8 whose connections are all
     * held. Meanwhile every carrier must be free: as many virtual threads as
     * there are carriers spin until all of them run at once (with a wait that
     * pinned even one carrier, they never meet). Then the holders let go and
     * every waiter is served, most of them woken by the poller; the process
     * ran on a handful of platform threads, and JFR saw no virtual thread
     * park while pinned.
     */
    @Test
    void ten_thousand_virtual_threads_wait_for_8_connections_without_holding_a_carrier() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads: JDK 21+");
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
                Runtime.getRuntime().availableProcessors());
        boolean jfr = ModuleLayer.boot().findModule("jdk.jfr").isPresent();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        ExecutorService ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        CountDownLatch release = new CountDownLatch(1);
        Object recording = null;
        try (Pool pool = Staunch.open(Env.url("max_size=" + SIZE))) {
            // The classes of a borrow that waits are loaded before JFR watches (a virtual
            // thread that waits for a class being loaded by another is pinned: the JDK's).
            List<Future<Long>> warm = new ArrayList<>();
            for (int t = 0; t < 4 * SIZE; t++) {
                warm.add(ex.submit(() -> {
                    try (Conn c = pool.get(Duration.ofSeconds(30))) {
                        return ConformanceTest.selectLong(c, "SELECT ?", 7);
                    }
                }));
            }
            for (Future<Long> f : warm) {
                assertEquals(7L, f.get(60, TimeUnit.SECONDS));
            }
            recording = jfr ? Pinned.start() : null;
            CountDownLatch held = new CountDownLatch(SIZE);
            List<Future<Long>> holders = new ArrayList<>();
            for (int h = 0; h < SIZE; h++) {
                holders.add(ex.submit(() -> {
                    try (Conn c = pool.get(Duration.ofSeconds(30))) {
                        held.countDown();
                        assertTrue(release.await(120, TimeUnit.SECONDS));
                        return ConformanceTest.selectLong(c, "SELECT 1");
                    }
                }));
            }
            assertTrue(held.await(30, TimeUnit.SECONDS), "the holders did not get the pool's 8 connections");
            long wakeups0 = Poller.get().wakeups();

            List<Future<Long>> waiters = new ArrayList<>(WAITERS);
            for (int t = 0; t < WAITERS; t++) {
                long tag = t;
                waiters.add(ex.submit(() -> {
                    try (Conn c = pool.get(Duration.ofSeconds(120))) {
                        return ConformanceTest.selectLong(c, "SELECT ?", tag);
                    }
                }));
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (pool.stats().waiting() < WAITERS && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertEquals(WAITERS, pool.stats().waiting(), "not every virtual thread reached the pool's queue");
            int platform = threads.getThreadCount();

            // Every carrier is free while 10,000 borrows wait: `carriers` spinners meet.
            AtomicInteger arrived = new AtomicInteger();
            List<Future<Boolean>> spinners = new ArrayList<>();
            for (int s = 0; s < carriers; s++) {
                spinners.add(ex.submit(() -> {
                    arrived.incrementAndGet();
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                    while (arrived.get() < carriers) {
                        if (System.nanoTime() > end) {
                            return false;
                        }
                        Thread.onSpinWait();
                    }
                    return true;
                }));
            }
            for (Future<Boolean> s : spinners) {
                assertTrue(s.get(30, TimeUnit.SECONDS), "only " + arrived.get() + " of " + carriers
                        + " carriers were free while the borrows waited");
            }

            release.countDown();
            for (Future<Long> f : holders) {
                assertEquals(1L, f.get(120, TimeUnit.SECONDS));
            }
            for (int t = 0; t < WAITERS; t++) {
                assertEquals((long) t, waiters.get(t).get(120, TimeUnit.SECONDS));
            }
            long woken = Poller.get().wakeups() - wakeups0;
            System.out.printf("virtual threads: %d waited for %d connections on %d carriers; %d platform threads "
                    + "while they waited; the poller woke %d%n", WAITERS, SIZE, carriers, platform, woken);
            assertTrue(platform < 50, platform + " platform threads while the borrows waited");
            assertTrue(woken >= WAITERS / 2, "the poller woke only " + woken + " of " + WAITERS + " waiters");
            assertEquals(0, pool.stats().active());
            assertEquals(WAITERS + 5 * SIZE, pool.stats().acquired());
        } finally {
            release.countDown();
            ex.shutdown();
            assertTrue(ex.awaitTermination(120, TimeUnit.SECONDS));
        }
        if (recording != null) {
            List<String> pinned = Pinned.stop(recording);
            assertTrue(pinned.isEmpty(), "JFR saw virtual threads park while pinned: " + pinned);
        }
    }

    /**
     * On a virtual thread a begin, a statement, a commit and a rollback each park
     * until their answer (one wake-up by the poller each), and do what they
     * say: the committed row is there, the rolled-back one is not.
     */
    @Test
    void statements_commits_and_rollbacks_park_on_a_virtual_thread() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads: JDK 21+");
        ExecutorService ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        try (Pool pool = Staunch.open(Env.url("max_size=2"))) {
            Future<long[]> f = ex.submit(() -> {
                try (Conn c = pool.get(Duration.ofSeconds(10))) {
                    c.execute("CREATE TABLE IF NOT EXISTS vt_commit (id INT PRIMARY KEY)");
                    c.execute("DELETE FROM vt_commit");
                    long wb = Poller.get().wakeups();
                    c.begin();
                    long w0 = Poller.get().wakeups();
                    assertEquals(1, w0 - wb, "the START TRANSACTION's wake-ups");
                    c.execute("INSERT INTO vt_commit VALUES (?)", 1);
                    long w1 = Poller.get().wakeups();
                    c.commit();
                    long w2 = Poller.get().wakeups();
                    c.begin();
                    c.execute("INSERT INTO vt_commit VALUES (?)", 2);
                    long w3 = Poller.get().wakeups();
                    c.rollback();
                    long w4 = Poller.get().wakeups();
                    return new long[] {w1 - w0, w2 - w1, w4 - w3};
                }
            });
            long[] woken = f.get(30, TimeUnit.SECONDS);
            assertEquals(1, woken[0], "the INSERT's wake-ups");
            assertEquals(1, woken[1], "the COMMIT's wake-ups");
            assertEquals(1, woken[2], "the ROLLBACK's wake-ups");
            try (Conn c = pool.get(Duration.ofSeconds(10))) {
                assertEquals(1L, ConformanceTest.selectLong(c, "SELECT COUNT(*) FROM vt_commit"));
                assertEquals(1L, ConformanceTest.selectLong(c, "SELECT MAX(id) FROM vt_commit"));
                c.execute("DROP TABLE vt_commit");
            }
        } finally {
            ex.shutdown();
            assertTrue(ex.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    /**
     * A streamed answer read on a virtual thread parks while its next rows
     * are on their way: the server stalls half a second at row 300, having
     * flushed the rows before it that fill its 16 kB buffer, and the fetches
     * that find nothing arrived wait for the socket through the poller. (The
     * stall comes early so that even a cold, loaded JVM has read what was
     * flushed before it ends: at row 5,000 one did not, and never waited.)
     * Every row arrives, in order, and the connection goes on.
     */
    @Test
    void a_streamed_answer_parks_for_its_rows_on_a_virtual_thread() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads: JDK 21+");
        ExecutorService ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        try (Pool pool = Staunch.open(Env.url("max_size=1"))) {
            Future<Long> f = ex.submit(() -> {
                try (Conn c = pool.get(Duration.ofSeconds(10))) {
                    long before;
                    long n = 0;
                    try (Rows r = c.queryStream("SELECT seq, IF(seq = 300, SLEEP(0.5), 0), REPEAT('x', 100)"
                            + " FROM seq_1_to_10000")) {
                        before = Poller.get().wakeups();
                        while (r.next()) {
                            n++;
                            assertEquals(n, r.getLong(0));
                            assertEquals(100, r.getString(2).length());
                        }
                    }
                    assertEquals(10_000, n);
                    long woken = Poller.get().wakeups() - before;
                    assertEquals(7L, ConformanceTest.selectLong(c, "SELECT 7"));
                    return woken;
                }
            });
            long woken = f.get(30, TimeUnit.SECONDS);
            assertTrue(woken >= 1, "the poller woke the reader " + woken + " times while rows were on their way");
        } finally {
            ex.shutdown();
            assertTrue(ex.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    /** JFR's jdk.VirtualThreadPinned (threshold 0), touched only when the jdk.jfr module is present. */
    private static final class Pinned {
        static Object start() {
            jdk.jfr.Recording r = new jdk.jfr.Recording();
            r.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            r.start();
            return r;
        }

        static List<String> stop(Object recording) throws Exception {
            jdk.jfr.Recording r = (jdk.jfr.Recording) recording;
            r.stop();
            Path file = Files.createTempFile("staunch-pinned", ".jfr");
            try {
                r.dump(file);
                List<String> out = new ArrayList<>();
                for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(file)) {
                    jdk.jfr.consumer.RecordedStackTrace st = e.getStackTrace();
                    String top = st == null || st.getFrames().isEmpty() ? ""
                            : st.getFrames().get(0).getMethod().getType().getName();
                    if (top.startsWith("jdk.internal.loader.") || top.equals("java.lang.ClassLoader")) {
                        continue; // waiting for a class another thread loads: the JDK's own pinning
                    }
                    out.add(e.getEventType().getName() + " " + st);
                }
                return out;
            } finally {
                r.close();
                Files.deleteIfExists(file);
            }
        }
    }
}
