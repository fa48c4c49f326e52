package dev.staunch.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Event and tracer callbacks, for both native paths: the C callback (the JNI shim's, or
 * the FFM path's upcall stub in its {@link Native}) calls {@link #onEvent}
 * with the event's fields; {@code user_data} is a registration number looked
 * up here, so no Java object address crosses into C. Nothing thrown in Java
 * crosses into C: every Throwable is caught here (and the shim clears anything
 * pending; the FFM upcall catches what its own reading of the event throws).
 *
 * <p>A tracer's {@code user_data} has its low bit set when its listener wants
 * the statement's text ({@link #wantsText}): only then does either path copy
 * the text out of the library (the JNI shim reads the bit in C).
 */
public final class Events {
    private Events() {}

    private static final System.Logger LOG = System.getLogger("dev.staunch");
    private static final Map<Long, Consumer<Object[]>> LISTENERS = new ConcurrentHashMap<>();
    private static final Map<Long, TraceSink> TRACERS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT = new AtomicLong(1);

    /** The native path's staunch_event_callback. */
    public static long callback() {
        return Native.eventCallback();
    }

    /** The native path's staunch_finalizer. */
    public static long finalizer() {
        return Native.eventFinalizer();
    }

    /**
     * Registers a listener of raw events; returns the user_data to pass. It
     * receives {kind, status, connection_id, count, duration_us, message, pool_id}.
     */
    public static long register(Consumer<Object[]> listener) {
        long id = NEXT.getAndIncrement() << 1;
        LISTENERS.put(id, listener);
        return id;
    }

    public static void unregister(long id) {
        LISTENERS.remove(id);
        TRACERS.remove(id);
    }

    static int registered() {
        return LISTENERS.size() + TRACERS.size();
    }

    /** The native path's staunch_trace_callback. */
    public static long traceCallback() {
        return Native.traceCallback();
    }

    /**
     * Registers a tracer; returns the user_data to pass with {@link #traceCallback} and
     * {@link #finalizer} (whose call unregisters it). Its low bit says whether the listener wants the text.
     */
    public static long registerTracer(boolean text, TraceSink sink) {
        long id = (NEXT.getAndIncrement() << 1) | (text ? 1 : 0);
        TRACERS.put(id, sink);
        return id;
    }

    /** A tracer's fields as the C struct has them (statement and error null when absent). */
    public interface TraceSink {
        void trace(int kind, int errorCode, String pool, String server, long connectionId, String statement,
                   long durationUs, String error);
    }

    /** Whether the tracer registered as {@code userData} wants the statement's text. */
    static boolean wantsText(long userData) {
        return (userData & 1) != 0;
    }

    /** Called by the JNI shim's tracer callback (on the borrowing thread); it looks it up by this name and signature. */
    static void onTrace(long userData, int kind, int errorCode, byte[] pool, byte[] server, long connectionId,
                        byte[] statement, long durationUs, byte[] error) {
        try {
            onTrace(userData, kind, errorCode, utf8(pool), utf8(server), connectionId,
                    statement == null ? null : utf8(statement), durationUs, error == null ? null : utf8(error));
        } catch (Throwable ignored) {
            // nothing may cross into C
        }
    }

    private static String utf8(byte[] b) {
        return b == null ? "" : new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Called by the native path's tracer callback (on the borrowing thread) with the event's fields. */
    static void onTrace(long userData, int kind, int errorCode, String pool, String server, long connectionId,
                        String statement, long durationUs, String error) {
        try {
            TraceSink l = TRACERS.get(userData);
            if (l != null) {
                l.trace(kind, errorCode, pool, server, connectionId, statement, durationUs, error);
            }
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.WARNING, "staunch: a trace listener threw; ignored", t);
            } catch (Throwable ignored) {
                // nothing may cross into C
            }
        }
    }

    /** Called by the JNI shim's callback (any thread); the shim looks it up by this name and signature. */
    static void onEvent(long userData, int kind, int status, long connectionId, long count, long durationUs,
                        byte[] message, long poolId) {
        try {
            onEvent(userData, kind, status, connectionId, count, durationUs,
                    new String(message, java.nio.charset.StandardCharsets.UTF_8), poolId);
        } catch (Throwable ignored) {
            // nothing may cross into C
        }
    }

    /** Called by the native path's callback (any thread) with the event's fields. */
    static void onEvent(long userData, int kind, int status, long connectionId, long count, long durationUs,
                        String message, long poolId) {
        try {
            Consumer<Object[]> l = LISTENERS.get(userData);
            if (l != null) {
                l.accept(new Object[] {kind, status, connectionId, count, durationUs, message, poolId});
            }
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.WARNING, "staunch: an event listener threw; ignored", t);
            } catch (Throwable ignored) {
                // nothing may cross into C
            }
        }
    }

    /** Called by the native path's finalizer when the pool drops the callback (an event listener's or a tracer's). */
    static void onFinalize(long userData) {
        try {
            LISTENERS.remove(userData);
            TRACERS.remove(userData);
        } catch (Throwable ignored) {
            // nothing may cross into C
        }
    }
}
