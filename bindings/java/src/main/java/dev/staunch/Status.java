package dev.staunch;

/** The status codes of the C ABI (include/staunch.h); stable, never reused. */
public final class Status {
    private Status() {}

    public static final int OK = 0;
    public static final int NULL_ARGUMENT = 100;
    public static final int INVALID_UTF8 = 101;
    public static final int BAD_INDEX = 102;
    public static final int WRONG_TYPE = 103;
    public static final int OUT_OF_RANGE = 104;
    public static final int USE_AFTER_RELEASE = 105;
    public static final int INVALID_CONFIG = 106;
    public static final int NULL_VALUE = 107;
    public static final int NO_ROW = 108;
    public static final int PARAM_COUNT = 109;
    public static final int BAD_PARAM_TYPE = 110;
    public static final int CONN_BUSY = 111;
    public static final int INVALID_ARGUMENT = 112;
    public static final int POOL_EXHAUSTED = 200;
    public static final int UNREACHABLE = 201;
    public static final int CONNECT_REJECTED = 202;
    public static final int CONNECT_FAILED = 203;
    public static final int CLOSED = 204;
    public static final int NO_WRITER = 205;
    public static final int SERVER_ERROR = 300;
    public static final int IO_ERROR = 301;
    public static final int BROKEN = 302;
    public static final int STATEMENT_TIMEOUT = 303;
    public static final int CANCELLED = 304;
    /** The server stopped answering during the statement (the connection is broken). */
    public static final int SERVER_UNRESPONSIVE = 305;
    /** A deadlock or Galera certification failure (1213): the transaction was rolled back; the connection stays usable. */
    public static final int CONFLICT = 306;
    public static final int INTERNAL = 900;
    public static final int PANIC = 901;

    /** The name of a code, as the library gives it ("STAUNCH_UNKNOWN_STATUS" for one it does not know). */
    public static String name(int status) {
        if (dev.staunch.internal.Native.loaded()) {
            return dev.staunch.internal.Call.statusName(status);
        }
        return "STAUNCH_" + status;
    }
}
