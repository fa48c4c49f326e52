package dev.staunch.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.staunch.Staunch;
import dev.staunch.jdbc.StaunchDataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Issue #20: the two ways a JDBC PreparedStatement is sent, on one connection
 * borrowed once per thread for the trial (so the pool's checkout is not in
 * the figures), against the same throwaway MariaDB server as
 * {@link GetSelectClose}:
 *
 * <ul>
 *   <li>{@code *_insert5}: a one-shot INSERT of 5 parameters (a long, a
 *       BigDecimal, a String with a quote, a Timestamp with microseconds,
 *       bytes with a quote, a backslash and a NUL): prepareStatement,
 *       set, executeUpdate, close, under autocommit. The text differs every
 *       time (a comment with a counter), as a statement run once does, so a
 *       server-side prepared way prepares, executes and closes (both drivers
 *       cache prepared statements per connection and close the oldest);
 *   <li>{@code *_selectById}: the same {@code SELECT ... WHERE id = ?}
 *       repeated through one PreparedStatement, a different id each time,
 *       its one row's 5 columns read.
 * </ul>
 *
 * <p>Contenders: StaunchDataSource and HikariCP + MariaDB Connector/J, each
 * with {@code serverPrep=false} (their default, useServerPrepStmts=false:
 * the values written into the text by the driver, one round trip) and
 * {@code serverPrep=true} (useServerPrepStmts=true in the URL: the binary
 * protocol's prepare + execute). scripts/java-bench.sh runs it at 1 thread
 * ({@code STAUNCH_BENCHES=Statements}).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class Statements {
    static final String INSERT = "INSERT INTO bench_stmt_ins (id, amount, name, at, data) VALUES (?, ?, ?, ?, ?)";
    static final String SELECT = "SELECT id, name, score, amount, at FROM bench_stmt_rows WHERE id = ?";
    static final int ROWS = 1000;
    static final BigDecimal AMOUNT = new BigDecimal("12345.67");
    static final Timestamp AT = Timestamp.valueOf("2026-12-01 18:00:00.123456");
    /** Every INSERT text is new, over every thread of the trial. */
    static final AtomicLong COUNTER = new AtomicLong();

    static byte[] data(long n) {
        return new byte[] {0, 'b', '\'', '\\', (byte) n, (byte) (n >> 8), (byte) (n >> 16), (byte) (n >> 24)};
    }

    private static boolean made;

    /** The tables, made once per server; the INSERTs' emptied once per fork (each fork runs one trial). */
    static synchronized void tables(DataSource ds) throws SQLException {
        if (made) {
            return;
        }
        made = true;
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS bench_stmt_rows (id BIGINT PRIMARY KEY, name VARCHAR(100), "
                    + "score DOUBLE, amount DECIMAL(20,2), at DATETIME(6))");
            s.execute("INSERT IGNORE INTO bench_stmt_rows SELECT seq, CONCAT('row ', seq), seq / 3, seq * 1.25, "
                    + "'2026-12-01 18:00:00.5' FROM seq_1_to_" + ROWS);
            s.execute("CREATE TABLE IF NOT EXISTS bench_stmt_ins (id BIGINT, amount DECIMAL(20,2), "
                    + "name VARCHAR(100), at DATETIME(6), data VARBINARY(64))");
            s.execute("TRUNCATE TABLE bench_stmt_ins");
        }
    }

    /** The values come back as they were sent: a fast wrong answer is no answer. */
    static void check(Connection c) throws SQLException {
        long n = -COUNTER.incrementAndGet();
        insert(c, n);
        try (Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT id, amount, name, at, data FROM bench_stmt_ins WHERE id = " + n)) {
            if (!r.next()
                    || r.getLong(1) != n
                    || !AMOUNT.equals(r.getBigDecimal(2))
                    || !("name " + n + " with a ' quote").equals(r.getString(3))
                    || !AT.equals(r.getTimestamp(4))
                    || !Arrays.equals(data(n), r.getBytes(5))
                    || r.next()) {
                throw new IllegalStateException("the INSERT's values did not come back as sent");
            }
        }
    }

    static int insert(Connection c, long n) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT + " /* " + n + " */")) {
            ps.setLong(1, n);
            ps.setBigDecimal(2, AMOUNT);
            ps.setString(3, "name " + n + " with a ' quote");
            ps.setTimestamp(4, AT);
            ps.setBytes(5, data(n));
            return ps.executeUpdate();
        }
    }

    /** One connection and its repeated SELECT, borrowed for the trial. */
    public abstract static class Side {
        DataSource ds;
        Connection conn;
        PreparedStatement select;
        long n;

        abstract DataSource open(String url);

        abstract boolean serverPrep();

        @Setup(Level.Trial)
        public void setUp() throws SQLException {
            ds = open(GetSelectClose.jdbcUrl() + (serverPrep() ? "?useServerPrepStmts=true" : ""));
            tables(ds);
            conn = ds.getConnection();
            if (ds instanceof StaunchDataSource) {
                // java-bench.sh shows this line: which native path ran.
                System.out.println("staunch native path: " + Staunch.nativePath());
            }
            check(conn);
            select = conn.prepareStatement(SELECT);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            select.close();
            conn.close();
            ((AutoCloseable) ds).close();
        }
    }

    @State(Scope.Thread)
    public static class HikariState extends Side {
        @Param({"false", "true"})
        public String serverPrep;

        @Override
        DataSource open(String url) {
            HikariDataSource d = new HikariDataSource();
            d.setJdbcUrl(url);
            d.setUsername("app");
            d.setPassword("app-secret");
            return d;
        }

        @Override
        boolean serverPrep() {
            return Boolean.parseBoolean(serverPrep);
        }
    }

    @State(Scope.Thread)
    public static class StaunchJdbcState extends Side {
        @Param({"false", "true"})
        public String serverPrep;

        @Override
        DataSource open(String url) {
            StaunchDataSource d = new StaunchDataSource();
            d.setJdbcUrl(url);
            d.setUsername("app");
            d.setPassword("app-secret");
            return d;
        }

        @Override
        boolean serverPrep() {
            return Boolean.parseBoolean(serverPrep);
        }
    }

    static int insert5(Side st) throws SQLException {
        return insert(st.conn, COUNTER.incrementAndGet());
    }

    static void selectById(Side st, Blackhole bh) throws SQLException {
        long id = st.n++ % ROWS + 1;
        st.select.setLong(1, id);
        try (ResultSet r = st.select.executeQuery()) {
            if (!r.next() || r.getLong(1) != id) {
                throw new IllegalStateException("no row " + id);
            }
            bh.consume(Objects.requireNonNull(r.getString(2)));
            bh.consume(r.getDouble(3));
            bh.consume(r.getBigDecimal(4));
            bh.consume(r.getTimestamp(5));
        }
    }

    @Benchmark
    public int hikariConnectorJ_insert5(HikariState st) throws SQLException {
        return insert5(st);
    }

    @Benchmark
    public void hikariConnectorJ_selectById(HikariState st, Blackhole bh) throws SQLException {
        selectById(st, bh);
    }

    @Benchmark
    public int staunchJdbc_insert5(StaunchJdbcState st) throws SQLException {
        return insert5(st);
    }

    @Benchmark
    public void staunchJdbc_selectById(StaunchJdbcState st, Blackhole bh) throws SQLException {
        selectById(st, bh);
    }
}
