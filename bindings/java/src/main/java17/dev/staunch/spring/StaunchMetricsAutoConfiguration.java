package dev.staunch.spring;

import dev.staunch.Pool;
import dev.staunch.jdbc.StaunchDataSource;
import dev.staunch.jdbc.StaunchPoolMXBean;
import dev.staunch.micrometer.StaunchMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.jdbc.DataSourceUnwrapper;
import org.springframework.boot.jdbc.metadata.AbstractDataSourcePoolMetadata;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadataProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot auto-configuration of a {@link StaunchDataSource}'s Micrometer meters, so that an application with
 * the actuator shows staunch's pool in {@code /actuator/metrics} and {@code /actuator/prometheus} as it shows
 * HikariCP's, with nothing declared:
 *
 * <ul>
 *   <li>a {@link DataSourcePoolMetadataProvider} for {@code StaunchDataSource} (found through
 *       {@link DataSourceUnwrapper}: wrapped or proxied ones too), from which Boot's own
 *       {@code DataSourcePoolMetricsAutoConfiguration} registers {@code jdbc.connections.active}, {@code .idle},
 *       {@code .max} and {@code .min}, tagged {@code name=} the DataSource's bean name, as it does for HikariCP
 *       (the health endpoint's DataSource contributor reads it too: no validation query, staunch pings);
 *   <li>for every {@code StaunchDataSource} of the context, a {@link StaunchMetrics} bound to the registry when
 *       its pool opens ({@link StaunchDataSource#whenOpen}: the meters never open a lazy pool), tagged
 *       {@code name=} the pool's name: {@code staunch.connections}, {@code .pending}, {@code .timeout},
 *       {@code .acquire}, {@code .creation}, {@code .usage}, as HikariCP's own {@code hikaricp.connections.*}
 *       (which HikariCP tags {@code pool=}). Without Boot's JDBC metadata on the class path it registers the
 *       {@code jdbc.connections.*} gauges itself (tagged with the pool's name). Their meters are removed when
 *       the context closes (with the DataSource).
 * </ul>
 *
 * Active when Micrometer is on the class path and the context has a {@link MeterRegistry} and a DataSource; backs
 * off entirely when the application declares a {@link StaunchMetrics} bean of its own (declared with that type).
 * Turn it off with {@code spring.autoconfigure.exclude=dev.staunch.spring.StaunchMetricsAutoConfiguration}, or
 * drop the meters with Boot's {@code management.metrics.enable.staunch=false}.
 *
 * <p>Built for Java 17 (Boot 3 and 4's minimum) into the jar's {@code META-INF/versions/17}, against Spring Boot
 * 4's API; the names it uses are Boot 3's too ({@code afterName} lists both generations' classes).
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"
        },
        // Boot's binder of jdbc.connections.* finds the metadata provider only if it is defined first.
        beforeName = {
            "org.springframework.boot.jdbc.autoconfigure.metrics.DataSourcePoolMetricsAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.jdbc.DataSourcePoolMetricsAutoConfiguration"
        })
@ConditionalOnClass({MeterRegistry.class, DataSource.class})
@ConditionalOnBean({MeterRegistry.class, DataSource.class})
@ConditionalOnMissingBean(StaunchMetrics.class)
public class StaunchMetricsAutoConfiguration {

    /** Spring's constructor. */
    public StaunchMetricsAutoConfiguration() {}

    /** With Boot's DataSource pool metadata: Boot registers jdbc.connections.*, staunch the rest. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = METADATA_PROVIDER)
    static class WithPoolMetadata {
        @Bean
        DataSourcePoolMetadataProvider staunchDataSourcePoolMetadataProvider() {
            return dataSource -> {
                StaunchDataSource ds = staunch(dataSource);
                return ds == null ? null : new StaunchDataSourcePoolMetadata(ds);
            };
        }

        @Bean
        StaunchDataSourceMeterBinder staunchDataSourceMeterBinder(ObjectProvider<DataSource> dataSources) {
            return new StaunchDataSourceMeterBinder(dataSources, false);
        }
    }

    /** Without it (no spring-boot-jdbc): StaunchMetrics registers jdbc.connections.* too. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass(METADATA_PROVIDER)
    static class WithoutPoolMetadata {
        @Bean
        StaunchDataSourceMeterBinder staunchDataSourceMeterBinder(ObjectProvider<DataSource> dataSources) {
            return new StaunchDataSourceMeterBinder(dataSources, true);
        }
    }

    static final String METADATA_PROVIDER = "org.springframework.boot.jdbc.metadata.DataSourcePoolMetadataProvider";

    /** The StaunchDataSource behind {@code dataSource} (itself, a wrapper's, a Spring proxy's), or null. */
    static StaunchDataSource staunch(DataSource dataSource) {
        // StaunchPoolMXBean, not Pool: StaunchDataSource.unwrap(Pool.class) would open the pool.
        return DataSourceUnwrapper.unwrap(dataSource, StaunchPoolMXBean.class, StaunchDataSource.class);
    }

    /**
     * Binds a {@link StaunchMetrics} for each StaunchDataSource of the context to each registry it is bound to,
     * when the pool opens; {@link #close()} (at the context's close) removes the meters.
     */
    static final class StaunchDataSourceMeterBinder implements MeterBinder, AutoCloseable {
        private final ObjectProvider<DataSource> dataSources;
        private final boolean jdbcGauges;
        private final List<StaunchMetrics> bound = new ArrayList<>();
        private boolean closed;

        StaunchDataSourceMeterBinder(ObjectProvider<DataSource> dataSources, boolean jdbcGauges) {
            this.dataSources = dataSources;
            this.jdbcGauges = jdbcGauges;
        }

        @Override
        public void bindTo(MeterRegistry registry) {
            Set<StaunchDataSource> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            dataSources.orderedStream().forEach(dataSource -> {
                StaunchDataSource ds = staunch(dataSource);
                if (ds != null && seen.add(ds)) {
                    ds.whenOpen(pool -> bind(pool, registry));
                }
            });
        }

        private void bind(Pool pool, MeterRegistry registry) {
            synchronized (bound) {
                if (closed) {
                    return;
                }
                StaunchMetrics metrics = new StaunchMetrics(pool);
                if (!jdbcGauges) {
                    metrics = metrics.withoutJdbcConnectionGauges();
                }
                metrics.bindTo(registry);
                bound.add(metrics);
            }
        }

        /** Removes the meters bound so far; none are bound after. */
        @Override
        public void close() {
            synchronized (bound) {
                closed = true;
                bound.forEach(StaunchMetrics::close);
                bound.clear();
            }
        }
    }

    /**
     * Boot's view of a StaunchDataSource's pool: what {@code jdbc.connections.*} and the health contributor read.
     * Never opens the pool: before it opens, nothing is active or idle.
     */
    static final class StaunchDataSourcePoolMetadata extends AbstractDataSourcePoolMetadata<StaunchDataSource> {
        /** The pool once it opened: its max_size is the one in force (a URL's, or changed since). */
        private volatile Pool pool;

        StaunchDataSourcePoolMetadata(StaunchDataSource dataSource) {
            super(dataSource);
            dataSource.whenOpen(p -> pool = p);
        }

        @Override
        public Integer getActive() {
            return live(StaunchDataSource::getActiveConnections);
        }

        @Override
        public Integer getIdle() {
            return live(StaunchDataSource::getIdleConnections);
        }

        /** A figure of the pool (0 before it opens), or null once it is closed, as HikariCP's metadata. */
        private Integer live(java.util.function.ToIntFunction<StaunchDataSource> f) {
            StaunchDataSource ds = getDataSource();
            if (ds.isClosed()) {
                return null;
            }
            try {
                return f.applyAsInt(ds);
            } catch (RuntimeException e) {
                return null; // closed meanwhile
            }
        }

        @Override
        public Integer getMax() {
            Pool p = pool;
            if (p != null && !p.isClosed()) {
                try {
                    return (int) p.stats().maxSize();
                } catch (RuntimeException e) {
                    // closed meanwhile: the configured size
                }
            }
            return getDataSource().getMaximumPoolSize();
        }

        /** minimumIdle as set on the data source (a URL's min_idle is not seen: the pool's stats lack it). */
        @Override
        public Integer getMin() {
            return getDataSource().getMinimumIdle();
        }

        /** None: staunch validates a connection with COM_PING (the health contributor then uses isValid). */
        @Override
        public String getValidationQuery() {
            return null;
        }

        @Override
        public Boolean getDefaultAutoCommit() {
            return getDataSource().isAutoCommit();
        }
    }
}
