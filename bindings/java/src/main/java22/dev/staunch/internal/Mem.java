package dev.staunch.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Cleaner;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Unmanaged memory (libc malloc/free) for buffers whose owner may be closed
 * from any thread or by the {@link #CLEANER}, and the binding's one Cleaner.
 */
@SuppressWarnings("restricted")
public final class Mem {
    private Mem() {}

    /** Fallback for objects the application forgot to close. */
    public static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "staunch-cleaner");
        t.setDaemon(true);
        return t;
    });

    private static final Linker L = Linker.nativeLinker();
    private static final Linker.Option CRITICAL = Linker.Option.critical(false);
    private static final MethodHandle MALLOC = L.downcallHandle(L.defaultLookup().find("malloc").orElseThrow(),
            FunctionDescriptor.of(ADDRESS, JAVA_LONG), CRITICAL);
    private static final MethodHandle FREE = L.downcallHandle(L.defaultLookup().find("free").orElseThrow(),
            FunctionDescriptor.ofVoid(ADDRESS), CRITICAL);

    public static MemorySegment malloc(long size) {
        try {
            MemorySegment p = (MemorySegment) MALLOC.invokeExact(Math.max(1L, size));
            if (p.address() == 0) {
                throw new OutOfMemoryError("malloc(" + size + ") failed");
            }
            return p.reinterpret(size);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public static void free(MemorySegment p) {
        if (p == null || p.address() == 0) {
            return;
        }
        try {
            FREE.invokeExact(p);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
