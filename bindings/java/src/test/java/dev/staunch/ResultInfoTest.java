package dev.staunch;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What {@link Conn#execute} reports of a statement: affected rows and the
 * server's info string, which is the statement's own (an empty one never
 * leaves the previous statement's in place), on the text and the prepared way.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResultInfoTest {
    @Test
    void info_is_the_statements_own() {
        for (String way : new String[] {"interpolate_params=true", "interpolate_params=false"}) {
            try (Pool pool = Staunch.open(Env.url(way)); Conn c = pool.get(Duration.ofSeconds(5))) {
                c.execute("CREATE TEMPORARY TABLE t_info (id INT PRIMARY KEY, v INT)");
                Conn.Result ins = c.execute("INSERT INTO t_info VALUES (1, 0), (2, 0), (3, 5)");
                assertEquals(3, ins.affectedRows(), way);
                assertEquals("Records: 3  Duplicates: 0  Warnings: 0", ins.info(), way);
                Conn.Result upd = c.execute("UPDATE t_info SET v = ? WHERE id <= 3", 5);
                assertEquals(2, upd.affectedRows(), way);
                assertEquals("Rows matched: 3  Changed: 2  Warnings: 0", upd.info(), way);
                Conn.Result del = c.execute("DELETE FROM t_info WHERE id = ?", 1);
                assertEquals(1, del.affectedRows(), way);
                assertEquals("", del.info(), way + ": a DELETE has no info string");
                try (Rows r = c.queryText("SELECT 1")) {
                    assertEquals(1, r.columnCount());
                }
                assertEquals("", c.execute("DO 1").info(), way);
            }
        }
    }
}
