package dev.staunch.spring;

import dev.staunch.Pool;
import dev.staunch.Staunch;
import dev.staunch.jdbc.StaunchDataSource;
import dev.staunch.micrometer.StaunchMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.metrics.DataSourcePoolMetricsAutoConfiguration;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadataProvider;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * StaunchMetricsAutoConfiguration in small application contexts (no Boot application, no server: a pool opens
 * without connecting): Boot's metrics and DataSource pool metrics auto-configurations plus staunch's, a simple
 * registry, and StaunchDataSource beans, one of them behind a wrapper that only unwrap()s to it.
 */
class StaunchMetricsAutoConfigurationTest {
    /** Nothing listens there: opening a pool never connects (no min_idle), so no server is needed. */
    static final String URL = "jdbc:mariadb://127.0.0.1:1/none";

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class, DataSourcePoolMetricsAutoConfiguration.class,
                    StaunchMetricsAutoConfiguration.class));

    static StaunchDataSource dataSource(String poolName) {
        StaunchDataSource ds = new StaunchDataSource(URL);
        ds.setPoolName(poolName);
        ds.setMaximumPoolSize(3);
        return ds;
    }

    /** A DataSource that is only a JDBC wrapper of {@code ds} (isWrapperFor/unwrap), as a tracing proxy is. */
    static DataSource wrapped(StaunchDataSource ds) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "isWrapperFor": return ((Class<?>) args[0]).isInstance(ds);
                        case "unwrap": return ds.unwrap((Class<?>) args[0]);
                        case "hashCode": return System.identityHashCode(proxy);
                        case "equals": return proxy == args[0];
                        case "toString": return "wrapper of " + ds;
                        default: return method.invoke(ds, args);
                    }
                });
    }

    static List<String> names(MeterRegistry r, String meter) {
        return r.find(meter).meters().stream().map(m -> m.getId().getTag("name")).sorted().collect(Collectors.toList());
    }

    @Test
    void binds_every_staunch_data_source_when_its_pool_opens_and_unbinds_at_close() {
        StaunchDataSource orders = dataSource("orders");
        StaunchDataSource audit = new StaunchDataSource(URL + "?max_size=2");
        audit.setPoolName("audit");
        MeterRegistry[] registry = new MeterRegistry[1];
        runner.withBean("ordersDataSource", DataSource.class, () -> orders)
                .withBean("auditDataSource", DataSource.class, () -> wrapped(audit))
                .run(context -> {
                    assertNull(context.getStartupFailure());
                    MeterRegistry r = context.getBean(MeterRegistry.class);
                    registry[0] = r;
                    assertEquals(1, context.getBeansOfType(DataSourcePoolMetadataProvider.class).size());
                    // Boot's jdbc.connections.* from staunch's metadata, tagged with the bean names (as for
                    // HikariCP), without opening either pool.
                    assertEquals(List.of("audit", "orders"), names(r, "jdbc.connections.max"));
                    assertEquals(3.0, r.get("jdbc.connections.max").tag("name", "orders").gauge().value());
                    assertEquals(0.0, r.get("jdbc.connections.active").tag("name", "audit").gauge().value());
                    assertEquals(10.0, r.get("jdbc.connections.max").tag("name", "audit").gauge().value());
                    assertTrue(orders.metricsText().isEmpty() && audit.metricsText().isEmpty(), "the pools stay unopened");
                    assertEquals(List.of(), names(r, "staunch.connections"));

                    Pool o = orders.open();
                    assertEquals(List.of("orders"), names(r, "staunch.connections"));
                    assertEquals(0.0, r.get("staunch.connections.pending").tag("name", "orders").gauge().value());
                    assertNotNull(r.find("staunch.connections.timeout").tag("name", "orders").functionCounter());
                    for (String timer : List.of("acquire", "creation", "usage")) {
                        assertNotNull(r.find("staunch.connections." + timer).tag("name", "orders").functionTimer(), timer);
                    }
                    audit.open();
                    assertEquals(List.of("audit", "orders"), names(r, "staunch.connections.pending"));
                    // Once open, max is the pool's own (the URL's max_size=2 over the data source's 3).
                    assertEquals(2.0, r.get("jdbc.connections.max").tag("name", "audit").gauge().value());
                    // One jdbc.connections.* series per DataSource: Boot's, not StaunchMetrics' as well.
                    assertEquals(List.of("audit", "orders"), names(r, "jdbc.connections.max"));
                    assertEquals(3.0, r.get("jdbc.connections.max").tag("name", "orders").gauge().value());
                    assertEquals("orders", o.name());
                });
        // The context's close removed the binder's meters (Boot's own registry closes with it).
        assertEquals(List.of(), names(registry[0], "staunch.connections"));
        orders.close();
        audit.close();
    }

    @Test
    void backs_off_when_the_application_declares_its_own_staunch_metrics() throws Exception {
        StaunchDataSource ds = dataSource("mine");
        try (Pool pool = Staunch.open("mysql://app@127.0.0.1:1/none?pool_name=mine")) {
            runner.withBean(DataSource.class, () -> ds)
                    .withBean(StaunchMetrics.class, () -> new StaunchMetrics(pool))
                    .run(context -> {
                        assertNull(context.getStartupFailure());
                        assertEquals(0, context.getBeanNamesForType(StaunchMetricsAutoConfiguration.class).length);
                        assertEquals(0, context.getBeansOfType(DataSourcePoolMetadataProvider.class).size());
                        MeterRegistry r = context.getBean(MeterRegistry.class);
                        // Only the application's: (HikariCP's binder is there too, as HikariCP is on the class path.)
                        List<MeterBinder> binders = context.getBeansOfType(MeterBinder.class).values().stream()
                                .filter(b -> b.getClass().getName().startsWith("dev.staunch.")).collect(Collectors.toList());
                        assertEquals(1, binders.size(), binders.toString());
                        assertTrue(binders.get(0) instanceof StaunchMetrics, binders.toString());
                        // The application's binder, with the pool's jdbc.connections.*, and no second series.
                        assertEquals(List.of("mine"), names(r, "staunch.connections"));
                        assertEquals(List.of("mine"), names(r, "jdbc.connections.max"));
                    });
        } finally {
            ds.close();
        }
    }

    @Test
    void nothing_without_micrometer_or_without_a_registry() {
        StaunchDataSource ds = dataSource("none");
        try {
            runner.withClassLoader(new FilteredClassLoader("io.micrometer."))
                    .withBean(DataSource.class, () -> ds)
                    .run(context -> {
                        assertNull(context.getStartupFailure());
                        assertEquals(0, context.getBeanNamesForType(StaunchMetricsAutoConfiguration.class).length);
                        assertEquals(0, context.getBeanNamesForType(MeterBinder.class).length);
                    });
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(StaunchMetricsAutoConfiguration.class))
                    .withBean(DataSource.class, () -> ds)
                    .run(context -> {
                        assertNull(context.getStartupFailure());
                        assertEquals(0, context.getBeanNamesForType(StaunchMetricsAutoConfiguration.class).length);
                    });
            assertTrue(ds.metricsText().isEmpty(), "never opened");
        } finally {
            ds.close();
        }
    }
}
