package dev.staunch;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * conf_tls_exact: a server presenting a self-signed CA:TRUE certificate, pinned by
 * {@code tls_mode=verify_ca&tls_ca=<that certificate>}, connects, answers and encrypts; the same URL with
 * {@code tls_ca} naming an unrelated CA is CONNECT_REJECTED at once (well within its 5 s connection_timeout) with a
 * message naming tls_ca: under verify_ca only the given CA is trusted.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TlsExactConformanceTest {

    @Test
    void conf_tls_exact() {
        try (Testkit tk = Testkit.start("server", "--tls-self-signed")) {
            String url = tk.url();
            assertTrue(url.contains("tls_mode=verify_ca"), url);
            assertNotNull(tk.tls(), "no tls in the ready line");
            try (Pool pool = Staunch.open(url); Conn c = pool.get(Duration.ofSeconds(10))) {
                try (Rows r = c.query("SELECT 1")) {
                    assertTrue(r.next());
                    assertEquals(1L, r.getLong(0));
                }
                try (Rows r = c.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")) {
                    assertTrue(r.next(), "no Ssl_cipher row");
                    String cipher = r.getString(1);
                    assertTrue(cipher != null && !cipher.isEmpty(), "Ssl_cipher is empty: the session is not encrypted");
                }
            }

            // tls_ca is the ready line's last parameter.
            int at = url.indexOf("tls_ca=");
            assertTrue(at >= 0 && url.indexOf('&', at) < 0, "tls_ca is not the last parameter of " + url);
            String bad = url.substring(0, at) + "tls_ca=" + tk.tls().get("other_ca")
                    + "&connection_timeout=5s&min_idle=0";
            try (Pool pool = Staunch.open(bad)) {
                long start = System.nanoTime();
                StaunchException e = assertThrows(StaunchException.class, () -> pool.get(Duration.ofSeconds(20)));
                long tookMs = (System.nanoTime() - start) / 1_000_000;
                assertEquals(Status.CONNECT_REJECTED, e.status(), e.getMessage());
                assertTrue(e.getMessage().contains("tls_ca"), e.getMessage());
                assertFalse(e.getMessage().contains("app-secret"), e.getMessage());
                assertTrue(tookMs < 3000 + Env.slack(), "the refusal took " + tookMs + " ms: " + e.getMessage());
            }
        }
    }
}
