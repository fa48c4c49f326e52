package dev.staunch.jdbc;

import dev.staunch.Env;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.OptimisticLockException;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import liquibase.Contexts;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.DirectoryResourceAccessor;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;
import org.flywaydb.core.api.output.ValidateResult;
import org.hibernate.SessionFactory;
import org.hibernate.boot.MetadataSources;
import org.hibernate.boot.registry.StandardServiceRegistry;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.dialect.Dialect;
import org.hibernate.dialect.MariaDBDialect;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.mariadb.jdbc.MariaDbDataSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tools a Spring-era service runs at start-up, each with its usual set-up
 * on StaunchDataSource against the test kit's server: Flyway, Liquibase,
 * Hibernate (dialect detected from the metadata); jOOQ is in {@link JooqTest}
 * (it needs Java 21). And a database
 * migrated through Connector/J and then through staunch: the tools must find
 * their own history (no second history table).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ToolsTest {

    /** A fresh database {@code db} and a staunch data source whose default database it is. */
    static StaunchDataSource fresh(String db) throws Exception {
        try (StaunchDataSource root = JdbcTest.ds(1); Connection c = root.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + db);
            s.execute("CREATE DATABASE " + db + " CHARACTER SET utf8mb4");
        }
        return on(db);
    }

    static StaunchDataSource on(String db) {
        StaunchDataSource ds = new StaunchDataSource();
        ds.setJdbcUrl("jdbc:mariadb://127.0.0.1:" + Env.server().server(0).get("port") + "/" + db + "?connectTimeout=2000");
        ds.setUsername("app");
        ds.setPassword("app-secret");
        ds.setMaximumPoolSize(4);
        return ds;
    }

    static MariaDbDataSource connectorJ(String db) throws Exception {
        MariaDbDataSource ds = new MariaDbDataSource("jdbc:mariadb://127.0.0.1:" + Env.server().server(0).get("port") + "/" + db);
        ds.setUser("app");
        ds.setPassword("app-secret");
        return ds;
    }

    static List<String> tables(DataSource ds, String db) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '" + db + "' ORDER BY 1")) {
            while (r.next()) {
                out.add(r.getString(1));
            }
        }
        return out;
    }

    static void drop(String db) throws Exception {
        try (StaunchDataSource root = JdbcTest.ds(1); Connection c = root.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + db);
        }
    }

    static Flyway flyway(DataSource ds, Path dir) {
        return Flyway.configure().dataSource(ds).locations("filesystem:" + dir).load();
    }

    // ---- Flyway ----

    @Test
    void flyway_migrate_info_validate_repair() throws Exception {
        Path dir = Files.createTempDirectory("staunch-flyway");
        try (StaunchDataSource ds = fresh("tool_flyway")) {
            Files.writeString(dir.resolve("V1__things.sql"), "CREATE TABLE thing (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL);\n");
            Files.writeString(dir.resolve("V2__rows.sql"), "INSERT INTO thing (name) VALUES ('a'), ('b');\n");
            assertEquals(2, flyway(ds, dir).migrate().migrationsExecuted);
            MigrationInfo[] applied = flyway(ds, dir).info().applied();
            assertEquals(2, applied.length);
            assertEquals(MigrationState.SUCCESS, applied[1].getState());
            assertTrue(flyway(ds, dir).validateWithResult().validationSuccessful);

            // A failing migration: MariaDB's DDL is not transactional, so Flyway records it failed.
            Files.writeString(dir.resolve("V3__broken.sql"), "CREATE TABLE later (id INT PRIMARY KEY);\nTHIS IS NOT SQL;\n");
            assertThrows(Exception.class, () -> flyway(ds, dir).migrate());
            assertEquals(MigrationState.FAILED, flyway(ds, dir).info().current().getState());
            // repair removes the failed row; the fixed migration then applies.
            flyway(ds, dir).repair();
            Files.writeString(dir.resolve("V3__broken.sql"), "CREATE TABLE IF NOT EXISTS later (id INT PRIMARY KEY);\n");
            assertEquals(1, flyway(ds, dir).migrate().migrationsExecuted);

            // A changed applied migration fails validation until repair realigns its checksum.
            Files.writeString(dir.resolve("V2__rows.sql"), "INSERT INTO thing (name) VALUES ('a'), ('b'); -- edited\n");
            ValidateResult bad = flyway(ds, dir).validateWithResult();
            assertFalse(bad.validationSuccessful);
            assertTrue(bad.getAllErrorMessages().contains("checksum"), bad.getAllErrorMessages());
            flyway(ds, dir).repair();
            assertTrue(flyway(ds, dir).validateWithResult().validationSuccessful);
            assertEquals(List.of("flyway_schema_history", "later", "thing"), tables(ds, "tool_flyway"));
        } finally {
            drop("tool_flyway");
        }
    }

    @Test
    void flyway_keeps_the_history_connector_j_wrote() throws Exception {
        Path dir = Files.createTempDirectory("staunch-flyway-cj");
        try (StaunchDataSource ds = fresh("tool_flyway_cj")) {
            Files.writeString(dir.resolve("V1__things.sql"), "CREATE TABLE Thing (id INT PRIMARY KEY);\n");
            assertEquals(1, flyway(connectorJ("tool_flyway_cj"), dir).migrate().migrationsExecuted);
            Files.writeString(dir.resolve("V2__more.sql"), "ALTER TABLE Thing ADD COLUMN name VARCHAR(10);\n");
            assertEquals(1, flyway(ds, dir).migrate().migrationsExecuted, "V1 seen as applied, only V2 runs");
            assertEquals(2, flyway(ds, dir).info().applied().length);
            assertEquals(List.of("flyway_schema_history", "Thing"), tables(ds, "tool_flyway_cj"), "one history table");
        } finally {
            drop("tool_flyway_cj");
        }
    }

    // ---- Liquibase ----

    static final String CHANGELOG = """
            <databaseChangeLog xmlns="http://www.liquibase.org/xml/ns/dbchangelog"
                xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                xsi:schemaLocation="http://www.liquibase.org/xml/ns/dbchangelog https://www.liquibase.org/xml/ns/dbchangelog/dbchangelog-latest.xsd">
              <changeSet id="1" author="staunch">
                <createTable tableName="Account">
                  <column name="id" type="BIGINT" autoIncrement="true"><constraints primaryKey="true"/></column>
                  <column name="Owner" type="VARCHAR(40)"><constraints nullable="false"/></column>
                  <column name="balance" type="DECIMAL(12,2)" defaultValueNumeric="0"/>
                </createTable>
              </changeSet>
              <changeSet id="2" author="staunch">
                <addColumn tableName="Account"><column name="opened" type="DATE"/></addColumn>
                <createIndex tableName="Account" indexName="by_owner"><column name="Owner"/></createIndex>
              </changeSet>
              %s
            </databaseChangeLog>
            """;

    static final String CHANGESET_3 = """
              <changeSet id="3" author="staunch">
                <createTable tableName="Entry">
                  <column name="id" type="BIGINT"><constraints primaryKey="true"/></column>
                  <column name="account_id" type="BIGINT">
                    <constraints foreignKeyName="fk_entry_account" references="Account(id)"/>
                  </column>
                </createTable>
              </changeSet>
            """;

    static Liquibase liquibase(Connection c, Path dir) throws Exception {
        Database db = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
        return new Liquibase("changelog.xml", new DirectoryResourceAccessor(dir), db);
    }

    @Test
    void liquibase_update_and_rollback() throws Exception {
        Path dir = Files.createTempDirectory("staunch-liquibase");
        Files.writeString(dir.resolve("changelog.xml"), CHANGELOG.formatted(CHANGESET_3));
        try (StaunchDataSource ds = fresh("tool_liquibase")) {
            try (Connection c = ds.getConnection()) {
                Liquibase lb = liquibase(c, dir);
                assertEquals("MariaDB", lb.getDatabase().getDatabaseProductName());
                lb.update(new Contexts());
            }
            assertEquals(List.of("Account", "DATABASECHANGELOG", "DATABASECHANGELOGLOCK", "Entry"), tables(ds, "tool_liquibase"));
            try (Connection c = ds.getConnection()) {
                liquibase(c, dir).rollback(1, null);
            }
            assertEquals(List.of("Account", "DATABASECHANGELOG", "DATABASECHANGELOGLOCK"), tables(ds, "tool_liquibase"));
            try (Connection c = ds.getConnection()) {
                Liquibase lb = liquibase(c, dir);
                assertEquals(1, lb.listUnrunChangeSets(new Contexts(), null).size());
                lb.update(new Contexts());
                assertEquals(0, lb.listUnrunChangeSets(new Contexts(), null).size());
            }
        } finally {
            drop("tool_liquibase");
        }
    }

    @Test
    void liquibase_keeps_the_history_connector_j_wrote() throws Exception {
        Path dir = Files.createTempDirectory("staunch-liquibase-cj");
        Files.writeString(dir.resolve("changelog.xml"), CHANGELOG.formatted(""));
        try (StaunchDataSource ds = fresh("tool_liquibase_cj")) {
            try (Connection c = connectorJ("tool_liquibase_cj").getConnection()) {
                liquibase(c, dir).update(new Contexts());
            }
            Files.writeString(dir.resolve("changelog.xml"), CHANGELOG.formatted(CHANGESET_3));
            try (Connection c = ds.getConnection()) {
                Liquibase lb = liquibase(c, dir);
                assertEquals(1, lb.listUnrunChangeSets(new Contexts(), null).size(), "1 and 2 seen as run");
                lb.update(new Contexts());
            }
            assertEquals(List.of("Account", "DATABASECHANGELOG", "DATABASECHANGELOGLOCK", "Entry"), tables(ds, "tool_liquibase_cj"),
                    "one history table, not a second lowercase one");
        } finally {
            drop("tool_liquibase_cj");
        }
    }

    // ---- Hibernate ----

    @Entity
    @Table(name = "item")
    public static class Item {
        @Id
        @GeneratedValue(strategy = GenerationType.IDENTITY)
        public Long id;
        public String name;
        @jakarta.persistence.Column(precision = 12, scale = 4)
        public BigDecimal price;
        @Version
        public int version;
    }

    @Entity
    @Table(name = "item")
    public static class ItemWithNote {
        @Id
        @GeneratedValue(strategy = GenerationType.IDENTITY)
        public Long id;
        public String name;
        @jakarta.persistence.Column(precision = 12, scale = 4)
        public BigDecimal price;
        @Version
        public int version;
        public String note;
    }

    static SessionFactory hibernate(DataSource ds, String hbm2ddl, Class<?> entity) {
        StandardServiceRegistry reg = new StandardServiceRegistryBuilder()
                .applySetting("hibernate.connection.datasource", ds)
                .applySetting("hibernate.hbm2ddl.auto", hbm2ddl)
                .build();
        return new MetadataSources(reg).addAnnotatedClass(entity).buildMetadata().buildSessionFactory();
    }

    @Test
    void hibernate_detects_the_dialect_and_runs_hbm2ddl_and_optimistic_locking() throws Exception {
        try (StaunchDataSource ds = fresh("tool_hibernate")) {
            String version;
            try (Connection c = ds.getConnection()) {
                version = c.getMetaData().getDatabaseProductVersion();
            }
            try (SessionFactory sf = hibernate(ds, "create-drop", Item.class)) {
                Dialect d = sf.unwrap(SessionFactoryImplementor.class).getJdbcServices().getDialect();
                assertInstanceOf(MariaDBDialect.class, d);
                assertTrue(version.startsWith(d.getVersion().getMajor() + "." + d.getVersion().getMinor() + "."),
                        "Hibernate read the server's version " + version + ", not a default: " + d.getVersion());
                Item it = new Item();
                it.name = "first";
                it.price = new BigDecimal("12.3456");
                sf.inTransaction(s -> s.persist(it));
                assertEquals(new BigDecimal("12.3456"), sf.fromTransaction(s -> s.find(Item.class, it.id)).price);

                // Two sessions load version 0; the second commit must fail.
                Item a = sf.fromTransaction(s -> s.find(Item.class, it.id));
                sf.inTransaction(s -> s.find(Item.class, it.id).name = "changed");
                Exception e = assertThrows(Exception.class, () -> sf.inTransaction(s -> {
                    a.name = "stale";
                    s.merge(a);
                }));
                Throwable t = e;
                while (t != null && !(t instanceof OptimisticLockException) && !(t instanceof org.hibernate.StaleStateException)) {
                    t = t.getCause();
                }
                assertTrue(t != null, "an optimistic lock failure, got " + e);
                assertEquals("changed", sf.fromTransaction(s -> s.find(Item.class, it.id)).name);
            }
            assertEquals(List.of(), tables(ds, "tool_hibernate"), "create-drop dropped the table");

            try (SessionFactory sf = hibernate(ds, "create", Item.class)) {
                assertTrue(sf.isOpen());
                assertEquals(List.of("item"), tables(ds, "tool_hibernate"));
            }
            try (SessionFactory sf = hibernate(ds, "validate", Item.class)) {
                assertTrue(sf.isOpen(), "validate accepts the table it created");
            }
            Exception invalid = assertThrows(Exception.class, () -> hibernate(ds, "validate", ItemWithNote.class).close());
            assertTrue(String.valueOf(invalid.getMessage()).contains("note"), invalid.toString());
            try (SessionFactory sf = hibernate(ds, "update", ItemWithNote.class)) {
                ItemWithNote n = new ItemWithNote();
                n.name = "with note";
                n.note = "added by update";
                sf.inTransaction(s -> s.persist(n));
            }
            try (SessionFactory sf = hibernate(ds, "validate", ItemWithNote.class)) {
                assertTrue(sf.isOpen());
            }
        } finally {
            drop("tool_hibernate");
        }
    }
    // ---- the same tools on a virtual thread ----

    /**
     * Flyway (migrations, a failing one, repair) and Hibernate (hbm2ddl,
     * optimistic locking) as above, run on a virtual thread, where every get,
     * statement, commit and rollback parks its thread and the poller wakes it
     * (issue 48): the poller's wake-ups must grow, and each tool must do what
     * it does on a platform thread.
     */
    @Test
    void flyway_and_hibernate_on_a_virtual_thread() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() >= 21, "virtual threads: JDK 21+");
        long woken = dev.staunch.internal.Poller.get().wakeups();
        onVirtualThread(this::flyway_migrate_info_validate_repair);
        onVirtualThread(this::hibernate_detects_the_dialect_and_runs_hbm2ddl_and_optimistic_locking);
        woken = dev.staunch.internal.Poller.get().wakeups() - woken;
        assertTrue(woken > 50, "the poller woke the tools' virtual thread " + woken + " times");
    }

    interface Body {
        void run() throws Exception;
    }

    /** Runs body on a virtual thread (by reflection: the tests compile for Java 17) and rethrows what it threw. */
    static void onVirtualThread(Body body) throws Exception {
        java.util.concurrent.ExecutorService ex = (java.util.concurrent.ExecutorService)
                java.util.concurrent.Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        try {
            ex.submit(() -> {
                body.run();
                return null;
            }).get(300, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            if (e.getCause() instanceof Error error) {
                throw error; // an assertion of the body's
            }
            throw e;
        } finally {
            ex.shutdown();
        }
    }
}
