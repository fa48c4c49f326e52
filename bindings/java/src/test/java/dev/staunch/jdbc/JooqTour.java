package dev.staunch.jdbc;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@link JooqTest}'s body: the only test class that names jOOQ's types (Java 21 class files). */
final class JooqTour {

    private JooqTour() {
    }

    static void run() throws Exception {
        try (StaunchDataSource ds = ToolsTest.fresh("tool_jooq")) {
            DSLContext ctx = DSL.using(ds, SQLDialect.MARIADB);
            ctx.createTable("book").column("id", org.jooq.impl.SQLDataType.INTEGER.generatedByDefaultAsIdentity())
                    .column("title", org.jooq.impl.SQLDataType.VARCHAR(100).notNull())
                    .column("price", org.jooq.impl.SQLDataType.DECIMAL(10, 2))
                    .constraints(DSL.primaryKey("id")).execute();
            ctx.insertInto(DSL.table("book"), DSL.field("title"), DSL.field("price"))
                    .values("Dune", new BigDecimal("9.99")).values("Emma", new BigDecimal("5.00")).execute();
            org.jooq.Result<? extends Record> rows = ctx.select(DSL.field("title"), DSL.field("price", BigDecimal.class))
                    .from("book").where(DSL.field("price", BigDecimal.class).gt(new BigDecimal("6"))).fetch();
            assertEquals(1, rows.size());
            assertEquals("Dune", rows.get(0).get(0));
            assertEquals(new BigDecimal("9.99"), rows.get(0).get(1));
            // A transaction that fails rolls back; a batch; a lazy cursor.
            assertThrows(RuntimeException.class, () -> ctx.transaction(cfg -> {
                DSL.using(cfg).insertInto(DSL.table("book"), DSL.field("title")).values("Rolled back").execute();
                throw new IllegalStateException("abort");
            }));
            ctx.batch(ctx.insertInto(DSL.table("book"), DSL.field("title"), DSL.field("price")).values((String) null, (BigDecimal) null))
                    .bind("Ulysses", new BigDecimal("1.50")).bind("Walden", new BigDecimal("2.25")).execute();
            try (org.jooq.Cursor<Record> c = ctx.resultQuery("SELECT title FROM book ORDER BY id").fetchLazy()) {
                List<Object> titles = new ArrayList<>();
                for (Record r : c) {
                    titles.add(r.get(0));
                }
                assertEquals(List.of("Dune", "Emma", "Ulysses", "Walden"), titles);
            }
            // (jOOQ 3.21's ctx.meta() for MARIADB queries information_schema.COLUMNS.IS_SYSTEM_TIME_PERIOD_START,
            // which MariaDB 10.11 lacks: the server refuses that SQL whatever the driver, so it is not tried here.)
        } finally {
            ToolsTest.drop("tool_jooq");
        }
    }
}
