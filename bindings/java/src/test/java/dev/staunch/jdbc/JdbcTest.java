package dev.staunch.jdbc;

import dev.staunch.Env;
import dev.staunch.Pool;
import dev.staunch.Testkit;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.sql.SQLTransientException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The conformance scenarios through JDBC (StaunchDataSource), and the JDBC surface itself. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JdbcTest {

    /** A data source on the shared server, from its jdbc:mariadb:// URL, the way a HikariCP user configures one. */
    static StaunchDataSource ds(int max) {
        Testkit s = Env.server();
        StaunchDataSource ds = new StaunchDataSource();
        ds.setJdbcUrl("jdbc:mariadb://127.0.0.1:" + s.server(0).get("port") + "/staunch_test?connectTimeout=2000");
        ds.setUsername("app");
        ds.setPassword("app-secret");
        ds.setMaximumPoolSize(max);
        return ds;
    }

    static long one(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            assertTrue(r.next());
            return r.getLong(1);
        }
    }

    @Test
    void conf_basic_jdbc() throws Exception {
        StaunchDataSource ds = ds(2);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT 1 AS one")) {
            assertTrue(r.next());
            assertEquals(1, r.getInt("one"));
            assertEquals(1, r.getObject(1));
            assertFalse(r.next());
            assertTrue(c.isValid(1));
            assertEquals("MariaDB", c.getMetaData().getDatabaseProductName());
            assertTrue(c.getMetaData().getDatabaseMajorVersion() >= 10);
        }
        ds.close();
        ds.close();
        assertThrows(SQLNonTransientConnectionException.class, ds::getConnection);
    }

    @Test
    void conf_types_jdbc() throws Exception {
        try (StaunchDataSource ds = ds(2); Connection c = ds.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TEMPORARY TABLE jt (i INT, bi BIGINT, u BIGINT UNSIGNED, f FLOAT, d DOUBLE, m DECIMAL(10,3), "
                        + "v VARCHAR(50), b VARBINARY(10), dt DATE, ts DATETIME(6), tm TIME, flag TINYINT(1), n INT) DEFAULT CHARSET=utf8mb4");
            }
            LocalDateTime ts = LocalDateTime.of(2020, 1, 2, 3, 4, 5, 678_901_000);
            try (PreparedStatement p = c.prepareStatement("INSERT INTO jt VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")) {
                p.setInt(1, Integer.MIN_VALUE);
                p.setLong(2, Long.MAX_VALUE);
                p.setObject(3, new BigInteger("18446744073709551615"));
                p.setFloat(4, 1.5f);
                p.setDouble(5, -2.25);
                p.setBigDecimal(6, new BigDecimal("1234567.125"));
                p.setString(7, "Zoë ✓");
                p.setBytes(8, new byte[] {0, 0x7f, (byte) 0x80});
                p.setDate(9, java.sql.Date.valueOf("2021-12-31"));
                p.setTimestamp(10, Timestamp.valueOf(ts));
                p.setObject(11, LocalTime.of(13, 14, 15));
                p.setBoolean(12, true);
                p.setNull(13, Types.INTEGER);
                assertEquals(1, p.executeUpdate());
            }
            try (PreparedStatement p = c.prepareStatement("SELECT * FROM jt WHERE i = ?")) {
                p.setInt(1, Integer.MIN_VALUE);
                try (ResultSet r = p.executeQuery()) {
                    assertTrue(r.next());
                    assertEquals(Integer.MIN_VALUE, r.getInt("i"));
                    assertEquals(Integer.MIN_VALUE, r.getObject("i"));
                    assertEquals(Long.MAX_VALUE, r.getObject("bi"));
                    assertEquals(new BigInteger("18446744073709551615"), r.getObject("u"));
                    assertEquals(1.5f, r.getFloat("f"));
                    assertEquals(1.5f, r.getObject("f"));
                    assertEquals(-2.25, r.getDouble("d"));
                    assertEquals(new BigDecimal("1234567.125"), r.getBigDecimal("m"));
                    assertEquals("Zoë ✓", r.getString("v"));
                    assertArrayEquals(new byte[] {0, 0x7f, (byte) 0x80}, r.getBytes("b"));
                    assertEquals(LocalDate.of(2021, 12, 31), r.getObject("dt", LocalDate.class));
                    assertEquals(java.sql.Date.valueOf("2021-12-31"), r.getDate("dt"));
                    assertEquals(ts, r.getObject("ts", LocalDateTime.class));
                    assertEquals(Timestamp.valueOf(ts), r.getTimestamp("ts"));
                    assertEquals(LocalTime.of(13, 14, 15), r.getObject("tm", LocalTime.class));
                    assertEquals(Boolean.TRUE, r.getObject("flag"));
                    assertTrue(r.getBoolean("flag"));
                    assertEquals(0, r.getInt("n"));
                    assertTrue(r.wasNull());
                    assertNull(r.getObject("n", Integer.class));
                    ResultSetMetaData md = r.getMetaData();
                    assertEquals(13, md.getColumnCount());
                    assertEquals(Types.INTEGER, md.getColumnType(1));
                    assertEquals(Types.BIGINT, md.getColumnType(2));
                    assertEquals(Types.DECIMAL, md.getColumnType(6));
                    assertEquals(Types.VARCHAR, md.getColumnType(7));
                    assertEquals(Types.TIMESTAMP, md.getColumnType(10));
                    assertEquals("jt", md.getTableName(1));
                    assertEquals("v", md.getColumnLabel(7));
                    assertEquals("java.math.BigDecimal", md.getColumnClassName(6));
                    SQLException range = assertThrows(SQLException.class, () -> r.getByte("i"));
                    assertEquals("22003", range.getSQLState());
                    assertThrows(SQLException.class, () -> r.getInt("nope"));
                    assertFalse(r.next());
                }
            }
        }
    }

    @Test
    void conf_params_jdbc() throws Exception {
        try (StaunchDataSource ds = ds(2); Connection c = ds.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TEMPORARY TABLE jp (s VARCHAR(100))");
            }
            String evil = "'); DROP TABLE jp; --";
            try (PreparedStatement p = c.prepareStatement("INSERT INTO jp VALUES (?)")) {
                p.setString(1, evil);
                p.executeUpdate();
                SQLException idx = assertThrows(SQLException.class, () -> p.setString(2, "x"));
                assertTrue(idx.getMessage().contains("parameter index 2"), idx.getMessage());
                p.clearParameters();
                SQLException unset = assertThrows(SQLException.class, p::executeUpdate);
                assertEquals("07001", unset.getSQLState());
                assertThrows(SQLException.class, () -> p.setObject(1, new Object()));
                assertThrows(SQLException.class, () -> p.executeQuery("SELECT 1"));
            }
            try (PreparedStatement p = c.prepareStatement("SELECT COUNT(*) FROM jp WHERE s = ? AND '?' = '?'")) {
                p.setString(1, evil);
                try (ResultSet r = p.executeQuery()) {
                    assertTrue(r.next());
                    assertEquals(1, r.getInt(1));
                }
            }
        }
    }

    @Test
    void conf_txn_jdbc() throws Exception {
        try (StaunchDataSource ds = ds(1)) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS jtx (id INT PRIMARY KEY) ENGINE=InnoDB");
                s.execute("DELETE FROM jtx");
                c.setAutoCommit(false);
                s.executeUpdate("INSERT INTO jtx VALUES (1)");
                c.rollback();
                s.executeUpdate("INSERT INTO jtx VALUES (2)");
                c.commit();
                s.executeUpdate("INSERT INTO jtx VALUES (3)"); // returned mid-transaction
            }
            try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT id FROM jtx ORDER BY id")) {
                assertTrue(c.getAutoCommit(), "a new borrower gets the data source's autoCommit");
                assertTrue(r.next());
                assertEquals(2, r.getInt(1));
                assertFalse(r.next());
                s.execute("DROP TABLE jtx");
            }
        }
    }

    /** The server's Com_commit and Com_rollback (every session's: the asking session's own statements are none of them). */
    static long[] commitsAndRollbacks(Connection admin) throws SQLException {
        long[] got = {-1, -1};
        try (Statement s = admin.createStatement();
                ResultSet r = s.executeQuery("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')")) {
            while (r.next()) {
                got[r.getString(1).equals("Com_commit") ? 0 : 1] = r.getLong(2);
            }
        }
        return got;
    }

    /** One read in JDBC's usual block: try-with-resources, autoCommit as the data source gives it, or set off and committed. */
    static void readBlock(StaunchDataSource ds, String sql, boolean setOffAndCommit) throws SQLException {
        try (Connection c = ds.getConnection()) {
            if (setOffAndCommit) {
                c.setAutoCommit(false);
            }
            assertEquals(1, one(c, sql));
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
    }

    /**
     * 200 reads in each usual block send no COMMIT and no ROLLBACK, but where
     * the block commits a read that opened a transaction (an InnoDB table's
     * under autoCommit off): one COMMIT each, as the server asks.
     */
    @Test
    void conf_readonly_return_jdbc() throws Exception {
        try (StaunchDataSource adminDs = ds(1); Connection admin = adminDs.getConnection();
                StaunchDataSource ds = ds(2); StaunchDataSource off = ds(2)) {
            off.setAutoCommit(false);
            try (Statement s = admin.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS jro (v INT) ENGINE=InnoDB");
                s.execute("DELETE FROM jro");
                s.execute("INSERT INTO jro VALUES (1)");
            }
            try {
                for (String sql : new String[] {"SELECT 1", "SELECT v FROM jro"}) {
                    boolean opens = !sql.equals("SELECT 1");
                    Object[][] blocks = {
                        {"autoCommit on", ds, false, 0},
                        {"setAutoCommit(false) + commit", ds, true, opens ? 200 : 0},
                        {"a data source with autoCommit off + commit", off, false, opens ? 200 : 0},
                    };
                    for (Object[] b : blocks) {
                        long[] before = commitsAndRollbacks(admin);
                        for (int i = 0; i < 200; i++) {
                            readBlock((StaunchDataSource) b[1], sql, (Boolean) b[2]);
                        }
                        long[] after = commitsAndRollbacks(admin);
                        String what = sql + ", " + b[0];
                        assertEquals(((Integer) b[3]).longValue(), after[0] - before[0], what + ": COMMITs");
                        assertEquals(0, after[1] - before[1], what + ": ROLLBACKs");
                    }
                }
            } finally {
                try (Statement s = admin.createStatement()) {
                    s.execute("DROP TABLE jro");
                }
            }
        }
    }

    @Test
    void conf_session_reset_jdbc_isolation_and_read_only_do_not_leak() throws Exception {
        try (StaunchDataSource ds = ds(1)) {
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                c.setReadOnly(true);
                c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
                try (Statement s = c.createStatement()) {
                    SQLException e = assertThrows(SQLException.class, () -> s.executeUpdate("CREATE TEMPORARY TABLE ro_probe (i INT)"));
                    assertTrue(e.getMessage().contains("READ ONLY") || e.getErrorCode() == 1792, e.getMessage());
                }
                c.rollback();
            }
            try (Connection c = ds.getConnection()) {
                assertFalse(c.isReadOnly());
                assertEquals(Connection.TRANSACTION_REPEATABLE_READ, c.getTransactionIsolation());
                try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT @@session.tx_isolation, @@session.tx_read_only")) {
                    assertTrue(r.next());
                    assertEquals("REPEATABLE-READ", r.getString(1));
                    assertEquals(0, r.getInt(2));
                }
            }
        }
    }

    @Test
    void conf_threads_jdbc() throws Exception {
        try (StaunchDataSource ds = ds(4)) {
            ExecutorService ex = Executors.newFixedThreadPool(8);
            List<Future<Integer>> fs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                fs.add(ex.submit(() -> {
                    for (int i = 0; i < 200; i++) {
                        long tag = thread * 1_000_000L + i;
                        try (Connection c = ds.getConnection(); PreparedStatement p = c.prepareStatement("SELECT ?")) {
                            p.setLong(1, tag);
                            try (ResultSet r = p.executeQuery()) {
                                assertTrue(r.next());
                                assertEquals(tag, r.getLong(1));
                            }
                        }
                    }
                    return 200;
                }));
            }
            int n = 0;
            for (Future<Integer> f : fs) {
                n += f.get(100, TimeUnit.SECONDS);
            }
            ex.shutdown();
            assertEquals(1600, n);
            assertEquals(0, ds.getActiveConnections());
            assertTrue(ds.getTotalConnections() <= 4);
        }
    }

    @Test
    void conf_timeout_exhausted_jdbc() throws Exception {
        try (StaunchDataSource ds = ds(1)) {
            ds.setConnectionTimeout(200);
            try (Connection held = ds.getConnection()) {
                long t0 = Env.now();
                SQLTransientConnectionException e = assertThrows(SQLTransientConnectionException.class, ds::getConnection);
                long took = Env.now() - t0;
                assertTrue(e.getMessage().contains("exhausted"), e.getMessage());
                assertTrue(took >= 190 && took <= 200 + Env.slack(), "took " + took);
                assertEquals(1, ds.getActiveConnections());
                assertEquals(1, one(held, "SELECT 1"));
            }
        }
    }

    @Test
    void conf_a1_jdbc_unreachable_is_non_transient() throws Exception {
        try (java.net.ServerSocket bh = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
             StaunchDataSource ds = new StaunchDataSource()) {
            ds.setJdbcUrl("jdbc:mysql://127.0.0.1:" + bh.getLocalPort() + "/staunch_test?connectTimeout=300");
            ds.setUsername("app");
            ds.setPassword("app-secret");
            ds.setConnectionTimeout(800);
            // The bound is the pool's: connectionTimeout from the call that waits. The pool is opened
            // first because the first open in a JVM also pays one-time costs no pool setting bounds:
            // on JDK 22+ the FFM layer links its ~60 downcall handles in Native's static initializer
            // (measured 2.5-2.9 s at a load average of 10 on 2 cores, against 13 ms for the dlopen
            // itself), and this test is JUnit's first in JdbcTest, so when JdbcTest ran first in its
            // JVM it measured that linking, not the pool (the 1.8-2.5 s failures under load).
            ds.open();
            long t0 = Env.now();
            SQLNonTransientConnectionException e = assertThrows(SQLNonTransientConnectionException.class, ds::getConnection);
            long took = Env.now() - t0;
            assertTrue(e.getMessage().contains("greeting"), e.getMessage());
            assertEquals("08001", e.getSQLState());
            assertTrue(took <= 800 + Env.slack(), "took " + took);
        }
    }

    @Test
    void conf_cancel_get_jdbc_by_interrupt() throws Exception {
        try (StaunchDataSource ds = ds(1); Connection held = ds.getConnection()) {
            AtomicReference<Throwable> got = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            Thread t = new Thread(() -> {
                try {
                    ds.getConnection().close();
                } catch (Throwable e) {
                    got.set(e);
                }
                done.countDown();
            });
            t.start();
            long deadline = Env.now() + 5000;
            while (ds.getThreadsAwaitingConnection() == 0 && Env.now() < deadline) {
                Thread.sleep(5);
            }
            long t0 = Env.now();
            t.interrupt();
            assertTrue(done.await(5, TimeUnit.SECONDS));
            assertTrue(Env.now() - t0 <= 100 + Env.slack());
            assertInstanceOf(SQLException.class, got.get());
            assertTrue(got.get().getMessage().contains("Interrupted"), got.get().getMessage());
            assertEquals(0, ds.getThreadsAwaitingConnection());
            assertEquals(1, one(held, "SELECT 1"));
        }
    }

    @Test
    void conf_cancel_statement_jdbc() throws Exception {
        try (StaunchDataSource ds = ds(2); Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            ScheduledCancel k = new ScheduledCancel(s, 500);
            long t0 = Env.now();
            SQLException e = assertThrows(SQLException.class, () -> s.executeQuery("SELECT SLEEP(10)"));
            long took = Env.now() - t0;
            k.join();
            assertInstanceOf(SQLTransientException.class, e, e.toString());
            assertTrue(e.getMessage().contains("CANCELLED"), e.getMessage());
            assertTrue(took <= 1500 + Env.slack(), "took " + took);
            assertEquals(1, one(c, "SELECT 1"));
        }
    }

    static final class ScheduledCancel extends Thread {
        ScheduledCancel(Statement s, long ms) {
            super(() -> {
                try {
                    Thread.sleep(ms);
                    s.cancel();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            start();
        }
    }

    @Test
    void conf_statement_timeout_jdbc_query_timeout() throws Exception {
        try (StaunchDataSource ds = ds(1); Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.setQueryTimeout(1);
            long t0 = Env.now();
            SQLTimeoutException e = assertThrows(SQLTimeoutException.class, () -> s.executeQuery("SELECT SLEEP(5)"));
            long took = Env.now() - t0;
            assertTrue(took <= 2000 + Env.slack(), "took " + took + ": " + e.getMessage());
            s.setQueryTimeout(0);
            assertEquals(0, one(c, "SELECT SLEEP(1.2)"), "no limit once the query timeout is reset");
            assertEquals(1, one(c, "SELECT 1"));
        }
    }

    @Test
    void conf_no_crossed_answer_jdbc() throws Exception {
        try (StaunchDataSource ds = ds(1)) {
            ds.setKnob("query_timeout", "300ms");
            Connection c = ds.getConnection();
            Statement s = c.createStatement();
            assertThrows(SQLTimeoutException.class, () -> s.executeQuery("SET STATEMENT max_statement_time=0 FOR SELECT 111 + SLEEP(3)"));
            assertFalse(c.isValid(1));
            Thread.sleep(2000);
            SQLRecoverableException broken = assertThrows(SQLRecoverableException.class, () -> s.executeQuery("SELECT 222"));
            assertEquals("08S01", broken.getSQLState());
            c.close();
            try (Connection d = ds.getConnection()) {
                assertEquals(222, one(d, "SELECT 222"));
            }
        }
    }

    static StaunchDataSource defaults(Testkit s) {
        StaunchDataSource ds = new StaunchDataSource();
        ds.setJdbcUrl("jdbc:mariadb://127.0.0.1:" + s.server(0).get("port") + "/staunch_test");
        ds.setUsername("app");
        ds.setPassword("app-secret");
        return ds;
    }

    /**
     * At the defaults (no query timeout): the server frozen 1 s into SELECT SLEEP(3) fails within the liveness
     * bound (threshold 5 s + connect timeout 3 s + validation timeout 1 s) with a SQLRecoverableException that says
     * the server stopped answering; the pool serves after the thaw. Meanwhile SELECT SLEEP(25) on a healthy server
     * returns its answer. Servers of its own: freezing the shared one would stall other tests.
     */
    @Test
    void conf_frozen_statement_jdbc() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (Testkit frozen = Testkit.start("server"); Testkit healthy = Testkit.start("server");
                StaunchDataSource fds = defaults(frozen); StaunchDataSource hds = defaults(healthy)) {
            Future<Long> longOne = pool.submit(() -> {
                try (Connection c = hds.getConnection()) {
                    return one(c, "SELECT 25 + SLEEP(25)");
                }
            });
            Connection c = fds.getConnection();
            Future<Long> froze = pool.submit(() -> {
                Thread.sleep(1000);
                frozen.cmd("freeze");
                return Env.now();
            });
            SQLRecoverableException e;
            long returned;
            try {
                e = assertThrows(SQLRecoverableException.class, () -> one(c, "SELECT SLEEP(3)"));
                returned = Env.now();
            } finally {
                froze.get();
                frozen.cmd("thaw");
            }
            assertTrue(e.getMessage().contains("the server stopped answering during this statement"), e.getMessage());
            long after = returned - froze.get();
            assertTrue(after <= 9000 + Env.slack() + 500, "returned " + after + " ms after the freeze");
            assertFalse(c.isValid(1));
            c.close();
            try (Connection d = fds.getConnection()) {
                assertEquals(1, one(d, "SELECT 1"));
            }
            assertEquals(25L, longOne.get(60, java.util.concurrent.TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void duplicate_key_is_an_integrity_violation_with_23000_and_1062() throws Exception {
        try (StaunchDataSource ds = ds(1); Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TEMPORARY TABLE dk (id INT PRIMARY KEY)");
            s.executeUpdate("INSERT INTO dk VALUES (1)");
            SQLIntegrityConstraintViolationException e = assertThrows(SQLIntegrityConstraintViolationException.class,
                    () -> s.executeUpdate("INSERT INTO dk VALUES (1)"));
            assertEquals("23000", e.getSQLState());
            assertEquals(1062, e.getErrorCode());
            SQLException syntax = assertThrows(SQLException.class, () -> s.execute("SELEKT 1"));
            assertInstanceOf(java.sql.SQLSyntaxErrorException.class, syntax);
            assertEquals(1064, syntax.getErrorCode());
        }
    }

    /**
     * Each server error lands in the JDBC class of the library's category for it (staunch_error_category, one
     * table for every binding): a value too long under strict mode is a SQLDataException, and a number the table
     * does not name falls back to its SQLSTATE's class (SIGNAL sets both), then to a plain SQLException.
     */
    @Test
    void server_errors_take_the_class_of_their_category() throws Exception {
        try (StaunchDataSource ds = ds(1); Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES'");
            s.execute("CREATE TEMPORARY TABLE tl (s VARCHAR(3))");
            Object[][] cases = {
                {"INSERT INTO tl VALUES ('abcd')", java.sql.SQLDataException.class, 1406},
                {"SIGNAL SQLSTATE '23001' SET MYSQL_ERRNO = 30001", SQLIntegrityConstraintViolationException.class,
                    30001},
                {"SIGNAL SQLSTATE '0A001' SET MYSQL_ERRNO = 30002", java.sql.SQLFeatureNotSupportedException.class,
                    30002},
                {"SIGNAL SQLSTATE '42001' SET MYSQL_ERRNO = 30003", java.sql.SQLSyntaxErrorException.class, 30003},
                {"SIGNAL SQLSTATE '45000'", SQLException.class, 1644},
            };
            for (Object[] k : cases) {
                String sql = (String) k[0];
                SQLException e = assertThrows(SQLException.class, () -> s.execute(sql), sql);
                assertEquals(k[1], e.getClass(), sql + ": " + e);
                assertEquals((int) k[2], e.getErrorCode(), sql);
            }
            assertEquals(1L, one(c, "SELECT 1"), "the connection stays usable");
        }
    }

    @Test
    void batches_generated_keys_and_multiple_results() throws Exception {
        try (StaunchDataSource ds = ds(1); Connection c = ds.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TEMPORARY TABLE gk (id INT AUTO_INCREMENT PRIMARY KEY, v INT UNIQUE)");
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO gk (v) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
                for (int i = 1; i <= 3; i++) {
                    p.setInt(1, i * 10);
                    p.addBatch();
                }
                assertArrayEquals(new int[] {1, 1, 1}, p.executeBatch());
                try (ResultSet k = p.getGeneratedKeys()) {
                    List<Long> keys = new ArrayList<>();
                    while (k.next()) {
                        keys.add(k.getLong(1));
                    }
                    assertEquals(List.of(1L, 2L, 3L), keys);
                }
                p.setInt(1, 10);
                p.addBatch();
                BatchUpdateException e = assertThrows(BatchUpdateException.class, p::executeBatch);
                assertEquals(1062, e.getErrorCode());
            }
            try (Statement s = c.createStatement()) {
                assertEquals(2, s.executeUpdate("INSERT INTO gk (v) VALUES (40), (50)"));
                try (ResultSet k = s.getGeneratedKeys()) {
                    // 4 went to the failed duplicate (InnoDB does not give auto-increment values back)
                    assertTrue(k.next());
                    assertEquals(5, k.getLong(1));
                    assertTrue(k.next());
                    assertEquals(6, k.getLong(1));
                    assertFalse(k.next());
                }
                assertTrue(s.execute("SELECT 1; SELECT 2"));
                try (ResultSet r = s.getResultSet()) {
                    assertTrue(r.next());
                    assertEquals(1, r.getInt(1));
                }
                assertTrue(s.getMoreResults());
                try (ResultSet r = s.getResultSet()) {
                    assertTrue(r.next());
                    assertEquals(2, r.getInt(1));
                }
                assertFalse(s.getMoreResults());
                assertEquals(-1, s.getUpdateCount());
            }
        }
    }

    @Test
    void conf_bad_input_jdbc() throws Exception {
        StaunchDataSource none = new StaunchDataSource();
        SQLException noUrl = assertThrows(SQLException.class, none::getConnection);
        assertTrue(noUrl.getMessage().contains("jdbcUrl"), noUrl.getMessage());
        StaunchDataSource bad = new StaunchDataSource("jdbc:postgresql://x/y");
        assertTrue(assertThrows(SQLException.class, bad::getConnection).getMessage().contains("not supported"));
        StaunchDataSource unknown = new StaunchDataSource("jdbc:mysql://127.0.0.1/db?frobnicate=1");
        assertTrue(assertThrows(SQLException.class, unknown::getConnection).getMessage().contains("frobnicate"));
        StaunchDataSource badKnob = new StaunchDataSource(Env.url());
        badKnob.setKnob("no_such_knob", "1");
        assertTrue(assertThrows(SQLException.class, badKnob::getConnection).getMessage().contains("no_such_knob"));
        assertThrows(IllegalArgumentException.class, () -> new StaunchDataSource().setMaximumPoolSize(0));
        assertThrows(IllegalArgumentException.class, () -> new StaunchDataSource().setConnectionTimeout(-5));
        assertThrows(IllegalArgumentException.class, () -> new StaunchDataSource().setTransactionIsolation("SOMETIMES"));
        StaunchDataSource wrongPassword = ds(1);
        wrongPassword.setPassword("wrong");
        SQLException rejected = assertThrows(SQLException.class, wrongPassword::getConnection);
        assertEquals(1045, rejected.getErrorCode(), rejected.getMessage());
        assertEquals("28000", rejected.getSQLState());
        wrongPassword.close();
        try (StaunchDataSource ds = ds(1)) {
            Connection c = ds.getConnection();
            assertThrows(IllegalStateException.class, () -> ds.setConnectionTimeout(3000));
            // No procedure p, so no parameter of that name (as Connector/J: "parameter name by_name not found").
            assertThrows(java.sql.SQLSyntaxErrorException.class, () -> c.prepareCall("CALL p(?)").getString("by_name"));
            assertThrows(SQLFeatureNotSupportedException.class, () -> c.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE, ResultSet.CONCUR_READ_ONLY));
            assertThrows(SQLException.class, () -> c.isValid(-1));
            Statement s = c.createStatement();
            ResultSet r = s.executeQuery("SELECT 1");
            assertThrows(SQLException.class, () -> r.getInt(1), "before next()");
            assertTrue(r.next());
            assertThrows(SQLException.class, () -> r.getInt(2));
            assertThrows(SQLFeatureNotSupportedException.class, () -> r.updateInt(1, 2));
            assertThrows(SQLFeatureNotSupportedException.class, r::previous);
            assertThrows(SQLException.class, () -> s.executeQuery(null));
            assertThrows(SQLException.class, () -> s.executeQuery("DO 1"), "executeQuery of a statement without a result set");
            c.close();
            c.close();
            assertThrows(SQLNonTransientConnectionException.class, c::createStatement);
            assertThrows(SQLException.class, () -> s.executeQuery("SELECT 1"));
            assertFalse(c.isValid(1));
            assertEquals(0, ds.getActiveConnections());
        }
    }

    @Test
    void abort_closes_rather_than_returns() throws Exception {
        try (StaunchDataSource ds = ds(1)) {
            Connection c = ds.getConnection();
            one(c, "SELECT 1");
            c.abort(Runnable::run);
            assertTrue(c.isClosed());
            try (Connection d = ds.getConnection()) {
                assertEquals(1, one(d, "SELECT 1"));
            }
            assertEquals(2, ds.pool().stats().created(), "the aborted connection was closed, a new one made");
        }
    }

    @Test
    void mxbean_has_hikaris_names_and_suspend_resume() throws Exception {
        try (StaunchDataSource ds = ds(2)) {
            ds.setRegisterMbeans(true);
            ds.setPoolName("mx-test");
            ds.setConnectionTimeout(300);
            try (Connection c = ds.getConnection()) {
                assertFalse(c.isClosed());
                StaunchPoolMXBean mx = ds.getPoolMXBean();
                assertEquals(1, mx.getActiveConnections());
                assertEquals(1, mx.getTotalConnections());
                javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
                Object active = server.getAttribute(new javax.management.ObjectName("dev.staunch:type=Pool (mx-test)"), "ActiveConnections");
                assertEquals(1, active);
                mx.suspendPool();
                long t0 = Env.now();
                assertThrows(SQLTransientConnectionException.class, ds::getConnection);
                assertTrue(Env.now() - t0 >= 290);
                mx.resumePool();
                try (Connection d = ds.getConnection()) {
                    assertEquals(2, mx.getActiveConnections());
                    assertFalse(d.isClosed());
                }
                mx.softEvictConnections();
            }
            Pool p = ds.unwrap(Pool.class);
            assertTrue(p.stats().closedEvicted() >= 1 || p.stats().idle() <= 2);
        }
    }

    @Test
    void config_mxbean_resizes_the_running_pool_and_suspend_holds_a_borrow() throws Exception {
        try (StaunchDataSource ds = ds(4)) {
            ds.setRegisterMbeans(true);
            ds.setPoolName("mx-resize");
            StaunchConfigMXBean cfg = ds.getConfigMXBean();
            StaunchPoolMXBean mx = ds.getPoolMXBean();
            Pool p = ds.pool();
            // Shrink while all four are borrowed: none breaks, the total comes down on return.
            List<Connection> held = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                held.add(ds.getConnection());
            }
            cfg.setMaximumPoolSize(2);
            assertEquals(2, cfg.getMaximumPoolSize());
            for (int i = 0; i < 4; i++) {
                assertEquals(i, one(held.get(i), "SELECT " + i));
                held.get(i).close();
            }
            assertEquals(2, mx.getTotalConnections());
            assertEquals(2, p.stats().closedEvicted());
            // Bad values name the knob and change nothing.
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> cfg.setMaximumPoolSize(1000));
            assertTrue(bad.getMessage().contains("max_size_cap (64)"), bad.getMessage());
            bad = assertThrows(IllegalArgumentException.class, () -> cfg.setMinimumIdle(3));
            assertTrue(bad.getMessage().contains("min_idle (3) must not exceed max_size (2)"), bad.getMessage());
            assertEquals(2, p.stats().maxSize());

            // Grow, through JMX, while two threads wait behind one borrowed connection.
            cfg.setMaximumPoolSize(1);
            long until = Env.now() + 5000;
            while (mx.getTotalConnections() != 1) {
                assertTrue(Env.now() < until, "the idle surplus was not closed");
                Thread.sleep(5);
            }
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try (Connection blocker = ds.getConnection()) {
                assertEquals(1, one(blocker, "SELECT 1"));
                List<Future<Long>> waiting = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    waiting.add(pool.submit(() -> {
                        try (Connection c = ds.getConnection()) {
                            return one(c, "SELECT 7");
                        }
                    }));
                }
                while (mx.getThreadsAwaitingConnection() != 2) {
                    assertTrue(Env.now() < until + 5000, "the two threads did not queue");
                    Thread.sleep(5);
                }
                javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
                server.setAttribute(new javax.management.ObjectName("dev.staunch:type=PoolConfig (mx-resize)"),
                        new javax.management.Attribute("MaximumPoolSize", 3));
                for (Future<Long> f : waiting) {
                    assertEquals(7L, f.get(10, TimeUnit.SECONDS));
                }
                assertEquals(3, cfg.getMaximumPoolSize());
            }

            // Suspended: a borrow waits until resume (bounded by connectionTimeout, 10 s here).
            mx.suspendPool();
            Future<Long> later = pool.submit(() -> {
                try (Connection c = ds.getConnection()) {
                    return one(c, "SELECT 5");
                }
            });
            Thread.sleep(100);
            assertFalse(later.isDone());
            mx.resumePool();
            assertEquals(5L, later.get(5, TimeUnit.SECONDS));
            pool.shutdown();
        }
    }

    @Test
    void every_unimplemented_method_throws_feature_not_supported() throws Exception {
        try (StaunchDataSource ds = ds(1); Connection c = ds.getConnection()) {
            assertThrows(SQLFeatureNotSupportedException.class, () -> c.createArrayOf("INT", new Object[0]));
            assertThrows(SQLFeatureNotSupportedException.class, c::createSQLXML);
            assertThrows(SQLFeatureNotSupportedException.class, ds::getParentLogger);
            try (PreparedStatement p = c.prepareStatement("SELECT ?")) {
                assertThrows(SQLFeatureNotSupportedException.class, () -> p.setArray(1, null));
                assertThrows(SQLFeatureNotSupportedException.class, () -> p.setRef(1, null));
            }
        }
    }
}
