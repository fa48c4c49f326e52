package dev.staunch.jdbc;

import java.sql.SQLException;
import java.util.Map;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JdbcUrlTest {
    /**
     * poolName names the library's pool as a default (staunch_options_set_default): pool_name in a
     * staunch URL, in a JDBC URL or as a knob wins. The pools open without connecting.
     */
    @Test
    void poolName_is_a_default_that_the_users_pool_name_overrides() throws SQLException {
        String[][] cases = {
            {"mysql://u@127.0.0.1:1/db", null, "ds-name"},
            {"mysql://u@127.0.0.1:1/db?pool_name=from-url", null, "from-url"},
            {"jdbc:mysql://127.0.0.1:1/db?pool_name=from-jdbc-url", null, "from-jdbc-url"},
            {"jdbc:mysql://127.0.0.1:1/db", "from-knob", "from-knob"},
        };
        for (String[] c : cases) {
            try (StaunchDataSource ds = new StaunchDataSource()) {
                ds.setJdbcUrl(c[0]);
                if (c[1] != null) {
                    ds.setKnob("pool_name", c[1]);
                }
                ds.setPoolName("ds-name");
                assertEquals(c[2], ds.open().name(), c[0]);
            }
        }
    }

    @Test
    void mysql_and_mariadb_urls_translate_with_their_common_properties() throws SQLException {
        JdbcUrl.Translated t = JdbcUrl.translate("jdbc:mysql://10.0.71.13:33052/appdb?socketTimeout=60000&connectTimeout=30000&serverTimezone=UTC&useSSL=false");
        assertEquals("mysql://10.0.71.13:33052/appdb", t.url());
        assertEquals(Map.of("query_timeout", "60000ms", "connect_timeout", "30000ms"), t.knobs());
        JdbcUrl.Translated m = JdbcUrl.translate("jdbc:mariadb://u%40x:p%26w@h1:3306,h2:3307/db?sslMode=verify-full&user=app&max_size=4");
        assertEquals("mysql://h1:3306,h2:3307/db", m.url());
        assertEquals("app", m.knobs().get("user"));
        assertEquals("p&w", m.knobs().get("password"));
        assertEquals("verify_identity", m.knobs().get("tls_mode"));
        assertEquals("4", m.knobs().get("max_size"));
        assertEquals("replication", JdbcUrl.translate("jdbc:mariadb:replication://a,b/db").knobs().get("topology"));
        assertEquals("mysql://x:1/y?max_size=2", JdbcUrl.translate("mysql://x:1/y?max_size=2").url());
        assertEquals("SET SESSION sql_mode='ANSI'", JdbcUrl.translate("jdbc:mysql://h/db?sessionVariables=sql_mode='ANSI'").knobs().get("init_sql"));
        assertEquals("required", JdbcUrl.translate("jdbc:mysql://h/db?useSSL=true&verifyServerCertificate=false").knobs().get("tls_mode"));
    }

    /**
     * The user-info ends where the library's URL parser says (staunch_url_userinfo_end), whatever the password
     * holds: an unencoded '/', '@' and '?' before it, and a character that is not ASCII, whose UTF-8 bytes the
     * library counts and this face turns back into a char index.
     */
    @Test
    void the_user_info_ends_where_the_library_finds_it() throws SQLException {
        JdbcUrl.Translated t = JdbcUrl.translate("jdbc:mysql://u:p/@?\u00e9\ud83d\ude00@h:1/db?connectTimeout=5");
        assertEquals("mysql://h:1/db", t.url());
        assertEquals("u", t.knobs().get("user"));
        assertEquals("p/@?\u00e9\ud83d\ude00", t.knobs().get("password"));
        assertEquals("5ms", t.knobs().get("connect_timeout"));
        assertEquals(-1, JdbcUrl.userinfoEnd("h:1/db?useSSL=false"));
        assertEquals(1, JdbcUrl.userinfoEnd("u@h/db"));
    }

    @Test
    void useServerPrepStmts_maps_to_interpolate_params_as_connector_j_treats_it() throws SQLException {
        // Unset: no knob here; StaunchDataSource then gives interpolate_params=true as a default (Connector/J's),
        // which the library applies only when the user gives no interpolate_params (ValuesTest).
        assertEquals(null, JdbcUrl.translate("jdbc:mariadb://h/db").knobs().get("interpolate_params"));
        assertEquals("false", JdbcUrl.translate("jdbc:mariadb://h/db?useServerPrepStmts=true").knobs().get("interpolate_params"));
        assertEquals("false", JdbcUrl.translate("jdbc:mariadb://h/db?useServerPrepStmts").knobs().get("interpolate_params"));
        assertEquals("true", JdbcUrl.translate("jdbc:mysql://h/db?useServerPrepStmts=false").knobs().get("interpolate_params"));
        // Connector/J 3.x: rewriteBatchedStatements=true turns useServerPrepStmts off, in either order.
        assertEquals("true", JdbcUrl.translate("jdbc:mariadb://h/db?useServerPrepStmts=true&rewriteBatchedStatements=true")
                .knobs().get("interpolate_params"));
        assertEquals("true", JdbcUrl.translate("jdbc:mariadb://h/db?rewriteBatchedStatements=true&useServerPrepStmts=true")
                .knobs().get("interpolate_params"));
        assertTrue(assertThrows(SQLException.class, () -> JdbcUrl.translate("jdbc:mariadb://h/db?useServerPrepStmts=maybe"))
                .getMessage().contains("useServerPrepStmts"));
    }

    @Test
    void connectionAttributes_maps_to_connect_attrs() throws SQLException {
        assertEquals("service:billing api,shard:7",
                JdbcUrl.translate("jdbc:mysql://h/db?connectionAttributes=service:billing%20api,shard:7").knobs().get("connect_attrs"));
        assertTrue(assertThrows(SQLException.class, () -> JdbcUrl.translate("jdbc:mariadb://h/db?connectionAttributes=none"))
                .getMessage().contains("connectionAttributes=none"));
    }

    @Test
    void unknown_or_malformed_properties_are_named_in_the_error() {
        SQLException e = assertThrows(SQLException.class, () -> JdbcUrl.translate("jdbc:mysql://h/db?cachePrepStmts=true&fooBar=1"));
        assertTrue(e.getMessage().contains("fooBar"), e.getMessage());
        assertTrue(assertThrows(SQLException.class, () -> JdbcUrl.translate("jdbc:mysql://h/db?connectTimeout=soon")).getMessage().contains("connectTimeout"));
        assertTrue(assertThrows(SQLException.class, () -> JdbcUrl.translate("jdbc:mysql:loadbalance://h/db")).getMessage().contains("not supported"));
        assertTrue(assertThrows(SQLException.class, () -> JdbcUrl.translate("jdbc:mysql://h/db?sslMode=sometimes")).getMessage().contains("sslMode"));
        assertThrows(SQLException.class, () -> JdbcUrl.translate(null));
        assertThrows(SQLException.class, () -> JdbcUrl.translate("jdbc:mysql://h/db?useSSL=maybe"));
    }
}
