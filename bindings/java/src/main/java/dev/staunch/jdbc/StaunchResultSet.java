package dev.staunch.jdbc;

import dev.staunch.Rows;
import dev.staunch.internal.Values;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLDataException;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.sql.Time;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Calendar;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * A forward-only, read-only {@link ResultSet} over a staunch row set (read
 * whole, so it stays valid after commit). Getters convert between the
 * common types; an impossible conversion is a {@link SQLDataException}
 * naming the column. Zero dates ('0000-00-00') read as NULL.
 */
public class StaunchResultSet extends UnsupportedResultSet {
    private final StaunchStatement statement;
    private final RowSource src;
    private final int maxRows;
    private int row;
    private boolean closed;
    private boolean afterLast;
    private boolean wasNull;
    private int fetchSize;
    /** The source said it has no more rows (a streaming one then no longer holds the connection). */
    private boolean exhausted;

    StaunchResultSet(StaunchStatement statement, RowSource src, int maxRows) {
        this.statement = statement;
        this.src = src;
        this.maxRows = maxRows;
    }

    private void open() throws SQLException {
        if (closed) {
            throw new SQLNonTransientException("the result set is closed", "HY010");
        }
    }

    @Override
    public boolean next() throws SQLException {
        open();
        if (afterLast) {
            return false;
        }
        if (maxRows > 0 && row >= maxRows) {
            afterLast = true;
            return false;
        }
        if (!src.next()) {
            afterLast = true;
            exhausted = true;
            return false;
        }
        row++;
        return true;
    }

    @Override
    public void close() throws SQLException {
        if (!closed) {
            closed = true;
            src.close();
            if (statement != null) {
                statement.resultSetClosed(this);
            }
        }
    }

    void closeFromStatement() {
        closed = true;
        src.close();
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    /** Whether a streaming answer under it may still hold the connection: open and not read to its end. */
    boolean holdsConnection() {
        return !closed && !exhausted;
    }

    /** What the server says of column {@code i} (from 1). */
    Rows.Column column(int i) throws SQLException {
        open();
        return src.columns().get(i - 1);
    }

    @Override
    public boolean wasNull() throws SQLException {
        open();
        return wasNull;
    }

    private int idx(int columnIndex) throws SQLException {
        open();
        if (columnIndex < 1 || columnIndex > src.columnCount()) {
            throw new SQLNonTransientException("column index " + columnIndex + " is not in 1.." + src.columnCount(), "07009");
        }
        if (row == 0 || afterLast) {
            throw new SQLNonTransientException("no current row: call next() first (and check it returned true)", "24000");
        }
        return columnIndex - 1;
    }

    private Object raw(int columnIndex) throws SQLException {
        Object v = src.get(idx(columnIndex));
        wasNull = v == null;
        return v;
    }

    /** Column {@code i}'s natural value (as {@link Rows#getObject(int)} gives it), before JDBC's type choice. */
    Object natural(int columnIndex) throws SQLException {
        return raw(columnIndex);
    }

    private String name(int columnIndex) {
        try {
            return src.columns().get(columnIndex - 1).name();
        } catch (SQLException | RuntimeException e) {
            return "?";
        }
    }

    private SQLDataException cannot(int columnIndex, Object v, String to) {
        return new SQLDataException("column " + columnIndex + " (" + name(columnIndex) + "): cannot read "
                + (v instanceof byte[] ? "bytes" : v.getClass().getSimpleName() + " " + preview(v)) + " as " + to, "22018");
    }

    private static String preview(Object v) {
        String s = String.valueOf(v);
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }

    @Override
    public int findColumn(String label) throws SQLException {
        open();
        if (label == null) {
            throw new SQLNonTransientException("column label must not be null", "HY009");
        }
        int i = src.find(label);
        if (i < 0) {
            throw new SQLNonTransientException("no column labelled \"" + label + "\" in the result", "S0022");
        }
        return i + 1;
    }

    // ---- getters by index -----------------------------------------------

    /**
     * {@link Values}' answer, or its mismatch as JDBC's: a type that does not
     * convert is 22018, a value out of range 22003, a TIME that is not a
     * time of day 22008.
     */
    private <T> T convert(int i, Object v, String to, Function<Object, T> how) throws SQLDataException {
        try {
            return how.apply(v);
        } catch (Values.Mismatch m) {
            switch (m.kind()) {
                case RANGE:
                    throw new SQLDataException("column " + i + " (" + name(i) + "): " + m.getMessage(), "22003");
                case NOT_A_TIME_OF_DAY:
                    throw new SQLDataException("column " + i + " (" + name(i) + "): " + m.getMessage()
                            + "; read it with getObject(i, Duration.class) or getString", "22008");
                default:
                    throw cannot(i, v, to);
            }
        }
    }

    /** Column {@code i}'s value converted by {@code how}; {@code ifNull} for SQL NULL. */
    private <T> T read(int i, T ifNull, String to, Function<Object, T> how) throws SQLException {
        Object v = raw(i);
        return v == null ? ifNull : convert(i, v, to, how);
    }

    private long integer(int i, long min, long max, String to) throws SQLException {
        return read(i, 0L, to, v -> Values.integer(v, min, max, to));
    }

    @Override
    public String getString(int i) throws SQLException {
        return read(i, null, "String", Values::sqlText);
    }

    @Override
    public String getNString(int i) throws SQLException {
        return getString(i);
    }

    @Override
    public boolean getBoolean(int i) throws SQLException {
        return read(i, false, "boolean", Values::bool);
    }

    @Override
    public byte getByte(int i) throws SQLException {
        return (byte) integer(i, Byte.MIN_VALUE, Byte.MAX_VALUE, "byte");
    }

    @Override
    public short getShort(int i) throws SQLException {
        return (short) integer(i, Short.MIN_VALUE, Short.MAX_VALUE, "short");
    }

    @Override
    public int getInt(int i) throws SQLException {
        return (int) integer(i, Integer.MIN_VALUE, Integer.MAX_VALUE, "int");
    }

    @Override
    public long getLong(int i) throws SQLException {
        return integer(i, Long.MIN_VALUE, Long.MAX_VALUE, "long");
    }

    @Override
    public double getDouble(int i) throws SQLException {
        return read(i, 0.0, "double", Values::toDouble);
    }

    @Override
    public float getFloat(int i) throws SQLException {
        return (float) getDouble(i);
    }

    @Override
    public BigDecimal getBigDecimal(int i) throws SQLException {
        return read(i, null, "BigDecimal", Values::decimal);
    }

    @Deprecated
    @Override
    public BigDecimal getBigDecimal(int i, int scale) throws SQLException {
        BigDecimal d = getBigDecimal(i);
        return d == null ? null : d.setScale(scale, RoundingMode.HALF_UP);
    }

    /** Bytes as they are, any other value as its text in UTF-8. */
    @Override
    public byte[] getBytes(int i) throws SQLException {
        return read(i, null, "bytes", v -> Values.bytes(v instanceof byte[] ? v : Values.sqlText(v)));
    }

    private LocalDateTime dateTime(int i, Object v) throws SQLDataException {
        return convert(i, v, "a date/time", Values::dateTimeOrText);
    }

    private LocalDateTime dateTime(int i) throws SQLException {
        return read(i, null, "a date/time", Values::dateTimeOrText);
    }

    private LocalTime localTime(int i) throws SQLException {
        return read(i, null, "a time", Values::timeOfDay);
    }

    @Override
    public Date getDate(int i) throws SQLException {
        LocalDateTime t = dateTime(i);
        return t == null ? null : Date.valueOf(t.toLocalDate());
    }

    @Override
    public Time getTime(int i) throws SQLException {
        LocalTime t = localTime(i);
        return t == null ? null : Time.valueOf(t);
    }

    @Override
    public Timestamp getTimestamp(int i) throws SQLException {
        LocalDateTime t = dateTime(i);
        return t == null ? null : Timestamp.valueOf(t);
    }

    private static ZoneId zone(Calendar cal) {
        return cal == null ? ZoneId.systemDefault() : cal.getTimeZone().toZoneId();
    }

    @Override
    public Date getDate(int i, Calendar cal) throws SQLException {
        LocalDateTime t = dateTime(i);
        return t == null ? null : new Date(t.toLocalDate().atStartOfDay(zone(cal)).toInstant().toEpochMilli());
    }

    @Override
    public Time getTime(int i, Calendar cal) throws SQLException {
        LocalTime t = localTime(i);
        return t == null ? null : new Time(t.atDate(LocalDate.EPOCH).atZone(zone(cal)).toInstant().toEpochMilli());
    }

    @Override
    public Timestamp getTimestamp(int i, Calendar cal) throws SQLException {
        LocalDateTime t = dateTime(i);
        return t == null ? null : Timestamp.from(t.atZone(zone(cal)).toInstant());
    }

    @Override
    public InputStream getBinaryStream(int i) throws SQLException {
        byte[] b = getBytes(i);
        return b == null ? null : new ByteArrayInputStream(b);
    }

    @Override
    public InputStream getAsciiStream(int i) throws SQLException {
        return getBinaryStream(i);
    }

    @Override
    public Reader getCharacterStream(int i) throws SQLException {
        String s = getString(i);
        return s == null ? null : new StringReader(s);
    }

    @Override
    public Reader getNCharacterStream(int i) throws SQLException {
        return getCharacterStream(i);
    }

    @Override
    public Blob getBlob(int i) throws SQLException {
        byte[] b = getBytes(i);
        return b == null ? null : new javax.sql.rowset.serial.SerialBlob(b);
    }

    @Override
    public Clob getClob(int i) throws SQLException {
        String s = getString(i);
        return s == null ? null : new javax.sql.rowset.serial.SerialClob(s.toCharArray());
    }

    /**
     * The JDBC type of the column: Integer (INT and smaller), Long (BIGINT,
     * INT UNSIGNED), BigInteger (BIGINT UNSIGNED), Boolean (TINYINT(1), BIT(1)),
     * Float, Double, BigDecimal, String, byte[], java.sql.Date, Timestamp, Time
     * (Duration for a TIME outside 00:00..24:00).
     */
    @Override
    public Object getObject(int i) throws SQLException {
        Object v = raw(i);
        if (v == null) {
            return null;
        }
        Rows.Column c = src.columns().get(i - 1);
        if (v instanceof Long) {
            long l = (Long) v;
            switch (c.typeCode()) {
                case 1: // TINYINT
                    return c.length() == 1 && !c.isUnsigned() ? (Object) (l != 0) : (Object) (int) l;
                case 2: // SMALLINT
                case 9: // MEDIUMINT
                case 13: // YEAR
                    return (int) l;
                case 3: // INT
                    return c.isUnsigned() ? (Object) l : (Object) (int) l;
                default:
                    return l;
            }
        } else if (v instanceof Double) {
            return c.typeCode() == 4 ? (Object) ((Double) v).floatValue() : v; // 4: FLOAT
        } else if (v instanceof byte[] && c.typeCode() == 16 && c.length() == 1 && ((byte[]) v).length == 1) {
            return ((byte[]) v)[0] != 0; // BIT(1)
        } else if (v instanceof LocalDate) {
            return Date.valueOf((LocalDate) v);
        } else if (v instanceof LocalDateTime) {
            return Timestamp.valueOf((LocalDateTime) v);
        } else if (v instanceof Duration) {
            Duration d = (Duration) v;
            return Values.isTimeOfDay(d) ? Time.valueOf(LocalTime.ofNanoOfDay(d.toNanos())) : d;
        }
        return v;
    }

    @Override
    public Object getObject(int i, Map<String, Class<?>> map) throws SQLException {
        if (map != null && !map.isEmpty()) {
            throw Errors.unsupported("ResultSet.getObject with a type map");
        }
        return getObject(i);
    }

    @Override
    public <T> T getObject(int i, Class<T> type) throws SQLException {
        if (type == null) {
            throw new SQLNonTransientException("getObject: type must not be null", "HY009");
        }
        Object v = raw(i);
        if (v == null) {
            return null;
        }
        Object r;
        if (type == String.class) {
            r = Values.sqlText(v);
        } else if (type == Long.class || type == long.class) {
            r = getLong(i);
        } else if (type == Integer.class || type == int.class) {
            r = getInt(i);
        } else if (type == Short.class || type == short.class) {
            r = getShort(i);
        } else if (type == Byte.class || type == byte.class) {
            r = getByte(i);
        } else if (type == Boolean.class || type == boolean.class) {
            r = getBoolean(i);
        } else if (type == Double.class || type == double.class) {
            r = getDouble(i);
        } else if (type == Float.class || type == float.class) {
            r = getFloat(i);
        } else if (type == BigDecimal.class) {
            r = getBigDecimal(i);
        } else if (type == BigInteger.class) {
            r = convert(i, v, "BigInteger", Values::bigInteger);
        } else if (type == byte[].class) {
            r = getBytes(i);
        } else if (type == LocalDate.class) {
            r = dateTime(i, v).toLocalDate();
        } else if (type == LocalDateTime.class) {
            r = dateTime(i, v);
        } else if (type == LocalTime.class) {
            r = convert(i, v, "a time", Values::timeOfDay);
        } else if (type == Duration.class) {
            r = v instanceof Duration ? (Duration) v : Duration.ofNanos(convert(i, v, "a time", Values::timeOfDay).toNanoOfDay());
        } else if (type == Instant.class) {
            r = dateTime(i, v).atZone(ZoneId.systemDefault()).toInstant();
        } else if (type == OffsetDateTime.class) {
            r = dateTime(i, v).atZone(ZoneId.systemDefault()).toOffsetDateTime();
        } else if (type == ZonedDateTime.class) {
            r = dateTime(i, v).atZone(ZoneId.systemDefault());
        } else if (type == Date.class) {
            r = getDate(i);
        } else if (type == Time.class) {
            r = getTime(i);
        } else if (type == Timestamp.class || type == java.util.Date.class) {
            r = getTimestamp(i);
        } else if (type == UUID.class) {
            try {
                r = UUID.fromString(Values.sqlText(v).trim());
            } catch (IllegalArgumentException e) {
                throw cannot(i, v, "UUID");
            }
        } else if (type == Blob.class) {
            r = getBlob(i);
        } else if (type == Clob.class) {
            r = getClob(i);
        } else if (type == Object.class) {
            r = getObject(i);
        } else {
            Object o = getObject(i);
            if (type.isInstance(o)) {
                r = o;
            } else {
                throw new SQLDataException("column " + i + " (" + name(i) + "): cannot convert to "
                        + type.getName(), "22018");
            }
        }
        @SuppressWarnings("unchecked")
        T t = (T) r;
        return t;
    }

    // ---- getters by label -----------------------------------------------

    @Override public String getString(String l) throws SQLException { return getString(findColumn(l)); }
    @Override public String getNString(String l) throws SQLException { return getString(findColumn(l)); }
    @Override public boolean getBoolean(String l) throws SQLException { return getBoolean(findColumn(l)); }
    @Override public byte getByte(String l) throws SQLException { return getByte(findColumn(l)); }
    @Override public short getShort(String l) throws SQLException { return getShort(findColumn(l)); }
    @Override public int getInt(String l) throws SQLException { return getInt(findColumn(l)); }
    @Override public long getLong(String l) throws SQLException { return getLong(findColumn(l)); }
    @Override public float getFloat(String l) throws SQLException { return getFloat(findColumn(l)); }
    @Override public double getDouble(String l) throws SQLException { return getDouble(findColumn(l)); }
    @Override public BigDecimal getBigDecimal(String l) throws SQLException { return getBigDecimal(findColumn(l)); }
    @Deprecated @Override public BigDecimal getBigDecimal(String l, int scale) throws SQLException { return getBigDecimal(findColumn(l), scale); }
    @Override public byte[] getBytes(String l) throws SQLException { return getBytes(findColumn(l)); }
    @Override public Date getDate(String l) throws SQLException { return getDate(findColumn(l)); }
    @Override public Time getTime(String l) throws SQLException { return getTime(findColumn(l)); }
    @Override public Timestamp getTimestamp(String l) throws SQLException { return getTimestamp(findColumn(l)); }
    @Override public Date getDate(String l, Calendar c) throws SQLException { return getDate(findColumn(l), c); }
    @Override public Time getTime(String l, Calendar c) throws SQLException { return getTime(findColumn(l), c); }
    @Override public Timestamp getTimestamp(String l, Calendar c) throws SQLException { return getTimestamp(findColumn(l), c); }
    @Override public InputStream getBinaryStream(String l) throws SQLException { return getBinaryStream(findColumn(l)); }
    @Override public InputStream getAsciiStream(String l) throws SQLException { return getAsciiStream(findColumn(l)); }
    @Override public Reader getCharacterStream(String l) throws SQLException { return getCharacterStream(findColumn(l)); }
    @Override public Reader getNCharacterStream(String l) throws SQLException { return getCharacterStream(findColumn(l)); }
    @Override public Blob getBlob(String l) throws SQLException { return getBlob(findColumn(l)); }
    @Override public Clob getClob(String l) throws SQLException { return getClob(findColumn(l)); }
    @Override public Object getObject(String l) throws SQLException { return getObject(findColumn(l)); }
    @Override public Object getObject(String l, Map<String, Class<?>> m) throws SQLException { return getObject(findColumn(l), m); }
    @Override public <T> T getObject(String l, Class<T> t) throws SQLException { return getObject(findColumn(l), t); }

    @Override
    public NClob getNClob(int i) throws SQLException {
        throw Errors.unsupported("ResultSet.getNClob");
    }

    // ---- cursor and odds ------------------------------------------------

    @Override
    public ResultSetMetaData getMetaData() throws SQLException {
        open();
        return new StaunchResultSetMetaData(src.columns());
    }

    @Override
    public int getRow() throws SQLException {
        open();
        return afterLast ? 0 : row;
    }

    @Override
    public boolean isBeforeFirst() throws SQLException {
        open();
        return row == 0 && !afterLast;
    }

    @Override
    public boolean isAfterLast() throws SQLException {
        open();
        return afterLast && row > 0;
    }

    @Override
    public boolean isFirst() throws SQLException {
        open();
        return row == 1 && !afterLast;
    }

    @Override
    public Statement getStatement() throws SQLException {
        open();
        return statement;
    }

    @Override
    public SQLWarning getWarnings() throws SQLException {
        open();
        return null;
    }

    @Override
    public void clearWarnings() throws SQLException {
        open();
    }

    @Override
    public int getType() throws SQLException {
        return TYPE_FORWARD_ONLY;
    }

    @Override
    public int getConcurrency() throws SQLException {
        return CONCUR_READ_ONLY;
    }

    @Override
    public int getHoldability() throws SQLException {
        return HOLD_CURSORS_OVER_COMMIT;
    }

    @Override
    public int getFetchDirection() throws SQLException {
        return FETCH_FORWARD;
    }

    @Override
    public void setFetchDirection(int d) throws SQLException {
        if (d != FETCH_FORWARD) {
            throw Errors.unsupported("ResultSet.setFetchDirection other than FETCH_FORWARD");
        }
    }

    @Override
    public int getFetchSize() throws SQLException {
        return fetchSize;
    }

    @Override
    public void setFetchSize(int rows) throws SQLException {
        if (rows < 0) {
            throw new SQLNonTransientException("setFetchSize: must not be negative", "HY000");
        }
        fetchSize = rows;
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
