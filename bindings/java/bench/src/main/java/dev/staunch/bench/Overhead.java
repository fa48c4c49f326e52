package dev.staunch.bench;

import dev.staunch.Pool;
import dev.staunch.Staunch;
import dev.staunch.TraceListener;
import dev.staunch.micrometer.StaunchMetrics;
import dev.staunch.otel.StaunchTracing;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What observability costs (issue 47), measured in one loop: GetSelectClose's
 * staunchNative (Pool.get + SELECT 1 + close) on three pools taking turns in
 * phases of 32 operations per thread: the defaults, "hooks" (a Micrometer
 * binder bound, whose first read turns the library's timings on, and
 * StaunchTracing over OpenTelemetry's SDK with no exporter) and "hooks-noop"
 * (the binder and a tracer that does nothing: the library's upcalls alone).
 * JMH runs its contenders one after the other, each in its own JVM, and on a
 * shared machine their difference (a few percent) is far inside the noise
 * between two runs; here every pool meets the same moments of the machine.
 * Prints, at 1 and 8 threads, the median over rounds (one phase of each) of
 * each pool's wall time over the defaults', and the ratio of the process's
 * summed CPU time per operation. java-bench.sh runs it with
 * STAUNCH_BENCH_HOOKS=1 (argument: seconds per thread count, default 20).
 */
public final class Overhead {
    private static final int PER_PHASE = 32;

    private Overhead() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        String url = "mysql://app:app-secret@" + GetSelectClose.host() + ":" + GetSelectClose.port() + "/staunch_test";
        SdkTracerProvider tracerProvider = SdkTracerProvider.builder().build();
        String[] names = {"defaults", "hooks", "hooks-noop"};
        Pool[] pools = {
            Staunch.open(url),
            hooked(url, StaunchTracing.create(OpenTelemetrySdk.builder().setTracerProvider(tracerProvider).build())),
            hooked(url, e -> { }),
        };
        System.out.println("staunch native path: " + Staunch.nativePath());
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try {
            for (int threads : new int[] {1, 8}) {
                ExecutorService ex = Executors.newFixedThreadPool(threads);
                try {
                    // Warm-up: every pool, 2 s, not counted.
                    run(ex, threads, pools, os, 2_000_000_000L, null, null);
                    List<List<Double>> ratios = new ArrayList<>();
                    for (int k = 1; k < pools.length; k++) {
                        ratios.add(new ArrayList<>());
                    }
                    long[] cpu = new long[pools.length];
                    run(ex, threads, pools, os, seconds * 1_000_000_000L, ratios, cpu);
                    for (int k = 1; k < pools.length; k++) {
                        List<Double> r = ratios.get(k - 1);
                        Collections.sort(r);
                        System.out.printf("threads=%d  %-10s / defaults: wall %.3fx (median of %d rounds), cpu %.3fx%n",
                                threads, names[k], r.get(r.size() / 2), r.size(), (double) cpu[k] / cpu[0]);
                    }
                } finally {
                    ex.shutdownNow();
                }
            }
        } finally {
            for (Pool p : pools) {
                p.close();
            }
            tracerProvider.close();
        }
    }

    static Pool hooked(String url, TraceListener tracer) {
        Pool p = Staunch.builder().url(url).tracer(tracer).open();
        new StaunchMetrics(p).bindTo(new SimpleMeterRegistry());
        return p;
    }

    /**
     * Rounds of one phase per pool for {@code nanos}; with {@code ratios}, each round's
     * wall time per operation of pool k over pool 0's goes to ratios[k - 1], and the
     * process's CPU time of pool k's phases is added to cpu[k].
     */
    static void run(ExecutorService ex, int threads, Pool[] pools, com.sun.management.OperatingSystemMXBean os,
            long nanos, List<List<Double>> ratios, long[] cpu) throws Exception {
        long end = System.nanoTime() + nanos;
        long[] wall = new long[pools.length];
        while (System.nanoTime() < end) {
            for (int k = 0; k < pools.length; k++) {
                Pool pool = pools[k];
                CountDownLatch done = new CountDownLatch(threads);
                long c0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                List<Future<?>> fs = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    fs.add(ex.submit(() -> {
                        try {
                            for (int i = 0; i < PER_PHASE; i++) {
                                GetSelectClose.select1(pool);
                            }
                        } finally {
                            done.countDown();
                        }
                    }));
                }
                done.await();
                wall[k] = System.nanoTime() - t0;
                long c = os.getProcessCpuTime() - c0;
                for (Future<?> f : fs) {
                    f.get(); // a failed statement fails the run
                }
                if (cpu != null) {
                    cpu[k] += c;
                }
            }
            if (ratios != null) {
                for (int k = 1; k < pools.length; k++) {
                    ratios.get(k - 1).add((double) wall[k] / wall[0]);
                }
            }
        }
    }
}
