package dev.staunch.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The one upcall stub for event callbacks and the one for their finalizers.
 * {@code user_data} is a registration number looked up here, so no Java object
 * address crosses into C. Nothing thrown in Java crosses into C: every
 * Throwable is caught.
 */
@SuppressWarnings("restricted")
public final class Events {
    private Events() {}

    private static final System.Logger LOG = System.getLogger("dev.staunch");
    private static final Map<Long, Consumer<MemorySegment>> LISTENERS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT = new AtomicLong(1);
    public static final MemorySegment CALLBACK;
    public static final MemorySegment FINALIZER;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            CALLBACK = Native.linker().upcallStub(
                    l.findStatic(Events.class, "onEvent", MethodType.methodType(void.class, MemorySegment.class, MemorySegment.class)),
                    Native.EVENT_CALLBACK, Arena.global());
            FINALIZER = Native.linker().upcallStub(
                    l.findStatic(Events.class, "onFinalize", MethodType.methodType(void.class, MemorySegment.class)),
                    Native.FINALIZER, Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Registers a listener of raw events; returns the user_data to pass. */
    public static long register(Consumer<MemorySegment> listener) {
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

    private static void onEvent(MemorySegment event, MemorySegment userData) {
        try {
            Consumer<MemorySegment> l = LISTENERS.get(userData.address());
            if (l != null) {
                l.accept(event.reinterpret(Native.EVENT.byteSize()));
            }
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.WARNING, "staunch: an event listener threw; ignored", t);
            } catch (Throwable ignored) {
                // nothing may cross into C
            }
        }
    }

    private static void onFinalize(MemorySegment userData) {
        try {
            LISTENERS.remove(userData.address());
        } catch (Throwable ignored) {
            // nothing may cross into C
        }
    }
}
