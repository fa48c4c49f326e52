package dev.staunch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongPredicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * conf_least_privilege (shared/CONFORMANCE.md, issue #49) through the native
 * API: the pool over a primary + replica and over a Galera cluster as the test
 * kit's {@code least} user ({@code ALL ON staunch_test.*} and nothing global:
 * no SLAVE MONITOR), at the defaults, without a monitor_user. Writes and reads
 * flow; exactly one event ({@link Event.Kind#OTHER}, the core's
 * MonitorPrivilegeMissing) names the missing privilege, without the password;
 * a writer kill is followed within the bounds the Rust face keeps
 * (tests/topology.rs conf_least_privilege_replication_kill_followed,
 * tests/galera.rs conf_least_privilege_galera). Each test starts its own
 * servers (replication ~5-10 s, Galera 10-60 s), so this class runs on JDK 25
 * only (scripts/java-tests.sh leaves it out of the JNI runs).
 */
class LeastPrivilegeConformanceTest {

    /** The Rust face's FOLLOW_BOUND (tests/topology.rs) and DETECT (tests/galera.rs), and their SLACK. */
    static final long FOLLOW_BOUND_MS = 1000, DETECT_MS = 1000, RUST_SLACK_MS = 1500;

    static final class Write {
        final long id;
        final long at; // ms (Env.now) when the INSERT returned
        final long port; // the server it ran on, 0 if unknown
        final boolean ok;

        Write(long id, long at, long port, boolean ok) {
            this.id = id;
            this.at = at;
            this.port = port;
            this.ok = ok;
        }
    }

    /** Writes (get: the writer path) and reads (getRead: the read path), one at a time each, 20 ms apart. */
    static final class Load implements AutoCloseable {
        final List<Write> writes = new CopyOnWriteArrayList<>();
        final List<Write> reads = new CopyOnWriteArrayList<>();
        private volatile boolean stop;
        private final Thread writer, reader;

        Load(Pool pool, String table) {
            writer = new Thread(() -> {
                for (long id = 1; !stop; id++) {
                    long port = 0;
                    boolean ok = false;
                    // 10 s: a write held through Galera's stall commits at its end.
                    try (Conn c = pool.get(Duration.ofSeconds(10))) {
                        port = selectLong(c, "SELECT @@port");
                        c.execute("INSERT INTO " + table + " (id, port) VALUES (?, @@port)", id);
                        ok = true;
                    } catch (StaunchException e) {
                        // counted as failed
                    }
                    writes.add(new Write(id, Env.now(), port, ok));
                    pause();
                }
            }, "lp-writer");
            reader = new Thread(() -> {
                while (!stop) {
                    long port = 0;
                    boolean ok = false;
                    try (Conn c = pool.getRead(Duration.ofSeconds(10)); Rows r = c.query("SELECT @@port, COUNT(*) FROM " + table)) {
                        if (r.next()) {
                            port = r.getLong(0);
                            ok = true;
                        }
                    } catch (StaunchException e) {
                        // counted as failed
                    }
                    reads.add(new Write(0, Env.now(), port, ok));
                    pause();
                }
            }, "lp-reader");
            writer.start();
            reader.start();
        }

        private static void pause() {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        static long count(List<Write> list, long after, LongPredicate port) {
            return list.stream().filter(w -> w.ok && w.at > after && port.test(w.port)).count();
        }

        Optional<Write> firstAck(long after, LongPredicate port) {
            return writes.stream().filter(w -> w.ok && w.at > after && port.test(w.port)).findFirst();
        }

        String summary() {
            Map<Long, Long> byPort = new TreeMap<>(reads.stream().filter(r -> r.ok)
                    .collect(Collectors.groupingBy(r -> r.port, Collectors.counting())));
            return "writes " + writes.size() + " (" + writes.stream().filter(w -> !w.ok).count() + " failed), reads "
                    + reads.size() + " (" + reads.stream().filter(r -> !r.ok).count() + " failed; by port " + byPort + ")";
        }

        @Override
        public void close() {
            halt();
        }

        /** Stops the load (idempotent) and waits for its threads. */
        void halt() {
            stop = true;
            try {
                writer.join(30_000);
                reader.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            assertFalse(writer.isAlive() || reader.isAlive(), "the load's threads did not stop");
        }
    }

    static long selectLong(Conn c, String sql) {
        try (Rows r = c.query(sql)) {
            assertTrue(r.next(), "no row from " + sql);
            return r.getLong(0);
        }
    }

    static void waitFor(String what, long boundMs, BooleanSupplier cond) throws InterruptedException {
        long deadline = Env.now() + boundMs;
        while (!cond.getAsBoolean()) {
            if (Env.now() > deadline) {
                fail(what + ": not within " + boundMs + " ms");
            }
            Thread.sleep(10);
        }
    }

    /** The events that name the missing privilege. */
    static List<Event> told(List<Event> events) {
        return events.stream().filter(e -> e.message().contains("SLAVE MONITOR")).collect(Collectors.toList());
    }

    /** A pool as {@code least} over url, and table (id, port) created through the writer path. */
    static Pool open(Testkit kit, String url, String table, List<Event> events) throws InterruptedException {
        Pool pool = Staunch.builder().url(kit.urlAs(url, "least")).onEvent(events::add).open();
        waitFor("CREATE TABLE as least", 15_000, () -> {
            try (Conn c = pool.get(Duration.ofSeconds(2))) {
                c.execute("CREATE TABLE IF NOT EXISTS " + table + " (id BIGINT PRIMARY KEY, port INT NOT NULL) ENGINE=InnoDB");
                return true;
            } catch (StaunchException e) {
                return false;
            }
        });
        return pool;
    }

    static void checkTold(List<Event> events, String... words) throws InterruptedException {
        waitFor("the missing privilege told", 10_000, () -> !told(events).isEmpty());
        Event e = told(events).get(0);
        System.out.println("EVENT (" + e.kind() + ") " + e.message());
        assertEquals(Event.Kind.OTHER, e.kind(), e.toString());
        for (String w : words) {
            assertTrue(e.message().contains(w), w + " not in " + e.message());
        }
    }

    static void checkNoSecret(List<Event> events, String secret) {
        for (Event e : events) {
            assertFalse(e.message().contains(secret), "a " + e.kind() + " event shows the password");
        }
    }

    /** Every write acknowledged after {@code after} on an accepted port is in the table (read through the writer path). */
    static void checkAcked(Pool pool, Load load, String table, long after, LongPredicate port) {
        Set<Long> have = new HashSet<>();
        try (Conn c = pool.get(Duration.ofSeconds(10)); Rows r = c.query("SELECT id FROM " + table)) {
            while (r.next()) {
                have.add(r.getLong(0));
            }
        }
        List<Long> missing = new ArrayList<>();
        for (Write w : load.writes) {
            if (w.ok && w.at > after && port.test(w.port) && !have.contains(w.id)) {
                missing.add(w.id);
            }
        }
        assertTrue(missing.isEmpty(), missing.size() + " acknowledged writes missing from " + table);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void conf_least_privilege_replication() throws Exception {
        long t0 = Env.now();
        List<Event> events = new CopyOnWriteArrayList<>();
        try (Testkit kit = Testkit.start("topology", "--replicas", "1")) {
            long up = Env.now() - t0;
            long primary = (Long) kit.server(0).get("port"), replica = (Long) kit.server(1).get("port");
            String table = "conf_lp_java";
            try (Pool pool = open(kit, kit.topologyUrl(), table, events); Load load = new Load(pool, table)) {
                // Writes on the primary, reads through getRead, with the monitor unable to
                // run SHOW SLAVE STATUS. The replica's lag is then unknown, so at the
                // defaults (max_replication_lag=30s) the writer takes the reads
                // (read_fallback; docs/topology.md, "The monitor's user").
                waitFor("writes on the primary, reads", 10_000, () ->
                        Load.count(load.writes, t0, p -> p == primary) >= 20 && Load.count(load.reads, t0, p -> true) >= 10);
                checkTold(events, "user 'least'@'", "SHOW SLAVE STATUS", "SLAVE MONITOR",
                        "GRANT SLAVE MONITOR ON *.* TO 'least'@'", "monitor_user=");

                // kill -9 of the primary, the promotion 1.5 s later (as the Rust face).
                long faulted = Env.now();
                kit.cmd("kill 0");
                Thread.sleep(Math.max(0, faulted + 1500 - Env.now()));
                kit.cmd("promote 1");
                long promoted = Env.now();
                waitFor("a write on the promoted replica", 15_000, () -> load.firstAck(promoted, p -> p == replica).isPresent());
                long took = load.firstAck(promoted, p -> p == replica).get().at - promoted;
                waitFor("reads after the promotion", 5_000, () -> Load.count(load.reads, promoted, p -> true) >= 5);
                // Still told once, however many probes ran since.
                Thread.sleep(500);
                load.halt();
                System.out.println("TIMELINE least privilege, replication: servers up in " + up + " ms; promotion "
                        + (promoted - faulted) + " ms after the kill; first write on the new primary " + took
                        + " ms after the promotion; " + load.summary() + "; whole test " + (Env.now() - t0) + " ms");
                long bound = FOLLOW_BOUND_MS + RUST_SLACK_MS + Env.slack();
                assertTrue(took <= bound, "first write " + took + " ms after the promotion (bound " + bound + " ms)");
                assertEquals(0, Load.count(load.writes, faulted, p -> p == primary), "writes acknowledged by the killed primary");
                assertEquals(1, told(events).size(), "the missing privilege told once: " + told(events));
                checkNoSecret(events, kit.password("least"));
                checkAcked(pool, load, table, promoted, p -> p == replica);
            }
        }
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void conf_least_privilege_galera() throws Exception {
        long t0 = Env.now();
        List<Event> events = new CopyOnWriteArrayList<>();
        try (Testkit kit = Testkit.start("galera")) {
            long up = Env.now() - t0;
            String table = "conf_lp_java_galera";
            try (Pool pool = open(kit, kit.url(), table, events)) {
                try (Conn c = pool.get(Duration.ofSeconds(10))) {
                    c.execute("CREATE TABLE IF NOT EXISTS conf_lp_java_stall (id INT AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB");
                }
                try (Load load = new Load(pool, table)) {
                    waitFor("writes and reads flowing", 10_000, () ->
                            Load.count(load.writes, t0, p -> true) >= 20 && Load.count(load.reads, t0, p -> true) >= 10);
                    checkTold(events, "SHOW SLAVE STATUS", "SLAVE MONITOR", "monitor_user");

                    // The current writer, as the writer path sees it.
                    long writer;
                    try (Conn c = pool.get(Duration.ofSeconds(10))) {
                        writer = selectLong(c, "SELECT @@port");
                    }
                    int w = -1, survivor = -1;
                    for (int i = 0; i < 3; i++) {
                        if ((Long) kit.server(i).get("port") == writer) {
                            w = i;
                        } else if (survivor < 0) {
                            survivor = i;
                        }
                    }
                    assertTrue(w >= 0, "the writer's port " + writer + " is none of the cluster's");

                    // kill -9 of the writer. Galera's own stall: a root insert on a survivor
                    // blocks (or fails) until the survivors have evicted it.
                    long faulted = Env.now();
                    kit.cmd("kill " + w);
                    String probe = "sql " + survivor + " INSERT INTO conf_lp_java_stall VALUES ()";
                    waitFor("the survivors commit again", 30_000, () -> {
                        try {
                            kit.cmd(probe);
                            return true;
                        } catch (IllegalStateException e) {
                            return false;
                        }
                    });
                    long stallEnd = Env.now();
                    waitFor("a write on a survivor", 30_000, () -> load.firstAck(faulted, p -> p != writer).isPresent());
                    long first = load.firstAck(faulted, p -> p != writer).get().at;
                    waitFor("reads after the kill", 5_000, () -> Load.count(load.reads, first, p -> true) >= 5);
                    Thread.sleep(500);
                    load.halt();
                    System.out.println("TIMELINE least privilege, Galera: cluster up in " + up + " ms; writer (node " + w
                            + ") killed at 0: Galera's stall ends " + (stallEnd - faulted) + " ms, first write on a survivor "
                            + (first - faulted) + " ms (" + (first - stallEnd) + " ms after the stall); " + load.summary()
                            + "; whole test " + (Env.now() - t0) + " ms");
                    long bound = DETECT_MS + RUST_SLACK_MS + Env.slack();
                    assertTrue(first - stallEnd <= bound, "first write " + (first - stallEnd) + " ms after the stall (bound " + bound + " ms)");
                    assertEquals(1, told(events).size(), "the missing privilege told once: " + told(events));
                    checkNoSecret(events, kit.password("least"));
                    checkAcked(pool, load, table, faulted, p -> p != writer);
                }
            }
        }
    }
}
