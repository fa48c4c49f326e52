package dev.staunch.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.staunch.Conn;
import dev.staunch.Pool;
import dev.staunch.Rows;
import dev.staunch.Staunch;
import dev.staunch.TraceListener;
import dev.staunch.micrometer.StaunchMetrics;
import dev.staunch.otel.StaunchTracing;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import dev.staunch.jdbc.StaunchDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * getConnection + SELECT 1 + close, each pool at its defaults (pool size 10),
 * against the same throwaway MariaDB server (scripts/java-bench.sh starts it
 * and passes -Dstaunch.bench.host/port). Run at 1 and 8 threads.
 *
 * <p>staunchNativeHooks and staunchNativeHooksNoop are staunchNative with what
 * observability costs (issue 47): a Micrometer binder bound (its first read turns
 * the library's timings on) and a tracer, OpenTelemetry's SDK with no exporter
 * (spans made and dropped) or one that does nothing (the library's upcalls
 * alone). java-bench.sh runs them with STAUNCH_BENCH_HOOKS=1.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class GetSelectClose {

    static String host() {
        return System.getProperty("staunch.bench.host", "127.0.0.1");
    }

    static String port() {
        return System.getProperty("staunch.bench.port", "3306");
    }

    static String jdbcUrl() {
        return "jdbc:mariadb://" + host() + ":" + port() + "/staunch_test";
    }

    @State(Scope.Benchmark)
    public static class HikariState {
        HikariDataSource ds;

        @Setup(Level.Trial)
        public void setUp() {
            ds = new HikariDataSource();
            ds.setJdbcUrl(jdbcUrl());
            ds.setUsername("app");
            ds.setPassword("app-secret");
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            ds.close();
        }
    }

    @State(Scope.Benchmark)
    public static class StaunchJdbcState {
        StaunchDataSource ds;

        @Setup(Level.Trial)
        public void setUp() {
            ds = new StaunchDataSource();
            ds.setJdbcUrl(jdbcUrl());
            ds.setUsername("app");
            ds.setPassword("app-secret");
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            ds.close();
        }
    }

    @State(Scope.Benchmark)
    public static class NativeState {
        Pool pool;

        @Setup(Level.Trial)
        public void setUp() {
            pool = Staunch.open("mysql://app:app-secret@" + host() + ":" + port() + "/staunch_test");
            // java-bench.sh shows this line: which native path ran.
            System.out.println("staunch native path: " + Staunch.nativePath());
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            pool.close();
        }
    }

    /** A pool as NativeState's, with metrics bound and a tracer: see the class comment. */
    abstract static class HookedState {
        Pool pool;
        SdkTracerProvider tracerProvider;

        abstract TraceListener tracer();

        @Setup(Level.Trial)
        public void setUp() {
            pool = Staunch.builder().url("mysql://app:app-secret@" + host() + ":" + port() + "/staunch_test")
                    .tracer(tracer())
                    .open();
            new StaunchMetrics(pool).bindTo(new SimpleMeterRegistry());
            System.out.println("staunch native path: " + Staunch.nativePath());
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            pool.close();
            if (tracerProvider != null) {
                tracerProvider.close();
            }
        }
    }

    @State(Scope.Benchmark)
    public static class HooksState extends HookedState {
        @Override
        TraceListener tracer() {
            tracerProvider = SdkTracerProvider.builder().build();
            return StaunchTracing.create(OpenTelemetrySdk.builder().setTracerProvider(tracerProvider).build());
        }
    }

    @State(Scope.Benchmark)
    public static class NoopHooksState extends HookedState {
        @Override
        TraceListener tracer() {
            return e -> { };
        }
    }

    static int jdbc(javax.sql.DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT 1")) {
            r.next();
            return r.getInt(1);
        }
    }

    @Benchmark
    public int hikariConnectorJ(HikariState st) throws SQLException {
        return jdbc(st.ds);
    }

    @Benchmark
    public int staunchJdbc(StaunchJdbcState st) throws SQLException {
        return jdbc(st.ds);
    }

    @Benchmark
    public long staunchNative(NativeState st) {
        return select1(st.pool);
    }

    @Benchmark
    public long staunchNativeHooks(HooksState st) {
        return select1(st.pool);
    }

    @Benchmark
    public long staunchNativeHooksNoop(NoopHooksState st) {
        return select1(st.pool);
    }

    static long select1(Pool pool) {
        try (Conn c = pool.get(Duration.ofSeconds(10)); Rows r = c.queryText("SELECT 1")) {
            r.next();
            return r.getLong(0);
        }
    }
}
