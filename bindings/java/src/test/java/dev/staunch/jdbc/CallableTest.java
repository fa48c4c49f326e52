package dev.staunch.jdbc;

import java.math.BigDecimal;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** CallableStatement: CALL with IN, OUT and INOUT parameters, result sets of procedures, {? = call f(?)}. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CallableTest {
    static StaunchDataSource ds;

    @BeforeAll
    static void procedures() throws SQLException {
        ds = JdbcTest.ds(2);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP PROCEDURE IF EXISTS cs_inout");
            s.execute("CREATE PROCEDURE cs_inout(IN a INT, OUT doubled INT, INOUT acc DECIMAL(20,4), OUT label VARCHAR(40))"
                    + " BEGIN SET doubled = a * 2; SET acc = acc + a; SET label = CONCAT('n=', a); END");
            s.execute("DROP PROCEDURE IF EXISTS cs_rows");
            s.execute("CREATE PROCEDURE cs_rows(IN n INT, OUT total INT) BEGIN"
                    + " WITH RECURSIVE t(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM t WHERE v < n) SELECT v FROM t;"
                    + " SELECT 'second' AS w; SET total = n * (n + 1) DIV 2; END");
            s.execute("DROP PROCEDURE IF EXISTS cs_null");
            s.execute("CREATE PROCEDURE cs_null(OUT x INT) BEGIN SET x = NULL; END");
            s.execute("DROP FUNCTION IF EXISTS cs_hello");
            s.execute("CREATE FUNCTION cs_hello(who VARCHAR(40)) RETURNS VARCHAR(60) DETERMINISTIC RETURN CONCAT('hello ', who)");
            s.execute("DROP FUNCTION IF EXISTS cs_half");
            s.execute("CREATE FUNCTION cs_half(x INT) RETURNS INT DETERMINISTIC RETURN x DIV 2");
            s.execute("DROP FUNCTION IF EXISTS cs_day");
            s.execute("CREATE FUNCTION cs_day(x INT) RETURNS DATE DETERMINISTIC RETURN DATE('2024-02-28') + INTERVAL x DAY");
        }
    }

    @AfterAll
    static void close() {
        ds.close();
    }

    @Test
    void in_out_and_inout_parameters() throws SQLException {
        try (Connection c = ds.getConnection(); CallableStatement cs = c.prepareCall("{call cs_inout(?, ?, ?, ?)}")) {
            cs.setInt(1, 21);
            cs.registerOutParameter(2, Types.INTEGER);
            cs.setBigDecimal(3, new BigDecimal("0.1000"));
            cs.registerOutParameter(3, Types.DECIMAL);
            cs.registerOutParameter(4, Types.VARCHAR);
            cs.execute();
            assertEquals(42, cs.getInt(2));
            assertFalse(cs.wasNull());
            assertEquals(new BigDecimal("21.1000"), cs.getBigDecimal(3), "INOUT decimal exact");
            assertEquals("n=21", cs.getString(4));
            assertEquals(42L, cs.getLong(2));
            // Run again with other values: each execution reads its own.
            cs.setInt(1, -5);
            cs.setBigDecimal(3, new BigDecimal("100"));
            cs.execute();
            assertEquals(-10, cs.getInt(2));
            assertEquals(0, new BigDecimal("95").compareTo(cs.getBigDecimal(3)));
            assertEquals("n=-5", cs.getString(4));
            assertThrows(SQLException.class, () -> cs.getInt(1), "parameter 1 is IN");
            assertThrows(SQLException.class, () -> cs.getInt(5), "no parameter 5");
        }
    }

    /** A value with quotes and backslashes reaches the procedure exactly: it travels bound. */
    @Test
    void values_travel_bound() throws SQLException {
        String evil = "x'); DROP PROCEDURE cs_inout; -- \\'\"";
        try (Connection c = ds.getConnection(); CallableStatement cs = c.prepareCall("CALL cs_inout(?, ?, ?, ?)")) {
            cs.setInt(1, 1);
            cs.registerOutParameter(2, Types.INTEGER);
            cs.setString(3, "2.5");
            cs.registerOutParameter(3, Types.DECIMAL);
            cs.registerOutParameter(4, Types.VARCHAR);
            cs.execute();
            assertEquals(new BigDecimal("3.5000"), cs.getBigDecimal(3));
        }
        try (Connection c = ds.getConnection(); CallableStatement cs = c.prepareCall("{? = call cs_hello(?)}")) {
            cs.registerOutParameter(1, Types.VARCHAR);
            cs.setString(2, evil);
            cs.execute();
            assertEquals("hello " + evil, cs.getString(1));
            assertThrows(SQLException.class, () -> cs.setString(1, "x"), "the function's value takes no input");
        }
    }

    /** A function's value reads as any other column's: getInt of an INT, getDate of a DATE, getObject in JDBC's type. */
    @Test
    void a_function_value_reads_with_every_getter() throws SQLException {
        try (Connection c = ds.getConnection(); CallableStatement cs = c.prepareCall("{? = call cs_half(?)}")) {
            cs.registerOutParameter(1, Types.INTEGER);
            cs.setInt(2, 85);
            cs.execute();
            assertEquals(42, cs.getInt(1));
            assertEquals(42L, cs.getLong(1));
            assertEquals(new BigDecimal(42), cs.getBigDecimal(1));
            assertEquals(Integer.valueOf(42), cs.getObject(1));
            assertEquals("42", cs.getString(1));
        }
        try (Connection c = ds.getConnection(); CallableStatement cs = c.prepareCall("{? = call cs_day(?)}")) {
            cs.registerOutParameter(1, Types.DATE);
            cs.setInt(2, 1);
            cs.execute();
            assertEquals(java.sql.Date.valueOf("2024-02-29"), cs.getDate(1));
            assertEquals(java.sql.Date.valueOf("2024-02-29"), cs.getObject(1));
            assertEquals(java.time.LocalDate.of(2024, 2, 29), cs.getObject(1, java.time.LocalDate.class));
            assertEquals("2024-02-29", cs.getString(1));
        }
    }

    @Test
    void result_sets_of_the_procedure_then_its_out_value() throws SQLException {
        try (Connection c = ds.getConnection(); CallableStatement cs = c.prepareCall("{ call cs_rows(?, ?) }")) {
            cs.setInt(1, 4);
            cs.registerOutParameter(2, Types.INTEGER);
            assertTrue(cs.execute(), "the first result is a result set");
            try (ResultSet r = cs.getResultSet()) {
                long sum = 0;
                int n = 0;
                while (r.next()) {
                    sum += r.getLong("v");
                    n++;
                }
                assertEquals(4, n);
                assertEquals(10, sum);
            }
            assertTrue(cs.getMoreResults());
            try (ResultSet r = cs.getResultSet()) {
                assertTrue(r.next());
                assertEquals("second", r.getString(1));
            }
            assertFalse(cs.getMoreResults(), "then the CALL's own status");
            assertEquals(10, cs.getInt(2));
            // executeQuery gives the first result set.
            cs.setInt(1, 2);
            try (ResultSet r = cs.executeQuery()) {
                assertTrue(r.next());
                assertEquals(1, r.getInt(1));
            }
            assertEquals(3, cs.getInt(2));
        }
    }

    @Test
    void null_out_value_and_was_null() throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             CallableStatement cs = c.prepareCall("call cs_null(?)")) {
            s.execute("SET @_staunch_out1 = 7"); // a stale session value is not read back
            cs.registerOutParameter(1, Types.INTEGER);
            cs.executeUpdate();
            assertEquals(0, cs.getInt(1));
            assertTrue(cs.wasNull());
            assertNull(cs.getObject(1));
            assertTrue(cs.wasNull());
        }
    }

    /**
     * conf: OUT parameters by name, beside MariaDB Connector/J 3.5.7 on the same server. A name
     * maps to the routine's parameter of that name (case-insensitively) by its position in
     * information_schema.PARAMETERS; a function's value (position 0, no name) is parameter 1.
     * An unknown name and a null one are refused as Connector/J refuses them.
     */
    @Test
    void out_parameters_by_name_as_connector_j() throws Exception {
        for (javax.sql.DataSource d : new javax.sql.DataSource[] {ds, ToolsTest.connectorJ("staunch_test")}) {
            String who = d == ds ? "staunch" : "Connector/J";
            try (Connection c = d.getConnection(); CallableStatement cs = c.prepareCall("{call cs_inout(?, ?, ?, ?)}")) {
                cs.setInt("a", 21);
                cs.registerOutParameter("doubled", Types.INTEGER);
                cs.setBigDecimal("ACC", new BigDecimal("0.1000"));
                cs.registerOutParameter("acc", Types.DECIMAL);
                cs.registerOutParameter("Label", Types.VARCHAR);
                cs.execute();
                assertEquals(42, cs.getInt("doubled"), who);
                assertFalse(cs.wasNull(), who);
                assertEquals(new BigDecimal("21.1000"), cs.getBigDecimal("acc"), who);
                assertEquals("n=21", cs.getString("LABEL"), who);
                assertEquals(42L, cs.getObject("doubled", Long.class), who);
                // By name and by index are the same parameters.
                assertEquals(cs.getInt(2), cs.getInt("doubled"), who);
                assertEquals(cs.getString(4), cs.getString("label"), who);
                SQLException unknown = assertThrows(SQLException.class, () -> cs.getInt("nope"), who);
                assertTrue(unknown.getMessage().contains("nope"), who + ": " + unknown.getMessage());
                SQLException unknownSet = assertThrows(SQLException.class, () -> cs.setInt("nope", 1), who);
                assertTrue(unknownSet.getMessage().contains("nope"), who + ": " + unknownSet.getMessage());
                SQLException unknownOut = assertThrows(SQLException.class,
                        () -> cs.registerOutParameter("nope", Types.INTEGER), who);
                assertTrue(unknownOut.getMessage().contains("nope"), who + ": " + unknownOut.getMessage());
                // Connector/J: SQLSyntaxErrorException, 42000, "parameter name nope not found".
                assertInstanceOf(java.sql.SQLSyntaxErrorException.class, unknown, who);
                assertEquals("42000", unknown.getSQLState(), who);
                SQLException none = assertThrows(SQLException.class, () -> cs.getInt((String) null), who);
                assertInstanceOf(java.sql.SQLSyntaxErrorException.class, none, who);
                assertEquals("42000", none.getSQLState(), who);
                assertTrue(none.getMessage().contains("null"), who + ": " + none.getMessage());
                assertThrows(SQLException.class, () -> cs.getInt("a"), who + ": a is IN");
            }
            try (Connection c = d.getConnection(); CallableStatement cs = c.prepareCall("{? = call cs_hello(?)}")) {
                cs.registerOutParameter(1, Types.VARCHAR);
                cs.setString("who", "by name");
                cs.execute();
                assertEquals("hello by name", cs.getString(1), who);
                cs.setClob("who", new java.io.StringReader("a reader"));
                cs.execute();
                assertEquals("hello a reader", cs.getString(1), who);
                assertThrows(SQLException.class, () -> cs.setString("nope", "x"), who);
            }
            try (Connection c = d.getConnection(); CallableStatement cs = c.prepareCall("call cs_null(?)")) {
                cs.registerOutParameter("x", Types.INTEGER);
                cs.execute();
                assertEquals(0, cs.getInt("x"), who);
                assertTrue(cs.wasNull(), who);
                assertNull(cs.getObject("x"), who);
            }
        }
    }

    @Test
    void errors_are_clear() throws SQLException {
        try (Connection c = ds.getConnection()) {
            assertThrows(SQLException.class, () -> c.prepareCall("SELECT 1"), "not a call");
            try (CallableStatement cs = c.prepareCall("call cs_inout(?, ?, ?, ?)")) {
                cs.setInt(1, 1);
                SQLException e = assertThrows(SQLException.class, cs::execute);
                assertTrue(e.getMessage().contains("parameter 2"), e.getMessage());
                assertThrows(SQLException.class, () -> cs.getInt(2), "nothing read before an execution");
            }
            try (CallableStatement cs = c.prepareCall("call no_such_proc(?)")) {
                cs.setInt(1, 1);
                assertThrows(SQLException.class, cs::execute);
            }
            assertTrue(c.isValid(2), "the connection stays usable");
        }
    }

    @Test
    void metadata_says_stored_procedures() throws SQLException {
        try (Connection c = ds.getConnection()) {
            assertTrue(c.getMetaData().supportsStoredProcedures());
            assertTrue(c.getMetaData().supportsStoredFunctionsUsingCallSyntax());
            assertInstanceOf(StaunchCallableStatement.class, c.prepareCall("CALL cs_null(?)"));
        }
    }
}
