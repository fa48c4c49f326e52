package dev.staunch.internal;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Memory for the JNI path: {@link Seg}, a native address with a
 * ByteBuffer over its bytes, and {@link Scope}, the memory of one call (a
 * slab of the thread's own, or direct buffers the GC frees, kept reachable
 * until the scope closes). With {@link Native}, the JNI path's half of the
 * native-access layer: META-INF/versions/22 holds the FFM twin of this class,
 * with the same methods.
 */
public final class Mem {
    private Mem() {}

    /** Direct memory of {@code size} bytes, zeroed, native byte order (the GC frees it with the Seg). */
    public static Seg allocate(long size) {
        if (size > Integer.MAX_VALUE) {
            throw new OutOfMemoryError("staunch: a buffer of " + size + " bytes is too large");
        }
        ByteBuffer b = ByteBuffer.allocateDirect((int) Math.max(1, size)).order(ByteOrder.nativeOrder());
        return new Seg(Jni.address(b), b);
    }

    /**
     * The size of a small buffer: {@link #malloc} of at most this many bytes
     * takes one of {@link #SPARE} if there is one (a row set's value buffer
     * for up to 64 values, most answers'), where a new one costs three JNI
     * crossings (malloc, the ByteBuffer over it, free) and a DirectByteBuffer.
     */
    private static final int SMALL = 2048;
    /** Small buffers given back, kept for the next {@link #malloc} (at most 64). */
    private static final Seg[] SPARE = new Seg[64];
    /** How many of {@link #SPARE} hold a buffer (guarded by SPARE). */
    private static int spares;

    /**
     * {@code size} bytes of libc malloc (not zeroed), for a buffer whose owner
     * may be closed from any thread or by the {@link #CLEANER}: no direct
     * buffer, no memory reservation; give it back with {@link #free}.
     */
    public static Seg malloc(long size) {
        if (size > Integer.MAX_VALUE) {
            throw new OutOfMemoryError("staunch: a buffer of " + size + " bytes is too large");
        }
        boolean small = size <= SMALL;
        if (small) {
            synchronized (SPARE) {
                if (spares > 0) {
                    Seg s = SPARE[--spares];
                    SPARE[spares] = null;
                    return s;
                }
            }
        }
        long len = small ? SMALL : Math.max(1L, size);
        long p = Jni.malloc(len);
        if (p == 0) {
            throw new OutOfMemoryError("malloc(" + size + ") failed");
        }
        return new Seg(p, Jni.view(p, len).order(ByteOrder.nativeOrder()), 0, small);
    }

    /** Frees what {@link #malloc} gave (NULL: nothing); from any thread. */
    public static void free(Seg s) {
        if (s == null || s.address() == 0) {
            return;
        }
        if (s.small) {
            synchronized (SPARE) {
                if (spares < SPARE.length) {
                    SPARE[spares++] = s;
                    return;
                }
            }
        }
        Jni.free(s.address());
    }

    /** A native address, and a buffer over the bytes there (null when none are to be read). */
    public static final class Seg {
        public static final Seg NULL = new Seg(0, null, 0);
        private final long address;
        private final ByteBuffer buf;
        /** Where this Seg starts in {@code buf} (a Scope's slab holds many). */
        private final int base;
        /** A small buffer of {@link #malloc}'s, kept for reuse when freed. */
        private final boolean small;

        Seg(long address, ByteBuffer buf) {
            this(address, buf, 0);
        }

        Seg(long address, ByteBuffer buf, int base) {
            this(address, buf, base, false);
        }

        Seg(long address, ByteBuffer buf, int base, boolean small) {
            this.address = address;
            this.buf = buf;
            this.base = base;
            this.small = small;
        }

        /** {@code len} bytes the library owns, at {@code address}. */
        public static Seg view(long address, long len) {
            if (address == 0) {
                return NULL;
            }
            return new Seg(address, Jni.view(address, len).order(ByteOrder.nativeOrder()));
        }

        public long address() {
            return address;
        }

        public int getInt(long off) {
            return buf.getInt(base + (int) off);
        }

        public long getLong(long off) {
            return buf.getLong(base + (int) off);
        }

        public short getShort(long off) {
            return buf.getShort(base + (int) off);
        }

        public byte getByte(long off) {
            return buf.get(base + (int) off);
        }

        public boolean getBoolean(long off) {
            return buf.get(base + (int) off) != 0;
        }

        public double getDouble(long off) {
            return buf.getDouble(base + (int) off);
        }

        /** A pointer stored at {@code off}. */
        public long getAddress(long off) {
            return buf.getLong(base + (int) off);
        }

        public void putInt(long off, int v) {
            buf.putInt(base + (int) off, v);
        }

        public void putLong(long off, long v) {
            buf.putLong(base + (int) off, v);
        }

        public void putShort(long off, short v) {
            buf.putShort(base + (int) off, v);
        }

        public void putByte(long off, byte v) {
            buf.put(base + (int) off, v);
        }

        public void putBoolean(long off, boolean v) {
            buf.put(base + (int) off, v ? (byte) 1 : (byte) 0);
        }

        public void putDouble(long off, double v) {
            buf.putDouble(base + (int) off, v);
        }

        public void putAddress(long off, long v) {
            buf.putLong(base + (int) off, v);
        }
    }

    /**
     * The memory of one call: allocations stay valid until {@link #close()}.
     * Confined to its thread, like FFM's confined arena. Small allocations
     * come from a slab of the thread's own, reused call after call (scopes
     * nest: each gives back what it took when it closes, last opened first
     * closed, as try-with-resources does), so a call costs no direct buffer
     * (allocateDirect is a JNI call, a Cleaner and a memory reservation
     * each); what does not fit gets a direct buffer of its own.
     */
    public static final class Scope implements AutoCloseable {
        private static final int SLAB = 2048;
        private static final ThreadLocal<Slab> SLABS = new ThreadLocal<>();

        /** A thread's slab: one direct buffer, used as a stack. */
        private static final class Slab {
            final ByteBuffer buf = ByteBuffer.allocateDirect(SLAB).order(ByteOrder.nativeOrder());
            final long address = Jni.address(buf);
            int top;
        }

        private final Slab slab;
        private final int mark;
        private List<Seg> held;

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
                ByteBuffer b = slab.buf;
                for (int i = 0; i < need; i += 8) {
                    b.putLong(at + i, 0L);
                }
                return new Seg(slab.address + at, b, at);
            }
            Seg s = Mem.allocate(size);
            if (held == null) {
                held = new ArrayList<>(2);
            }
            held.add(s);
            return s;
        }

        /** A fresh {@code staunch_error *} out-slot, NULL. */
        public Seg errSlot() {
            return allocate(8);
        }

        /** {@code s} as a NUL-terminated UTF-8 string. */
        public Seg allocateFrom(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            Seg seg = allocate(b.length + 1L);
            put(seg, b); // the NUL: allocate zeroes
            return seg;
        }

        /** A copy of {@code b} (NULL when empty). */
        public Seg allocateFrom(byte[] b) {
            if (b.length == 0) {
                return Seg.NULL;
            }
            Seg seg = allocate(b.length);
            put(seg, b);
            return seg;
        }

        private static void put(Seg seg, byte[] b) {
            ByteBuffer d = seg.buf.duplicate();
            d.position(seg.base);
            d.put(b);
        }

        @Override
        public void close() {
            slab.top = mark;
            if (held != null) {
                Reference.reachabilityFence(held);
                held.clear();
            }
        }
    }
}
