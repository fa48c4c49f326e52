package dev.staunch.jdbc;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * jOOQ on StaunchDataSource (with {@link ToolsTest}'s set-up). jOOQ 3.21's open-source edition
 * is compiled for Java 21 (class file 65), so this runs on JDK 21 and later only; the body is in
 * {@link JooqTour}, so that on JDK 17 JUnit can read this class without loading jOOQ and reports
 * the test as disabled.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@EnabledForJreRange(min = JRE.JAVA_21, disabledReason = "jOOQ 3.21 (open source) requires Java 21")
class JooqTest {

    @Test
    void jooq_queries_and_reads_the_catalog() throws Exception {
        JooqTour.run();
    }
}
