package dev.staunch.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Memory for the FFM path, with the same methods as the JNI path's Mem (the
 * base class this one replaces on JDK 22+): {@link Seg}, a native address
 * read and written through one segment over the whole address space (no
 * segment per struct), unmanaged memory (libc malloc/free) for buffers whose
 * owner may be closed from any thread or by the Cleaner, and {@link Scope},
 * the memory of one call.
 */
@SuppressWarnings("restricted")
public final class Mem {
    private Mem() {}

    /**
     * Every address: the binding reads and writes native memory it got from
     * the library, from malloc or from a {@link Scope}, at known offsets, as
     * the JNI path does through direct buffers; what keeps each alive is its
     * owner (Rows, Conn, Pool, Scope), not a segment's scope.
     */
    static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static final Linker L = Linker.nativeLinker();
    private static final Linker.Option CRITICAL = Linker.Option.critical(false);
    private static final MethodHandle MALLOC = L.downcallHandle(L.defaultLookup().find("malloc").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG), CRITICAL);
    private static final MethodHandle FREE = L.downcallHandle(L.defaultLookup().find("free").orElseThrow(),
            FunctionDescriptor.ofVoid(JAVA_LONG), CRITICAL);

    /**
     * {@code size} bytes of libc malloc (not zeroed), for a buffer whose owner
     * may be closed from any thread or by the Cleaner; give it back with
     * {@link #free}.
     */
    public static Seg malloc(long size) {
        long p;
        try {
            p = (long) MALLOC.invokeExact(Math.max(1L, size));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        if (p == 0) {
            throw new OutOfMemoryError("malloc(" + size + ") failed");
        }
        return new Seg(p);
    }

    /** Frees what {@link #malloc} gave (NULL: nothing). */
    public static void free(Seg s) {
        if (s != null && s.address != 0) {
            try {
                FREE.invokeExact(s.address);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        }
    }

    /** A native address, and the reads and writes of the fields there. */
    public static final class Seg {
        public static final Seg NULL = new Seg(0);
        private final long address;

        Seg(long address) {
            this.address = address;
        }

        /** {@code len} bytes the library owns, at {@code address}. */
        public static Seg view(long address, long len) {
            return address == 0 ? NULL : new Seg(address);
        }

        public long address() {
            return address;
        }

        public int getInt(long off) {
            return ALL.get(JAVA_INT, address + off);
        }

        public long getLong(long off) {
            return ALL.get(JAVA_LONG, address + off);
        }

        public short getShort(long off) {
            return ALL.get(JAVA_SHORT, address + off);
        }

        public byte getByte(long off) {
            return ALL.get(JAVA_BYTE, address + off);
        }

        public boolean getBoolean(long off) {
            return ALL.get(JAVA_BYTE, address + off) != 0;
        }

        public double getDouble(long off) {
            return ALL.get(JAVA_DOUBLE, address + off);
        }

        /** A pointer stored at {@code off}. */
        public long getAddress(long off) {
            return ALL.get(JAVA_LONG, address + off);
        }

        public void putInt(long off, int v) {
            ALL.set(JAVA_INT, address + off, v);
        }

        public void putLong(long off, long v) {
            ALL.set(JAVA_LONG, address + off, v);
        }

        public void putShort(long off, short v) {
            ALL.set(JAVA_SHORT, address + off, v);
        }

        public void putByte(long off, byte v) {
            ALL.set(JAVA_BYTE, address + off, v);
        }

        public void putBoolean(long off, boolean v) {
            ALL.set(JAVA_BYTE, address + off, v ? (byte) 1 : (byte) 0);
        }

        public void putDouble(long off, double v) {
            ALL.set(JAVA_DOUBLE, address + off, v);
        }

        public void putAddress(long off, long v) {
            ALL.set(JAVA_LONG, address + off, v);
        }
    }

    /**
     * The memory of one call: allocations stay valid until {@link #close()};
     * confined to its thread. Small allocations come from a slab of the
     * thread's own, reused call after call (scopes nest: each gives back what
     * it took when it closes, last opened first closed, as try-with-resources
     * does), so a call costs no malloc/free pair per out-slot and no arena;
     * what does not fit gets a confined arena of its own.
     */
    public static final class Scope implements AutoCloseable {
        private static final int SLAB = 2048;
        private static final ThreadLocal<Slab> SLABS = new ThreadLocal<>();

        /** A thread's slab (freed by the GC with the thread), used as a stack. */
        private static final class Slab {
            final MemorySegment seg = Arena.ofAuto().allocate(SLAB, 8);
            final long address = seg.address();
            int top;
        }

        private final Slab slab;
        private final int mark;
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

        /** {@code size} zeroed bytes, 8-aligned, valid until close. */
        public Seg allocate(long size) {
            long need = (Math.max(1, size) + 7) & ~7L;
            int at = slab.top;
            if (need <= SLAB - at) {
                slab.top = at + (int) need;
                long p = slab.address + at;
                for (long i = 0; i < need; i += 8) {
                    ALL.set(JAVA_LONG, p + i, 0L);
                }
                return new Seg(p);
            }
            if (overflow == null) {
                overflow = Arena.ofConfined();
            }
            return new Seg(overflow.allocate(Math.max(1, size), 8).address());
        }

        /** A fresh {@code staunch_error *} out-slot, NULL. */
        public Seg errSlot() {
            return allocate(8);
        }

        /** {@code s} as a NUL-terminated UTF-8 string. */
        public Seg allocateFrom(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            Seg seg = allocate(b.length + 1L);
            MemorySegment.copy(b, 0, ALL, JAVA_BYTE, seg.address, b.length); // the NUL: allocate zeroes
            return seg;
        }

        /** A copy of {@code b} (NULL when empty). */
        public Seg allocateFrom(byte[] b) {
            if (b.length == 0) {
                return Seg.NULL;
            }
            Seg seg = allocate(b.length);
            MemorySegment.copy(b, 0, ALL, JAVA_BYTE, seg.address, b.length);
            return seg;
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
