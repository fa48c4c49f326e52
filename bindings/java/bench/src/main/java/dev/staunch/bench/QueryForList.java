package dev.staunch.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.staunch.Conn;
import dev.staunch.Pool;
import dev.staunch.Rows;
import dev.staunch.Staunch;
import dev.staunch.jdbc.StaunchDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Spring's {@code JdbcTemplate.queryForList} of 1,000 rows (a BIGINT, a
 * VARCHAR, a DECIMAL and a DATETIME each, selected by a bound parameter), each
 * pool at its defaults, against the same throwaway MariaDB server as
 * {@link GetSelectClose}; and the native API reading the same rows into
 * arrays. Run at 1 and 8 threads by scripts/java-bench.sh.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class QueryForList {
    static final String SQL = "SELECT id, name, amount, created FROM bench_rows WHERE id <= ? ORDER BY id";
    static final int ROWS = 1000;

    /** The table, made once per server (every fork runs this; it is idempotent). */
    static void table(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS bench_rows (id BIGINT PRIMARY KEY, name VARCHAR(64), "
                    + "amount DECIMAL(12,2), created DATETIME(6))");
            s.execute("INSERT IGNORE INTO bench_rows SELECT seq, CONCAT('name-', seq), seq * 1.25, "
                    + "TIMESTAMP'2026-01-01 00:00:00' + INTERVAL seq SECOND FROM seq_1_to_" + ROWS);
        }
    }

    @State(Scope.Benchmark)
    public static class HikariState {
        HikariDataSource ds;
        JdbcTemplate jdbc;

        @Setup(Level.Trial)
        public void setUp() throws SQLException {
            ds = new HikariDataSource();
            ds.setJdbcUrl(GetSelectClose.jdbcUrl());
            ds.setUsername("app");
            ds.setPassword("app-secret");
            table(ds);
            jdbc = new JdbcTemplate(ds);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            ds.close();
        }
    }

    @State(Scope.Benchmark)
    public static class StaunchJdbcState {
        StaunchDataSource ds;
        JdbcTemplate jdbc;

        @Setup(Level.Trial)
        public void setUp() throws SQLException {
            ds = new StaunchDataSource();
            ds.setJdbcUrl(GetSelectClose.jdbcUrl());
            ds.setUsername("app");
            ds.setPassword("app-secret");
            table(ds);
            jdbc = new JdbcTemplate(ds);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            ds.close();
        }
    }

    /** StaunchDataSource with useServerPrepStmts=true (server-side prepare instead of interpolation). */
    @State(Scope.Benchmark)
    public static class StaunchJdbcPreparedState {
        StaunchDataSource ds;
        JdbcTemplate jdbc;

        @Setup(Level.Trial)
        public void setUp() throws SQLException {
            ds = new StaunchDataSource();
            ds.setJdbcUrl(GetSelectClose.jdbcUrl() + "?useServerPrepStmts=true");
            ds.setUsername("app");
            ds.setPassword("app-secret");
            table(ds);
            jdbc = new JdbcTemplate(ds);
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
            pool = Staunch.open("mysql://app:app-secret@" + GetSelectClose.host() + ":" + GetSelectClose.port()
                    + "/staunch_test");
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            pool.close();
        }
    }

    static int check(int n) {
        if (n != ROWS) {
            throw new IllegalStateException("expected " + ROWS + " rows, got " + n);
        }
        return n;
    }

    @Benchmark
    public int hikariConnectorJ(HikariState st) {
        List<Map<String, Object>> rows = st.jdbc.queryForList(SQL, ROWS);
        return check(rows.size());
    }

    @Benchmark
    public int staunchJdbc(StaunchJdbcState st) {
        List<Map<String, Object>> rows = st.jdbc.queryForList(SQL, ROWS);
        return check(rows.size());
    }

    /** Not in java-bench.sh's table: run by hand to compare the two ways a JDBC statement is sent. */
    @Benchmark
    public int staunchJdbcPrepared(StaunchJdbcPreparedState st) {
        List<Map<String, Object>> rows = st.jdbc.queryForList(SQL, ROWS);
        return check(rows.size());
    }

    @Benchmark
    public int staunchNative(NativeState st) {
        List<Object[]> rows = new ArrayList<>(ROWS);
        try (Conn c = st.pool.get(Duration.ofSeconds(10)); Rows r = c.query(SQL, ROWS)) {
            while (r.next()) {
                rows.add(new Object[] {r.getObject(0), r.getObject(1), r.getObject(2), r.getObject(3)});
            }
        }
        return check(rows.size());
    }
}
