package dev.staunch.jdbc;

import dev.staunch.Env;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.NClob;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What migration tools, ORMs and Spring need of a JDBC driver besides metadata. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ToolSupportTest {

    static List<Long> ids(Connection c, String table) throws SQLException {
        List<Long> out = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT id FROM " + table + " ORDER BY id")) {
            while (r.next()) {
                out.add(r.getLong(1));
            }
        }
        return out;
    }

    @Test
    void savepoints_roll_back_part_of_a_transaction() throws Exception {
        try (StaunchDataSource ds = JdbcTest.ds(1); Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE OR REPLACE TABLE sp_t (id INT PRIMARY KEY)");
            assertTrue(c.getMetaData().supportsSavepoints());
            assertThrows(SQLException.class, c::setSavepoint, "autoCommit on: no transaction to mark");
            c.setAutoCommit(false);
            s.execute("INSERT INTO sp_t VALUES (1)");
            Savepoint a = c.setSavepoint();
            s.execute("INSERT INTO sp_t VALUES (2)");
            Savepoint b = c.setSavepoint("named `one`");
            s.execute("INSERT INTO sp_t VALUES (3)");
            c.rollback(b);
            assertEquals(List.of(1L, 2L), ids(c, "sp_t"));
            assertEquals("named `one`", b.getSavepointName());
            assertThrows(SQLException.class, b::getSavepointId);
            assertEquals(1, a.getSavepointId());
            c.releaseSavepoint(b);
            c.rollback(a);
            assertEquals(List.of(1L), ids(c, "sp_t"));
            c.commit();
            assertThrows(SQLException.class, () -> c.rollback(a), "the transaction that held it is over");
            c.setAutoCommit(true);
            assertEquals(List.of(1L), ids(c, "sp_t"));
            s.execute("DROP TABLE sp_t");
        }
    }

    /** Spring's NESTED propagation (DataSourceTransactionManager): the inner failure rolls back to a savepoint only. */
    @Test
    void spring_nested_propagation_rolls_back_to_a_savepoint() throws Exception {
        try (StaunchDataSource ds = JdbcTest.ds(2)) {
            org.springframework.jdbc.core.JdbcTemplate jdbc = new org.springframework.jdbc.core.JdbcTemplate(ds);
            jdbc.execute("CREATE OR REPLACE TABLE nested_t (id INT PRIMARY KEY)");
            var tm = new org.springframework.jdbc.support.JdbcTransactionManager(ds);
            var outer = new org.springframework.transaction.support.TransactionTemplate(tm);
            var inner = new org.springframework.transaction.support.TransactionTemplate(tm);
            inner.setPropagationBehavior(org.springframework.transaction.TransactionDefinition.PROPAGATION_NESTED);
            outer.executeWithoutResult(st -> {
                jdbc.update("INSERT INTO nested_t VALUES (1)");
                assertThrows(IllegalStateException.class, () -> inner.executeWithoutResult(st2 -> {
                    jdbc.update("INSERT INTO nested_t VALUES (2)");
                    throw new IllegalStateException("roll back the nested part");
                }));
                inner.executeWithoutResult(st3 -> jdbc.update("INSERT INTO nested_t VALUES (3)"));
            });
            assertEquals(List.of(1L, 3L), jdbc.queryForList("SELECT id FROM nested_t ORDER BY id", Long.class));
            jdbc.execute("DROP TABLE nested_t");
        }
    }

    @Test
    void created_lobs_bind_as_their_values() throws Exception {
        try (StaunchDataSource ds = JdbcTest.ds(1); Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE OR REPLACE TABLE lob_t (b LONGBLOB, t LONGTEXT, n LONGTEXT) CHARACTER SET utf8mb4");
            Blob b = c.createBlob();
            b.setBytes(1, new byte[] {1, 2, 3});
            try (var out = b.setBinaryStream(4)) {
                out.write(new byte[] {4, 0, 5});
            }
            assertEquals(6, b.length());
            assertEquals(3, b.position(new byte[] {3, 4}, 1));
            Clob t = c.createClob();
            t.setString(1, "héllo wörld");
            t.setString(7, "W");
            NClob n = c.createNClob();
            n.setString(1, "日本語");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO lob_t VALUES (?, ?, ?)")) {
                p.setBlob(1, b);
                p.setClob(2, t);
                p.setClob(3, n);
                assertEquals(1, p.executeUpdate());
            }
            try (ResultSet r = s.executeQuery("SELECT b, t, n FROM lob_t")) {
                assertTrue(r.next());
                assertArrayEquals(new byte[] {1, 2, 3, 4, 0, 5}, r.getBytes(1));
                assertEquals("héllo Wörld", r.getString(2));
                assertEquals("日本語", r.getString(3));
            }
            b.truncate(2);
            assertArrayEquals(new byte[] {1, 2}, b.getBytes(1, 10));
            b.free();
            assertThrows(SQLException.class, b::length);
            s.execute("DROP TABLE lob_t");
        }
    }

    @Test
    void set_catalog_switches_database_and_the_pool_puts_its_own_back() throws Exception {
        try (StaunchDataSource ds = JdbcTest.ds(1)) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE IF NOT EXISTS cat_other");
                s.execute("CREATE OR REPLACE TABLE cat_other.here (x INT)");
                c.setCatalog("cat_other");
                assertEquals("cat_other", c.getCatalog());
                try (ResultSet r = s.executeQuery("SELECT DATABASE(), COUNT(*) FROM here")) {
                    assertTrue(r.next());
                    assertEquals("cat_other", r.getString(1));
                }
            }
            try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT DATABASE()")) {
                assertTrue(r.next());
                assertEquals("staunch_test", r.getString(1), "the next borrower gets the pool's database");
                assertEquals("staunch_test", c.getCatalog());
                s.execute("DROP DATABASE cat_other");
            }
        }
    }

    @Test
    void parameter_metadata_counts_and_does_not_guess_types() throws Exception {
        try (StaunchDataSource ds = JdbcTest.ds(1); Connection c = ds.getConnection();
             PreparedStatement p = c.prepareStatement("SELECT ?, '?', ? /* ? */")) {
            ParameterMetaData m = p.getParameterMetaData();
            assertEquals(2, m.getParameterCount());
            assertEquals(ParameterMetaData.parameterModeIn, m.getParameterMode(1));
            assertEquals(ParameterMetaData.parameterNullableUnknown, m.isNullable(2));
            assertThrows(SQLFeatureNotSupportedException.class, () -> m.getParameterType(1));
            assertThrows(SQLException.class, () -> m.getParameterMode(3));
        }
    }

    @Test
    void driver_manager_opens_jdbc_staunch_urls_on_one_pool_per_url() throws Exception {
        Object port = Env.server().server(0).get("port");
        String url = "jdbc:staunch://127.0.0.1:" + port + "/staunch_test?connectTimeout=2000";
        Properties p = new Properties();
        p.setProperty("user", "app");
        p.setProperty("password", "app-secret");
        long firstId;
        try (Connection c = DriverManager.getConnection(url, p)) {
            assertInstanceOf(StaunchConnection.class, c);
            firstId = JdbcTest.one(c, "SELECT CONNECTION_ID()");
        }
        try (Connection c = DriverManager.getConnection(url, "app", "app-secret")) {
            assertEquals(firstId, JdbcTest.one(c, "SELECT CONNECTION_ID()"), "the same pool, so the same session again");
        }
        try (Connection c = DriverManager.getConnection("jdbc:staunch:mysql://app:app-secret@127.0.0.1:" + port + "/staunch_test")) {
            assertEquals(1, JdbcTest.one(c, "SELECT 1"));
        }
        assertTrue(DriverManager.getDriver(url) instanceof StaunchDriver);
        assertNull(new StaunchDriver().connect("jdbc:mariadb://127.0.0.1:" + port + "/", p), "another driver's URL");
        assertFalse(new StaunchDriver().acceptsURL("jdbc:mysql://x/"));
        SQLException e = assertThrows(SQLException.class,
                () -> DriverManager.getConnection(url + "&noSuchProperty=1", p));
        assertTrue(e.getMessage().contains("noSuchProperty"), e.getMessage());
        assertFalse(e.getMessage().contains("app-secret"), e.getMessage());
    }
}
