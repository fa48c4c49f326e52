package dev.staunch.jdbc;

import dev.staunch.Env;
import dev.staunch.Staunch;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * StaunchDatabaseMetaData side by side with MariaDB Connector/J's on the same
 * server and the same schema (tables, a view, primary, unique, composite and
 * foreign keys, indexes, a procedure with IN/OUT/INOUT and a function): every
 * no-argument method, the argument-taking supports* methods, and each catalog
 * method's result set (column labels, then rows as text). A difference fails
 * the test unless it is listed below with its reason; a listed difference
 * that no longer differs fails it too, so the list stays true.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaDataTest {
    static final String DB = "meta_cmp";

    /**
     * The driver's own name and version: not compared (a different driver,
     * whose numbers may coincide: staunch 1.5 and Connector/J 3.5 share a
     * minor version), but checked to be staunch's.
     */
    static final Set<String> DRIVER_IDENTITY =
        Set.of("getDriverName", "getDriverVersion", "getDriverMajorVersion", "getDriverMinorVersion");

    /** No-argument methods allowed to answer differently, and why. */
    static final Map<String, String> ALLOWED = Map.ofEntries(
        Map.entry("getURL", "each driver answers its own URL (jdbc:mariadb:// as given vs the pool's)"),
        Map.entry("getJDBCMinorVersion", "staunch implements JDBC 4.3 (JDK 9+ interfaces); Connector/J says 4.2"),
        Map.entry("nullsAreSortedAtEnd", "the server sorts NULL lowest (first ascending, last descending): "
                + "Connector/J says both sortedLow and sortedAtEnd, which JDBC defines as exclusive"),
        Map.entry("supportsFullOuterJoins", "MariaDB and MySQL have no FULL OUTER JOIN (Connector/J says true)"),
        Map.entry("supportsANSI92FullSQL", "no FULL OUTER JOIN among others, so not full SQL-92 (Connector/J says true)"),
        Map.entry("getMaxStatementLength", "the server refuses a statement longer than max_allowed_packet; "
                + "Connector/J says 0 (unknown)"),
        Map.entry("getSQLKeywords", "Connector/J's list runs eight pairs of words together for want of a comma "
                + "(ENCLOSEDESCAPED, FROMFULLTEXT, INTERSECTINTERVAL...); staunch's is the same words, separated"),
        Map.entry("locatorsUpdateCopy", "a Blob/Clob from staunch is a copy (changing it changes nothing in the "
                + "database), which is what true means; Connector/J's are copies too but it says false"));

    /** Catalog methods allowed to differ, and why. */
    static final Map<String, String> ALLOWED_RESULTS = Map.ofEntries(
        Map.entry("getTableTypes", "staunch lists SEQUENCE, a table type MariaDB >= 10.3 has and getTables returns "
                + "(Connector/J does not list it)"),
        Map.entry("getVersionColumns", "staunch lists the ON UPDATE CURRENT_TIMESTAMP column, which the server "
                + "changes on every update (what JDBC asks); Connector/J answers no rows"),
        Map.entry("getTypeInfo", "the same type names and DATA_TYPEs (checked below); flags written as booleans "
                + "(Connector/J: BIT) and TIME/DATETIME/TIMESTAMP precisions as the server's (17/26, Connector/J 18/27), "
                + "CREATE_PARAMS with the server's syntax"));

    static Connection cj;
    static StaunchDataSource ds;
    static Connection st;

    @BeforeAll
    static void setUp() throws Exception {
        Map<String, Object> srv = Env.server().server(0);
        cj = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + srv.get("port") + "/staunch_test?user=app&password=app-secret");
        try (Statement s = cj.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + DB);
            s.execute("CREATE DATABASE " + DB);
            s.execute("USE " + DB);
            s.execute("CREATE TABLE parent (id INT AUTO_INCREMENT PRIMARY KEY, code VARCHAR(20) NOT NULL UNIQUE,"
                    + " name VARCHAR(100) COMMENT 'the name', price DECIMAL(10,2) DEFAULT 1.50, KEY by_name (name DESC))"
                    + " COMMENT 'parents'");
            s.execute("CREATE TABLE child (id BIGINT UNSIGNED NOT NULL, seq SMALLINT NOT NULL, parent_id INT,"
                    + " flag TINYINT(1) NOT NULL DEFAULT 0, small TINYINT, y YEAR, d DATE, t TIME(3), dt DATETIME(6),"
                    + " ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,"
                    + " note TEXT, b VARBINARY(16), bl BLOB, f FLOAT, dbl DOUBLE, e ENUM('a','b'), st SET('x','y'),"
                    + " bits BIT(3), twice INT AS (seq * 2) VIRTUAL,"
                    + " PRIMARY KEY (id, seq), CONSTRAINT fk_child_parent FOREIGN KEY (parent_id) REFERENCES parent (id)"
                    + " ON DELETE CASCADE ON UPDATE SET NULL)");
            s.execute("CREATE TABLE uniq_only (a INT NOT NULL, b INT, UNIQUE KEY ua (a))");
            s.execute("CREATE TABLE `odd_na'me` (`co\\l` INT)");
            s.execute("CREATE VIEW parent_names AS SELECT id, name FROM parent");
            s.execute("CREATE PROCEDURE add_to(IN a INT, OUT b VARCHAR(10), INOUT c DECIMAL(8,3)) COMMENT 'adds'"
                    + " BEGIN SET b = CONCAT(a, ''); SET c = c + a; END");
            s.execute("CREATE FUNCTION twice(x INT) RETURNS BIGINT DETERMINISTIC RETURN x * 2");
        }
        ds = JdbcTest.ds(2);
        st = ds.getConnection();
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (st != null) {
            st.close();
        }
        if (ds != null) {
            ds.close();
        }
        if (cj != null) {
            try (Statement s = cj.createStatement()) {
                s.execute("DROP DATABASE IF EXISTS " + DB);
            }
            cj.close();
        }
    }

    static Object call(Method m, DatabaseMetaData md, Object... args) {
        try {
            return m.invoke(md, args);
        } catch (ReflectiveOperationException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            return "threw " + c.getClass().getSimpleName() + ": " + c.getMessage();
        }
    }

    @Test
    void every_no_argument_method_answers_as_connector_j() throws Exception {
        compareNoArgumentMethods(st.getMetaData(), cj.getMetaData(), ALLOWED);
    }

    /** Every no-argument method of {@code a} (staunch) against {@code b} (Connector/J); {@code allowed}: the differences allowed. */
    static void compareNoArgumentMethods(DatabaseMetaData a, DatabaseMetaData b, Map<String, String> allowed) {
        Map<String, String> differ = new TreeMap<>();
        int equal = 0;
        int compared = 0;
        Method[] ms = DatabaseMetaData.class.getMethods();
        Arrays.sort(ms, Comparator.comparing(Method::getName));
        for (Method m : ms) {
            if (m.getParameterCount() != 0 || ResultSet.class.isAssignableFrom(m.getReturnType())
                    || m.getReturnType() == Connection.class || DRIVER_IDENTITY.contains(m.getName())) {
                continue;
            }
            compared++;
            Object x = call(m, a);
            Object y = call(m, b);
            if (x instanceof String xs && xs.startsWith("threw ")) {
                differ.put(m.getName(), "staunch " + xs);
            } else if (Objects.equals(x, y)) {
                equal++;
            } else {
                differ.put(m.getName(), "staunch " + x + ", Connector/J " + y);
            }
        }
        System.out.println("MetaDataTest: " + compared + " no-argument methods, " + equal + " equal, "
                + differ.size() + " allowed differences:");
        differ.forEach((k, v) -> System.out.println("  " + k + ": " + v + " -- " + allowed.getOrDefault(k, "NOT ALLOWED")));
        Map<String, String> unexpected = new TreeMap<>(differ);
        unexpected.keySet().removeAll(allowed.keySet());
        assertEquals(Map.of(), unexpected, "differences not in the allowed list");
        List<String> stale = new ArrayList<>(allowed.keySet());
        stale.removeAll(differ.keySet());
        assertEquals(List.of(), stale, "allowed differences that no longer differ");
        assertTrue(compared > 130, "compared " + compared);
        int v = Staunch.versionNumber();
        try {
            assertEquals("staunch", a.getDriverName());
            assertEquals(Staunch.version(), a.getDriverVersion());
            assertEquals(v / 10000, a.getDriverMajorVersion());
            assertEquals((v / 100) % 100, a.getDriverMinorVersion());
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /** The supports* methods that take arguments, over every combination that means something. */
    @Test
    void argument_taking_supports_methods_answer_as_connector_j() throws Exception {
        DatabaseMetaData a = st.getMetaData();
        DatabaseMetaData b = cj.getMetaData();
        int[] types = {Types.BIT, Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT, Types.FLOAT, Types.REAL,
            Types.DOUBLE, Types.NUMERIC, Types.DECIMAL, Types.CHAR, Types.VARCHAR, Types.LONGVARCHAR, Types.DATE,
            Types.TIME, Types.TIMESTAMP, Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.NULL, Types.OTHER,
            Types.BLOB, Types.CLOB, Types.BOOLEAN, Types.NCHAR, Types.NCLOB, Types.LONGNVARCHAR};
        for (int from : types) {
            for (int to : types) {
                assertEquals(b.supportsConvert(from, to), a.supportsConvert(from, to), "supportsConvert(" + from + ", " + to + ")");
            }
        }
        for (int level = 0; level <= 8; level++) {
            assertEquals(b.supportsTransactionIsolationLevel(level), a.supportsTransactionIsolationLevel(level), "isolation " + level);
        }
        for (int h : new int[] {ResultSet.HOLD_CURSORS_OVER_COMMIT, ResultSet.CLOSE_CURSORS_AT_COMMIT}) {
            assertEquals(b.supportsResultSetHoldability(h), a.supportsResultSetHoldability(h));
        }
        // Allowed: staunch's result sets are forward-only (Connector/J also offers scroll-insensitive ones,
        // and answers the visibility methods from that); the same for both at TYPE_FORWARD_ONLY.
        assertTrue(a.supportsResultSetType(ResultSet.TYPE_FORWARD_ONLY));
        assertFalse(a.supportsResultSetType(ResultSet.TYPE_SCROLL_INSENSITIVE));
        assertFalse(a.supportsResultSetType(ResultSet.TYPE_SCROLL_SENSITIVE));
        assertEquals(b.supportsResultSetType(ResultSet.TYPE_SCROLL_SENSITIVE), a.supportsResultSetType(ResultSet.TYPE_SCROLL_SENSITIVE));
        assertEquals(b.othersUpdatesAreVisible(ResultSet.TYPE_FORWARD_ONLY), a.othersUpdatesAreVisible(ResultSet.TYPE_FORWARD_ONLY));
    }

    interface Call {
        ResultSet on(DatabaseMetaData md) throws SQLException;
    }

    record Table(List<String> labels, List<List<String>> rows) {}

    static Table read(ResultSet r) throws SQLException {
        try (r) {
            ResultSetMetaData m = r.getMetaData();
            List<String> labels = new ArrayList<>();
            for (int i = 1; i <= m.getColumnCount(); i++) {
                labels.add(m.getColumnLabel(i));
            }
            List<List<String>> rows = new ArrayList<>();
            while (r.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 1; i <= labels.size(); i++) {
                    row.add(r.getString(i));
                }
                rows.add(row);
            }
            return new Table(labels, rows);
        }
    }

    /** The catalog calls, naming the test database as catalog {@code cat} or schema {@code sch} (the other null). */
    static Map<String, Call> calls(String cat, String sch) {
        Map<String, Call> c = new LinkedHashMap<>();
        c.put("getCatalogs", md -> md.getCatalogs());
        c.put("getSchemas", md -> md.getSchemas());
        c.put("getSchemas(cat,%)", md -> md.getSchemas(cat, sch == null ? "%" : "meta\\_%"));
        c.put("getTableTypes", md -> md.getTableTypes());
        c.put("getTables", md -> md.getTables(cat, sch, "%", null));
        c.put("getTables(TABLE)", md -> md.getTables(cat, sch, "%", new String[] {"TABLE"}));
        c.put("getTables(VIEW,pattern)", md -> md.getTables(cat, sch, "parent%", new String[] {"VIEW"}));
        c.put("getTables(escaped _)", md -> md.getTables(cat, sch, "uniq\\_only", null));
        c.put("getTables(quote)", md -> md.getTables(cat, sch, "odd_na'me", null));
        c.put("getColumns", md -> md.getColumns(cat, sch, "%", "%"));
        c.put("getColumns(child,d%)", md -> md.getColumns(cat, sch, "child", "d%"));
        c.put("getColumns(backslash)", md -> md.getColumns(cat, sch, "odd\\_na'me", "co\\\\l"));
        c.put("getPrimaryKeys", md -> md.getPrimaryKeys(cat, sch, "child"));
        c.put("getPrimaryKeys(parent)", md -> md.getPrimaryKeys(cat, sch, "parent"));
        c.put("getIndexInfo", md -> md.getIndexInfo(cat, sch, "parent", false, true));
        c.put("getIndexInfo(unique)", md -> md.getIndexInfo(cat, sch, "parent", true, true));
        c.put("getImportedKeys", md -> md.getImportedKeys(cat, sch, "child"));
        c.put("getExportedKeys", md -> md.getExportedKeys(cat, sch, "parent"));
        c.put("getCrossReference", md -> md.getCrossReference(cat, sch, "parent", cat, sch, "child"));
        c.put("getBestRowIdentifier", md -> md.getBestRowIdentifier(cat, sch, "child", DatabaseMetaData.bestRowSession, true));
        c.put("getBestRowIdentifier(unique)", md -> md.getBestRowIdentifier(cat, sch, "uniq_only", DatabaseMetaData.bestRowSession, false));
        c.put("getVersionColumns", md -> md.getVersionColumns(cat, sch, "child"));
        c.put("getProcedures", md -> md.getProcedures(cat, sch, "%"));
        c.put("getProcedureColumns", md -> md.getProcedureColumns(cat, sch, "add_to", "%"));
        c.put("getFunctions", md -> md.getFunctions(cat, sch, "%"));
        c.put("getFunctionColumns", md -> md.getFunctionColumns(cat, sch, "twice", "%"));
        c.put("getTablePrivileges", md -> md.getTablePrivileges(cat, sch, "%"));
        c.put("getColumnPrivileges", md -> md.getColumnPrivileges(cat, sch, "parent", "%"));
        c.put("getClientInfoProperties", md -> md.getClientInfoProperties());
        c.put("getUDTs", md -> md.getUDTs(cat, sch, "%", null));
        c.put("getSuperTypes", md -> md.getSuperTypes(cat, sch, "%"));
        c.put("getSuperTables", md -> md.getSuperTables(cat, sch, "%"));
        c.put("getAttributes", md -> md.getAttributes(cat, sch, "%", "%"));
        c.put("getPseudoColumns", md -> md.getPseudoColumns(cat, sch, "%", "%"));
        c.put("getTypeInfo", md -> md.getTypeInfo());
        return c;
    }

    @Test
    void every_catalog_method_returns_connector_js_result_set() throws Exception {
        compareCatalogMethods(st.getMetaData(), cj.getMetaData(), calls(DB, null), ALLOWED_RESULTS);
    }

    /** Each catalog call's result set from {@code a} (staunch) against {@code b}'s (Connector/J). */
    static void compareCatalogMethods(DatabaseMetaData a, DatabaseMetaData b, Map<String, Call> calls,
                                      Map<String, String> allowedResults) throws SQLException {
        List<String> equal = new ArrayList<>();
        Map<String, String> differ = new TreeMap<>();
        for (Map.Entry<String, Call> e : calls.entrySet()) {
            String name = e.getKey();
            Table x = read(e.getValue().on(a));
            Table y = read(e.getValue().on(b));
            if (x.equals(y)) {
                equal.add(name);
                continue;
            }
            String base = name.replaceAll("\\(.*", "");
            String detail = !x.labels().equals(y.labels()) ? "labels: staunch " + x.labels() + ", Connector/J " + y.labels()
                    : "rows: staunch " + x.rows() + "\n    Connector/J " + y.rows();
            differ.put(name, detail);
            if (!allowedResults.containsKey(base)) {
                System.out.println("  " + name + " differs: " + detail);
            }
        }
        System.out.println("MetaDataTest: " + calls.size() + " catalog calls, " + equal.size() + " equal, "
                + differ.size() + " allowed differences:");
        differ.keySet().forEach(k -> System.out.println("  " + k + " -- "
                + allowedResults.getOrDefault(k.replaceAll("\\(.*", ""), "NOT ALLOWED")));
        for (String k : differ.keySet()) {
            assertTrue(allowedResults.containsKey(k.replaceAll("\\(.*", "")), k + " differs: " + differ.get(k));
        }
        for (String k : allowedResults.keySet()) {
            assertTrue(differ.containsKey(k), k + " is listed as allowed to differ but is equal");
        }
    }

    /** The parts of the allowed differences that must still agree. */
    @Test
    void allowed_differences_keep_what_matters() throws Exception {
        DatabaseMetaData a = st.getMetaData();
        DatabaseMetaData b = cj.getMetaData();
        // getTypeInfo: the same (TYPE_NAME, DATA_TYPE) pairs, in DATA_TYPE order.
        List<String> ta = new ArrayList<>();
        List<String> tb = new ArrayList<>();
        for (List<String> r : read(a.getTypeInfo()).rows()) {
            ta.add(r.get(0) + "=" + r.get(1));
        }
        Table cjTypes = read(b.getTypeInfo());
        for (List<String> r : cjTypes.rows()) {
            tb.add(r.get(0) + "=" + r.get(1));
        }
        assertEquals(tb, ta);
        assertEquals(cjTypes.labels(), read(a.getTypeInfo()).labels());
        // getTableTypes: Connector/J's and SEQUENCE.
        List<List<String>> typesA = read(a.getTableTypes()).rows();
        List<List<String>> typesB = new ArrayList<>(read(b.getTableTypes()).rows());
        typesB.add(List.of("SEQUENCE"));
        typesB.sort(Comparator.comparing(r -> r.get(0)));
        assertEquals(typesB, typesA);
        // getVersionColumns: the same columns as Connector/J's empty answer, and the one ts column.
        Table va = read(a.getVersionColumns(DB, null, "child"));
        assertEquals(read(b.getVersionColumns(DB, null, "child")).labels(), va.labels());
        assertEquals(1, va.rows().size());
        assertEquals("ts", va.rows().get(0).get(1));
        assertEquals(String.valueOf(Types.TIMESTAMP), va.rows().get(0).get(2));
    }

    /** Names reach the server as literals that mean the same whatever the sql_mode. */
    @Test
    void names_with_quotes_and_backslashes_under_no_backslash_escapes() throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES,ANSI_QUOTES')");
            try {
                Table t = read(c.getMetaData().getColumns(DB, null, "odd\\_na'me", "%"));
                assertEquals(1, t.rows().size(), t.toString());
                assertEquals("co\\l", t.rows().get(0).get(3));
                assertEquals(1, read(c.getMetaData().getTables(DB, null, "odd_na'me", null)).rows().size());
            } finally {
                s.execute("SET SESSION sql_mode = DEFAULT");
            }
        }
    }

    /** lower_case_table_names decides the identifier-case answers (Liquibase lowercases names when told so). */
    @Test
    void identifier_case_follows_lower_case_table_names() throws Exception {
        long lctn;
        try (Statement s = st.createStatement(); ResultSet r = s.executeQuery("SELECT @@lower_case_table_names")) {
            r.next();
            lctn = r.getLong(1);
        }
        DatabaseMetaData a = st.getMetaData();
        assertEquals(lctn == 0, a.supportsMixedCaseIdentifiers());
        assertEquals(lctn == 1, a.storesLowerCaseIdentifiers());
        assertEquals(lctn == 2, a.storesMixedCaseIdentifiers());
        assertFalse(a.storesUpperCaseIdentifiers());
    }
}
