package dev.staunch.jdbc;

import java.sql.ParameterMetaData;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLNonTransientException;

/**
 * What is known of a statement's parameters without preparing it on the
 * server (as Connector/J's client-side statements): their number; all are IN
 * and of unknown nullability. Their types are not known: asking throws
 * SQLFeatureNotSupportedException, which Spring's setNull and others expect
 * and fall back from.
 */
final class StaunchParameterMetaData implements ParameterMetaData {
    private final int count;

    StaunchParameterMetaData(int count) {
        this.count = count;
    }

    private void check(int param) throws SQLException {
        if (param < 1 || param > count) {
            throw new SQLNonTransientException("parameter index " + param + " is not in 1.." + count, "07009");
        }
    }

    private SQLException unknown(int param) throws SQLException {
        check(param);
        return new SQLFeatureNotSupportedException("the type of parameter " + param
                + " is not known before the statement runs (staunch does not prepare it to ask)", "0A000");
    }

    @Override public int getParameterCount() { return count; }
    @Override public int isNullable(int param) throws SQLException { check(param); return parameterNullableUnknown; }
    @Override public boolean isSigned(int param) throws SQLException { check(param); return true; }
    @Override public int getPrecision(int param) throws SQLException { throw unknown(param); }
    @Override public int getScale(int param) throws SQLException { throw unknown(param); }
    @Override public int getParameterType(int param) throws SQLException { throw unknown(param); }
    @Override public String getParameterTypeName(int param) throws SQLException { throw unknown(param); }
    @Override public String getParameterClassName(int param) throws SQLException { throw unknown(param); }
    @Override public int getParameterMode(int param) throws SQLException { check(param); return parameterModeIn; }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return Errors.unwrap(this, iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this);
    }
}
