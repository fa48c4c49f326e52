package dev.staunch;

import dev.staunch.internal.Abi;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A snapshot of a pool's gauges and counters (staunch_stats). Every field of
 * the C struct is in {@link #asMap()} under its C name; the common ones have
 * accessors.
 */
public final class Stats {
    private final long[] v;

    Stats(long[] values) {
        this.v = values;
    }

    private long f(String name) {
        return v[Abi.STATS_FIELDS.indexOf(name)];
    }

    /** A field by its C name ("total", "acquire_timeouts", ...). */
    public long get(String field) {
        int i = Abi.STATS_FIELDS.indexOf(field);
        if (i < 0) {
            throw new IllegalArgumentException("no stats field named " + field + "; fields: " + Abi.STATS_FIELDS);
        }
        return v[i];
    }

    public Map<String, Long> asMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < v.length; i++) {
            m.put(Abi.STATS_FIELDS.get(i), v[i]);
        }
        return m;
    }

    public long total() { return f("total"); }
    public long active() { return f("active"); }
    public long idle() { return f("idle"); }
    public long reserved() { return f("reserved"); }
    public long waiting() { return f("waiting"); }
    public long pendingCreates() { return f("pending_creates"); }
    public long connecting() { return f("connecting"); }
    public long acquired() { return f("acquired"); }
    public long acquireTimeouts() { return f("acquire_timeouts"); }
    public long created() { return f("created"); }
    public long closedBroken() { return f("closed_broken"); }
    public long closedEvicted() { return f("closed_evicted"); }
    public long connectFailures() { return f("connect_failures"); }
    public long validationFailures() { return f("validation_failures"); }
    public long rollbacksOnReturn() { return f("rollbacks_on_return"); }
    public long violations() { return f("violations"); }
    public long maxSize() { return f("max_size"); }
    public long acquiresCancelled() { return f("acquires_cancelled"); }
    public long resetsOnReturn() { return f("resets_on_return"); }
    public long statementsCut() { return f("statements_cut"); }

    @Override
    public String toString() {
        return "Stats" + asMap();
    }
}
