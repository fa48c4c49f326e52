package dev.staunch.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Cleaner;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Unmanaged memory (libc malloc/free) for buffers whose owner may be closed
 * from any thread or by the {@link #CLEANER}; {@link Scope}, the memory of
 * one call; and the binding's one Cleaner.
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

    /**
     * The memory of one call, as a confined arena would give it, valid until
     * {@link #close()}; confined to its thread. Small allocations come from a
     * slab of the thread's own, reused call after call (scopes nest: each
     * gives back what it took when it closes, last opened first closed, as
     * try-with-resources does), so a call costs no malloc/free pair per
     * out-slot and no arena; what does not fit gets a confined arena of its own.
     */
    public static final class Scope implements SegmentAllocator, AutoCloseable {
        private static final long SLAB = 2048;
        private static final ThreadLocal<Slab> SLABS = new ThreadLocal<>();

        /** A thread's slab (freed by the GC with the thread), used as a stack. */
        private static final class Slab {
            final MemorySegment seg = Arena.ofAuto().allocate(SLAB, 8);
            long top;
        }

        private final Slab slab;
        private final long mark;
        private Arena overflow;

        public Scope() {
            Slab s = SLABS.get();
            if (s == null) {
                s = new Slab();
                SLABS.set(s);
            }
            slab = s;
            mark = s.top;
        }

        /** {@code size} zeroed bytes (aligned to {@code align}, at least 8), valid until close. */
        @Override
        public MemorySegment allocate(long size, long align) {
            long a = Math.max(8, align);
            long at = (slab.top + a - 1) & -a;
            if (size >= 0 && at + size <= SLAB) {
                slab.top = (at + size + 7) & ~7L;
                return slab.seg.asSlice(at, size).fill((byte) 0);
            }
            if (overflow == null) {
                overflow = Arena.ofConfined();
            }
            return overflow.allocate(size, align);
        }

        @Override
        public void close() {
            slab.top = mark;
            if (overflow != null) {
                overflow.close();
                overflow = null;
            }
        }
    }
}
