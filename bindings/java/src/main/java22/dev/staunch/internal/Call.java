package dev.staunch.internal;

import dev.staunch.StaunchException;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;

/** Turns a staunch_status and its staunch_error into a {@link StaunchException}. */
public final class Call {
    private Call() {}

    /** A fresh {@code staunch_error *} out-slot, NULL-initialised. */
    public static MemorySegment errSlot(SegmentAllocator a) {
        MemorySegment s = a.allocate(ADDRESS);
        s.set(ADDRESS, 0, MemorySegment.NULL);
        return s;
    }

    /** Throws if {@code status} is not OK, reading (and freeing) the error in {@code slot}. */
    public static void check(int status, MemorySegment slot) {
        if (status != 0) {
            throw error(status, slot);
        }
    }

    public static StaunchException error(int status, MemorySegment slot) {
        MemorySegment err = slot.get(ADDRESS, 0);
        if (err.address() == 0) {
            return new StaunchException(status, Native.statusName(status), 0, "");
        }
        try {
            String msg = Native.string((MemorySegment) Native.error_message.invokeExact(err));
            int code = (int) Native.error_server_code.invokeExact(err);
            String state = Native.string((MemorySegment) Native.error_sqlstate.invokeExact(err));
            return new StaunchException(status, msg, code, state);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            try {
                Native.error_free.invokeExact(err);
            } catch (Throwable t) {
                // error_free never fails
            }
        }
    }
}
