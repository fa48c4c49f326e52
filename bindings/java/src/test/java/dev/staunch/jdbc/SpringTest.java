package dev.staunch.jdbc;

import java.math.BigDecimal;
import java.sql.Timestamp;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.transaction.support.TransactionTemplate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Spring's JdbcTemplate and TransactionTemplate over StaunchDataSource (spring-jdbc + spring-tx, no Boot). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SpringTest {
    static StaunchDataSource ds;
    static JdbcTemplate jdbc;
    static TransactionTemplate tx;

    @BeforeAll
    static void setUp() {
        ds = JdbcTest.ds(4);
        jdbc = new JdbcTemplate(ds);
        tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        jdbc.execute("DROP TABLE IF EXISTS spring_t");
        jdbc.execute("CREATE TABLE spring_t (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL UNIQUE, "
                + "price DECIMAL(10,2), qty INT, ratio DOUBLE, born DATE, seen DATETIME(3), data BLOB, ok BOOLEAN) "
                + "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
    }

    @AfterAll
    static void tearDown() {
        jdbc.execute("DROP TABLE IF EXISTS spring_t");
        ds.close();
    }

    @Test
    void queries_with_every_common_type() {
        LocalDateTime seen = LocalDateTime.of(2024, 5, 6, 7, 8, 9, 123_000_000);
        jdbc.update("INSERT INTO spring_t (name, price, qty, ratio, born, seen, data, ok) VALUES (?,?,?,?,?,?,?,?)",
                "Ünïcode", new BigDecimal("19.99"), 3, 0.5, LocalDate.of(1990, 1, 2), Timestamp.valueOf(seen), new byte[] {1, 0, 2}, true);
        Map<String, Object> row = jdbc.queryForMap("SELECT * FROM spring_t WHERE name = ?", "Ünïcode");
        assertEquals("Ünïcode", row.get("name"));
        assertEquals(new BigDecimal("19.99"), row.get("price"));
        assertEquals(3, row.get("qty"));
        assertEquals(0.5, row.get("ratio"));
        assertEquals(java.sql.Date.valueOf("1990-01-02"), row.get("born"));
        assertEquals(Timestamp.valueOf(seen), row.get("seen"));
        assertArrayEquals(new byte[] {1, 0, 2}, (byte[]) row.get("data"));
        assertEquals(Boolean.TRUE, row.get("ok"));
        assertEquals(3, jdbc.queryForObject("SELECT qty FROM spring_t WHERE name = ?", Integer.class, "Ünïcode"));
        assertEquals(seen, jdbc.queryForObject("SELECT seen FROM spring_t WHERE name = ?", LocalDateTime.class, "Ünïcode"));
        List<String> names = jdbc.query("SELECT name FROM spring_t ORDER BY id", (rs, i) -> rs.getString("name"));
        assertTrue(names.contains("Ünïcode"));
        assertNull(jdbc.queryForObject("SELECT NULL", String.class));
        GeneratedKeyHolder keys = new GeneratedKeyHolder();
        jdbc.update(con -> {
            var p = con.prepareStatement("INSERT INTO spring_t (name) VALUES (?)", java.sql.Statement.RETURN_GENERATED_KEYS);
            p.setString(1, "keyed");
            return p;
        }, keys);
        assertEquals(jdbc.queryForObject("SELECT id FROM spring_t WHERE name = 'keyed'", Long.class), keys.getKey().longValue());
    }

    @Test
    void batch_update() {
        int[] counts = jdbc.batchUpdate("INSERT INTO spring_t (name, qty) VALUES (?, ?)",
                List.of(new Object[] {"b1", 1}, new Object[] {"b2", 2}, new Object[] {"b3", 3}));
        assertArrayEquals(new int[] {1, 1, 1}, counts);
        assertEquals(6, jdbc.queryForObject("SELECT SUM(qty) FROM spring_t WHERE name LIKE 'b_'", Integer.class));
    }

    @Test
    void a_rolled_back_transaction_leaves_nothing() {
        assertThrows(IllegalStateException.class, () -> tx.executeWithoutResult(s -> {
            jdbc.update("INSERT INTO spring_t (name) VALUES ('rolled-back')");
            assertEquals(1, jdbc.queryForObject("SELECT COUNT(*) FROM spring_t WHERE name = 'rolled-back'", Integer.class),
                    "visible inside the transaction");
            throw new IllegalStateException("boom");
        }));
        assertEquals(0, jdbc.queryForObject("SELECT COUNT(*) FROM spring_t WHERE name = 'rolled-back'", Integer.class));
        tx.executeWithoutResult(s -> jdbc.update("INSERT INTO spring_t (name) VALUES ('committed')"));
        assertEquals(1, jdbc.queryForObject("SELECT COUNT(*) FROM spring_t WHERE name = 'committed'", Integer.class));
        TransactionTemplate ro = new TransactionTemplate(tx.getTransactionManager());
        ro.setReadOnly(true);
        ro.setIsolationLevel(TransactionTemplate.ISOLATION_READ_COMMITTED);
        Integer n = ro.execute(s -> jdbc.queryForObject("SELECT COUNT(*) FROM spring_t WHERE name = 'committed'", Integer.class));
        assertEquals(1, n);
        assertEquals(0, ds.getActiveConnections());
    }

    @Test
    void duplicate_key_is_translated_to_DuplicateKeyException() {
        jdbc.update("INSERT INTO spring_t (name) VALUES ('dup')");
        DuplicateKeyException e = assertThrows(DuplicateKeyException.class, () -> jdbc.update("INSERT INTO spring_t (name) VALUES ('dup')"));
        assertTrue(e.getMessage().contains("1062"), e.getMessage());
    }

    @Test
    void timeouts_and_exhaustion_are_translated() throws Exception {
        JdbcTemplate t = new JdbcTemplate(ds);
        t.setQueryTimeout(1);
        assertThrows(QueryTimeoutException.class, () -> t.queryForObject("SELECT SLEEP(5)", Integer.class));
        try (StaunchDataSource one = JdbcTest.ds(1)) {
            one.setConnectionTimeout(100);
            try (var held = one.getConnection()) {
                assertTrue(held.isValid(1));
                Exception e = assertThrows(Exception.class, () -> new JdbcTemplate(one).queryForObject("SELECT 1", Integer.class));
                // CannotGetJdbcConnectionException wrapping the SQLTransientConnectionException
                assertInstanceOf(java.sql.SQLTransientConnectionException.class, e.getCause(), e.toString());
            }
        }
    }
}
