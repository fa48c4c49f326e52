package dev.staunch.internal;

import dev.staunch.StaunchException;

/** Turns a staunch_status and its staunch_error into a {@link StaunchException}. */
public final class Call {
    private Call() {}

    /** Throws if {@code status} is not OK, reading (and freeing) the error in {@code slot}. */
    public static void check(int status, Mem.Seg slot) {
        if (status != 0) {
            throw error(status, slot);
        }
    }

    public static StaunchException error(int status, Mem.Seg slot) {
        long err = slot.getAddress(0);
        if (err == 0) {
            return new StaunchException(status, statusName(status), 0, "");
        }
        try {
            String msg = Native.string(Native.error_message(err));
            int code = Native.error_server_code(err);
            String state = Native.string(Native.error_sqlstate(err));
            return new StaunchException(status, msg, code, state, Native.error_category(err));
        } finally {
            Native.error_free(err);
        }
    }

    /** The name of a status code, e.g. "STAUNCH_POOL_EXHAUSTED". */
    public static String statusName(int status) {
        return Native.string(Native.status_name(status));
    }
}
