package dev.staunch.jdbc;

import dev.staunch.Env;
import java.math.BigDecimal;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLDataException;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue #20 on the JDBC face: the conformance scenarios conf_decimal_exact,
 * conf_unpreparable and conf_sql_modes through StaunchDataSource, both ways a
 * statement is sent (the default, client-side interpolation as MariaDB
 * Connector/J's useServerPrepStmts=false, and useServerPrepStmts=true), each
 * beside MariaDB Connector/J 3.5.7 at its defaults on the same server.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ValuesTest {
    /** The two ways: the default (interpolation) and server-side prepare. */
    static final String[] WAYS = {"", "&useServerPrepStmts=true"};

    static StaunchDataSource ds(String props) {
        StaunchDataSource ds = new StaunchDataSource();
        ds.setJdbcUrl("jdbc:mariadb://127.0.0.1:" + Env.server().server(0).get("port")
                + "/staunch_test?connectTimeout=2000" + props);
        ds.setUsername("app");
        ds.setPassword("app-secret");
        ds.setMaximumPoolSize(2);
        return ds;
    }

    /** MariaDB Connector/J at its defaults on the same server. */
    static Connection connectorJ() throws SQLException {
        return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + Env.server().server(0).get("port")
                + "/staunch_test?user=app&password=app-secret");
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** conf_decimal_exact: bal = bal + 0.01 on DECIMAL(30,2), SELECT ? of 15.7563 (a DECIMAL column). */
    static void decimalExact(Connection c, String how) throws SQLException {
        exec(c, "CREATE TEMPORARY TABLE t_dec (id INT PRIMARY KEY, bal DECIMAL(30,2))");
        try {
            try (PreparedStatement p = c.prepareStatement("INSERT INTO t_dec VALUES (?, ?)")) {
                p.setInt(1, 1);
                p.setBigDecimal(2, new BigDecimal("1234567890123456789.01"));
                p.executeUpdate();
                p.setInt(1, 2);
                p.setObject(2, new BigDecimal("1234567890123456789.01"));
                p.executeUpdate();
                p.setInt(1, 3);
                p.setObject(2, "1234567890123456789.01", Types.DECIMAL);
                p.executeUpdate();
            }
            try (PreparedStatement p = c.prepareStatement("UPDATE t_dec SET bal = bal + ? WHERE id = ?")) {
                p.setBigDecimal(1, new BigDecimal("0.01"));
                p.setInt(2, 1);
                assertEquals(1, p.executeUpdate(), how);
                p.setObject(1, new BigDecimal("0.01"));
                p.setInt(2, 2);
                assertEquals(1, p.executeUpdate(), how);
                p.setObject(1, "0.01", Types.NUMERIC);
                p.setInt(2, 3);
                assertEquals(1, p.executeUpdate(), how);
            }
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT bal FROM t_dec ORDER BY id")) {
                for (int id = 1; id <= 3; id++) {
                    assertTrue(r.next());
                    assertEquals(new BigDecimal("1234567890123456789.02"), r.getBigDecimal(1), how + " id " + id);
                }
            }
            // A comparison is exact too: 0.01 more is not equal.
            try (PreparedStatement p = c.prepareStatement("SELECT COUNT(*) FROM t_dec WHERE bal = ?")) {
                p.setBigDecimal(1, new BigDecimal("1234567890123456789.03"));
                try (ResultSet r = p.executeQuery()) {
                    assertTrue(r.next());
                    assertEquals(0, r.getInt(1), how);
                }
            }
        } finally {
            exec(c, "DROP TEMPORARY TABLE t_dec");
        }
        try (PreparedStatement p = c.prepareStatement("SELECT ?, ? + 0")) {
            p.setBigDecimal(1, new BigDecimal("15.7563"));
            p.setObject(2, new BigDecimal("0.1"));
            try (ResultSet r = p.executeQuery()) {
                assertTrue(r.next());
                assertEquals(new BigDecimal("15.7563"), r.getBigDecimal(1), how);
                assertEquals(new BigDecimal("15.7563"), r.getObject(1), how);
                assertEquals(Types.DECIMAL, r.getMetaData().getColumnType(1), how + ": a DECIMAL column");
                assertEquals(Types.DECIMAL, r.getMetaData().getColumnType(2), how + ": decimal + 0 stays DECIMAL");
                assertEquals(new BigDecimal("0.1"), r.getBigDecimal(2), how);
            }
        }
    }

    @Test
    void conf_decimal_exact_jdbc() throws Exception {
        for (String way : WAYS) {
            try (StaunchDataSource ds = ds(way); Connection c = ds.getConnection()) {
                decimalExact(c, "staunch" + way);
            }
        }
        try (Connection cj = connectorJ()) {
            decimalExact(cj, "Connector/J");
        }
    }

    @Test
    void conf_decimal_exact_jdbc_65_digits_and_a_bad_decimal_is_refused_naming_the_parameter() throws Exception {
        BigDecimal max = new BigDecimal("9".repeat(27) + "." + "9".repeat(38)); // 65 digits, 38 after the point
        BigDecimal negative = new BigDecimal("-" + "1".repeat(65));
        for (String way : WAYS) {
            try (StaunchDataSource ds = ds(way); Connection c = ds.getConnection()) {
                try (PreparedStatement p = c.prepareStatement("SELECT ?, ?, ? - ?")) {
                    p.setBigDecimal(1, max);
                    p.setBigDecimal(2, negative);
                    p.setBigDecimal(3, max);
                    p.setBigDecimal(4, new BigDecimal("0." + "0".repeat(37) + "1"));
                    try (ResultSet r = p.executeQuery()) {
                        assertTrue(r.next());
                        assertEquals(max, r.getBigDecimal(1), way);
                        assertEquals(negative, r.getBigDecimal(2), way);
                        assertEquals(new BigDecimal("9".repeat(27) + "." + "9".repeat(37) + "8"), r.getBigDecimal(3), way);
                    }
                }
                try (PreparedStatement p = c.prepareStatement("SELECT ?, ?")) {
                    p.setInt(1, 7);
                    p.setBigDecimal(2, new BigDecimal("1".repeat(66)));
                    SQLDataException e = assertThrows(SQLDataException.class, p::executeQuery, way);
                    assertTrue(e.getMessage().contains("parameter 2") && e.getMessage().contains("66 digits"),
                            e.getMessage());
                    p.setBigDecimal(2, new BigDecimal("1E-39"));
                    e = assertThrows(SQLDataException.class, p::executeQuery, way);
                    assertTrue(e.getMessage().contains("parameter 2")
                            && e.getMessage().contains("39 digits after the point"), e.getMessage());
                    // Refused before anything was sent: the connection serves on.
                    p.setBigDecimal(2, BigDecimal.ONE);
                    try (ResultSet r = p.executeQuery()) {
                        assertTrue(r.next());
                        assertEquals(BigDecimal.ONE, r.getBigDecimal(2));
                    }
                }
                try (PreparedStatement p = c.prepareStatement("SELECT ?")) {
                    SQLDataException e = assertThrows(SQLDataException.class,
                            () -> p.setObject(1, "12,50", Types.DECIMAL));
                    assertTrue(e.getMessage().contains("parameter 1"), e.getMessage());
                    assertThrows(SQLDataException.class, () -> p.setObject(1, Double.NaN, Types.DECIMAL));
                }
            }
        }
    }

    @Test
    void conf_decimal_exact_jdbc_callable() throws Exception {
        try (StaunchDataSource ds = ds(""); Connection c = ds.getConnection()) {
            exec(c, "DROP PROCEDURE IF EXISTS p_cents");
            exec(c, "CREATE PROCEDURE p_cents(INOUT bal DECIMAL(30,2), IN d DECIMAL(30,2)) SET bal = bal + d");
            try (CallableStatement cs = c.prepareCall("{call p_cents(?, ?)}")) {
                cs.registerOutParameter(1, Types.DECIMAL);
                cs.setBigDecimal(1, new BigDecimal("1234567890123456789.01"));
                cs.setObject(2, new BigDecimal("0.01"));
                cs.execute();
                assertEquals(new BigDecimal("1234567890123456789.02"), cs.getBigDecimal(1));
            } finally {
                exec(c, "DROP PROCEDURE p_cents");
            }
        }
    }

    /** conf_unpreparable: a window frame with bound values, and VALUES in a CTE (interpolation only). */
    static void unpreparable(Connection c, String how, boolean values) throws SQLException {
        exec(c, "CREATE TEMPORARY TABLE t_w (x INT)");
        try {
            exec(c, "INSERT INTO t_w VALUES (1), (2), (3)");
            try (PreparedStatement p = c.prepareStatement(
                    "SELECT SUM(x) OVER (ORDER BY x ROWS BETWEEN ? PRECEDING AND ? FOLLOWING) FROM t_w ORDER BY x")) {
                p.setInt(1, 1);
                p.setInt(2, 1);
                List<Long> sums = new ArrayList<>();
                try (ResultSet r = p.executeQuery()) {
                    while (r.next()) {
                        sums.add(r.getLong(1));
                    }
                }
                assertEquals(List.of(3L, 6L, 5L), sums, how);
            }
        } finally {
            exec(c, "DROP TEMPORARY TABLE t_w");
        }
        if (values) {
            try (PreparedStatement p = c.prepareStatement("WITH c(a,b) AS (VALUES (?, ?), (?, ?)) SELECT a, b FROM c")) {
                p.setString(1, "a");
                p.setInt(2, 2);
                p.setString(3, "b");
                p.setInt(4, 3);
                List<String> rows = new ArrayList<>();
                try (ResultSet r = p.executeQuery()) {
                    while (r.next()) {
                        rows.add(r.getString(1) + "," + r.getInt(2));
                    }
                }
                assertEquals(List.of("a,2", "b,3"), rows, how);
            }
        }
    }

    @Test
    void conf_unpreparable_jdbc() throws Exception {
        try (StaunchDataSource ds = ds(""); Connection c = ds.getConnection()) {
            unpreparable(c, "staunch (default: interpolation)", true);
        }
        // Server-side prepare: the server refuses the window frame (1064 at prepare), so it is interpolated.
        try (StaunchDataSource ds = ds("&useServerPrepStmts=true"); Connection c = ds.getConnection()) {
            unpreparable(c, "staunch useServerPrepStmts=true", false);
        }
        try (Connection cj = connectorJ()) {
            unpreparable(cj, "Connector/J", true);
        }
    }

    /** Com_stmt_prepare of the session around one PreparedStatement execution. */
    static long prepares(Connection c) throws SQLException {
        long before = status(c);
        try (PreparedStatement p = c.prepareStatement("SELECT ? + 1")) {
            p.setInt(1, 41);
            try (ResultSet r = p.executeQuery()) {
                assertTrue(r.next());
                assertEquals(42, r.getInt(1));
            }
        }
        return status(c) - before;
    }

    static long status(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")) {
            assertTrue(r.next());
            return r.getLong(2);
        }
    }

    @Test
    void statements_are_sent_as_connector_j_sends_them_interpolated_by_default_prepared_with_useServerPrepStmts()
            throws Exception {
        long cjDefault;
        long cjServer;
        try (Connection cj = connectorJ()) {
            cjDefault = prepares(cj);
        }
        try (Connection cj = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + Env.server().server(0).get("port")
                + "/staunch_test?user=app&password=app-secret&useServerPrepStmts=true")) {
            cjServer = prepares(cj);
        }
        assertEquals(0, cjDefault, "Connector/J's default: no server-side prepare");
        assertEquals(1, cjServer, "Connector/J with useServerPrepStmts=true prepares");
        try (StaunchDataSource ds = ds(""); Connection c = ds.getConnection()) {
            assertEquals(cjDefault, prepares(c), "staunch's default is Connector/J's");
        }
        try (StaunchDataSource ds = ds("&useServerPrepStmts=true"); Connection c = ds.getConnection()) {
            assertEquals(cjServer, prepares(c), "useServerPrepStmts=true as in Connector/J");
        }
        // rewriteBatchedStatements=true turns server-side prepare off in Connector/J 3.x; so in staunch.
        try (StaunchDataSource ds = ds("&useServerPrepStmts=true&rewriteBatchedStatements=true");
             Connection c = ds.getConnection()) {
            assertEquals(0, prepares(c));
        }
        // staunch's own knob, as a data source property, wins over the default.
        try (StaunchDataSource ds = ds("")) {
            ds.addDataSourceProperty("interpolate_params", "false");
            try (Connection c = ds.getConnection()) {
                assertEquals(1, prepares(c));
            }
        }
        // And in a staunch mysql:// URL, which the library reads: the data source's interpolation is
        // only a default there (staunch_options_set_default).
        String direct = "mysql://app:app-secret@127.0.0.1:" + Env.server().server(0).get("port") + "/staunch_test";
        for (String query : new String[] {"", "?interpolate_params=false", "?interpolate_params=true"}) {
            try (StaunchDataSource ds = new StaunchDataSource()) {
                ds.setJdbcUrl(direct + query);
                try (Connection c = ds.getConnection()) {
                    assertEquals(query.endsWith("false") ? 1 : 0, prepares(c), query);
                }
            }
        }
    }

    /** conf_sql_modes: the literal C:\ written as the mode reads it, bytes ff 00 41, and a text with ' \ " ?. */
    static void sqlModes(Connection c, String mode, String how) throws SQLException {
        byte[] bytes = {(byte) 0xff, 0, 0x41};
        String text = "it's a \\ back\\slash, a \"quote\" and a ? mark\\";
        exec(c, "SET SESSION sql_mode = '" + mode + "'");
        String literal = mode.equals("NO_BACKSLASH_ESCAPES") ? "'C:\\'" : "'C:\\\\'";
        String ident = mode.equals("ANSI_QUOTES") ? "\"a?\"" : "`a?`";
        try (PreparedStatement p = c.prepareStatement("SELECT " + literal + ", ?, 'why?', ? AS " + ident
                + " /* ? */ -- ?\n")) {
            assertEquals(2, p.getParameterMetaData().getParameterCount(), how);
            p.setBytes(1, bytes);
            p.setString(2, text);
            try (ResultSet r = p.executeQuery()) {
                assertTrue(r.next());
                assertEquals("C:\\", r.getString(1), how);
                assertArrayEquals(bytes, r.getBytes(2), how);
                assertEquals("why?", r.getString(3), how);
                assertEquals(text, r.getString(4), how);
                assertEquals("a?", r.getMetaData().getColumnLabel(4), how);
            }
        }
    }

    @Test
    void conf_sql_modes_jdbc() throws Exception {
        for (String mode : new String[] {"NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"}) {
            for (String way : WAYS) {
                try (StaunchDataSource ds = ds(way); Connection c = ds.getConnection()) {
                    sqlModes(c, mode, "staunch " + mode + way);
                }
            }
            try (Connection cj = connectorJ()) {
                sqlModes(cj, mode, "Connector/J " + mode);
            }
        }
    }

    @Test
    void conf_sql_modes_jdbc_callable_placeholders_under_no_backslash_escapes() throws Exception {
        try (StaunchDataSource ds = ds(""); Connection c = ds.getConnection()) {
            exec(c, "DROP PROCEDURE IF EXISTS p_mark");
            exec(c, "CREATE PROCEDURE p_mark(IN a VARCHAR(20), IN b VARCHAR(20), OUT r VARCHAR(60)) "
                    + "SET r = CONCAT(a, '|', b)");
            try {
                exec(c, "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'");
                // 'C:\' ends at its second quote: the ? after it are the call's two placeholders.
                try (CallableStatement cs = c.prepareCall("{call p_mark('C:\\', ?, ?)}")) {
                    assertEquals(2, cs.getParameterMetaData().getParameterCount());
                    cs.setString(1, "why?");
                    cs.registerOutParameter(2, Types.VARCHAR);
                    cs.execute();
                    assertEquals("C:\\|why?", cs.getString(2));
                }
            } finally {
                exec(c, "SET SESSION sql_mode = DEFAULT");
                exec(c, "DROP PROCEDURE p_mark");
            }
        }
    }
}
