package dev.staunch.jdbc;

import dev.staunch.internal.Values;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.sql.BatchUpdateException;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.ParameterMetaData;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLDataException;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.sql.SQLType;
import java.sql.Time;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.List;

/**
 * A {@link java.sql.PreparedStatement}. As in MariaDB Connector/J, by default
 * the library writes each bound value into the statement as a literal escaped
 * for the session's real {@code sql_mode} (client-side interpolation: one
 * round trip, text protocol); with {@code useServerPrepStmts=true} the
 * statement is prepared on the server and the values travel separately (a
 * statement the server cannot prepare is interpolated either way). The
 * placeholders are counted by the library's SQL scanner under the session's
 * {@code sql_mode}. A {@link BigDecimal} is an exact DECIMAL on the server.
 * Batches run their rows one after the other on the connection.
 */
public class StaunchPreparedStatement extends UnsupportedPreparedStatement {
    final String sql;
    final int paramCount;
    Object[] params;
    boolean[] set;
    private List<Object[]> batch;

    StaunchPreparedStatement(StaunchConnection connection, String sql) throws SQLException {
        super(connection);
        this.sql = sql;
        this.paramCount = connection.countParams(sql);
        this.params = new Object[paramCount];
        this.set = new boolean[paramCount];
    }

    private void bind(int index, Object value) throws SQLException {
        open();
        if (index < 1 || index > paramCount) {
            throw new SQLNonTransientException("parameter index " + index + " is not in 1.." + paramCount
                    + " (the statement has " + paramCount + " placeholders)", "07009");
        }
        params[index - 1] = value;
        set[index - 1] = true;
    }

    Object[] bound() throws SQLException {
        for (int i = 0; i < paramCount; i++) {
            if (!set[i]) {
                throw new SQLNonTransientException("parameter " + (i + 1) + " of " + paramCount + " is not set", "07001");
            }
        }
        return params.clone();
    }

    @Override
    public ResultSet executeQuery() throws SQLException {
        run(sql, bound(), Mode.QUERY);
        return getResultSet();
    }

    @Override
    public int executeUpdate() throws SQLException {
        return (int) Math.min(executeLargeUpdate(), Integer.MAX_VALUE);
    }

    @Override
    public long executeLargeUpdate() throws SQLException {
        run(sql, bound(), Mode.UPDATE);
        return getLargeUpdateCount();
    }

    @Override
    public boolean execute() throws SQLException {
        return run(sql, bound(), Mode.ANY);
    }

    private SQLException notOnPrepared() {
        return new SQLNonTransientException("this method takes SQL and is not for a PreparedStatement: call it "
                + "without the SQL", "HY000");
    }

    @Override public ResultSet executeQuery(String s) throws SQLException { throw notOnPrepared(); }
    @Override public int executeUpdate(String s) throws SQLException { throw notOnPrepared(); }
    @Override public long executeLargeUpdate(String s) throws SQLException { throw notOnPrepared(); }
    @Override public boolean execute(String s) throws SQLException { throw notOnPrepared(); }
    @Override public void addBatch(String s) throws SQLException { throw notOnPrepared(); }

    @Override
    public void clearParameters() throws SQLException {
        open();
        params = new Object[paramCount];
        set = new boolean[paramCount];
    }

    @Override
    public void addBatch() throws SQLException {
        Object[] p = bound();
        if (batch == null) {
            batch = new ArrayList<>();
        }
        batch.add(p);
    }

    @Override
    public void clearBatch() throws SQLException {
        open();
        batch = null;
    }

    @Override
    public long[] executeLargeBatch() throws SQLException {
        open();
        List<Object[]> b = batch == null ? List.of() : batch;
        batch = null;
        long[] counts = new long[b.size()];
        List<Object[]> keys = new ArrayList<>();
        for (int i = 0; i < counts.length; i++) {
            try {
                run(sql, b.get(i), Mode.UPDATE);
                counts[i] = getLargeUpdateCount();
                try (ResultSet k = super.getGeneratedKeys()) {
                    while (k.next()) {
                        keys.add(new Object[] {k.getLong(1)});
                    }
                }
            } catch (SQLException e) {
                throw new BatchUpdateException(e.getMessage(), e.getSQLState(), e.getErrorCode(),
                        Arrays.copyOf(counts, i), e);
            }
        }
        batchKeys = keys;
        return counts;
    }

    private List<Object[]> batchKeys;

    @Override
    public ResultSet getGeneratedKeys() throws SQLException {
        if (batchKeys != null) {
            List<Object[]> k = batchKeys;
            batchKeys = null;
            return new StaunchResultSet(this, RowSource.keys(k), 0);
        }
        return super.getGeneratedKeys();
    }

    @Override
    boolean run(String s, Object[] p, Mode mode) throws SQLException {
        batchKeys = null;
        return super.run(s, p, mode);
    }

    // ---- setters --------------------------------------------------------

    @Override public void setNull(int i, int sqlType) throws SQLException { bind(i, null); }
    @Override public void setNull(int i, int sqlType, String typeName) throws SQLException { bind(i, null); }
    @Override public void setBoolean(int i, boolean x) throws SQLException { bind(i, x ? 1L : 0L); }
    @Override public void setByte(int i, byte x) throws SQLException { bind(i, (long) x); }
    @Override public void setShort(int i, short x) throws SQLException { bind(i, (long) x); }
    @Override public void setInt(int i, int x) throws SQLException { bind(i, (long) x); }
    @Override public void setLong(int i, long x) throws SQLException { bind(i, x); }
    @Override public void setFloat(int i, float x) throws SQLException { bind(i, (double) x); }
    @Override public void setDouble(int i, double x) throws SQLException { bind(i, x); }
    @Override public void setBigDecimal(int i, BigDecimal x) throws SQLException { bind(i, x); }
    @Override public void setString(int i, String x) throws SQLException { bind(i, x); }
    @Override public void setNString(int i, String x) throws SQLException { bind(i, x); }
    @Override public void setBytes(int i, byte[] x) throws SQLException { bind(i, x == null ? null : x.clone()); }
    @Override public void setDate(int i, Date x) throws SQLException { bind(i, x == null ? null : x.toLocalDate()); }
    @Override public void setTime(int i, Time x) throws SQLException { bind(i, x == null ? null : x.toLocalTime()); }
    @Override public void setTimestamp(int i, Timestamp x) throws SQLException { bind(i, x == null ? null : x.toLocalDateTime()); }

    private static ZoneId zone(Calendar cal) {
        return cal == null ? ZoneId.systemDefault() : cal.getTimeZone().toZoneId();
    }

    @Override
    public void setDate(int i, Date x, Calendar cal) throws SQLException {
        bind(i, x == null ? null : Instant.ofEpochMilli(x.getTime()).atZone(zone(cal)).toLocalDate());
    }

    @Override
    public void setTime(int i, Time x, Calendar cal) throws SQLException {
        bind(i, x == null ? null : Instant.ofEpochMilli(x.getTime()).atZone(zone(cal)).toLocalTime());
    }

    @Override
    public void setTimestamp(int i, Timestamp x, Calendar cal) throws SQLException {
        bind(i, x == null ? null : x.toInstant().atZone(zone(cal)).toLocalDateTime());
    }

    private static byte[] readAll(InputStream in, long limit) throws SQLException {
        try {
            byte[] b = in.readAllBytes();
            return limit >= 0 && b.length > limit ? Arrays.copyOf(b, (int) limit) : b;
        } catch (IOException e) {
            throw new SQLDataException("reading the stream parameter failed: " + e.getMessage(), "22000", e);
        }
    }

    private static String readAll(Reader r, long limit) throws SQLException {
        try {
            StringBuilder sb = new StringBuilder();
            char[] buf = new char[8192];
            int n;
            while ((n = r.read(buf)) > 0 && (limit < 0 || sb.length() < limit)) {
                sb.append(buf, 0, n);
            }
            return limit >= 0 && sb.length() > limit ? sb.substring(0, (int) limit) : sb.toString();
        } catch (IOException e) {
            throw new SQLDataException("reading the reader parameter failed: " + e.getMessage(), "22000", e);
        }
    }

    @Override public void setBinaryStream(int i, InputStream x) throws SQLException { bind(i, x == null ? null : readAll(x, -1)); }
    @Override public void setBinaryStream(int i, InputStream x, int len) throws SQLException { bind(i, x == null ? null : readAll(x, len)); }
    @Override public void setBinaryStream(int i, InputStream x, long len) throws SQLException { bind(i, x == null ? null : readAll(x, len)); }
    @Override public void setAsciiStream(int i, InputStream x) throws SQLException { bind(i, x == null ? null : new String(readAll(x, -1), java.nio.charset.StandardCharsets.US_ASCII)); }
    @Override public void setAsciiStream(int i, InputStream x, int len) throws SQLException { bind(i, x == null ? null : new String(readAll(x, len), java.nio.charset.StandardCharsets.US_ASCII)); }
    @Override public void setAsciiStream(int i, InputStream x, long len) throws SQLException { bind(i, x == null ? null : new String(readAll(x, len), java.nio.charset.StandardCharsets.US_ASCII)); }
    @Override public void setCharacterStream(int i, Reader x) throws SQLException { bind(i, x == null ? null : readAll(x, -1)); }
    @Override public void setCharacterStream(int i, Reader x, int len) throws SQLException { bind(i, x == null ? null : readAll(x, len)); }
    @Override public void setCharacterStream(int i, Reader x, long len) throws SQLException { bind(i, x == null ? null : readAll(x, len)); }
    @Override public void setNCharacterStream(int i, Reader x) throws SQLException { setCharacterStream(i, x); }
    @Override public void setNCharacterStream(int i, Reader x, long len) throws SQLException { setCharacterStream(i, x, len); }
    @Override public void setBlob(int i, Blob x) throws SQLException { bind(i, x == null ? null : x.getBytes(1, (int) x.length())); }
    @Override public void setBlob(int i, InputStream x) throws SQLException { setBinaryStream(i, x); }
    @Override public void setBlob(int i, InputStream x, long len) throws SQLException { setBinaryStream(i, x, len); }
    @Override public void setClob(int i, Clob x) throws SQLException { bind(i, x == null ? null : x.getSubString(1, (int) x.length())); }
    @Override public void setClob(int i, Reader x) throws SQLException { setCharacterStream(i, x); }
    @Override public void setClob(int i, Reader x, long len) throws SQLException { setCharacterStream(i, x, len); }

    /** Accepts what the native API sends, plus OffsetDateTime/ZonedDateTime/Instant (converted to the JVM's zone). */
    @Override
    public void setObject(int i, Object x) throws SQLException {
        Object v;
                if (x == null) {
            v = null;
        } else if (x instanceof Date) {
            Date d = (Date) x;
            v = d.toLocalDate();
        } else if (x instanceof Time) {
            Time t = (Time) x;
            v = t.toLocalTime();
        } else if (x instanceof Timestamp) {
            Timestamp t = (Timestamp) x;
            v = t.toLocalDateTime();
        } else if (x instanceof OffsetDateTime) {
            OffsetDateTime t = (OffsetDateTime) x;
            v = t.atZoneSameInstant(ZoneId.systemDefault()).toLocalDateTime();
        } else if (x instanceof ZonedDateTime) {
            ZonedDateTime t = (ZonedDateTime) x;
            v = t.withZoneSameInstant(ZoneId.systemDefault()).toLocalDateTime();
        } else if (x instanceof Instant) {
            Instant t = (Instant) x;
            v = LocalDateTime.ofInstant(t, ZoneId.systemDefault());
        } else if (x instanceof java.util.Date) {
            java.util.Date d = (java.util.Date) x;
            v = LocalDateTime.ofInstant(d.toInstant(), ZoneId.systemDefault());
        } else if (x instanceof Blob) {
            Blob b = (Blob) x;
            v = b.getBytes(1, (int) b.length());
        } else if (x instanceof Clob) {
            Clob c = (Clob) x;
            v = c.getSubString(1, (int) c.length());
        } else if (x instanceof InputStream) {
            InputStream in = (InputStream) x;
            v = readAll(in, -1);
        } else if (x instanceof Reader) {
            Reader r = (Reader) x;
            v = readAll(r, -1);
        } else if (x instanceof byte[]) {
            byte[] b = (byte[]) x;
            v = b.clone();
        } else if (x instanceof Number && !(((Number) x) instanceof Long || ((Number) x) instanceof Integer || ((Number) x) instanceof Short || ((Number) x) instanceof Byte || ((Number) x) instanceof Double || ((Number) x) instanceof Float || ((Number) x) instanceof BigDecimal || ((Number) x) instanceof java.math.BigInteger)) {
            Number n = (Number) x;
            v = new BigDecimal(n.toString());
        } else {
            v = x;
        }
        if (v != null && !(v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
                || v instanceof Boolean || v instanceof Double || v instanceof Float || v instanceof BigDecimal
                || v instanceof java.math.BigInteger || v instanceof String || v instanceof Character
                || v instanceof byte[] || v instanceof LocalDate || v instanceof LocalDateTime
                || v instanceof LocalTime || v instanceof java.time.Duration || v instanceof java.util.UUID
                || v instanceof Enum<?>)) {
            throw new SQLDataException("parameter " + i + ": cannot send a " + x.getClass().getName(), "22023");
        }
        bind(i, v);
    }

    @Override
    public void setObject(int i, Object x, int targetSqlType) throws SQLException {
        if (x == null) {
            bind(i, null);
            return;
        }
        switch (targetSqlType) {
            case Types.VARCHAR:
            case Types.CHAR:
            case Types.LONGVARCHAR:
            case Types.NVARCHAR:
            case Types.NCHAR:
            case Types.CLOB:
                setObject(i, x instanceof String ? x : Values.sqlText(x));
                break;
            case Types.BOOLEAN:
            case Types.BIT:
                setObject(i, x instanceof Boolean ? (Boolean) x
                    : x instanceof Number ? ((Number) x).longValue() != 0 : Boolean.parseBoolean(x.toString()));
                break;
            case Types.DECIMAL:
            case Types.NUMERIC:
                setObject(i, decimal(i, x));
                break;
            default:
                setObject(i, x);
                break;
        }
    }

    /**
     * A value given with target type DECIMAL/NUMERIC as an exact BigDecimal (as Connector/J converts it):
     * what {@link Values#decimal} reads (a double as the shortest text that reads back as it), and
     * the other integers, a Float by its shortest text, a Boolean as 1 or 0, any other Number by its text.
     */
    private static BigDecimal decimal(int i, Object x) throws SQLException {
        try {
            if (x instanceof Integer || x instanceof Short || x instanceof Byte) {
                return BigDecimal.valueOf(((Number) x).longValue());
            } else if (x instanceof Float) {
                return new BigDecimal(Float.toString((Float) x));
            } else if (x instanceof Boolean) {
                return (Boolean) x ? BigDecimal.ONE : BigDecimal.ZERO;
            } else if (x instanceof BigDecimal || x instanceof java.math.BigInteger || x instanceof Long
                    || x instanceof Double || x instanceof String) {
                return Values.decimal(x);
            } else if (x instanceof Number) {
                return new BigDecimal(x.toString());
            }
            throw new SQLDataException("parameter " + i + ": a " + x.getClass().getName() + " is not a DECIMAL", "22018");
        } catch (NumberFormatException | Values.Mismatch e) {
            // The value is not quoted: it may be anything a user bound.
            throw new SQLDataException("parameter " + i + ": not a decimal number (setObject with Types.DECIMAL "
                    + "or NUMERIC takes digits with an optional sign, point and exponent)", "22018", e);
        }
    }

    @Override
    public void setObject(int i, Object x, int targetSqlType, int scaleOrLength) throws SQLException {
        setObject(i, x, targetSqlType);
    }

    @Override
    public void setObject(int i, Object x, SQLType targetSqlType) throws SQLException {
        setObject(i, x, targetSqlType == null || targetSqlType.getVendorTypeNumber() == null ? Types.OTHER
                : targetSqlType.getVendorTypeNumber());
    }

    @Override
    public void setObject(int i, Object x, SQLType targetSqlType, int scaleOrLength) throws SQLException {
        setObject(i, x, targetSqlType);
    }

    @Override
    public ResultSetMetaData getMetaData() throws SQLException {
        open();
        return null; // known only once executed (JDBC allows null)
    }

    @Override
    public ParameterMetaData getParameterMetaData() throws SQLException {
        open();
        return new StaunchParameterMetaData(paramCount);
    }

    @Override
    public String toString() {
        return "StaunchPreparedStatement[" + sql + "]";
    }
}
