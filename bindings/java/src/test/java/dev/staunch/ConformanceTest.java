package dev.staunch;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The 17 scenarios of shared/CONFORMANCE.md through the native API. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConformanceTest {

    static long selectLong(Conn c, String sql, Object... params) {
        try (Rows r = c.query(sql, params)) {
            assertTrue(r.next(), "no row from " + sql);
            return r.getLong(0);
        }
    }

    @Test
    void conf_basic() {
        Pool pool = Staunch.open(Env.url("max_size=2"));
        try (Conn c = pool.get(Duration.ofSeconds(5)); Rows r = c.query("SELECT 1")) {
            assertTrue(r.next());
            assertEquals(1L, r.getLong(0));
            assertEquals(1L, r.getObject(0));
            assertFalse(r.next());
        }
        try (Conn r = pool.getRead(Duration.ofSeconds(5))) { // a single-host pool reads from its writer
            assertEquals(2L, selectLong(r, "SELECT 2"));
        }
        pool.close();
        pool.close(); // idempotent
        assertTrue(pool.isClosed());
    }

    @Test
    void conf_types() {
        try (Pool pool = Staunch.open(Env.url()); Conn c = pool.get(Duration.ofSeconds(5))) {
            c.execute("CREATE TEMPORARY TABLE tt (i BIGINT, u BIGINT UNSIGNED, d DOUBLE, t TEXT, b VARBINARY(16), "
                    + "e VARBINARY(16), m DECIMAL(12,4), dt DATE, ts DATETIME(6), tm TIME(6), n INT) DEFAULT CHARSET=utf8mb4");
            byte[] bin = {0, 1, 2, (byte) 0xFF, 0, 42};
            LocalDateTime ts = LocalDateTime.of(2024, 2, 29, 23, 59, 58, 123_456_000);
            Duration tm = Duration.ofHours(-838).minusMinutes(59).minusSeconds(59);
            c.execute("INSERT INTO tt VALUES (?,?,?,?,?,?,?,?,?,?,?)", Long.MIN_VALUE, new BigInteger("18446744073709551615"),
                    1.5e300, "grüße, 世界 🙂", bin, new byte[0], new BigDecimal("-12345678.0625"), LocalDate.of(1999, 12, 31),
                    ts, tm, null);
            c.execute("INSERT INTO tt (i, u) VALUES (?, ?)", Long.MAX_VALUE, 0);
            try (Rows r = c.query("SELECT * FROM tt ORDER BY i")) {
                assertTrue(r.next());
                assertEquals(Long.MIN_VALUE, r.getLong("i"));
                assertEquals(new BigInteger("18446744073709551615"), r.getObject("u"));
                assertEquals(1.5e300, r.getDouble("d"));
                assertEquals("grüße, 世界 🙂", r.getString("t"));
                assertArrayEquals(bin, r.getBytes("b"));
                assertArrayEquals(new byte[0], r.getBytes("e"));
                assertEquals(new BigDecimal("-12345678.0625"), r.getBigDecimal("m"));
                assertEquals(LocalDate.of(1999, 12, 31), r.getLocalDate("dt"));
                assertEquals(ts, r.getLocalDateTime("ts"));
                assertEquals(tm, r.getDuration("tm"));
                assertTrue(r.isNull("n"));
                assertNull(r.getObject("n"));
                assertTrue(r.wasNull());
                assertTrue(r.next());
                assertEquals(Long.MAX_VALUE, r.getLong("i"));
                assertEquals(0L, r.getLong("u"));
                assertFalse(r.next());
            }
        }
    }

    @Test
    void conf_params() {
        try (Pool pool = Staunch.open(Env.url()); Conn c = pool.get(Duration.ofSeconds(5))) {
            c.execute("CREATE TEMPORARY TABLE pt (s VARCHAR(100))");
            String evil = "'); DROP TABLE pt; --";
            c.execute("INSERT INTO pt VALUES (?)", evil);
            assertEquals(evil, firstString(c, "SELECT s FROM pt WHERE s = ?", evil));
            StaunchException few = assertThrows(StaunchException.class, () -> c.execute("INSERT INTO pt VALUES (?)"));
            // no parameters: the text goes as is and the server rejects the '?'
            assertEquals(Status.SERVER_ERROR, few.status());
            StaunchException many = assertThrows(StaunchException.class, () -> c.execute("INSERT INTO pt VALUES (?)", 1, 2));
            assertEquals(Status.PARAM_COUNT, many.status(), many.getMessage());
            IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
                    () -> c.execute("INSERT INTO pt VALUES (?)", new Object()));
            assertTrue(type.getMessage().contains("parameter 1"), type.getMessage());
            assertEquals(1L, selectLong(c, "SELECT COUNT(*) FROM pt"));
        }
    }

    static String firstString(Conn c, String sql, Object... params) {
        try (Rows r = c.query(sql, params)) {
            assertTrue(r.next());
            return r.getString(0);
        }
    }

    @Test
    void conf_txn() {
        try (Pool pool = Staunch.open(Env.url("max_size=1"))) {
            try (Conn c = pool.get(Duration.ofSeconds(5))) {
                c.execute("CREATE TABLE IF NOT EXISTS txn_t (id INT PRIMARY KEY) ENGINE=InnoDB");
                c.execute("DELETE FROM txn_t");
                c.begin();
                c.execute("INSERT INTO txn_t VALUES (1)");
                c.rollback();
                c.begin();
                c.execute("INSERT INTO txn_t VALUES (2)");
                c.commit();
                c.inTransaction(x -> x.execute("INSERT INTO txn_t VALUES (3)"));
                c.begin();
                c.execute("INSERT INTO txn_t VALUES (4)"); // returned mid-transaction
            }
            try (Conn c = pool.get(Duration.ofSeconds(5))) {
                try (Rows r = c.query("SELECT id FROM txn_t ORDER BY id")) {
                    assertTrue(r.next());
                    assertEquals(2, r.getLong(0));
                    assertTrue(r.next());
                    assertEquals(3, r.getLong(0));
                    assertFalse(r.next(), "the rolled-back rows must be absent");
                }
                assertEquals(0L, selectLong(c, "SELECT @@in_transaction"));
                c.execute("DROP TABLE txn_t");
            }
            assertEquals(1, pool.stats().rollbacksOnReturn());
        }
    }

    @Test
    void conf_threads() throws Exception {
        try (Pool pool = Staunch.open(Env.url("max_size=4"))) {
            ExecutorService ex = Executors.newFixedThreadPool(8);
            List<Future<Integer>> fs = new java.util.ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                fs.add(ex.submit(() -> {
                    int n = 0;
                    for (int i = 0; i < 500; i++) {
                        long tag = thread * 100_000L + i;
                        try (Conn c = pool.get(Duration.ofSeconds(10))) {
                            assertEquals(tag, selectLong(c, "SELECT ?", tag));
                            n++;
                        }
                    }
                    return n;
                }));
            }
            int total = 0;
            for (Future<Integer> f : fs) {
                total += f.get(100, TimeUnit.SECONDS);
            }
            ex.shutdown();
            assertEquals(4000, total);
            Stats s = pool.stats();
            assertEquals(0, s.active());
            assertEquals(4000, s.acquired());
            assertTrue(s.total() <= 4);
            assertEquals(0, s.violations());
        }
    }

    @Test
    void conf_timeout_exhausted() {
        try (Pool pool = Staunch.open(Env.url("max_size=1")); Conn held = pool.get(Duration.ofSeconds(5))) {
            long t0 = Env.now();
            StaunchException e = assertThrows(StaunchException.class, () -> pool.get(Duration.ofMillis(200)));
            long took = Env.now() - t0;
            assertEquals(Status.POOL_EXHAUSTED, e.status(), e.getMessage());
            assertTrue(e.getMessage().toLowerCase().contains("exhausted") || e.getMessage().contains("in use"), e.getMessage());
            assertTrue(took >= 190 && took <= 200 + Env.slack(), "took " + took + " ms");
            assertEquals(1L, selectLong(held, "SELECT 1"));
        }
    }

    /** A listener that accepts TCP and never greets: the incident's half-dead endpoint. */
    static ServerSocket blackHole() throws Exception {
        return new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    }

    @Test
    void conf_a1_conf_a2_black_hole_then_healthy() throws Exception {
        try (Testkit proxy = Testkit.start("proxy", "--target", Env.server().server(0).get("host") + ":" + Env.server().server(0).get("port"))) {
            proxy.cmd("mode blackhole");
            String url = proxy.url() + "?connect_timeout=500ms&max_size=2";
            try (Pool pool = Staunch.open(url)) {
                long t0 = Env.now();
                StaunchException e = assertThrows(StaunchException.class, () -> pool.get(Duration.ofMillis(1500)));
                long took = Env.now() - t0;
                String endpoint = "127.0.0.1:" + proxy.proxy().get("port");
                assertEquals(Status.UNREACHABLE, e.status(), e.getMessage());
                assertTrue(e.getMessage().contains(endpoint), "names the endpoint: " + e.getMessage());
                assertTrue(e.getMessage().contains("greeting"), "says why: " + e.getMessage());
                assertTrue(took >= 1490 && took <= 1500 + Env.slack(), "took " + took + " ms");
                System.out.println("conf_a1: UNREACHABLE after " + took + " ms: " + e.rawMessage());
                long deadline = Env.now() + 500 + Env.slack() + 200;
                Stats s;
                do {
                    s = pool.stats();
                    if (s.connecting() == 0) {
                        break;
                    }
                    Thread.sleep(20);
                } while (Env.now() < deadline);
                assertEquals(0, s.connecting(), "no connect stays stuck");
                assertTrue(s.connectFailures() >= 1);
                assertEquals(0, s.total());

                // conf_a2: the endpoint now forwards to the healthy server.
                proxy.cmd("mode pass");
                conf_a2_recovers(pool);
            }
        }
    }

    private static void conf_a2_recovers(Pool pool) {
        long t0 = Env.now();
        try (Conn c = pool.get(Duration.ofMillis(3 * 500 + 2000))) {
            long took = Env.now() - t0;
            assertEquals(1L, selectLong(c, "SELECT 1"));
            assertTrue(took <= 500 + 1000 + Env.slack(), "conf_a2: recovery took " + took + " ms");
            System.out.println("conf_a2: recovered in " + took + " ms");
            try (Conn second = pool.get(Duration.ofSeconds(2))) {
                assertEquals(2L, selectLong(second, "SELECT 2"));
            }
        }
    }

    @Test
    void conf_server_kill() throws Exception {
        try (Pool pool = Staunch.open(Env.url("max_size=3&alive_bypass_window=0ms"))) {
            Conn[] cs = new Conn[3];
            for (int i = 0; i < 3; i++) {
                cs[i] = pool.get(Duration.ofSeconds(5));
                selectLong(cs[i], "SELECT 1");
            }
            for (Conn c : cs) {
                c.close();
            }
            Object killed = Env.server().cmd("kill-connections app").get("killed");
            assertTrue(((Number) killed).longValue() >= 3, "killed " + killed);
            Thread.sleep(100);
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 3; i++) {
                    cs[i] = pool.get(Duration.ofSeconds(5));
                    assertEquals(7L, selectLong(cs[i], "SELECT 7"));
                }
                for (Conn c : cs) {
                    c.close();
                }
            }
        }
    }

    @Test
    void conf_bad_input() {
        assertThrows(NullPointerException.class, () -> Staunch.open(null));
        StaunchException bad = assertThrows(StaunchException.class, () -> Staunch.open("postgres://x").get(Duration.ZERO));
        assertEquals(Status.INVALID_CONFIG, bad.status(), bad.getMessage());
        StaunchException knob = assertThrows(StaunchException.class, () -> Staunch.open(Env.url("no_such_knob=1")));
        assertEquals(Status.INVALID_CONFIG, knob.status());
        assertTrue(knob.getMessage().contains("no_such_knob"), knob.getMessage());
        StaunchException range = assertThrows(StaunchException.class, () -> Staunch.open(Env.url("max_size=0")));
        assertTrue(range.getMessage().contains("max_size"), range.getMessage());
        assertThrows(NullPointerException.class, () -> Staunch.builder().knob(null, "1"));
        Pool pool = Staunch.open(Env.url("max_size=1"));
        try {
            IllegalArgumentException neg = assertThrows(IllegalArgumentException.class, () -> pool.get(Duration.ofMillis(-1)));
            assertTrue(neg.getMessage().contains("negative"));
            Conn c = pool.get(Duration.ofSeconds(5));
            assertThrows(NullPointerException.class, () -> c.query(null));
            try (Rows r = c.query("SELECT 1, 'x'")) {
                StaunchException noRow = assertThrows(StaunchException.class, () -> r.getLong(0));
                assertEquals(Status.NO_ROW, noRow.status());
                assertTrue(r.next());
                assertEquals(Status.BAD_INDEX, assertThrows(StaunchException.class, () -> r.getLong(5)).status());
                assertEquals(Status.WRONG_TYPE, assertThrows(StaunchException.class, () -> r.getLong(1)).status());
                assertEquals(Status.BAD_INDEX, assertThrows(StaunchException.class, () -> r.getLong("nope")).status());
            }
            c.close();
            StaunchException after = assertThrows(StaunchException.class, () -> c.query("SELECT 1"));
            assertEquals(Status.USE_AFTER_RELEASE, after.status());
            c.close(); // idempotent
            try (Conn c2 = pool.get(Duration.ofSeconds(5))) {
                Rows closedRows = c2.query("SELECT 1");
                closedRows.close();
                assertThrows(StaunchException.class, closedRows::next);
            }
            Conn held = pool.get(Duration.ofSeconds(5));
            pool.close();
            StaunchException closed = assertThrows(StaunchException.class, () -> pool.get(Duration.ofSeconds(1)));
            assertEquals(Status.CLOSED, closed.status());
            StaunchException useAfterClose = assertThrows(StaunchException.class, () -> held.query("SELECT 1"));
            assertEquals(Status.CLOSED, useAfterClose.status(), useAfterClose.getMessage());
            held.close();
            // the handle is freed by close(): stats is a clear error, not a crash
            assertEquals(Status.CLOSED, assertThrows(StaunchException.class, pool::stats).status());
            assertEquals(Status.CLOSED, assertThrows(StaunchException.class, pool::softEvict).status());
        } finally {
            pool.close();
        }
    }

    @Test
    void conf_stats() {
        try (Pool pool = Staunch.open(Env.url("max_size=2"))) {
            Stats s0 = pool.stats();
            assertEquals(0, s0.total());
            assertEquals(0, s0.acquired());
            assertEquals(2, s0.maxSize());
            Conn a = pool.get(Duration.ofSeconds(5));
            Conn b = pool.get(Duration.ofSeconds(5));
            Stats s1 = pool.stats();
            assertEquals(2, s1.active());
            assertEquals(2, s1.total());
            assertEquals(2, s1.acquired());
            assertEquals(2, s1.created());
            assertThrows(StaunchException.class, () -> pool.get(Duration.ofMillis(50)));
            a.close();
            b.close();
            Stats s2 = pool.stats();
            assertEquals(0, s2.active());
            assertEquals(2, s2.idle());
            assertEquals(2, s2.acquired());
            assertEquals(1, s2.acquireTimeouts());
            assertEquals(0, s2.waiting());
            assertEquals(0, s2.violations());
            assertEquals(s2.asMap().get("acquire_timeouts"), s2.get("acquire_timeouts"));
        }
    }

    @Test
    void conf_events() throws Exception {
        List<Event> events = new CopyOnWriteArrayList<>();
        List<String> threads = new CopyOnWriteArrayList<>();
        String me = Thread.currentThread().getName();
        try (Testkit proxy = Testkit.start("proxy", "--target", Env.server().server(0).get("host") + ":" + Env.server().server(0).get("port"))) {
            proxy.cmd("mode blackhole");
            try (Pool pool = Staunch.builder().url(proxy.url()).knob("connect_timeout", "300ms").knob("max_size", "1")
                    .onEvent(e -> {
                        events.add(e);
                        threads.add(Thread.currentThread().getName());
                        if (e.kind() == Event.Kind.CONNECTED) {
                            throw new IllegalStateException("a listener that throws must not crash anything");
                        }
                    }).open()) {
                assertThrows(StaunchException.class, () -> pool.get(Duration.ofMillis(700)));
                proxy.cmd("mode pass");
                try (Conn c = pool.get(Duration.ofSeconds(5))) {
                    assertEquals(1L, selectLong(c, "SELECT 1"));
                }
                long deadline = Env.now() + 2000;
                while (events.stream().noneMatch(e -> e.kind() == Event.Kind.RECOVERED) && Env.now() < deadline) {
                    Thread.sleep(10);
                }
                Event failed = events.stream().filter(e -> e.kind() == Event.Kind.CONNECT_FAILED).findFirst().orElseThrow();
                assertTrue(failed.count() >= 1);
                assertTrue(failed.status() != 0);
                Event rec = events.stream().filter(e -> e.kind() == Event.Kind.RECOVERED).findFirst().orElseThrow(
                        () -> new AssertionError("no recovered event in " + events));
                assertTrue(rec.count() >= 1);
                assertEquals(pool.id(), rec.poolId());
                // Connect events come from the pool's own (adder) threads, the get's timeout on the caller's.
                int fi = events.indexOf(failed);
                assertFalse(threads.get(fi).equals(me), "connect_failed on a pool thread, not " + me);
                int ti = -1;
                for (int i = 0; i < events.size(); i++) {
                    if (events.get(i).kind() == Event.Kind.ACQUIRE_TIMEOUT) {
                        ti = i;
                    }
                }
                assertTrue(ti >= 0, "an acquire_timeout event: " + events);
                assertEquals(me, threads.get(ti), "acquire_timeout on the calling thread");
            }
        }
    }

    @Test
    void conf_cancel_get() throws Exception {
        try (Pool pool = Staunch.open(Env.url("max_size=1")); Conn held = pool.get(Duration.ofSeconds(5));
             CancelToken token = new CancelToken()) {
            AtomicReference<Throwable> got = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                try {
                    pool.get(Duration.ofSeconds(10), token).close();
                } catch (Throwable t) {
                    got.set(t);
                }
                done.countDown();
            });
            waiter.start();
            waitFor(() -> pool.stats().waiting() == 1);
            long t0 = Env.now();
            token.cancel();
            assertTrue(done.await(5, TimeUnit.SECONDS));
            long took = Env.now() - t0;
            StaunchException e = (StaunchException) got.get();
            assertEquals(Status.CANCELLED, e.status(), e.getMessage());
            assertTrue(took <= 100 + Env.slack(), "took " + took);
            assertEquals(0, pool.stats().waiting());
            assertEquals(1, pool.stats().acquiresCancelled());
            assertEquals(1L, selectLong(held, "SELECT 1"));
        }
    }

    @Test
    void conf_cancel_get_by_interrupt() throws Exception {
        try (Pool pool = Staunch.open(Env.url("max_size=1")); Conn held = pool.get(Duration.ofSeconds(5))) {
            AtomicReference<Throwable> got = new AtomicReference<>();
            AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
            AtomicReference<Throwable> second = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicLong firstEnd = new java.util.concurrent.atomic.AtomicLong();
            CountDownLatch done = new CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                try {
                    pool.get(Duration.ofSeconds(10)).close();
                } catch (Throwable t) {
                    got.set(t);
                }
                firstEnd.set(Env.now());
                stillInterrupted.set(Thread.currentThread().isInterrupted());
                // Cleared, the same thread's next get waits its full time again (its cancelled token is not reused).
                Thread.interrupted();
                try {
                    pool.get(Duration.ofMillis(100)).close();
                } catch (Throwable t) {
                    second.set(t);
                }
                done.countDown();
            });
            waiter.start();
            waitFor(() -> pool.stats().waiting() == 1);
            long t0 = Env.now();
            waiter.interrupt();
            assertTrue(done.await(5, TimeUnit.SECONDS));
            long took = firstEnd.get() - t0;
            StaunchException e = (StaunchException) got.get();
            assertEquals(Status.CANCELLED, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("interrupted"), e.getMessage());
            assertTrue(stillInterrupted.get(), "the interrupt flag stays set");
            assertEquals(Status.POOL_EXHAUSTED, ((StaunchException) second.get()).status(), String.valueOf(second.get()));
            assertTrue(took <= 100 + Env.slack(), "took " + took);
            assertEquals(0, pool.stats().waiting());
            assertEquals(1L, selectLong(held, "SELECT 1"));
        }
    }

    static void waitFor(java.util.function.BooleanSupplier cond) throws InterruptedException {
        long deadline = Env.now() + 5000;
        while (!cond.getAsBoolean()) {
            if (Env.now() > deadline) {
                throw new AssertionError("condition not reached within 5 s");
            }
            Thread.sleep(5);
        }
    }

    @Test
    void conf_cancel_statement() throws Exception {
        try (Pool pool = Staunch.open(Env.url("max_size=2")); Conn c = pool.get(Duration.ofSeconds(5));
             Conn other = pool.get(Duration.ofSeconds(5))) {
            assertFalse(c.cancel(), "nothing running: nothing sent");
            assertEquals(1L, selectLong(c, "SELECT 1"));
            AtomicReference<Boolean> cancelled = new AtomicReference<>();
            Thread k = new Thread(() -> {
                try {
                    Thread.sleep(500);
                    cancelled.set(c.cancel());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            long t0 = Env.now();
            k.start();
            StaunchException e = assertThrows(StaunchException.class, () -> c.execute("SELECT SLEEP(10)"));
            long took = Env.now() - t0;
            k.join();
            assertEquals(Status.CANCELLED, e.status(), e.getMessage());
            assertTrue(e.isCancelled());
            assertEquals(Boolean.TRUE, cancelled.get());
            assertTrue(took <= 1500 + Env.slack(), "took " + took);
            assertEquals(0L, selectLong(other, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(10)%'"));
            assertFalse(c.isBroken());
            assertEquals(1L, selectLong(c, "SELECT 1"));
        }
    }

    @Test
    void conf_statement_timeout() {
        try (Pool pool = Staunch.open(Env.url()); Conn c = pool.get(Duration.ofSeconds(5))) {
            c.setTimeout(Duration.ofMillis(300));
            long t0 = Env.now();
            StaunchException e = assertThrows(StaunchException.class, () -> c.query("SELECT SLEEP(5)"));
            long took = Env.now() - t0;
            assertEquals(Status.STATEMENT_TIMEOUT, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("time"), e.getMessage());
            assertTrue(took <= 1000 + Env.slack(), "took " + took);
            assertEquals(1L, selectLong(c, "SELECT 1"));
        }
    }

    @Test
    void conf_no_crossed_answer() throws Exception {
        try (Pool pool = Staunch.open(Env.url("query_timeout=300ms&max_size=1"))) {
            Conn c = pool.get(Duration.ofSeconds(5));
            long t0 = Env.now();
            StaunchException e = assertThrows(StaunchException.class,
                    () -> c.query("SET STATEMENT max_statement_time=0 FOR SELECT 111 + SLEEP(3)"));
            long took = Env.now() - t0;
            assertEquals(Status.STATEMENT_TIMEOUT, e.status(), e.getMessage());
            assertTrue(took >= 1200 && took <= 2500 + Env.slack(), "cut off after " + took);
            assertTrue(c.isBroken());
            Thread.sleep(2000); // the late answer (111) has arrived by now
            StaunchException second = assertThrows(StaunchException.class, () -> c.query("SELECT 222"));
            assertEquals(Status.BROKEN, second.status(), second.getMessage());
            assertEquals(Status.BROKEN, assertThrows(StaunchException.class, c::ping).status());
            c.close();
            try (Conn d = pool.get(Duration.ofSeconds(5))) {
                assertFalse(d.isBroken());
                assertEquals(222L, selectLong(d, "SELECT 222"));
            }
            assertEquals(1, pool.stats().closedBroken());
            assertEquals(1, pool.stats().statementsCut());
        }
    }

    @Test
    void conf_session_reset() {
        try (Pool pool = Staunch.open(Env.url("max_size=1"))) {
            String tz;
            try (Conn c = pool.get(Duration.ofSeconds(5))) {
                tz = firstString(c, "SELECT @@session.time_zone");
                c.execute("SET @leak = 42");
                c.execute("SET time_zone = '+05:00'");
                assertEquals("+05:00", firstString(c, "SELECT @@session.time_zone"));
            }
            try (Conn c = pool.get(Duration.ofSeconds(5))) {
                try (Rows r = c.query("SELECT @leak")) {
                    assertTrue(r.next());
                    assertTrue(r.isNull(0), "the user variable must not survive the return");
                }
                assertEquals(tz, firstString(c, "SELECT @@session.time_zone"));
                // What the server's tracker does not report is undone too:
                // a user-level lock, a variable set inside a SELECT.
                assertEquals("8", firstString(c, "SELECT GET_LOCK('conf', 0) + (@y := 7)"));
            }
            try (Conn c = pool.get(Duration.ofSeconds(5))) {
                assertEquals("1", firstString(c, "SELECT IS_USED_LOCK('conf') IS NULL"));
                assertEquals("1", firstString(c, "SELECT @y IS NULL"));
            }
            assertTrue(pool.stats().resetsOnReturn() >= 1);
        }
    }

    /** A connection and a row set dropped without close(): the Cleaner gives the connection back (discarding it). */
    @Test
    void lifecycle_cleaner_releases_forgotten_connections() throws Exception {
        try (Pool pool = Staunch.open(Env.url("max_size=2"))) {
            forget(pool);
            assertEquals(2, pool.stats().active());
            long deadline = Env.now() + 20_000;
            while (pool.stats().active() != 0 && Env.now() < deadline) {
                System.gc();
                Thread.sleep(50);
            }
            assertEquals(0, pool.stats().active(), "the Cleaner released the forgotten connections");
            try (Conn c = pool.get(Duration.ofSeconds(5))) {
                assertEquals(1L, selectLong(c, "SELECT 1"));
            }
        }
    }

    private static void forget(Pool pool) {
        for (int i = 0; i < 2; i++) {
            Conn c = pool.get(Duration.ofSeconds(5));
            Rows r = c.query("SELECT 1");
            assertTrue(r.next());
        }
    }

    /** Many virtual threads on a small pool: each waits its turn (a downcall pins its carrier, boundedly). */
    @Test
    void conf_threads_virtual() throws Exception {
        // Virtual threads are JDK 21+; the tests compile for 17 (to run on 17's JNI path too), so by reflection.
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() >= 21, "virtual threads: JDK 21+");
        ExecutorService ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        try (Pool pool = Staunch.open(Env.url("max_size=4"))) {
            List<Future<Long>> fs = new java.util.ArrayList<>();
            for (int t = 0; t < 64; t++) {
                long tag = t;
                fs.add(ex.submit(() -> {
                    long sum = 0;
                    for (int i = 0; i < 20; i++) {
                        try (Conn c = pool.get(Duration.ofSeconds(20))) {
                            sum += selectLong(c, "SELECT ?", tag);
                        }
                    }
                    return sum;
                }));
            }
            for (int t = 0; t < 64; t++) {
                assertEquals(20L * t, fs.get(t).get(100, TimeUnit.SECONDS));
            }
            assertEquals(0, pool.stats().active());
            assertEquals(64 * 20, pool.stats().acquired());
        } finally {
            ex.shutdown();
            assertTrue(ex.awaitTermination(100, TimeUnit.SECONDS));
        }
    }

    /**
     * A thousand virtual threads borrowing from a pool of 4 at once: each get blocks in native
     * code (JNI or FFM), which pins its carrier until the get returns, so at most as many
     * gets wait in native code as there are carriers; the others queue as virtual threads.
     * Every borrow succeeds, none is lost.
     */
    @Test
    void virtual_threads_1000_borrow() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() >= 21, "virtual threads: JDK 21+");
        ExecutorService ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        try (Pool pool = Staunch.open(Env.url("max_size=4"))) {
            List<Future<Long>> fs = new java.util.ArrayList<>();
            for (int t = 0; t < 1000; t++) {
                long tag = t;
                fs.add(ex.submit(() -> {
                    try (Conn c = pool.get(Duration.ofSeconds(60))) {
                        return selectLong(c, "SELECT ?", tag);
                    }
                }));
            }
            for (int t = 0; t < 1000; t++) {
                assertEquals((long) t, fs.get(t).get(120, TimeUnit.SECONDS));
            }
            assertEquals(0, pool.stats().active());
            assertEquals(1000, pool.stats().acquired());
        } finally {
            ex.shutdown();
            assertTrue(ex.awaitTermination(120, TimeUnit.SECONDS));
        }
    }

    /**
     * Virtual threads that hold the pool's connections and then block on a
     * monitor give up their carriers (JDK 24+); virtual threads waiting for a
     * connection must not pin every carrier meanwhile, or the holders can never
     * run again to give their connections back. Two holders of a 2-connection
     * pool block on a lock; then as many getters as there are carriers wait;
     * the lock is let go after 300 ms: every getter must be served at once,
     * not when its wait times out (found with 1,000 virtual threads stalling
     * on the Cleaner's lock, JNI path on JDK 25).
     */
    @Test
    void virtual_threads_waiting_for_a_connection_leave_a_carrier_for_its_holders() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() >= 21, "virtual threads: JDK 21+");
        ExecutorService ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
                Runtime.getRuntime().availableProcessors());
        Object lock = new Object();
        try (Pool pool = Staunch.open(Env.url("max_size=2"))) {
            java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(2);
            List<Future<Long>> holders = new java.util.ArrayList<>();
            List<Future<Long>> getters = new java.util.ArrayList<>();
            long t0;
            synchronized (lock) {
                for (int h = 0; h < 2; h++) {
                    holders.add(ex.submit(() -> {
                        try (Conn c = pool.get(Duration.ofSeconds(10))) {
                            held.countDown();
                            synchronized (lock) {
                                return selectLong(c, "SELECT 1");
                            }
                        }
                    }));
                }
                assertTrue(held.await(10, TimeUnit.SECONDS));
                Thread.sleep(100); // the holders are now blocked on the lock
                t0 = System.nanoTime();
                for (int g = 0; g < carriers; g++) {
                    getters.add(ex.submit(() -> {
                        try (Conn c = pool.get(Duration.ofSeconds(20))) {
                            return selectLong(c, "SELECT 2");
                        }
                    }));
                }
                Thread.sleep(300); // the getters are waiting; now let go of the lock
            }
            for (Future<Long> f : holders) {
                assertEquals(1L, f.get(30, TimeUnit.SECONDS));
            }
            for (Future<Long> f : getters) {
                assertEquals(2L, f.get(30, TimeUnit.SECONDS));
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 5_000, "the getters waited " + ms + " ms: their waits pinned every carrier, "
                    + "so the holders could not run until the gets timed out");
        } finally {
            ex.shutdown();
            assertTrue(ex.awaitTermination(60, TimeUnit.SECONDS));
        }
    }

    /**
     * A virtual thread waiting its turn to wait for a connection (every turn
     * taken by other waiting virtual threads) still ends on its timeout and on
     * CancelToken.cancel(), as a get in native code does.
     */
    @Test
    void virtual_threads_waiting_their_turn_time_out_and_cancel() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() >= 21, "virtual threads: JDK 21+");
        ExecutorService ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
                Runtime.getRuntime().availableProcessors());
        int turns = Math.max(1, carriers - 1);
        try (Pool pool = Staunch.open(Env.url("max_size=1"))) {
            Conn held = pool.get(Duration.ofSeconds(10));
            // Every turn taken: these wait in native code for the held connection.
            List<Future<?>> waiting = new java.util.ArrayList<>();
            for (int i = 0; i < turns; i++) {
                waiting.add(ex.submit(() -> {
                    try {
                        pool.get(Duration.ofSeconds(3)).close();
                        return null;
                    } catch (StaunchException e) {
                        return null; // timed out: expected, the connection stays held
                    }
                }));
            }
            Thread.sleep(200);
            long t0 = System.nanoTime();
            Future<StaunchException> timedOut = ex.submit(() -> {
                try {
                    pool.get(Duration.ofMillis(300)).close();
                    return null;
                } catch (StaunchException e) {
                    return e;
                }
            });
            StaunchException e1 = timedOut.get(10, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(e1 != null && e1.status() == Status.POOL_EXHAUSTED, String.valueOf(e1));
            assertTrue(ms >= 250 && ms < 2_000, "timed out after " + ms + " ms");

            CancelToken token = new CancelToken();
            Future<StaunchException> cancelled = ex.submit(() -> {
                try {
                    pool.get(Duration.ofSeconds(10), token).close();
                    return null;
                } catch (StaunchException e) {
                    return e;
                }
            });
            Thread.sleep(200);
            long t1 = System.nanoTime();
            token.cancel();
            StaunchException e2 = cancelled.get(10, TimeUnit.SECONDS);
            long cms = (System.nanoTime() - t1) / 1_000_000;
            assertTrue(e2 != null && e2.status() == Status.CANCELLED, String.valueOf(e2));
            assertTrue(cms < 1_000, "cancel took " + cms + " ms");
            token.close();
            for (Future<?> f : waiting) {
                f.get(10, TimeUnit.SECONDS);
            }
            held.close();
        } finally {
            ex.shutdown();
            assertTrue(ex.awaitTermination(60, TimeUnit.SECONDS));
        }
    }
}
