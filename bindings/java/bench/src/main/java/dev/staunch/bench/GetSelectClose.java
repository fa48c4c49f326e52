package dev.staunch.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.staunch.Conn;
import dev.staunch.Pool;
import dev.staunch.Rows;
import dev.staunch.Staunch;
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
        try (Conn c = st.pool.get(Duration.ofSeconds(10)); Rows r = c.queryText("SELECT 1")) {
            r.next();
            return r.getLong(0);
        }
    }
}
