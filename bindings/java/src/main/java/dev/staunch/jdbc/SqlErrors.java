package dev.staunch.jdbc;

import dev.staunch.Category;
import dev.staunch.StaunchException;
import dev.staunch.Status;
import java.sql.SQLDataException;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLInvalidAuthorizationSpecException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLNonTransientException;
import java.sql.SQLRecoverableException;
import java.sql.SQLSyntaxErrorException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.sql.SQLTransientException;

/**
 * staunch's status codes and the server's errors as the SQLException
 * subclasses JDBC defines, with SQLSTATE and the server's error number as the
 * vendor code, so that Spring's translators and HikariCP-era error handling
 * see what they expect (1062 is a SQLIntegrityConstraintViolationException
 * with SQLSTATE 23000: Spring's DuplicateKeyException).
 */
public final class SqlErrors {
    private SqlErrors() {}

    /** The C ABI's name of a parameter, {@code params[i]} (from 0), at the start of a message. */
    private static final java.util.regex.Pattern C_PARAM = java.util.regex.Pattern.compile("^params\\[(\\d+)]");

    public static SQLException of(StaunchException e) {
        String msg = e.getMessage();
        java.util.regex.Matcher m = C_PARAM.matcher(e.rawMessage());
        if (e.status() < Status.POOL_EXHAUSTED && m.find()) {
            // A bound value the library refused: named as JDBC counts parameters, from 1.
            msg = Status.name(e.status()) + ": parameter " + (Long.parseLong(m.group(1)) + 1)
                    + e.rawMessage().substring(m.end());
        }
        int code = e.serverCode();
        String state = e.sqlState().isEmpty() ? null : e.sqlState();
        SQLException r;
        switch (e.status()) {
            case Status.SERVER_ERROR:
                r = server(msg, state, code, e.category());
                break;
            case Status.CONFLICT:
                r = new SQLTransactionRollbackException(msg, or(state, "40001"), code);
                break;
            case Status.STATEMENT_TIMEOUT:
                r = new SQLTimeoutException(msg, or(state, "HYT00"), code);
                break;
            case Status.CANCELLED:
                r = new SQLTransientException(msg, or(state, "70100"), code);
                break;
            case Status.POOL_EXHAUSTED:
                r = new SQLTransientConnectionException(msg, "08001", code);
                break;
            case Status.NO_WRITER:
                r = new SQLTransientConnectionException(msg, "08004", code);
                break;
            case Status.UNREACHABLE:
            case Status.CONNECT_FAILED:
                r = new SQLNonTransientConnectionException(msg, "08001", code);
                break;
            case Status.CONNECT_REJECTED:
                r = "28000".equals(state)
                    ? new SQLInvalidAuthorizationSpecException(msg, state, code)
                    : new SQLNonTransientConnectionException(msg, or(state, "08004"), code);
                break;
            case Status.CLOSED:
            case Status.USE_AFTER_RELEASE:
                r = new SQLNonTransientConnectionException(msg, "08003", code);
                break;
            case Status.IO_ERROR:
            case Status.BROKEN:
            case Status.SERVER_UNRESPONSIVE:
                r = new SQLRecoverableException(msg, "08S01", code);
                break;
            case Status.PARAM_COUNT:
                r = new SQLException(msg, "07001", code);
                break;
            case Status.WRONG_TYPE:
            case Status.OUT_OF_RANGE:
            case Status.NULL_VALUE:
            case Status.INVALID_UTF8:
                r = new SQLDataException(msg, "22000", code);
                break;
            case Status.INVALID_CONFIG:
                r = new SQLNonTransientException(msg, "HY000", code);
                break;
            // A bound value the library refuses (a decimal that is not one, a NaN double): it names the parameter.
            case Status.INVALID_ARGUMENT:
            case Status.BAD_PARAM_TYPE:
                r = new SQLDataException(msg, "22023", code);
                break;
            default:
                r = new SQLException(msg, or(state, "HY000"), code);
                break;
        }
        r.initCause(e);
        return r;
    }

    private static String or(String a, String b) {
        return a != null ? a : b;
    }

    /** A server error as the JDBC class of the library's category for it (one table, in the core). */
    private static SQLException server(String msg, String state, int code, int category) {
        switch (category) {
            case Category.INTEGRITY:
                return new SQLIntegrityConstraintViolationException(msg, or(state, "23000"), code);
            case Category.PROGRAMMING:
                return new SQLSyntaxErrorException(msg, or(state, "42000"), code);
            case Category.DATA:
                return new SQLDataException(msg, or(state, "22000"), code);
            case Category.NOT_SUPPORTED:
                return new SQLFeatureNotSupportedException(msg, or(state, "0A000"), code);
            case Category.ACCESS:
                return new SQLInvalidAuthorizationSpecException(msg, or(state, "28000"), code);
            case Category.CONNECTION:
                return new SQLNonTransientConnectionException(msg, or(state, "08000"), code);
            case Category.ROLLBACK:
                return new SQLTransactionRollbackException(msg, or(state, "40001"), code);
            case Category.TIMEOUT:
                return new SQLTimeoutException(msg, or(state, "70100"), code);
            case Category.TRANSIENT:
                return new SQLTransientException(msg, or(state, "HY000"), code);
            default:
                return new SQLException(msg, or(state, "HY000"), code);
        }
    }

    /** A bad argument (from this binding's own checks) as a SQLException. */
    static SQLException badArgument(RuntimeException e) {
        SQLException r = e instanceof IllegalArgumentException
                ? new SQLDataException(e.getMessage(), "22023")
                : new SQLException(e.getMessage(), "HY000");
        r.initCause(e);
        return r;
    }

    static SQLException wrap(RuntimeException e) {
        if (e instanceof StaunchException) {
            return of((StaunchException) e);
        }
        return badArgument(e);
    }
}
