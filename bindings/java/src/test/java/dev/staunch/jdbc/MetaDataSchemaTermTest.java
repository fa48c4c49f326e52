package dev.staunch.jdbc;

import dev.staunch.Env;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link MetaDataTest}'s comparison with {@code useCatalogTerm=SCHEMA} on both sides: MariaDB
 * Connector/J 3.x's option that makes a database a JDBC schema (TABLE_SCHEM) under the catalog
 * "def", for tools that expect schemas. Same schema, same calls (the database given as the
 * schema argument), same allowed differences, plus the connection's catalog and schema.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaDataSchemaTermTest {
    /** Differences allowed under SCHEMA beyond MetaDataTest's, and why. */
    static final Map<String, String> ALLOWED = new HashMap<>(MetaDataTest.ALLOWED);
    static final Map<String, String> ALLOWED_RESULTS = new HashMap<>(MetaDataTest.ALLOWED_RESULTS);

    static {
        String why = "Connector/J 3.5.7 leaves this one on the catalog term under SCHEMA (PROCEDURE_CAT/FUNCTION_CAT = "
                + "the database, *_SCHEM = null) while getProcedures and getFunctionColumns move to def/the database; "
                + "staunch moves all four, so a routine and its columns carry the same names (the rest is equal: checked below)";
        ALLOWED_RESULTS.put("getProcedureColumns", why);
        ALLOWED_RESULTS.put("getFunctions", why);
    }

    static Connection cj;
    static StaunchDataSource ds;
    static Connection st;

    @BeforeAll
    static void setUp() throws Exception {
        MetaDataTest.setUp();
        Map<String, Object> srv = Env.server().server(0);
        cj = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + srv.get("port")
                + "/staunch_test?user=app&password=app-secret&useCatalogTerm=SCHEMA");
        ds = new StaunchDataSource();
        ds.setJdbcUrl("jdbc:mariadb://127.0.0.1:" + srv.get("port") + "/staunch_test?connectTimeout=2000&useCatalogTerm=Schema");
        ds.setUsername("app");
        ds.setPassword("app-secret");
        ds.setMaximumPoolSize(2);
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
            cj.close();
        }
        MetaDataTest.tearDown();
    }

    @Test
    void every_no_argument_method_answers_as_connector_j_with_schema_term() throws Exception {
        MetaDataTest.compareNoArgumentMethods(st.getMetaData(), cj.getMetaData(), ALLOWED);
    }

    @Test
    void every_catalog_method_returns_connector_js_result_set_with_schema_term() throws Exception {
        MetaDataTest.compareCatalogMethods(st.getMetaData(), cj.getMetaData(), MetaDataTest.calls(null, MetaDataTest.DB),
                ALLOWED_RESULTS);
    }

    /** The two allowed differences: equal but for the catalog and schema columns, which agree with getProcedures'. */
    @Test
    void routines_name_their_schema_as_their_columns_do() throws Exception {
        java.sql.DatabaseMetaData a = st.getMetaData();
        java.sql.DatabaseMetaData b = cj.getMetaData();
        String db = MetaDataTest.DB;
        MetaDataTest.Table pa = MetaDataTest.read(a.getProcedureColumns(null, db, "add_to", "%"));
        MetaDataTest.Table pb = MetaDataTest.read(b.getProcedureColumns(null, db, "add_to", "%"));
        MetaDataTest.Table fa = MetaDataTest.read(a.getFunctions(null, db, "%"));
        MetaDataTest.Table fb = MetaDataTest.read(b.getFunctions(null, db, "%"));
        assertEquals(pb.labels(), pa.labels());
        assertEquals(fb.labels(), fa.labels());
        assertEquals(tails(pb), tails(pa));
        assertEquals(tails(fb), tails(fa));
        java.util.List<String> names = java.util.List.of("def", db);
        assertEquals(names, MetaDataTest.read(b.getProcedures(null, db, "add_to")).rows().get(0).subList(0, 2));
        assertEquals(names, MetaDataTest.read(b.getFunctionColumns(null, db, "twice", "%")).rows().get(0).subList(0, 2));
        for (java.util.List<String> r : pa.rows()) {
            assertEquals(names, r.subList(0, 2));
        }
        assertEquals(names, fa.rows().get(0).subList(0, 2));
    }

    static java.util.List<java.util.List<String>> tails(MetaDataTest.Table t) {
        java.util.List<java.util.List<String>> out = new java.util.ArrayList<>();
        for (java.util.List<String> r : t.rows()) {
            out.add(r.subList(2, r.size()));
        }
        return out;
    }

    /** getCatalog says "def", getSchema the database; setSchema changes it, setCatalog is ignored: as Connector/J. */
    @Test
    void catalog_and_schema_of_the_connection_as_connector_j() throws Exception {
        for (Connection c : new Connection[] {st, cj}) {
            String who = c == st ? "staunch" : "Connector/J";
            assertEquals("def", c.getCatalog(), who);
            assertEquals("staunch_test", c.getSchema(), who);
            c.setSchema(MetaDataTest.DB);
            assertEquals(MetaDataTest.DB, c.getSchema(), who);
            assertEquals(MetaDataTest.DB, text(c, "SELECT DATABASE()"), who);
            c.setCatalog("staunch_test");
            assertEquals(MetaDataTest.DB, c.getSchema(), who + ": setCatalog is ignored under SCHEMA");
            assertEquals("def", c.getCatalog(), who);
            c.setSchema("staunch_test");
            assertEquals("staunch_test", text(c, "SELECT DATABASE()"), who);
        }
    }

    static String text(Connection c, String sql) throws Exception {
        try (java.sql.Statement s = c.createStatement(); java.sql.ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getString(1);
        }
    }
}
