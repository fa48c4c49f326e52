package dev.staunch;


/**
 * A failed staunch call: the {@link Status} code (stable, see include/staunch.h),
 * the message staunch wrote (what failed and why), and for server errors the
 * MySQL/MariaDB error number and SQLSTATE.
 */
public class StaunchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final int serverCode;
    private final String sqlState;
    private final int category;

    public StaunchException(int status, String message, int serverCode, String sqlState) {
        this(status, message, serverCode, sqlState, Category.NONE);
    }

    /** With the library's {@link Category} of the server's error. */
    public StaunchException(int status, String message, int serverCode, String sqlState, int category) {
        super(message);
        this.status = status;
        this.serverCode = serverCode;
        this.sqlState = sqlState == null ? "" : sqlState;
        this.category = category;
    }

    /** The status code, one of the {@link Status} constants (or a newer one in the same range). */
    public int status() {
        return status;
    }

    /** The status code's name, e.g. {@code STAUNCH_POOL_EXHAUSTED}. */
    public String statusName() {
        return Status.name(status);
    }

    /** The server's error number (1062 for a duplicate key, ...), 0 if the error did not come from the server. */
    public int serverCode() {
        return serverCode;
    }

    /** The server's SQLSTATE ("23000", ...), "" if none. */
    public String sqlState() {
        return sqlState;
    }

    /**
     * What kind of failure the server's error is, one of the {@link Category} constants (or a newer one, which
     * is operational); {@link Category#NONE} when the error did not come from the server.
     */
    public int category() {
        return category;
    }

    /** True for a get that timed out (exhausted or unreachable). */
    public boolean isTimeout() {
        return status == Status.POOL_EXHAUSTED || status == Status.UNREACHABLE || status == Status.STATEMENT_TIMEOUT;
    }

    /** True when the caller cancelled (a cancel token, an interrupt, {@code Conn.cancel()}). */
    public boolean isCancelled() {
        return status == Status.CANCELLED;
    }

    @Override
    public String getMessage() {
        return Status.name(status) + ": " + super.getMessage();
    }

    /** The message alone, without the status name. */
    public String rawMessage() {
        return super.getMessage();
    }
}
