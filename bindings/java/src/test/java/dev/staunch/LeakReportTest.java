package dev.staunch;

import dev.staunch.internal.BorrowerStack;
import dev.staunch.jdbc.StaunchDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A leak report (leak_detection_threshold) names the Java code that borrowed: the borrower's stack as Java
 * prints one, without the binding's frames (issue 47 item 4), through the native Pool and through
 * StaunchDataSource.getConnection(), against the shared MariaDB server. This class is in dev.staunch on
 * purpose: its frames are the caller's, not the binding's, and must stay.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeakReportTest {
    /** Frames of the binding that a report must not show (the borrow's own path). */
    private static final List<String> BINDING_FRAMES = List.of("\tat dev.staunch.Pool.", "\tat dev.staunch.internal.",
            "\tat dev.staunch.jdbc.StaunchDataSource.", "\tat dev.staunch.Conn.");

    /** Borrows from the pool and holds the connection 300 ms, past the 50 ms threshold. */
    private static void leakyHandler(Pool pool) throws InterruptedException {
        try (Conn c = pool.get(Duration.ofSeconds(5))) {
            Thread.sleep(300);
            c.execute("DO 1");
        }
    }

    /** The same through JDBC. */
    private static void leakyHandler(StaunchDataSource ds) throws Exception {
        try (Connection c = ds.getConnection()) {
            Thread.sleep(300);
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT 1")) {
                assertTrue(r.next());
            }
        }
    }

    private static EventListener collect(List<Event> leaks) {
        return e -> {
            if (e.kind() == Event.Kind.LEAK_SUSPECTED) {
                leaks.add(e);
            }
        };
    }

    /** The one report's message, once it came (the housekeeper reports within a few ms of the threshold). */
    private static String theReport(List<Event> leaks) throws InterruptedException {
        long deadline = Env.now() + 5000;
        while (leaks.isEmpty() && Env.now() < deadline) {
            Thread.sleep(10);
        }
        Thread.sleep(100); // a second report of the same borrow would be a bug: give it the time to come
        assertEquals(1, leaks.size(), () -> "leak reports: " + leaks);
        return leaks.get(0).message();
    }

    private static void assertNamesTheBorrower(String msg, String test) {
        assertTrue(msg.contains("possible leak; borrowed at:\n"), msg);
        // The first frame is the code that borrowed: every frame above it (the get) is the binding's.
        assertTrue(msg.contains("borrowed at:\n\tat dev.staunch.LeakReportTest.leakyHandler(LeakReportTest.java:"), msg);
        // Then its caller, the test method, and the rest of the thread's stack, as Java prints them.
        assertTrue(msg.contains("\tat dev.staunch.LeakReportTest." + test + "(LeakReportTest.java:"), msg);
        assertTrue(msg.matches("(?s).*\n\tat java\\.base/java\\.lang\\.reflect\\.Method\\.invoke\\(Method\\.java:\\d+\\)\n.*"), msg);
        for (String f : BINDING_FRAMES) {
            assertFalse(msg.contains(f), () -> "the binding's frame " + f.trim() + " is in the report: " + msg);
        }
    }

    @Test
    void a_leak_report_names_the_java_code_that_borrowed() throws Exception {
        List<Event> leaks = new CopyOnWriteArrayList<>();
        try (Pool pool = Staunch.builder().url(Env.url()).knob("leak_detection_threshold", "50ms").knob("max_size", "1")
                .onEvent(collect(leaks)).open()) {
            leakyHandler(pool);
            String msg = theReport(leaks);
            assertTrue(msg.matches("(?s)connection \\d+ held by thread \"[^\"\n]*\" for [^:\n]+: possible leak; borrowed at:\n.*"),
                    msg);
            assertNamesTheBorrower(msg, "a_leak_report_names_the_java_code_that_borrowed");
            // tryGet borrows too.
            leaks.clear();
            try (Conn c = pool.tryGet().orElseThrow()) {
                Thread.sleep(300);
                c.execute("DO 1");
            }
            assertTrue(theReport(leaks).contains("borrowed at:\n\tat dev.staunch.LeakReportTest."
                    + "a_leak_report_names_the_java_code_that_borrowed(LeakReportTest.java:"), leaks.get(0).message());
        }
    }

    @Test
    void a_leak_report_through_jdbc_names_the_code_that_called_getConnection() throws Exception {
        List<Event> leaks = new CopyOnWriteArrayList<>();
        Testkit s = Env.server();
        StaunchDataSource ds = new StaunchDataSource();
        ds.setJdbcUrl("jdbc:mariadb://127.0.0.1:" + s.server(0).get("port") + "/staunch_test?connectTimeout=2000");
        ds.setUsername("app");
        ds.setPassword("app-secret");
        ds.setMaximumPoolSize(1);
        ds.setLeakDetectionThreshold(50);
        ds.setEventListener(collect(leaks));
        try (ds) {
            leakyHandler(ds);
            assertNamesTheBorrower(theReport(leaks), "a_leak_report_through_jdbc_names_the_code_that_called_getConnection");
        }
    }

    @Test
    void without_the_threshold_no_report() throws Exception {
        List<Event> leaks = new CopyOnWriteArrayList<>();
        try (Pool pool = Staunch.builder().url(Env.url()).knob("max_size", "1").onEvent(collect(leaks)).open()) {
            leakyHandler(pool);
            Thread.sleep(100);
            assertEquals(List.of(), leaks);
        }
    }

    @Test
    void the_binding_s_frames_are_its_classes_not_its_packages() {
        assertTrue(BorrowerStack.own(Pool.class));
        assertTrue(BorrowerStack.own(BorrowerStack.class));
        assertTrue(BorrowerStack.own(StaunchDataSource.class));
        assertFalse(BorrowerStack.own(LeakReportTest.class), "a caller's class in dev.staunch is the caller's");
        assertFalse(BorrowerStack.own(Env.class));
        assertFalse(BorrowerStack.own(String.class));
        String here = BorrowerStack.capture();
        assertTrue(here.startsWith("\tat dev.staunch.LeakReportTest.the_binding_s_frames_are_its_classes_not_its_packages("
                + "LeakReportTest.java:"), here);
    }
}
