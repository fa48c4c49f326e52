package dev.staunch.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.staunch.Env;
import dev.staunch.Testkit;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Incident A side by side: HikariCP + MariaDB Connector/J at their defaults
 * and StaunchDataSource at its defaults, against the same black hole (a
 * proxy that accepts TCP and never greets), then a healthy server behind the
 * same address. Prints who answered what, and who recovered after how long.
 * Asserts staunch's bounds; the HikariCP side is only reported (it runs in
 * its own daemon thread, watched with a deadline, so this test never hangs).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class IncidentTest {
    /** staunch's defaults: connectionTimeout 10 s, connect_timeout 3 s. */
    static final long STAUNCH_GET_BOUND_MS = 10_000;
    static final long STAUNCH_CONNECT_TIMEOUT_MS = 3_000;
    static final long HIKARI_DEADLINE_AFTER_HEALTHY_MS = 35_000;

    /** One application thread: getConnection + SELECT 1 in a loop, noting when the first success after {@code healthyAt} comes. */
    static final class App implements Runnable {
        final String name;
        final DataSource ds;
        final AtomicReference<Throwable> firstError = new AtomicReference<>();
        final AtomicLong firstErrorAt = new AtomicLong();
        final AtomicLong healthyAt = new AtomicLong();
        final AtomicLong recoveredAt = new AtomicLong();
        final AtomicLong callsStarted = new AtomicLong();
        final AtomicLong start = new AtomicLong();
        volatile boolean stop;
        final Thread thread;

        App(String name, DataSource ds) {
            this.name = name;
            this.ds = ds;
            this.thread = new Thread(this, "incident-" + name);
            thread.setDaemon(true);
        }

        @Override
        public void run() {
            start.set(Env.now());
            while (!stop) {
                callsStarted.incrementAndGet();
                try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT 1")) {
                    r.next();
                    if (r.getInt(1) == 1 && healthyAt.get() != 0 && recoveredAt.get() == 0) {
                        recoveredAt.set(Env.now());
                        return;
                    }
                } catch (Throwable t) {
                    if (firstError.compareAndSet(null, t)) {
                        firstErrorAt.set(Env.now());
                    }
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }

        String blackHoleReport(long phaseMs) {
            Throwable e = firstError.get();
            if (e == null) {
                return "no answer at all for " + phaseMs / 1000.0 + " s (getConnection still blocked, thread state "
                        + thread.getState() + ")";
            }
            return e.getClass().getSimpleName() + " after " + (firstErrorAt.get() - start.get()) / 1000.0 + " s: "
                    + e.getMessage().lines().findFirst().orElse("");
        }

        String recoveryReport(long deadlineMs) {
            long r = recoveredAt.get();
            String rec = r == 0 ? "NOT recovered within " + deadlineMs / 1000.0 + " s" : "recovered after " + (r - healthyAt.get()) / 1000.0 + " s";
            Throwable e = firstError.get();
            return rec + (e == null ? "; no error ever reported" : "; its first error came " + (firstErrorAt.get() - start.get()) / 1000.0
                    + " s after the start: " + e.getClass().getSimpleName() + ": " + e.getMessage().lines().findFirst().orElse(""));
        }
    }

    @Test
    void incident_a_side_by_side_hikaricp_connectorj_vs_staunch() throws Exception {
        Testkit server = Env.server();
        String target = server.server(0).get("host") + ":" + server.server(0).get("port");
        try (Testkit proxy = Testkit.start("proxy", "--target", target)) {
            proxy.cmd("mode blackhole");
            String jdbcUrl = "jdbc:mariadb://127.0.0.1:" + proxy.proxy().get("port") + "/staunch_test";

            HikariDataSource hikari = new HikariDataSource(); // lazy: the pool starts in the app thread
            hikari.setJdbcUrl(jdbcUrl);
            hikari.setUsername("app");
            hikari.setPassword("app-secret");
            hikari.setPoolName("hikari-incident");
            StaunchDataSource staunch = new StaunchDataSource();
            staunch.setJdbcUrl(jdbcUrl);
            staunch.setUsername("app");
            staunch.setPassword("app-secret");

            App h = new App("HikariCP " + version("com.zaxxer", "HikariCP") + " + MariaDB Connector/J "
                    + version("org.mariadb.jdbc", "mariadb-java-client") + " (defaults)", hikari);
            App s = new App("StaunchDataSource (defaults)", staunch);
            try {
                long t0 = Env.now();
                h.thread.start();
                s.thread.start();
                // The black hole: until staunch has answered (its bound) and a little more.
                long deadline = t0 + STAUNCH_GET_BOUND_MS + Env.slack() + 2000;
                while (s.firstError.get() == null && Env.now() < deadline) {
                    Thread.sleep(20);
                }
                Thread.sleep(500);
                long phase = Env.now() - t0;
                String hBlack = h.blackHoleReport(phase);
                String sBlack = s.blackHoleReport(phase);

                // Healthy behind the same address.
                proxy.cmd("mode pass");
                long healthy = Env.now();
                h.healthyAt.set(healthy);
                s.healthyAt.set(healthy);
                long end = healthy + HIKARI_DEADLINE_AFTER_HEALTHY_MS;
                while ((h.recoveredAt.get() == 0 || s.recoveredAt.get() == 0) && Env.now() < end) {
                    Thread.sleep(20);
                }
                System.out.println();
                System.out.println("incident A, side by side: a black hole (accepts TCP, never greets) at " + jdbcUrl
                        + " for " + phase / 1000.0 + " s, then a healthy server behind the same address");
                System.out.println("  " + h.name);
                System.out.println("      during the black hole: " + hBlack);
                System.out.println("      after healthy:         " + h.recoveryReport(HIKARI_DEADLINE_AFTER_HEALTHY_MS)
                        + " (app thread " + h.thread.getState() + ", " + h.callsStarted.get() + " getConnection calls started)");
                Thread.getAllStackTraces().forEach((t, st) -> {
                    if ((t.getName().startsWith("hikari-incident") || t.getName().startsWith("incident-HikariCP")) && st.length > 0
                            && java.util.Arrays.stream(st).anyMatch(f -> f.getClassName().contains("mariadb") || f.getClassName().contains("zaxxer.hikari.pool.HikariPool"))) {
                        StringBuilder b = new StringBuilder();
                        for (int i = 0; i < Math.min(st.length, 40); i++) {
                            String f = st[i].toString();
                            if (f.contains("mariadb") || f.contains("Socket") || f.contains("zaxxer")) {
                                b.append(b.length() == 0 ? "" : " <- ").append(st[i].getClassName().replaceAll(".*\\.", ""))
                                        .append('.').append(st[i].getMethodName());
                                if (b.length() > 220) {
                                    break;
                                }
                            }
                        }
                        System.out.println("      thread \"" + t.getName() + "\" " + t.getState() + ": " + b);
                    }
                });
                System.out.println("  " + s.name);
                System.out.println("      during the black hole: " + sBlack);
                System.out.println("      after healthy:         " + s.recoveryReport(HIKARI_DEADLINE_AFTER_HEALTHY_MS)
                        + " (" + s.callsStarted.get() + " getConnection calls started)");
                System.out.println();

                // staunch: a clear error within its bound, naming the cause...
                Throwable e = s.firstError.get();
                assertInstanceOf(java.sql.SQLNonTransientConnectionException.class, e, String.valueOf(e));
                assertTrue(e.getMessage().contains("greeting"), e.getMessage());
                long took = s.firstErrorAt.get() - s.start.get();
                assertTrue(took <= STAUNCH_GET_BOUND_MS + Env.slack(), "staunch answered after " + took + " ms");
                // ...and recovery within about one connect timeout once the server is healthy.
                assertTrue(s.recoveredAt.get() != 0, "staunch did not recover");
                long rec = s.recoveredAt.get() - healthy;
                assertTrue(rec <= STAUNCH_CONNECT_TIMEOUT_MS + 1000 + Env.slack(), "staunch recovered after " + rec + " ms");
            } finally {
                h.stop = true;
                s.stop = true;
                staunch.close();
                Thread closer = new Thread(hikari::close, "hikari-close"); // may block on a stuck connect
                closer.setDaemon(true);
                closer.start();
                closer.join(2000);
            }
        }
    }

    static String version(String group, String artifact) {
        try (var in = IncidentTest.class.getResourceAsStream("/META-INF/maven/" + group + "/" + artifact + "/pom.properties")) {
            java.util.Properties p = new java.util.Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "?");
        } catch (java.io.IOException e) {
            return "?";
        }
    }
}
