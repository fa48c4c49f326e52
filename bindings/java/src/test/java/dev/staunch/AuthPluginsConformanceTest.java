package dev.staunch;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * conf_auth_plugins (MariaDB part): users of mysql_native_password and ed25519 connect; a user of a plugin
 * staunch does not speak (PAM asks for "dialog") gets CONNECT_REJECTED naming the plugin at once, not
 * "unreachable" at the acquire timeout.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AuthPluginsConformanceTest {

    @Test
    void conf_auth_plugins() {
        try (Testkit tk = Testkit.start("server")) {
            for (String q : List.of(
                    "INSTALL PLUGIN IF NOT EXISTS ed25519 SONAME 'auth_ed25519'",
                    "INSTALL PLUGIN IF NOT EXISTS pam SONAME 'auth_pam'",
                    "CREATE USER native@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('n-secret')",
                    "CREATE USER ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('e-secret')",
                    "CREATE USER pamuser@'%' IDENTIFIED VIA pam",
                    "GRANT ALL ON staunch_test.* TO native@'%', ed@'%', pamuser@'%'")) {
                tk.cmd("sql 0 " + q);
            }
            Object port = tk.server(0).get("port");
            String base = "@127.0.0.1:" + port + "/staunch_test?min_idle=0&connection_timeout=20s";
            for (String[] u : new String[][] {{"native", "n-secret"}, {"ed", "e-secret"}}) {
                try (Pool pool = Staunch.open("mysql://" + u[0] + ":" + u[1] + base);
                        Conn c = pool.get(Duration.ofSeconds(10));
                        Rows r = c.query("SELECT CURRENT_USER()")) {
                    assertTrue(r.next());
                    assertEquals(u[0] + "@%", r.getString(0));
                }
            }
            try (Pool pool = Staunch.open("mysql://pamuser:p-secret" + base)) {
                long start = System.nanoTime();
                StaunchException e = assertThrows(StaunchException.class, () -> pool.get(Duration.ofSeconds(20)));
                long waitedMs = (System.nanoTime() - start) / 1_000_000;
                assertEquals(Status.CONNECT_REJECTED, e.status(), e.getMessage());
                assertTrue(e.getMessage().contains("\"dialog\""), e.getMessage());
                assertFalse(e.getMessage().contains("p-secret"), e.getMessage());
                assertTrue(waitedMs < 5000 + Env.slack(), "the refusal took " + waitedMs + " ms: " + e.getMessage());
            }
        }
    }

    /** The test kit's second server (Vitess's go/mysql, a MySQL 8 greeting): its caching_sha2_password user connects. */
    @Test
    void conf_auth_plugins_caching_sha2() {
        try (Testkit tk = Testkit.start("mysql8", "--tls");
                // That server runs no prepared statement: the text protocol.
                Pool pool = Staunch.open(tk.url() + "&interpolate_params=true");
                Conn c = pool.get(Duration.ofSeconds(10));
                Rows r = c.query("SELECT CURRENT_USER()")) {
            assertTrue(r.next());
            assertEquals("sha2@%", r.getString(0));
        }
    }
}
