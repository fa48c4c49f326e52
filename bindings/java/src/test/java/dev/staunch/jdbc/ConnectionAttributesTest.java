package dev.staunch.jdbc;

import dev.staunch.Staunch;
import dev.staunch.Testkit;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Connector/J's {@code connectionAttributes} (in the JDBC URL and in the driver's Properties) reaches
 * {@code performance_schema.session_connect_attrs}, on a server of its own (the test kit's
 * {@code --performance-schema}: MariaDB's default is OFF).
 */
class ConnectionAttributesTest {
    static Map<String, String> attrs(Connection c) throws SQLException {
        Map<String, String> m = new HashMap<>();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(
                "SELECT ATTR_NAME, ATTR_VALUE FROM performance_schema.session_connect_attrs "
                        + "WHERE PROCESSLIST_ID = CONNECTION_ID()")) {
            while (r.next()) {
                m.put(r.getString(1), r.getString(2));
            }
        }
        return m;
    }

    @Test
    void connectionAttributes_reach_performance_schema() throws Exception {
        try (Testkit kit = Testkit.start("server", "--performance-schema")) {
            String base = "jdbc:staunch://127.0.0.1:" + kit.server(0).get("port") + "/staunch_test";
            Properties p = new Properties();
            p.setProperty("user", "app");
            p.setProperty("password", kit.password("app"));

            // In the URL, percent-encoded as Connector/J reads it.
            try (Connection c = DriverManager.getConnection(base + "?connectionAttributes=service:billing%20api,shard:7", p)) {
                Map<String, String> a = attrs(c);
                assertEquals("billing api", a.get("service"), a.toString());
                assertEquals("7", a.get("shard"), a.toString());
                assertEquals(Staunch.version(), a.get("staunch_version"), a.toString());
                // staunch's own engine opens the connection and names itself.
                assertEquals("staunch", a.get("_client_name"), a.toString());
                assertFalse(a.getOrDefault("_client_version", "").isEmpty(), a.toString());
                String program = a.getOrDefault("program_name", "");
                assertTrue(!program.isEmpty() && !program.contains("/"), a.toString());
                assertFalse(a.containsValue(kit.password("app")), a.toString());
            }

            // In the Properties; program_name given wins.
            Properties q = (Properties) p.clone();
            q.setProperty("connectionAttributes", "program_name:billing-worker,team:payments");
            try (Connection c = DriverManager.getConnection(base, q)) {
                Map<String, String> a = attrs(c);
                assertEquals("billing-worker", a.get("program_name"), a.toString());
                assertEquals("payments", a.get("team"), a.toString());
            }

            // A bad entry is an error naming the knob, without the password.
            Properties bad = (Properties) p.clone();
            bad.setProperty("connectionAttributes", "team");
            SQLException e = assertThrows(SQLException.class, () -> DriverManager.getConnection(base, bad).close());
            assertTrue(e.getMessage().contains("connect_attrs"), e.getMessage());
            assertFalse(e.getMessage().contains(kit.password("app")), e.getMessage());
        }
    }
}
