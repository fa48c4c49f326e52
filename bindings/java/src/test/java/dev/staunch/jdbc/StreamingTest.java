package dev.staunch.jdbc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Streaming result sets: setFetchSize(Integer.MIN_VALUE) or a positive size reads rows as they arrive. */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class StreamingTest {
    static StaunchDataSource ds;

    @BeforeAll
    static void tables() throws SQLException {
        ds = JdbcTest.ds(2);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE OR REPLACE TABLE stream_digits (n INT PRIMARY KEY)");
            s.execute("INSERT INTO stream_digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)");
            s.execute("CREATE OR REPLACE TABLE stream_thousand (n INT PRIMARY KEY)");
            s.execute("INSERT INTO stream_thousand SELECT a.n * 100 + b.n * 10 + c.n"
                    + " FROM stream_digits a, stream_digits b, stream_digits c");
        }
    }

    @AfterAll
    static void close() {
        ds.close();
    }

    static long rssBytes() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    /**
     * 100,000 rows of 2 kB (about 200 MB): the first row is there while the
     * server is still sending the answer (its session still runs the query), and
     * reading all of it grows the process's memory by far less than the answer.
     */
    @Test
    void rows_arrive_before_the_whole_answer_and_memory_stays_small() throws Exception {
        int rowsWanted = 100_000;
        int pad = 2000;
        try (Connection c = ds.getConnection(); Connection other = ds.getConnection()) {
            long session = JdbcTest.one(c, "SELECT CONNECTION_ID()");
            try (PreparedStatement ps = c.prepareStatement("SELECT a.n AS i, b.n AS j, REPEAT('x', ?) AS pad"
                    + " FROM stream_thousand a, stream_thousand b WHERE a.n < ?")) {
                ps.setFetchSize(1000);
                ps.setInt(1, pad);
                ps.setInt(2, rowsWanted / 1000);
                long before = rssBytes();
                try (ResultSet r = ps.executeQuery()) {
                    assertTrue(r.next());
                    try (PreparedStatement q = other.prepareStatement(
                            "SELECT COMMAND FROM information_schema.PROCESSLIST WHERE ID = ?")) {
                        q.setLong(1, session);
                        try (ResultSet p = q.executeQuery()) {
                            assertTrue(p.next());
                            String command = p.getString(1);
                            assertTrue(command.equals("Execute") || command.equals("Query"),
                                    "with the first row read, the server is still sending the rest (its session "
                                    + "runs the statement), but its command is " + command);
                        }
                    }
                    long n = 1;
                    long peak = rssBytes();
                    long sum = r.getLong(1);
                    while (r.next()) {
                        n++;
                        sum += r.getLong("i");
                        if (n % 10_000 == 0) {
                            assertEquals(pad, r.getString(3).length());
                            peak = Math.max(peak, rssBytes());
                        }
                    }
                    assertEquals(rowsWanted, n);
                    assertEquals(1000L * (rowsWanted / 1000) * (rowsWanted / 1000 - 1) / 2, sum);
                    long answer = (long) rowsWanted * pad;
                    long grew = peak - before;
                    System.out.printf("StreamingTest: %d rows, %d MB of answer; RSS grew by %d MB%n", n,
                            answer >> 20, grew >> 20);
                    assertTrue(grew < answer / 3, "memory grew by " + (grew >> 20) + " MB for an answer of "
                            + (answer >> 20) + " MB: the rows were not streamed");
                    // Read to its end: the connection is free again before the result set is closed.
                    assertEquals(7, JdbcTest.one(c, "SELECT 7"));
                }
            }
        }
    }

    @Test
    void the_connection_is_busy_until_the_result_set_is_closed_or_read_to_its_end() throws SQLException {
        try (Connection c = ds.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.setFetchSize(Integer.MIN_VALUE);
                assertEquals(Integer.MIN_VALUE, s.getFetchSize());
                ResultSet r = s.executeQuery("SELECT n FROM stream_thousand ORDER BY n");
                assertTrue(r.next());
                assertEquals(0, r.getInt(1));
                SQLException e = assertThrows(SQLException.class, () -> JdbcTest.one(c, "SELECT 1"));
                assertTrue(e.getMessage().contains("streaming result set"), e.getMessage());
                assertTrue(r.next(), "the streaming result set still reads after the refused statement");
                assertEquals(1, r.getInt(1));
                r.close(); // early: the rest is read off
                assertEquals(1, JdbcTest.one(c, "SELECT 1"));

                r = s.executeQuery("SELECT n FROM stream_thousand ORDER BY n");
                int n = 0;
                while (r.next()) {
                    assertEquals(n++, r.getInt(1));
                }
                assertEquals(1000, n);
                assertEquals(2, JdbcTest.one(c, "SELECT 2"), "read to its end: free without close");
                r.close();

                // The same statement run again closes its streaming result set first.
                r = s.executeQuery("SELECT n FROM stream_thousand");
                assertTrue(r.next());
                ResultSet again = s.executeQuery("SELECT COUNT(*) FROM stream_thousand");
                assertTrue(r.isClosed());
                assertTrue(again.next());
                assertEquals(1000, again.getLong(1));
                again.close();
            }
            try (Statement s = c.createStatement()) {
                assertThrows(SQLException.class, () -> s.setFetchSize(-5));
                s.setFetchSize(0);
                try (ResultSet r = s.executeQuery("SELECT n FROM stream_thousand")) {
                    assertTrue(r.next());
                    assertEquals(3, JdbcTest.one(c, "SELECT 3"), "fetch size 0 reads whole: no hold");
                }
            }
            // Closing the connection with a streaming result set open gives it back to the pool usable.
            Statement s = c.createStatement();
            s.setFetchSize(10);
            ResultSet r = s.executeQuery("SELECT n FROM stream_thousand");
            assertTrue(r.next());
        }
        try (Connection c = ds.getConnection()) {
            assertEquals(4, JdbcTest.one(c, "SELECT 4"));
            assertFalse(c.isClosed());
        }
    }
}
