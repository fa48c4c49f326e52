package dev.staunch;

import java.math.BigDecimal;
import java.time.Duration;
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
 * The values scenarios of shared/CONFORMANCE.md (conf_decimal_exact,
 * conf_unpreparable, conf_sql_modes) through the native API, both ways a
 * statement is sent (the pool's interpolate_params knob). The JDBC face's
 * are in dev.staunch.jdbc.ValuesTest.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ValuesConformanceTest {
    static final String[] WAYS = {"interpolate_params=true", "interpolate_params=false"};

    @Test
    void conf_decimal_exact() {
        for (String way : WAYS) {
            try (Pool pool = Staunch.open(Env.url(way)); Conn c = pool.get(Duration.ofSeconds(5))) {
                c.execute("CREATE TEMPORARY TABLE t_dec (id INT PRIMARY KEY, bal DECIMAL(30,2))");
                c.execute("INSERT INTO t_dec VALUES (1, ?)", new BigDecimal("1234567890123456789.01"));
                assertEquals(1, c.execute("UPDATE t_dec SET bal = bal + ? WHERE id = 1", new BigDecimal("0.01"))
                        .affectedRows(), way);
                try (Rows r = c.query("SELECT bal FROM t_dec")) {
                    assertTrue(r.next());
                    assertEquals(new BigDecimal("1234567890123456789.02"), r.getBigDecimal(0), way);
                }
                try (Rows r = c.query("SELECT ?", new BigDecimal("15.7563"))) {
                    assertTrue(r.next());
                    assertEquals(new BigDecimal("15.7563"), r.getObject(0), way);
                    assertEquals(Rows.DECIMAL, r.columns().get(0).columnType(), way + ": a DECIMAL column");
                }
                StaunchException e = assertThrows(StaunchException.class,
                        () -> c.query("SELECT ?", new BigDecimal("1".repeat(66))));
                assertEquals(Status.INVALID_ARGUMENT, e.status());
                assertTrue(e.getMessage().contains("66 digits"), e.getMessage());
            }
        }
    }

    /**
     * Who checks a date or time parameter's range: the library the year (above
     * 9999: OUT_OF_RANGE naming the parameter), the binding the TIME's
     * 838:59:59.999999, which the library does not check (it refuses only more
     * than 34 days) and the server would clip to 838:59:59 without a warning.
     */
    @Test
    void date_and_time_ranges() {
        Duration most = Duration.ofHours(838).plusMinutes(59).plusSeconds(59).plusNanos(999_999_000);
        for (String way : WAYS) {
            try (Pool pool = Staunch.open(Env.url(way)); Conn c = pool.get(Duration.ofSeconds(5))) {
                try (Rows r = c.query("SELECT ?, ?", most, most.negated())) {
                    assertTrue(r.next());
                    assertEquals(most, r.getDuration(0), way);
                    assertEquals(most.negated(), r.getDuration(1), way);
                }
                for (Duration d : new Duration[] {Duration.ofHours(839), Duration.ofHours(-839), Duration.ofDays(40)}) {
                    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.query("SELECT ?", d));
                    assertTrue(e.getMessage().contains("838:59:59"), e.getMessage());
                }
                StaunchException year = assertThrows(StaunchException.class,
                        () -> c.query("SELECT ?", java.time.LocalDate.of(10000, 1, 1)));
                assertEquals(Status.OUT_OF_RANGE, year.status());
                assertTrue(year.getMessage().contains("year 10000"), year.getMessage());
                assertThrows(IllegalArgumentException.class, () -> c.query("SELECT ?", java.time.LocalDate.of(70000, 1, 1)));
            }
        }
    }

    @Test
    void conf_unpreparable() {
        try (Pool pool = Staunch.open(Env.url("interpolate_params=true")); Conn c = pool.get(Duration.ofSeconds(5))) {
            c.execute("CREATE TEMPORARY TABLE t_w (x INT)");
            c.execute("INSERT INTO t_w VALUES (1), (2), (3)");
            List<Long> sums = new ArrayList<>();
            try (Rows r = c.query("SELECT SUM(x) OVER (ORDER BY x ROWS BETWEEN ? PRECEDING AND ? FOLLOWING) "
                    + "FROM t_w ORDER BY x", 1, 1)) {
                while (r.next()) {
                    sums.add(r.getLong(0));
                }
            }
            assertEquals(List.of(3L, 6L, 5L), sums);
            List<String> rows = new ArrayList<>();
            try (Rows r = c.query("WITH c(a,b) AS (VALUES (?, ?), (?, ?)) SELECT a, b FROM c", "a", 2, "b", 3)) {
                while (r.next()) {
                    rows.add(r.getString(0) + "," + r.getLong(1));
                }
            }
            assertEquals(List.of("a,2", "b,3"), rows);
        }
    }

    @Test
    void conf_sql_modes() {
        byte[] bytes = {(byte) 0xff, 0, 0x41};
        String text = "it's a \\ back\\slash, a \"quote\" and a ? mark\\";
        for (String mode : new String[] {"NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"}) {
            for (String way : WAYS) {
                try (Pool pool = Staunch.open(Env.url(way)); Conn c = pool.get(Duration.ofSeconds(5))) {
                    c.execute("SET SESSION sql_mode = '" + mode + "'");
                    String literal = mode.equals("NO_BACKSLASH_ESCAPES") ? "'C:\\'" : "'C:\\\\'";
                    String ident = mode.equals("ANSI_QUOTES") ? "\"a?\"" : "`a?`";
                    String sql = "SELECT " + literal + ", ?, 'why?', ? AS " + ident;
                    assertEquals(2, c.countParams(sql), mode);
                    try (Rows r = c.query(sql, bytes, text)) {
                        assertTrue(r.next());
                        assertEquals("C:\\", r.getString(0), mode + " " + way);
                        assertArrayEquals(bytes, r.getBytes(1), mode + " " + way);
                        assertEquals("why?", r.getString(2), mode + " " + way);
                        assertEquals(text, r.getString(3), mode + " " + way);
                        assertEquals("a?", r.columns().get(3).name(), mode + " " + way);
                    }
                }
            }
        }
    }

    /**
     * Conn.placeholders gives every placeholder's char index in one native call (staunch_conn_param_offsets): no
     * {@code ?} inside a string, a comment or backticks; NO_BACKSLASH_ESCAPES ends a string at its quote;
     * ANSI_QUOTES makes {@code "..."} an identifier; text before a placeholder that is not ASCII (two-byte,
     * three-byte, a surrogate pair) moves the byte offsets but not the char indexes.
     */
    @Test
    void placeholders_in_one_call() {
        try (Pool pool = Staunch.open(Env.url(WAYS[0])); Conn c = pool.get(Duration.ofSeconds(5))) {
            String plain = "SELECT ?, '?', `a?`, \"b?\" /* ? */, ? # ?\n, ? -- ?\n";
            String backslash = "SELECT 'C:\\', ?, 'why?'";
            String wide = "SELECT '\u00e9\u20ac\ud83d\ude00?', ?, `\u00e9?` /* \u20ac? */, ?";
            c.execute("SET SESSION sql_mode = ''");
            assertArrayEquals(new int[] {7, 35, 43}, c.placeholders(plain));
            assertArrayEquals(new int[] {21}, c.placeholders(backslash));
            assertArrayEquals(new int[] {"SELECT '\u00e9\u20ac\ud83d\ude00?', ".length(), wide.length() - 1},
                    c.placeholders(wide));
            assertArrayEquals(new int[] {}, c.placeholders("SELECT \"a\\\" ?"));
            assertArrayEquals(new int[] {}, c.placeholders("SELECT 1"));
            c.execute("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'");
            assertArrayEquals(new int[] {14}, c.placeholders(backslash));
            assertArrayEquals(new int[] {7, 35, 43}, c.placeholders(plain));
            c.execute("SET SESSION sql_mode = 'ANSI_QUOTES'");
            assertArrayEquals(new int[] {12}, c.placeholders("SELECT \"a\\\" ?"));
            assertArrayEquals(new int[] {7, 25}, c.placeholders("SELECT ? AS \"a?\", 'x\"?', ?"));
        }
    }
}
