package dev.staunch.jdbc;

import java.sql.SQLFeatureNotSupportedException;

final class Errors {
    private Errors() {}

    static SQLFeatureNotSupportedException unsupported(String what) {
        return new SQLFeatureNotSupportedException(what + " is not supported by staunch", "0A000");
    }
}
