package dev.staunch;

import dev.staunch.internal.Native;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Entry point of the native API.
 *
 * <pre>{@code
 * try (Pool pool = Staunch.open("mysql://app:secret@127.0.0.1:3306/shop?max_size=8");
 *      Conn c = pool.get(Duration.ofSeconds(2));
 *      Rows rows = c.query("SELECT id, name FROM t WHERE id > ?", 10)) {
 *     while (rows.next()) {
 *         long id = rows.getLong(0);
 *         String name = rows.getString("name");
 *     }
 * }
 * }</pre>
 */
public final class Staunch {
    private Staunch() {}

    /** Opens a pool from a URL, {@code mysql://user:pass@host:port/db?knob=value&...}. Never connects. */
    public static Pool open(String url) {
        Objects.requireNonNull(url, "url");
        return Pool.open(url, Map.of(), Map.of(), null, null);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The version of the loaded library, e.g. "1.0.0". */
    public static String version() {
        Native.check();
        return Native.string(Native.version_string());
    }

    /**
     * The native path this JVM uses: "FFM" (the Foreign Function and Memory
     * API, JDK 22+) or "JNI" (a small shim, libstaunch_jni.so, JDK 11 to 21).
     * The multi-release jar chooses by the running JDK; nothing to configure.
     */
    public static String nativePath() {
        return Native.path();
    }

    /** The version number of the loaded library (major * 10000 + minor * 100 + patch). */
    public static int versionNumber() {
        Native.check();
        return Native.version();
    }

    /** Pool options: a URL and/or knobs by name (as in the URL), an event listener, and a trace listener. */
    public static final class Builder {
        private String url;
        private final Map<String, String> knobs = new LinkedHashMap<>();
        private final Map<String, String> defaults = new LinkedHashMap<>();
        private EventListener listener;
        private TraceListener tracer;

        private Builder() {}

        public Builder url(String url) {
            this.url = Objects.requireNonNull(url, "url");
            return this;
        }

        /** A knob by name, in its text form: {@code knob("connect_timeout", "250ms")}. Applied after the URL. */
        public Builder knob(String name, String value) {
            knobs.put(Objects.requireNonNull(name, "knob name"), Objects.requireNonNull(value, "value of knob " + name));
            return this;
        }

        public Builder knob(String name, Duration value) {
            Objects.requireNonNull(value, "value of knob " + name);
            if (value.isNegative()) {
                throw new IllegalArgumentException("knob " + name + " must not be negative: " + value);
            }
            return knob(name, value.toMillis() + "ms");
        }

        public Builder knob(String name, long value) {
            return knob(name, Long.toString(value));
        }

        /**
         * A knob's default, in its text form: it applies unless the URL or {@link #knob} gives that knob,
         * whichever is called first ({@code staunch_options_set_default}). For what a face decides on the
         * user's behalf, e.g. the JDBC data source's {@code interpolate_params=true} (Connector/J's way).
         */
        public Builder defaultKnob(String name, String value) {
            defaults.put(Objects.requireNonNull(name, "knob name"), Objects.requireNonNull(value, "value of knob " + name));
            return this;
        }

        public Builder onEvent(EventListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Hears each borrow's and statement's start and end on the borrowing thread
         * ({@link dev.staunch.otel.StaunchTracing} makes OpenTelemetry spans of them). Without one, the
         * library calls nothing and measures nothing.
         */
        public Builder tracer(TraceListener tracer) {
            this.tracer = Objects.requireNonNull(tracer, "tracer");
            return this;
        }

        public Pool open() {
            return Pool.open(url, knobs, defaults, listener, tracer);
        }
    }

    /** An event from its fields (either native path): {kind, status, connection_id, count, duration_us, message, pool_id}. */
    static Event event(Object[] e) {
        int kind = (Integer) e[0];
        return new Event(Event.Kind.of(kind), kind, (Integer) e[1], (Long) e[2], (Long) e[3],
                Duration.ofNanos((Long) e[4] * 1000L), (String) e[5], (Long) e[6]);
    }
}
