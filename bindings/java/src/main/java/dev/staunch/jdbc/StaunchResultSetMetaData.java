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
        switch (x.typeCode()) {
            case 1:
                return x.length() == 1 && !x.isUnsigned() ? Types.BIT : Types.TINYINT;
            case 2:
                return Types.SMALLINT;
            case 3:
            case 9:
                return x.isUnsigned() && x.typeCode() == 3 ? Types.BIGINT : Types.INTEGER;
            case 8:
                return Types.BIGINT;
            case 4:
                return Types.REAL;
            case 5:
                return Types.DOUBLE;
            case 0:
            case 246:
                return Types.DECIMAL;
            case 7:
            case 12:
                return Types.TIMESTAMP;
            case 10:
            case 14:
                return Types.DATE;
            case 11:
                return Types.TIME;
            case 13:
                return Types.SMALLINT;
            case 16:
                return x.length() == 1 ? Types.BIT : Types.BINARY;
            case 245:
                return Types.LONGVARCHAR;
            case 249:
            case 250:
            case 251:
            case 252:
                return binary ? Types.LONGVARBINARY : Types.LONGVARCHAR;
            case 15:
            case 253:
                return binary ? Types.VARBINARY : Types.VARCHAR;
            case 254:
                return binary ? Types.BINARY : Types.CHAR;
            case 6:
                return Types.NULL;
            case 255:
                return Types.BINARY;
            default:
                return Types.OTHER;
        }
    }

    @Override
    public String getColumnTypeName(int i) throws SQLException {
        Rows.Column x = c(i);
        boolean binary = x.charset() == 63;
        String base;
        switch (x.typeCode()) {
            case 1:
                base = "TINYINT";
                break;
            case 2:
                base = "SMALLINT";
                break;
            case 3:
                base = "INT";
                break;
            case 9:
                base = "MEDIUMINT";
                break;
            case 8:
                base = "BIGINT";
                break;
            case 4:
                base = "FLOAT";
                break;
            case 5:
                base = "DOUBLE";
                break;
            case 0:
            case 246:
                base = "DECIMAL";
                break;
            case 7:
                base = "TIMESTAMP";
                break;
            case 12:
                base = "DATETIME";
                break;
            case 10:
            case 14:
                base = "DATE";
                break;
            case 11:
                base = "TIME";
                break;
            case 13:
                base = "YEAR";
                break;
            case 16:
                base = "BIT";
                break;
            case 245:
                base = "JSON";
                break;
            case 249:
            case 250:
            case 251:
            case 252:
                base = binary ? "BLOB" : "TEXT";
                break;
            case 15:
            case 253:
                base = binary ? "VARBINARY" : "VARCHAR";
                break;
            case 254:
                base = (x.flags() & 256) != 0 ? "ENUM" : (x.flags() & 2048) != 0 ? "SET" : binary ? "BINARY" : "CHAR";
                break;
            case 6:
                base = "NULL";
                break;
            case 255:
                base = "GEOMETRY";
                break;
            default:
                base = "UNKNOWN";
                break;
        }
        return x.isUnsigned() && x.columnType() == Rows.UINT ? base + " UNSIGNED" : base;
    }

    @Override
    public String getColumnClassName(int i) throws SQLException {
        Rows.Column x = c(i);
        switch (getColumnType(i)) {
            case Types.BIT:
                return x.typeCode() == 16 || x.length() == 1 ? "java.lang.Boolean" : "[B";
            case Types.TINYINT:
            case Types.SMALLINT:
            case Types.INTEGER:
                return "java.lang.Integer";
            case Types.BIGINT:
                return x.isUnsigned() && x.typeCode() == 8 ? "java.math.BigInteger" : "java.lang.Long";
            case Types.REAL:
                return "java.lang.Float";
            case Types.DOUBLE:
                return "java.lang.Double";
            case Types.DECIMAL:
                return "java.math.BigDecimal";
            case Types.TIMESTAMP:
                return "java.sql.Timestamp";
            case Types.DATE:
                return "java.sql.Date";
            case Types.TIME:
                return "java.sql.Time";
            case Types.BINARY:
            case Types.VARBINARY:
            case Types.LONGVARBINARY:
                return "[B";
            default:
                return "java.lang.String";
        }
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
