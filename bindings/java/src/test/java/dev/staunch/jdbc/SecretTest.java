package dev.staunch.jdbc;

import dev.staunch.Pool;
import dev.staunch.Staunch;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * conf_secret_never_printed: passwords holding each of / ? # @ : % + and a space, raw and percent-encoded, in
 * URLs (staunch's mysql:// and JDBC's jdbc:mariadb://) well-formed and broken in each part. Every exception (its
 * whole cause chain), pool and data source toString is searched for either half of the password.
 */
class SecretTest {
    static final String[] HALVES = {"Qv3lft", "Zr8rgt"};

    static String encode(String s) {
        StringBuilder b = new StringBuilder();
        for (byte c : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            if (Character.isLetterOrDigit(c) && c > 0) {
                b.append((char) c);
            } else {
                b.append(String.format("%%%02X", c & 0xff));
            }
        }
        return b.toString();
    }

    static void texts(Throwable t, List<String> out) {
        for (; t != null; t = t.getCause()) {
            out.add(t.toString());
            out.add(String.valueOf(t.getMessage()));
        }
    }

    @Test
    void conf_secret_never_printed() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // nothing listens there afterwards: connects are refused at once
        }
        String q = "connect_timeout=200ms&connection_timeout=300ms";
        List<String> seen = new ArrayList<>();
        int opened = 0;
        for (String c : new String[] {"/", "?", "#", "@", ":", "%", "+", " "}) {
            String pw = HALVES[0] + c + HALVES[1];
            for (String form : new String[] {pw, encode(pw)}) {
                String a = "app:" + form + "@127.0.0.1";
                String[][] urls = {
                    {"none", "mysql://" + a + ":" + port + "/db?" + q},
                    {"scheme", "mysq://" + a + ":" + port + "/db?" + q},
                    {"scheme", a + ":" + port + "/db?" + q},
                    {"host", "mysql://app:" + form + "@[127.0.0.1:" + port + "/db?" + q},
                    {"port", "mysql://" + a + ":99999/db?" + q},
                    {"path", "mysql://" + a + ":" + port + "/d%zz?" + q},
                    {"query knob", "mysql://" + a + ":" + port + "/db?" + q + "&max_size=x"},
                    {"unknown knob", "mysql://" + a + ":" + port + "/db?" + q + "&bogus=1"},
                };
                for (String[] u : urls) {
                    String what = "'" + c + "' " + (form.equals(pw) ? "raw" : "encoded") + " broken=" + u[0];
                    // The native API.
                    try (Pool p = Staunch.open(u[1])) {
                        opened++;
                        assertTrue(u[0].equals("none"), what + " must not open");
                        seen.add(p.toString());
                        try {
                            p.get().close();
                            fail(what + ": nothing listens there");
                        } catch (RuntimeException e) {
                            texts(e, seen);
                        }
                    } catch (RuntimeException e) {
                        texts(e, seen);
                    }
                    // JDBC, with the same URL under jdbc:mariadb:// (the staunch knobs are passed on).
                    for (String jdbc : new String[] {u[1], u[1].replaceFirst("^mysq(l)?://", "jdbc:mariadb://")}) {
                        StaunchDataSource ds = new StaunchDataSource();
                        ds.setJdbcUrl(jdbc);
                        ds.setConnectionTimeout(300);
                        seen.add(ds.toString());
                        try (Connection conn = ds.getConnection()) {
                            fail(what + ": " + conn);
                        } catch (SQLException | RuntimeException e) {
                            texts(e, seen);
                        } finally {
                            seen.add(ds.toString());
                            ds.close();
                        }
                    }
                }
            }
        }
        assertTrue(opened >= 15, "the well-formed URLs must open: " + opened);
        for (String s : seen) {
            for (String h : HALVES) {
                assertFalse(s.contains(h), "the password shows: " + s);
            }
        }
    }
}
