package dev.staunch.internal;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Memory for the JNI path: {@link Seg}, a native address with a
 * ByteBuffer over its bytes, and {@link Scope}, the memory of one call (direct
 * buffers the GC frees, kept reachable until the scope closes), and the
 * binding's one Cleaner.
 */
public final class Mem {
    private Mem() {}

    /** Fallback for objects the application forgot to close. */
    public static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "staunch-cleaner");
        t.setDaemon(true);
        return t;
    });

    /** Direct memory of {@code size} bytes, zeroed, native byte order (the GC frees it with the Seg). */
    public static Seg allocate(long size) {
        if (size > Integer.MAX_VALUE) {
            throw new OutOfMemoryError("staunch: a buffer of " + size + " bytes is too large");
        }
        ByteBuffer b = ByteBuffer.allocateDirect((int) Math.max(1, size)).order(ByteOrder.nativeOrder());
        return new Seg(Jni.address(b), b);
    }

    /** A native address, and a buffer over the bytes there (null when none are to be read). */
    public static final class Seg {
        public static final Seg NULL = new Seg(0, null);
        private final long address;
        private final ByteBuffer buf;

        Seg(long address, ByteBuffer buf) {
            this.address = address;
            this.buf = buf;
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
            return buf.getInt((int) off);
        }

        public long getLong(long off) {
            return buf.getLong((int) off);
        }

        public short getShort(long off) {
            return buf.getShort((int) off);
        }

        public byte getByte(long off) {
            return buf.get((int) off);
        }

        public boolean getBoolean(long off) {
            return buf.get((int) off) != 0;
        }

        public double getDouble(long off) {
            return buf.getDouble((int) off);
        }

        /** A pointer stored at {@code off}. */
        public long getAddress(long off) {
            return buf.getLong((int) off);
        }

        public void putInt(long off, int v) {
            buf.putInt((int) off, v);
        }

        public void putLong(long off, long v) {
            buf.putLong((int) off, v);
        }

        public void putShort(long off, short v) {
            buf.putShort((int) off, v);
        }

        public void putByte(long off, byte v) {
            buf.put((int) off, v);
        }

        public void putBoolean(long off, boolean v) {
            buf.put((int) off, v ? (byte) 1 : (byte) 0);
        }

        public void putDouble(long off, double v) {
            buf.putDouble((int) off, v);
        }

        public void putAddress(long off, long v) {
            buf.putLong((int) off, v);
        }
    }

    /**
     * The memory of one call: allocations stay reachable (so not freed) until
     * {@link #close()}. Confined to its thread, like FFM's confined arena.
     */
    public static final class Scope implements AutoCloseable {
        private final List<Seg> held = new ArrayList<>(4);

        public Seg allocate(long size) {
            Seg s = Mem.allocate(size);
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
            seg.buf.duplicate().put(b); // the NUL: allocateDirect zeroes
            return seg;
        }

        /** A copy of {@code b} (NULL when empty). */
        public Seg allocateFrom(byte[] b) {
            if (b.length == 0) {
                return Seg.NULL;
            }
            Seg seg = allocate(b.length);
            ByteBuffer d = seg.buf.duplicate();
            d.put(b);
            return seg;
        }

        @Override
        public void close() {
            Reference.reachabilityFence(held);
            held.clear();
        }
    }
}
