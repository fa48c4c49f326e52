package dev.staunch;

/**
 * What kind of failure a server error is (include/staunch.h, {@code STAUNCH_CATEGORY_*}): the library keeps one
 * table, keyed by the server's error number with the SQLSTATE's class for numbers it does not name, so that every
 * binding raises the same class for the same error. Stable, never reused; a value this class does not name is
 * operational.
 */
public final class Category {
    private Category() {}

    /** The error did not come from the server. */
    public static final int NONE = 0;
    /** A duplicate key, a foreign key, NOT NULL, CHECK: SQLIntegrityConstraintViolationException. */
    public static final int INTEGRITY = 1;
    /** Syntax, an unknown table or column: SQLSyntaxErrorException. */
    public static final int PROGRAMMING = 2;
    /** A value that does not fit: SQLDataException. */
    public static final int DATA = 3;
    /** A feature the server does not support: SQLFeatureNotSupportedException. */
    public static final int NOT_SUPPORTED = 4;
    /** Anything else the server reports: a plain SQLException. */
    public static final int OPERATIONAL = 5;
    /** The server's internal failure (a number below 1000): a plain SQLException. */
    public static final int INTERNAL = 6;
    /** A missing privilege or wrong credentials: SQLInvalidAuthorizationSpecException. */
    public static final int ACCESS = 7;
    /** The connection refused or lost: SQLNonTransientConnectionException. */
    public static final int CONNECTION = 8;
    /** The transaction was rolled back (deadlock, certification): SQLTransactionRollbackException. */
    public static final int ROLLBACK = 9;
    /** The server ended the statement at its time limit: SQLTimeoutException. */
    public static final int TIMEOUT = 10;
    /** A lock wait timed out; trying again may succeed: SQLTransientException. */
    public static final int TRANSIENT = 11;
}
