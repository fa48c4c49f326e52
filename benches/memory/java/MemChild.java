/*
 * The JVM contenders' child of benches/memory/mem_bench.py (issue 50): the
 * resident memory of a JVM holding N idle pooled connections, then after each
 * of them has carried one large answer and gone back. One process per
 * contender and size:
 *
 *   java -cp CLASSPATH MemChild staunch-jdbc|hikari URL N ROWS
 *   (or MemChild.java, through the source launcher)
 *
 *   staunch-jdbc  staunch's StaunchDataSource (the library: -Dstaunch.library)
 *   hikari        HikariCP + MariaDB Connector/J
 *
 * Each pool at its defaults but for its size (maximumPoolSize = minimumIdle =
 * N, all connected before the measure); the large answer read row by row
 * through a plain Statement, nothing kept. One JSON line per phase on stdout:
 * {"phase":..,"rss_kb":..,"threads":..} (VmRSS and Threads of
 * /proc/self/status), plus the Java heap's share: heap_used_kb and
 * heap_committed_kb (Runtime). The JVM runs as shipped: no GC is asked for.
 */

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.staunch.jdbc.StaunchDataSource;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.IntSupplier;
import javax.sql.DataSource;

public final class MemChild {
    private MemChild() {}

    /** A field of /proc/self/status: kB for VmRSS, a count for Threads. */
    static long statusField(String name) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim().split("\\s+")[0]);
            }
        }
        return -1;
    }

    static void emit(String phase) throws IOException {
        Runtime rt = Runtime.getRuntime();
        System.out.printf("{\"phase\":\"%s\",\"rss_kb\":%d,\"threads\":%d,\"heap_used_kb\":%d,\"heap_committed_kb\":%d}%n",
                phase, statusField("VmRSS"), statusField("Threads"),
                (rt.totalMemory() - rt.freeMemory()) / 1024, rt.totalMemory() / 1024);
        System.out.flush();
    }

    /** A pool of k connections, all of them connected and idle. */
    record Pool(DataSource ds, AutoCloseable closer) {}

    static Pool open(String contender, URI url, int k) throws Exception {
        String jdbcUrl = "jdbc:mariadb://" + url.getHost() + ":" + url.getPort() + url.getPath();
        String[] userInfo = url.getUserInfo().split(":", 2);
        DataSource ds;
        IntSupplier idle;
        AutoCloseable closer;
        switch (contender) {
            case "staunch-jdbc": {
                StaunchDataSource s = new StaunchDataSource(jdbcUrl);
                s.setUsername(userInfo[0]);
                s.setPassword(userInfo[1]);
                s.setMaximumPoolSize(k);
                s.setMinimumIdle(k);
                s.open();
                ds = s;
                idle = () -> s.getPoolMXBean().getIdleConnections();
                closer = s;
                break;
            }
            case "hikari": {
                HikariConfig c = new HikariConfig();
                c.setJdbcUrl(jdbcUrl);
                c.setUsername(userInfo[0]);
                c.setPassword(userInfo[1]);
                c.setMaximumPoolSize(k);
                c.setMinimumIdle(k);
                HikariDataSource h = new HikariDataSource(c);
                ds = h;
                idle = () -> h.getHikariPoolMXBean().getIdleConnections();
                closer = h;
                break;
            }
            default:
                throw new IllegalArgumentException("unknown contender " + contender + " (staunch-jdbc or hikari)");
        }
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (idle.getAsInt() < k) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the pool never reached " + k + " idle connections");
            }
            Thread.sleep(10);
        }
        return new Pool(ds, closer);
    }

    static void large(Connection c, int rows) throws SQLException {
        int n = 0;
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT seq, REPEAT('x', 100) FROM seq_1_to_" + rows)) {
            while (rs.next()) {
                rs.getLong(1);
                rs.getString(2);
                n++;
            }
        }
        if (n != rows) {
            throw new IllegalStateException("read " + n + " rows, want " + rows);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: MemChild staunch-jdbc|hikari URL N ROWS");
            System.exit(2);
        }
        String contender = args[0];
        URI url = URI.create(args[1]);
        int n = Integer.parseInt(args[2]);
        int rows = Integer.parseInt(args[3]);

        Pool pool = open(contender, url, 1);
        try (Connection c = pool.ds().getConnection(); Statement st = c.createStatement()) {
            st.execute("DO 1");
        }
        pool.closer().close();
        Thread.sleep(200);
        emit("base");

        pool = open(contender, url, n);
        Thread.sleep(500);
        emit("idle");
        if (rows > 0) {
            Connection[] held = new Connection[n];
            for (int i = 0; i < n; i++) {
                held[i] = pool.ds().getConnection();
            }
            for (Connection c : held) {
                large(c, rows);
            }
            for (Connection c : held) {
                c.close();
            }
            Thread.sleep(12_000);
            emit("after_large");
        }
        pool.closer().close();
        System.exit(0);
    }
}
