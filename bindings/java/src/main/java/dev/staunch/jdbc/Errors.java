package dev.staunch.jdbc;

import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLNonTransientException;

final class Errors {
    private Errors() {}

    static SQLFeatureNotSupportedException unsupported(String what) {
        return new SQLFeatureNotSupportedException(what + " is not supported by staunch", "0A000");
    }

    /** {@link java.sql.Wrapper#unwrap} for an object that wraps nothing besides itself. */
    static <T> T unwrap(Object self, Class<T> iface) throws SQLException {
        if (iface.isInstance(self)) {
            return iface.cast(self);
        }
        throw new SQLNonTransientException("not a wrapper for " + iface.getName(), "HY000");
    }
}
