package dev.staunch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Text, decimal and byte values read back exactly across many fetched
 * batches, on whichever native path this JDK takes (the JNI path copies a
 * batch's variable-length values in one call when the first is read,
 * Native.gathers): NULLs, empty
 * values, multi-byte text, bytes with zeros, and a batch holding a value too
 * large to gather, so that batches of both kinds follow one another.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RowsBatchTest {
    static final int ROWS = 300; // several batches of 64 and a partial one
    static final int BIG_ROW = 150;
    static final int BIG_LEN = 100_000; // past the JNI path's gather limit (64 KiB a batch)

    static String text(int i) {
        if (i % 7 == 0) {
            return null;
        }
        if (i % 11 == 0) {
            return "";
        }
        if (i == BIG_ROW) {
            return "é".repeat(BIG_LEN / 2);
        }
        return "row " + i + " ü€😀 " + "x".repeat(i % 13);
    }

    static BigDecimal decimal(int i) {
        return i % 5 == 0 ? null : new BigDecimal(i + "123456789012345678." + (i % 100 < 10 ? "0" : "") + (i % 100));
    }

    static byte[] bytes(int i) {
        if (i % 9 == 0) {
            return null;
        }
        byte[] b = new byte[i % 6];
        for (int k = 0; k < b.length; k++) {
            b[k] = (byte) (k == 0 ? 0 : i * 31 + k);
        }
        return b;
    }

    @Test
    void variable_length_values_read_back_exactly_batch_after_batch() {
        try (Pool pool = Staunch.open(Env.url()); Conn c = pool.get(Duration.ofSeconds(10))) {
            c.execute("CREATE TEMPORARY TABLE t_batch (id INT PRIMARY KEY, t LONGTEXT CHARACTER SET utf8mb4, "
                    + "d DECIMAL(30,2), b VARBINARY(16))");
            for (int i = 0; i < ROWS; i++) {
                c.execute("INSERT INTO t_batch VALUES (?, ?, ?, ?)", i, text(i), decimal(i), bytes(i));
            }
            try (Rows r = c.query("SELECT id, t, d, b FROM t_batch ORDER BY id")) {
                for (int i = 0; i < ROWS; i++) {
                    assertTrue(r.next(), "row " + i);
                    assertEquals(i, r.getLong(0));
                    String t = text(i);
                    if (t == null) {
                        assertNull(r.getString(1), "row " + i);
                    } else {
                        assertEquals(t, r.getString(1), "row " + i);
                        assertEquals(t, r.getObject(1), "row " + i);
                    }
                    assertEquals(decimal(i), r.getObject(2), "row " + i);
                    byte[] b = bytes(i);
                    if (b == null) {
                        assertNull(r.getObject(3), "row " + i);
                    } else {
                        assertArrayEquals(b, r.getBytes(3), "row " + i);
                        assertArrayEquals(b, (byte[]) r.getObject(3), "row " + i);
                    }
                }
                assertFalse(r.next());
            }
            // The same text read as bytes: its UTF-8, whole.
            try (Rows r = c.query("SELECT CAST(t AS BINARY) FROM t_batch WHERE id IN (1, 2) ORDER BY id")) {
                for (int i = 1; i <= 2; i++) {
                    assertTrue(r.next());
                    assertArrayEquals(text(i).getBytes(StandardCharsets.UTF_8), r.getBytes(0));
                }
            }
        }
    }
}
