package dev.staunch.jdbc;

import dev.staunch.Rows;

import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.sql.Types;
import java.util.List;

/** What the server said of each column. */
public class StaunchResultSetMetaData extends UnsupportedResultSetMetaData {
    private final List<Rows.Column> cols;

    StaunchResultSetMetaData(List<Rows.Column> cols) {
        this.cols = cols;
    }

    private Rows.Column c(int i) throws SQLException {
        if (i < 1 || i > cols.size()) {
            throw new SQLNonTransientException("column index " + i + " is not in 1.." + cols.size(), "07009");
        }
        return cols.get(i - 1);
    }

    @Override public int getColumnCount() { return cols.size(); }
    @Override public String getColumnLabel(int i) throws SQLException { return c(i).name(); }
    @Override public String getColumnName(int i) throws SQLException { return c(i).orgName().isEmpty() ? c(i).name() : c(i).orgName(); }
    @Override public String getTableName(int i) throws SQLException { return c(i).orgTable(); }
    @Override public String getSchemaName(int i) throws SQLException { c(i); return ""; }
    @Override public String getCatalogName(int i) throws SQLException { return c(i).schema(); }
    @Override public boolean isAutoIncrement(int i) throws SQLException { return c(i).isAutoIncrement(); }
    @Override public boolean isCaseSensitive(int i) throws SQLException { Rows.Column x = c(i); return x.charset() == 63 || (x.flags() & 128) != 0; }
    @Override public boolean isSearchable(int i) throws SQLException { c(i); return true; }
    @Override public boolean isCurrency(int i) throws SQLException { c(i); return false; }
    @Override public int isNullable(int i) throws SQLException { return c(i).isNotNull() ? columnNoNulls : columnNullable; }
    @Override public boolean isSigned(int i) throws SQLException { Rows.Column x = c(i); return !x.isUnsigned() && x.columnType() != Rows.TEXT && x.columnType() != Rows.BYTES; }
    @Override public int getColumnDisplaySize(int i) throws SQLException { return c(i).length(); }
    @Override public int getPrecision(int i) throws SQLException { Rows.Column x = c(i); return x.typeCode() == 246 ? Math.max(0, x.length() - (x.decimals() > 0 ? 1 : 0) - (x.isUnsigned() ? 0 : 1)) : x.length(); }
    @Override public int getScale(int i) throws SQLException { return c(i).decimals(); }
    @Override public boolean isReadOnly(int i) throws SQLException { return c(i).orgTable().isEmpty(); }
    @Override public boolean isWritable(int i) throws SQLException { return !isReadOnly(i); }
    @Override public boolean isDefinitelyWritable(int i) throws SQLException { c(i); return false; }

    @Override
    public int getColumnType(int i) throws SQLException {
        Rows.Column x = c(i);
        boolean binary = x.charset() == 63;
        return switch (x.typeCode()) {
            case 1 -> x.length() == 1 && !x.isUnsigned() ? Types.BIT : Types.TINYINT;
            case 2 -> Types.SMALLINT;
            case 3, 9 -> x.isUnsigned() && x.typeCode() == 3 ? Types.BIGINT : Types.INTEGER;
            case 8 -> Types.BIGINT;
            case 4 -> Types.REAL;
            case 5 -> Types.DOUBLE;
            case 0, 246 -> Types.DECIMAL;
            case 7, 12 -> Types.TIMESTAMP;
            case 10, 14 -> Types.DATE;
            case 11 -> Types.TIME;
            case 13 -> Types.SMALLINT;
            case 16 -> x.length() == 1 ? Types.BIT : Types.BINARY;
            case 245 -> Types.LONGVARCHAR;
            case 249, 250, 251, 252 -> binary ? Types.LONGVARBINARY : Types.LONGVARCHAR;
            case 15, 253 -> binary ? Types.VARBINARY : Types.VARCHAR;
            case 254 -> binary ? Types.BINARY : Types.CHAR;
            case 6 -> Types.NULL;
            case 255 -> Types.BINARY;
            default -> Types.OTHER;
        };
    }

    @Override
    public String getColumnTypeName(int i) throws SQLException {
        Rows.Column x = c(i);
        boolean binary = x.charset() == 63;
        String base = switch (x.typeCode()) {
            case 1 -> "TINYINT";
            case 2 -> "SMALLINT";
            case 3 -> "INT";
            case 9 -> "MEDIUMINT";
            case 8 -> "BIGINT";
            case 4 -> "FLOAT";
            case 5 -> "DOUBLE";
            case 0, 246 -> "DECIMAL";
            case 7 -> "TIMESTAMP";
            case 12 -> "DATETIME";
            case 10, 14 -> "DATE";
            case 11 -> "TIME";
            case 13 -> "YEAR";
            case 16 -> "BIT";
            case 245 -> "JSON";
            case 249, 250, 251, 252 -> binary ? "BLOB" : "TEXT";
            case 15, 253 -> binary ? "VARBINARY" : "VARCHAR";
            case 254 -> (x.flags() & 256) != 0 ? "ENUM" : (x.flags() & 2048) != 0 ? "SET" : binary ? "BINARY" : "CHAR";
            case 6 -> "NULL";
            case 255 -> "GEOMETRY";
            default -> "UNKNOWN";
        };
        return x.isUnsigned() && x.columnType() == Rows.UINT ? base + " UNSIGNED" : base;
    }

    @Override
    public String getColumnClassName(int i) throws SQLException {
        Rows.Column x = c(i);
        return switch (getColumnType(i)) {
            case Types.BIT -> x.typeCode() == 16 || x.length() == 1 ? "java.lang.Boolean" : "[B";
            case Types.TINYINT, Types.SMALLINT, Types.INTEGER -> "java.lang.Integer";
            case Types.BIGINT -> x.isUnsigned() && x.typeCode() == 8 ? "java.math.BigInteger" : "java.lang.Long";
            case Types.REAL -> "java.lang.Float";
            case Types.DOUBLE -> "java.lang.Double";
            case Types.DECIMAL -> "java.math.BigDecimal";
            case Types.TIMESTAMP -> "java.sql.Timestamp";
            case Types.DATE -> "java.sql.Date";
            case Types.TIME -> "java.sql.Time";
            case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY -> "[B";
            default -> "java.lang.String";
        };
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return Errors.unwrap(this, iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this);
    }

}
