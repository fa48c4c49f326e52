package dev.staunch.jdbc;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ibatis.annotations.Insert;
import org.apache.ibatis.annotations.Options;
import org.apache.ibatis.annotations.Param;
import org.apache.ibatis.annotations.Select;
import org.apache.ibatis.annotations.Update;
import org.apache.ibatis.exceptions.PersistenceException;
import org.apache.ibatis.mapping.Environment;
import org.apache.ibatis.session.Configuration;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;
import org.apache.ibatis.session.SqlSessionFactoryBuilder;
import org.apache.ibatis.transaction.jdbc.JdbcTransactionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A MyBatis annotation mapper over StaunchDataSource (the incident's stack, without Spring Boot). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MyBatisTest {
    public static class Item {
        public Long id;
        public String name;
        public java.math.BigDecimal price;
        public java.time.LocalDateTime created;
    }

    public interface ItemMapper {
        @Update("CREATE TEMPORARY TABLE mb_item (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) UNIQUE, "
                + "price DECIMAL(8,2), created DATETIME(6))")
        void createTable();

        @Insert("INSERT INTO mb_item (name, price, created) VALUES (#{name}, #{price}, #{created})")
        @Options(useGeneratedKeys = true, keyProperty = "id")
        int insert(Item item);

        @Select("SELECT id, name, price, created FROM mb_item WHERE id = #{id}")
        Item byId(@Param("id") long id);

        @Select("SELECT id, name, price, created FROM mb_item ORDER BY id")
        List<Item> all();

        @Select("SELECT COUNT(*) FROM mb_item")
        int count();
    }

    @Test
    void a_mapper_over_staunch() throws Exception {
        try (StaunchDataSource ds = JdbcTest.ds(1)) {
            Configuration cfg = new Configuration(new Environment("test", new JdbcTransactionFactory(), ds));
            cfg.addMapper(ItemMapper.class);
            cfg.setMapUnderscoreToCamelCase(true);
            SqlSessionFactory f = new SqlSessionFactoryBuilder().build(cfg);
            // One session (one connection: the temporary table lives in it).
            try (SqlSession s = f.openSession(true)) {
                ItemMapper m = s.getMapper(ItemMapper.class);
                m.createTable();
                Item a = new Item();
                a.name = "widget";
                a.price = new java.math.BigDecimal("9.50");
                a.created = java.time.LocalDateTime.of(2025, 1, 1, 12, 0, 0, 500_000_000);
                assertEquals(1, m.insert(a));
                assertTrue(a.id != null && a.id > 0, "generated key set on the object");
                Item back = m.byId(a.id);
                assertEquals("widget", back.name);
                assertEquals(new java.math.BigDecimal("9.50"), back.price);
                assertEquals(a.created, back.created);
                assertNull(m.byId(-1));
                Item dup = new Item();
                dup.name = "widget";
                PersistenceException e = assertThrows(PersistenceException.class, () -> m.insert(dup));
                assertInstanceOf(java.sql.SQLIntegrityConstraintViolationException.class, e.getCause(), e.toString());
                assertEquals(1, m.all().size());
                assertEquals(1, m.count());
            }
            // A session with autoCommit off: rolled back on close without commit.
            try (SqlSession s = f.openSession(false)) {
                assertEquals(0, s.getConnection().getMetaData().getDatabaseProductName().indexOf("MariaDB"));
                s.rollback(true);
            }
            assertEquals(0, ds.getActiveConnections());
        }
    }
}
