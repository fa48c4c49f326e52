package dev.staunch.bench;

import dev.staunch.Conn;
import dev.staunch.Pool;
import dev.staunch.Rows;
import dev.staunch.Staunch;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What pinning costs: 1,000 virtual threads each borrowing from a 4-connection pool and running
 * {@code SELECT 1}, against the same with 1,000 platform threads, on whichever native path the JDK
 * gives ({@link Staunch#nativePath()}: FFM on 22+, JNI below; on 22+ the JNI path is taken with
 * {@code -Djdk.util.jar.enableMultiRelease=false}). A borrow or a statement blocks in native code,
 * and a virtual thread in native code pins its carrier: with the default scheduler (one carrier per
 * core) at most that many borrows are in flight at once, whatever the pool's size. Worse, on JDK 24+
 * a virtual thread that holds a connection and blocks on a monitor or a lock (Cleaner.register, which
 * the binding calls, takes one) leaves its carrier; if meanwhile every carrier is pinned in a get
 * waiting for a connection, the holder cannot run again until those gets time out: a stall as long
 * as the get's timeout (here {@value #GET_TIMEOUT_S} s), counted as "timed-out gets". Prints the rate,
 * the timed-out gets and how many distinct carrier threads ran the virtual threads.
 *
 * <pre>
 * target/debug/staunch-testkit server        # prints a mysql:// URL (or use any server)
 * java -Dstaunch.library=target/debug/libstaunch.so [-Dstaunch.jni.library=...] \
 *   -cp bindings/java/target/staunch-1.5.0.jar bindings/java/bench/src/main/java/dev/staunch/bench/Pinning.java \
 *   'mysql://app:app-secret@127.0.0.1:PORT/staunch_test' [rounds]
 * </pre>
 *
 * A measuring program, not a test and not part of CI (a speed figure is a side-by-side run).
 * Needs JDK 21+ (virtual threads, reached through reflection so that the bench module still compiles
 * for Java 17); source-file mode compiles it for the JDK that runs it.
 */
public final class Pinning {
    static final int GET_TIMEOUT_S = 5;

    private Pinning() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: Pinning mysql://user:pass@host:port/db [rounds per thread, default 20]");
            System.exit(2);
        }
        String url = args[0] + (args[0].contains("?") ? "&" : "?") + "max_size=4";
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        int threads = 1000;
        System.out.printf("JDK %s, path %s, %d threads x %d rounds of get + SELECT 1 + close, pool max_size=4,"
                + " %d cores, load average %.1f%n", Runtime.version(), Staunch.nativePath(), threads, rounds,
                Runtime.getRuntime().availableProcessors(), ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        try (Pool pool = Staunch.open(url)) {
            run(pool, "warm-up, platform", Executors.newFixedThreadPool(8), 8, 50, null);
            for (int i = 0; i < 2; i++) {
                Set<String> carriers = ConcurrentHashMap.newKeySet();
                // Through reflection: the bench module compiles for Java 17 (JMH runs there too).
                ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
                run(pool, "virtual ", virtual, threads, rounds, carriers);
                run(pool, "platform", Executors.newFixedThreadPool(threads), threads, rounds, null);
            }
        }
    }

    private static void run(Pool pool, String what, ExecutorService ex, int threads, int rounds, Set<String> carriers)
            throws Exception {
        long t0 = System.nanoTime();
        AtomicLong timedOut = new AtomicLong();
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            fs.add(ex.submit(() -> {
                for (int r = 0; r < rounds; r++) {
                    try (Conn c = pool.get(Duration.ofSeconds(GET_TIMEOUT_S)); Rows rows = c.query("SELECT 1")) {
                        if (!rows.next() || rows.getLong(0) != 1) {
                            throw new IllegalStateException("SELECT 1 did not answer 1");
                        }
                    } catch (dev.staunch.StaunchException e) {
                        if (e.status() != dev.staunch.Status.POOL_EXHAUSTED) {
                            throw e;
                        }
                        timedOut.incrementAndGet();
                    }
                    if (carriers != null) {
                        // A virtual thread's name shows its carrier: VirtualThread[#42]/runnable@ForkJoinPool-1-worker-2
                        String s = Thread.currentThread().toString();
                        int at = s.indexOf('@');
                        carriers.add(at < 0 ? s : s.substring(at + 1));
                    }
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
        long ops = (long) threads * rounds;
        System.out.printf("  %s: %7d ops in %6.2f s = %8.0f ops/s, timed-out gets %d%s, peak JVM threads %d%n", what,
                ops - timedOut.get(), s, (ops - timedOut.get()) / s, timedOut.get(),
                carriers == null ? "" : ", carriers " + carriers.size(),
                ManagementFactory.getThreadMXBean().getPeakThreadCount());
        ManagementFactory.getThreadMXBean().resetPeakThreadCount();
    }
}
