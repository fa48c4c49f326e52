package dev.staunch.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.staunch.Conn;
import dev.staunch.Pool;
import dev.staunch.Rows;
import dev.staunch.Staunch;
import dev.staunch.jdbc.StaunchDataSource;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Issue 48's JVM figure: 1,000 virtual threads, each doing getConnection +
 * {@code SELECT 1} + close in a loop, for HikariCP + MariaDB Connector/J,
 * StaunchDataSource (JDBC) and staunch's native API, each pool at its
 * defaults (10 connections), against the same server, interleaved in rounds
 * (a busy machine disturbs all three alike) and compared on the median round.
 * Prints each round, the medians, the ratios to HikariCP, and the peak count
 * of platform threads.
 *
 * <pre>
 * scripts/java-bench.sh crowd     (Temurin 25: the FFM path, then the JNI path)
 * </pre>
 *
 * Needs JDK 21+ (virtual threads, reached through reflection so that the
 * bench module still compiles for Java 17). Not a test; not part of CI.
 */
public final class Crowd {
    private Crowd() {
    }

    interface Contender {
        void once() throws Exception;

        void close();
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.getInteger("staunch.bench.threads", 1000);
        int perThread = Integer.getInteger("staunch.bench.ops", 20);
        int rounds = Integer.getInteger("staunch.bench.rounds", 5);
        String host = GetSelectClose.host();
        String port = GetSelectClose.port();
        System.out.printf("JDK %s, staunch path %s, %d virtual threads x %d x (getConnection + SELECT 1 + close),"
                + " %d rounds, %d cores%n", Runtime.version(), Staunch.nativePath(), threads, perThread, rounds,
                Runtime.getRuntime().availableProcessors());

        HikariDataSource hikari = new HikariDataSource();
        hikari.setJdbcUrl(GetSelectClose.jdbcUrl());
        hikari.setUsername("app");
        hikari.setPassword("app-secret");
        StaunchDataSource jdbc = new StaunchDataSource();
        jdbc.setJdbcUrl(GetSelectClose.jdbcUrl());
        jdbc.setUsername("app");
        jdbc.setPassword("app-secret");
        Pool pool = Staunch.open("mysql://app:app-secret@" + host + ":" + port + "/staunch_test");

        Map<String, Contender> contenders = new LinkedHashMap<>();
        contenders.put("hikariConnectorJ", new Contender() {
            public void once() throws Exception {
                select1(hikari.getConnection());
            }

            public void close() {
                hikari.close();
            }
        });
        contenders.put("staunchJdbc", new Contender() {
            public void once() throws Exception {
                select1(jdbc.getConnection());
            }

            public void close() {
                jdbc.close();
            }
        });
        contenders.put("staunchNative", new Contender() {
            public void once() {
                try (Conn c = pool.get(); Rows r = c.queryText("SELECT 1")) {
                    if (!r.next() || r.getLong(0) != 1) {
                        throw new IllegalStateException("SELECT 1 did not answer 1");
                    }
                }
            }

            public void close() {
                pool.close();
            }
        });

        Map<String, double[]> rates = new LinkedHashMap<>();
        for (String name : contenders.keySet()) {
            rates.put(name, new double[rounds]);
            run(contenders.get(name), threads, 5); // warm-up: the pool filled, the code compiled
        }
        ManagementFactory.getThreadMXBean().resetPeakThreadCount();
        for (int r = 0; r < rounds; r++) {
            StringBuilder line = new StringBuilder("round " + (r + 1) + ":");
            for (Map.Entry<String, Contender> e : contenders.entrySet()) {
                double rate = run(e.getValue(), threads, perThread);
                rates.get(e.getKey())[r] = rate;
                line.append(String.format("  %s %.0f ops/s", e.getKey(), rate));
            }
            System.out.println(line);
        }
        double base = median(rates.get("hikariConnectorJ"));
        System.out.println();
        System.out.println("| contender | median ops/s | vs HikariCP + Connector/J |");
        System.out.println("|---|---:|---:|");
        for (Map.Entry<String, double[]> e : rates.entrySet()) {
            double m = median(e.getValue());
            System.out.printf("| %s | %.0f | %.2fx |%n", e.getKey(), m, m / base);
        }
        System.out.printf("peak platform threads: %d%n", ManagementFactory.getThreadMXBean().getPeakThreadCount());
        for (Contender c : contenders.values()) {
            c.close();
        }
    }

    private static void select1(Connection c) throws Exception {
        try (c; Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
            if (!rs.next() || rs.getLong(1) != 1) {
                throw new IllegalStateException("SELECT 1 did not answer 1");
            }
        }
    }

    /** {@code threads} virtual threads, each running {@code perThread} operations: the rate, in ops/s. */
    private static double run(Contender c, int threads, int perThread) throws Exception {
        ExecutorService ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        long t0 = System.nanoTime();
        List<Future<?>> fs = new ArrayList<>(threads);
        for (int t = 0; t < threads; t++) {
            fs.add(ex.submit(() -> {
                for (int i = 0; i < perThread; i++) {
                    c.once();
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(600, TimeUnit.SECONDS);
        }
        double s = (System.nanoTime() - t0) / 1e9;
        ex.shutdown();
        ex.awaitTermination(60, TimeUnit.SECONDS);
        return (double) threads * perThread / s;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
