package dev.staunch.micrometer;

import dev.staunch.Env;
import dev.staunch.Pool;
import dev.staunch.Testkit;
import dev.staunch.jdbc.StaunchDataSource;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pool's name and Prometheus text through the JVM binding (Pool.name, Pool.metricsText, StaunchDataSource),
 * and the Micrometer binder (StaunchMetrics) on a SimpleMeterRegistry and a PrometheusMeterRegistry, against the
 * shared MariaDB server.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StaunchMetricsTest {
    private static final AtomicInteger SEQ = new AtomicInteger();

    /** A unique pool name per test, so meters of different pools never share tags. */
    private static String unique(String base) {
        return base + "-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
    }

    static StaunchDataSource ds(int max, String query) {
        Testkit s = Env.server();
        StaunchDataSource ds = new StaunchDataSource();
        ds.setJdbcUrl("jdbc:mariadb://127.0.0.1:" + s.server(0).get("port") + "/staunch_test?connectTimeout=2000" + query);
        ds.setUsername("app");
        ds.setPassword("app-secret");
        ds.setMaximumPoolSize(max);
        return ds;
    }

    static void select1(Connection c) throws Exception {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT 1")) {
            assertTrue(r.next());
        }
    }

    @Test
    void pool_name_agrees_between_java_and_the_library() throws Exception {
        // poolName becomes the library's pool_name.
        String name = unique("orders");
        StaunchDataSource named = ds(2, "");
        named.setPoolName(name);
        assertEquals(name, named.getPoolName());
        assertEquals("", named.metricsText(), "not open yet: no text, and asking does not open the pool");
        try (named) {
            Pool p = named.pool();
            assertEquals(name, p.name());
            assertEquals(name, named.getPoolName());
            String text = named.metricsText();
            assertTrue(text.contains("db_client_connection_max{db_client_connection_pool_name=\"" + name + "\""), text);
            assertEquals(p.metricsText().length(), text.length(), "the data source's text is its pool's");
        }
        assertEquals("", named.metricsText(), "closed: no text");

        // Unnamed: the library's staunch-N, which getPoolName() reports once open.
        StaunchDataSource unnamed = ds(2, "");
        try (unnamed) {
            Pool p = unnamed.pool();
            assertTrue(p.name().matches("staunch-[0-9]+"), p.name());
            assertEquals(p.name(), unnamed.getPoolName());
        }

        // The URL's pool_name wins over poolName (and a label value with a quote and a space is escaped).
        String fromUrl = unique("from url \"q\"");
        StaunchDataSource both = ds(2, "&pool_name=" + java.net.URLEncoder.encode(fromUrl, "UTF-8"));
        both.setPoolName("ignored");
        try (both) {
            assertEquals(fromUrl, both.pool().name());
            assertEquals(fromUrl, both.getPoolName());
            String label = "db_client_connection_pool_name=\"" + fromUrl.replace("\"", "\\\"") + "\"";
            assertTrue(both.metricsText().contains(label), both.metricsText());
        }
    }

    @Test
    void text_larger_than_the_first_buffer_is_read_whole() throws Exception {
        StaunchDataSource ds = ds(2, "");
        try (ds) {
            // The first call offers 1 KiB: the text is longer, so it is asked again with room enough.
            String text = ds.pool().metricsText();
            assertTrue(text.length() > 1024, "length " + text.length());
            assertTrue(ds.pool().metricsText().endsWith("staunch_host_health{" + text.substring(text.lastIndexOf("staunch_host_health{") + 20)),
                    "the second call (at once the right room) reads the same whole text of an idle pool");
            // Every family once, the last one written (staunch_host_health) included: nothing was cut.
            assertTrue(text.endsWith("\n"), text);
            assertTrue(text.contains("# TYPE staunch_host_health gauge"), text);
            assertEquals(2.0, StaunchMetrics.sum(text, "db_client_connection_max"));
            assertEquals(0.0, StaunchMetrics.sum(text, "db_client_connection_max_x"));
        }
    }

    @Test
    void binder_reads_the_pool_on_a_simple_registry() throws Exception {
        String name = unique("simple");
        StaunchDataSource ds = ds(2, "");
        ds.setPoolName(name);
        ds.setConnectionTimeout(300);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        StaunchMetrics metrics = new StaunchMetrics(ds.pool(), Tags.of("app", "test"));
        metrics.bindTo(registry);
        StaunchMetrics late = new StaunchMetrics(ds.pool());
        try (ds) {
            assertEquals(0.0, gauge(registry, "jdbc.connections.active", name));
            assertEquals(2.0, gauge(registry, "jdbc.connections.max", name));
            assertEquals(0.0, gauge(registry, "jdbc.connections.min", name));
            assertEquals("test", registry.get("jdbc.connections.max").tag("name", name).gauge().getId().getTag("app"));

            try (Connection c = ds.getConnection()) {
                select1(c);
                assertEquals(1.0, gauge(registry, "jdbc.connections.active", name));
                assertEquals(0.0, gauge(registry, "jdbc.connections.idle", name));
                assertEquals(1.0, gauge(registry, "staunch.connections", name));
                Thread.sleep(50);
            }
            assertEquals(0.0, gauge(registry, "jdbc.connections.active", name));
            assertEquals(1.0, gauge(registry, "jdbc.connections.idle", name));
            assertEquals(1.0, timer(registry, "staunch.connections.creation", name).count());
            assertTrue(timer(registry, "staunch.connections.creation", name).totalTime(TimeUnit.NANOSECONDS) > 0);
            FunctionTimer usage = timer(registry, "staunch.connections.usage", name);
            assertEquals(1.0, usage.count());
            assertTrue(usage.totalTime(TimeUnit.MILLISECONDS) >= 45, "usage " + usage.totalTime(TimeUnit.MILLISECONDS) + " ms");
            assertEquals(1.0, timer(registry, "staunch.connections.acquire", name).count());

            // Exhausted: both connections out, a third borrow waits (pending) and times out (the counter).
            assertEquals(0.0, counter(registry, "staunch.connections.timeout", name));
            try (Connection a = ds.getConnection(); Connection b = ds.getConnection()) {
                select1(a);
                select1(b);
                assertEquals(2.0, gauge(registry, "jdbc.connections.active", name));
                CompletableFuture<Connection> third = CompletableFuture.supplyAsync(() -> {
                    try {
                        return ds.getConnection();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                long deadline = Env.now() + 5000;
                while (gauge(registry, "staunch.connections.pending", name) < 1 && Env.now() < deadline) {
                    Thread.sleep(5);
                }
                assertEquals(1.0, gauge(registry, "staunch.connections.pending", name));
                ExecutionException e = assertThrows(ExecutionException.class, () -> third.get(5, TimeUnit.SECONDS));
                assertInstanceOf(SQLTransientConnectionException.class, e.getCause().getCause());
                assertEquals(0.0, gauge(registry, "staunch.connections.pending", name));
            }
            assertEquals(1.0, counter(registry, "staunch.connections.timeout", name));
            assertEquals(3.0, timer(registry, "staunch.connections.acquire", name).count(), "three borrows handed a connection");
        }
        // Closed: the gauges read NaN; close() takes the meters out of the registry.
        assertTrue(Double.isNaN(gauge(registry, "jdbc.connections.active", name)));
        metrics.close();
        assertNull(registry.find("jdbc.connections.active").tag("name", name).gauge());
        assertTrue(registry.getMeters().isEmpty(), registry.getMeters().toString());
        // Binding a pool closed since registers nothing (and does not throw).
        late.bindTo(registry);
        assertTrue(registry.getMeters().isEmpty(), registry.getMeters().toString());
    }

    @Test
    void two_pools_side_by_side_keep_their_own_meters() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String a = unique("left");
        String b = unique("right");
        StaunchDataSource left = ds(3, "");
        left.setPoolName(a);
        StaunchDataSource right = ds(4, "");
        right.setPoolName(b);
        right.setMinimumIdle(2);
        try (left; right) {
            new StaunchMetrics(left.pool()).bindTo(registry);
            new StaunchMetrics(right.pool()).bindTo(registry);
            assertEquals(3.0, gauge(registry, "jdbc.connections.max", a));
            assertEquals(4.0, gauge(registry, "jdbc.connections.max", b));
            assertEquals(0.0, gauge(registry, "jdbc.connections.min", a));
            assertEquals(2.0, gauge(registry, "jdbc.connections.min", b));
            // right keeps two idle: its gauges say so, left's do not move.
            long deadline = Env.now() + 10_000;
            while (gauge(registry, "jdbc.connections.idle", b) < 2 && Env.now() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(2.0, gauge(registry, "jdbc.connections.idle", b));
            assertEquals(0.0, gauge(registry, "jdbc.connections.idle", a));
        }
    }

    @Test
    void prometheus_registry_scrapes_the_jdbc_names() throws Exception {
        String name = unique("prom");
        StaunchDataSource ds = ds(5, "");
        ds.setPoolName(name);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (ds; StaunchMetrics metrics = new StaunchMetrics(ds.pool())) {
            metrics.bindTo(registry);
            String label = "{name=\"" + name + "\"}";
            try (Connection c = ds.getConnection()) {
                select1(c);
                String scrape = registry.scrape();
                assertTrue(scrape.contains("jdbc_connections_active" + label + " 1"), scrape);
                assertTrue(scrape.contains("jdbc_connections_max" + label + " 5"), scrape);
                assertTrue(scrape.contains("staunch_connections_timeout_total" + label + " 0"), scrape);
            }
            String scrape = registry.scrape();
            assertTrue(scrape.contains("jdbc_connections_active" + label + " 0"), scrape);
            assertTrue(scrape.contains("staunch_connections_usage_seconds_count" + label + " 1"), scrape);
        }
        assertFalse(registry.scrape().contains(name), "the binder's close removed the meters");
    }

    /**
     * Micrometer is optional: no class of the jar outside dev/staunch/micrometer names it, so a user without it
     * never loads a class that needs it (the binder is loaded only by whoever uses it).
     */
    @Test
    void only_the_binder_names_micrometer() throws Exception {
        java.nio.file.Path jar = java.nio.file.Path.of(Pool.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(jar.toString().endsWith(".jar"), "the tests run against the packaged jar: " + jar);
        int classes = 0;
        try (java.util.jar.JarFile j = new java.util.jar.JarFile(jar.toFile())) {
            for (java.util.jar.JarEntry e : java.util.Collections.list(j.entries())) {
                if (!e.getName().endsWith(".class")) {
                    continue;
                }
                classes++;
                byte[] b = j.getInputStream(e).readAllBytes();
                String text = new String(b, java.nio.charset.StandardCharsets.ISO_8859_1);
                // The binder, and the Spring Boot auto-configuration (Java 17+: only in META-INF/versions/17; the
                // Java 11 placeholder of the same name names neither Micrometer nor Spring).
                boolean spring = e.getName().startsWith("META-INF/versions/17/dev/staunch/spring/");
                if (!spring) {
                    assertEquals(e.getName().startsWith("dev/staunch/micrometer/"), text.contains("io/micrometer/"), e.getName());
                }
                assertEquals(spring, text.contains("org/springframework/"), e.getName());
            }
        }
        assertTrue(classes > 20, classes + " classes");
    }

    private static double gauge(MeterRegistry r, String meter, String name) {
        Gauge g = r.find(meter).tag("name", name).gauge();
        assertNotNull(g, meter + " name=" + name + " in " + r.getMeters());
        return g.value();
    }

    private static double counter(MeterRegistry r, String meter, String name) {
        FunctionCounter c = r.find(meter).tag("name", name).functionCounter();
        assertNotNull(c, meter + " name=" + name);
        return c.count();
    }

    private static FunctionTimer timer(MeterRegistry r, String meter, String name) {
        FunctionTimer t = r.find(meter).tag("name", name).functionTimer();
        assertNotNull(t, meter + " name=" + name);
        return t;
    }
}
