package dev.staunch.micrometer;

import dev.staunch.Pool;
import dev.staunch.StaunchException;
import dev.staunch.Stats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * A Micrometer {@link MeterBinder} for a staunch pool, with the meters a Spring Boot
 * {@code /actuator/metrics} user knows from HikariCP and Boot's DataSource metrics:
 *
 * <ul>
 *   <li>{@code jdbc.connections.active}, {@code jdbc.connections.idle}, {@code jdbc.connections.max},
 *       {@code jdbc.connections.min} (gauges, Spring Boot's {@code DataSourcePoolMetrics} names;
 *       min is the pool's min_idle);
 *   <li>{@code staunch.connections} (open connections), {@code staunch.connections.pending} (threads waiting
 *       for a connection): gauges, as HikariCP's {@code hikaricp.connections} and {@code .pending};
 *   <li>{@code staunch.connections.timeout}: a function counter of borrows that timed out;
 *   <li>{@code staunch.connections.acquire}, {@code staunch.connections.creation},
 *       {@code staunch.connections.usage}: function timers (count and total time) of the time a borrow waited,
 *       a connect took, and a connection stayed borrowed, from the histograms of {@link Pool#metricsText()}.
 * </ul>
 *
 * Every meter is tagged {@code name=}{@link Pool#name()} (plus the tags given here). Each is read from the
 * pool when the registry reads it ({@code staunch_pool_stats}, or the pool's Prometheus text for the timers
 * and min): nothing runs between scrapes and nothing is kept. Binding reads the text once, which turns the
 * pool's timings on (borrows are timed from then on, for {@code usage}).
 *
 * <p>The binder and the meters hold the pool weakly: they do not keep an unreachable pool alive. A closed pool's
 * gauges read NaN; {@link #close()} removes the meters from the registries this binder bound them to (call it
 * when the pool closes, as HikariCP's tracker does).
 *
 * <pre>{@code
 * new StaunchMetrics(dataSource.pool()).bindTo(registry);
 * }</pre>
 *
 * <p>Spring Boot (3 and 4, with the actuator): staunch's auto-configuration
 * ({@code dev.staunch.spring.StaunchMetricsAutoConfiguration}) binds one for every {@code StaunchDataSource} of the
 * context when its pool opens; declare none yourself (a {@code StaunchMetrics} bean of yours makes it back off).
 *
 * <p>Micrometer is an optional dependency of staunch: only this package and the Spring Boot auto-configuration
 * ({@code dev.staunch.spring}, Java 17+) use it, and nothing else in staunch loads them.
 */
public final class StaunchMetrics implements MeterBinder, AutoCloseable {
    private final WeakReference<Pool> pool;
    private final Tags tags;
    /** Whether to register the four jdbc.connections.* gauges (see {@link #withoutJdbcConnectionGauges()}). */
    private final boolean jdbcGauges;
    private final List<Registered> registered = new ArrayList<>();

    private static final class Registered {
        final MeterRegistry registry;
        final Meter meter;

        Registered(MeterRegistry registry, Meter meter) {
            this.registry = registry;
            this.meter = meter;
        }
    }

    /** Meters for {@code pool}, tagged {@code name=}{@link Pool#name()}. */
    public StaunchMetrics(Pool pool) {
        this(pool, Tags.empty());
    }

    /**
     * Meters for {@code pool}, tagged {@code name=}{@link Pool#name()} and {@code tags}. Throws
     * {@link StaunchException} ({@code CLOSED}) for a pool already closed; one closed before {@link #bindTo} binds
     * nothing.
     */
    public StaunchMetrics(Pool pool, Iterable<Tag> tags) {
        if (pool == null) {
            throw new IllegalArgumentException("pool must not be null");
        }
        this.pool = new WeakReference<>(pool);
        this.tags = Tags.of("name", pool.name()).and(tags);
        this.jdbcGauges = true;
    }

    private StaunchMetrics(StaunchMetrics of, boolean jdbcGauges) {
        this.pool = of.pool;
        this.tags = of.tags;
        this.jdbcGauges = jdbcGauges;
    }

    /**
     * A binder for the same pool and tags without the four {@code jdbc.connections.*} gauges: for where something
     * else registers those, as Spring Boot's {@code DataSourcePoolMetrics} does (tagged {@code name=} the
     * DataSource's bean name) from the {@code DataSourcePoolMetadataProvider} that staunch's auto-configuration
     * provides. The {@code staunch.connections.*} meters are the same.
     */
    public StaunchMetrics withoutJdbcConnectionGauges() {
        return new StaunchMetrics(this, false);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Pool p = pool.get();
        if (p == null || p.isClosed()) {
            return; // nothing to read: a closed pool's meters would only read NaN
        }
        // Read once: min_idle is fixed for the pool's life, and the read turns the timings on.
        double min;
        try {
            min = sum(p.metricsText(), "db_client_connection_idle_min");
        } catch (StaunchException e) {
            return; // closed meanwhile
        }

        if (jdbcGauges) {
            gauge(registry, "jdbc.connections.active", p, "Current number of active connections that have been allocated from the data source.", Stats::active);
            gauge(registry, "jdbc.connections.idle", p, "Number of established but idle connections.", Stats::idle);
            gauge(registry, "jdbc.connections.max", p, "Maximum number of active connections that can be allocated at the same time.", Stats::maxSize);
            add(registry, Gauge.builder("jdbc.connections.min", p, q -> q.isClosed() ? Double.NaN : min)
                    .description("Minimum number of idle connections in the pool.")
                    .tags(tags)
                    .register(registry));
        }
        gauge(registry, "staunch.connections", p, "Total connections (idle, borrowed, or held by a pool thread)", Stats::total);
        gauge(registry, "staunch.connections.pending", p, "Threads waiting for a connection", Stats::waiting);
        add(registry, FunctionCounter.builder("staunch.connections.timeout", p, q -> stat(q, Stats::acquireTimeouts))
                .description("Borrows that timed out waiting for a connection")
                .tags(tags)
                .register(registry));

        timer(registry, "staunch.connections.acquire", p, "Time a borrow waited for a connection",
                "db_client_connection_wait_time_seconds");
        timer(registry, "staunch.connections.creation", p, "Time a successful connect took",
                "db_client_connection_create_time_seconds");
        timer(registry, "staunch.connections.usage", p, "Time a connection stayed borrowed",
                "db_client_connection_use_time_seconds");
    }

    /** Removes the meters this binder registered from the registries it bound them to. Idempotent. */
    @Override
    public void close() {
        List<Registered> all;
        synchronized (registered) {
            all = new ArrayList<>(registered);
            registered.clear();
        }
        for (Registered r : all) {
            r.registry.remove(r.meter);
        }
    }

    private void add(MeterRegistry registry, Meter m) {
        synchronized (registered) {
            registered.add(new Registered(registry, m));
        }
    }

    private void gauge(MeterRegistry registry, String name, Pool p, String help, ToLongFunction<Stats> f) {
        add(registry, Gauge.builder(name, p, q -> stat(q, f))
                .description(help)
                .tags(tags)
                .register(registry));
    }

    private void timer(MeterRegistry registry, String name, Pool p, String help, String histogram) {
        ToLongFunction<Pool> count = q -> (long) text(q, histogram + "_count");
        ToDoubleFunction<Pool> seconds = q -> text(q, histogram + "_sum");
        add(registry, FunctionTimer.builder(name, p, count, seconds, TimeUnit.SECONDS)
                .description(help)
                .tags(tags)
                .register(registry));
    }

    /** A field of the pool's stats; NaN once it is closed. */
    private static double stat(Pool p, ToLongFunction<Stats> f) {
        if (p.isClosed()) {
            return Double.NaN;
        }
        try {
            return f.applyAsLong(p.stats());
        } catch (StaunchException e) {
            return Double.NaN; // closed meanwhile
        }
    }

    /** The sum over the hosts of one series of the pool's text; 0 once it is closed. */
    private static double text(Pool p, String series) {
        if (p.isClosed()) {
            return 0;
        }
        try {
            return sum(p.metricsText(), series);
        } catch (StaunchException e) {
            return 0;
        }
    }

    /**
     * The sum of the samples of {@code series} in Prometheus text (one per host of a topology pool). A sample is
     * {@code name{labels} value}: the value is the line's last field (the library writes no timestamps), and a
     * label value may hold spaces.
     */
    static double sum(String text, String series) {
        double total = 0;
        int at = 0;
        int n = text.length();
        while (at < n) {
            int end = text.indexOf('\n', at);
            if (end < 0) {
                end = n;
            }
            if (text.startsWith(series, at) && at + series.length() < end) {
                char c = text.charAt(at + series.length());
                if (c == '{' || c == ' ') {
                    int sp = text.lastIndexOf(' ', end - 1);
                    total += Double.parseDouble(text.substring(sp + 1, end));
                }
            }
            at = end + 1;
        }
        return total;
    }

    @Override
    public String toString() {
        return "StaunchMetrics" + tags + (jdbcGauges ? "" : " (without jdbc.connections.*)");
    }
}
