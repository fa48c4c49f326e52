package dev.staunch.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Statement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A deadlock (two transactions taking the same two row locks in opposite
 * orders) fails the loser with SQLTransactionRollbackException, SQLState
 * 40001 and vendor code 1213, as Connector/J reports it and as a Galera
 * certification failure (STAUNCH_CONFLICT) arrives; the loser's connection
 * stays usable.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConflictTest {

    private static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    @Test
    void deadlock_is_a_conflict() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (StaunchDataSource ds = JdbcTest.ds(2); Connection a = ds.getConnection(); Connection b = ds.getConnection()) {
            exec(a, "CREATE OR REPLACE TABLE j_dl (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
            exec(a, "INSERT INTO j_dl VALUES (1, 0), (2, 0)");
            a.setAutoCommit(false);
            b.setAutoCommit(false);
            exec(a, "UPDATE j_dl SET v = 1 WHERE id = 1");
            exec(b, "UPDATE j_dl SET v = 2 WHERE id = 2");
            // b waits for a's row 1; a then asks for b's row 2: one is rolled back.
            Future<SQLException> waiter = pool.submit(() -> {
                try {
                    exec(b, "UPDATE j_dl SET v = 2 WHERE id = 1");
                    return null;
                } catch (SQLException e) {
                    return e;
                }
            });
            Thread.sleep(300);
            SQLException ea = null;
            try {
                exec(a, "UPDATE j_dl SET v = 1 WHERE id = 2");
                a.commit(); // b lost: its rollback freed row 1
            } catch (SQLException e) {
                ea = e;
            }
            SQLException eb = waiter.get(60, TimeUnit.SECONDS);
            assertTrue((ea == null) != (eb == null), "exactly one deadlock victim: a=" + ea + " b=" + eb);
            SQLException lost = ea != null ? ea : eb;
            assertNotNull(lost);
            assertInstanceOf(SQLTransactionRollbackException.class, lost, lost.toString());
            assertEquals("40001", lost.getSQLState());
            assertEquals(1213, lost.getErrorCode());
            if (ea != null) {
                b.commit();
                a.rollback();
            } else {
                b.rollback();
            }
            assertEquals(7, JdbcTest.one(a, "SELECT 7"));
            assertEquals(8, JdbcTest.one(b, "SELECT 8"));
            a.setAutoCommit(true);
            assertEquals(2, JdbcTest.one(a, "SELECT COUNT(*) FROM j_dl WHERE v > 0"));
            exec(a, "DROP TABLE j_dl");
        } finally {
            pool.shutdownNow();
        }
    }
}
