package dev.staunch.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Event callbacks, for both native paths: the C callback (the JNI shim's, or
 * the FFM path's upcall stub in its {@link Native}) calls {@link #onEvent}
 * with the event's fields; {@code user_data} is a registration number looked
 * up here, so no Java object address crosses into C. Nothing thrown in Java
 * crosses into C: every Throwable is caught here (and the shim clears anything
 * pending; the FFM upcall catches what its own reading of the event throws).
 */
public final class Events {
    private Events() {}

    private static final System.Logger LOG = System.getLogger("dev.staunch");
    private static final Map<Long, Consumer<Object[]>> LISTENERS = new ConcurrentHashMap<>();
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
        long id = NEXT.getAndIncrement();
        LISTENERS.put(id, listener);
        return id;
    }

    public static void unregister(long id) {
        LISTENERS.remove(id);
    }

    static int registered() {
        return LISTENERS.size();
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

    /** Called by the native path's finalizer when the pool drops the callback. */
    static void onFinalize(long userData) {
        try {
            LISTENERS.remove(userData);
        } catch (Throwable ignored) {
            // nothing may cross into C
        }
    }
}
