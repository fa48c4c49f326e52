package dev.staunch.jdbc;

import dev.staunch.Rows;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
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
import java.time.format.DateTimeFormatter;
import java.util.Calendar;
import java.util.Map;
import java.util.UUID;

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

    private static final DateTimeFormatter DATETIME_TEXT = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss[.SSSSSS]");
    private static final DateTimeFormatter DATETIME_TEXT_WHOLE = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    static String text(Object v) {
        if (v instanceof String) {
            String s = (String) v;
            return s;
        } else if (v instanceof byte[]) {
            byte[] b = (byte[]) v;
            return new String(b, StandardCharsets.UTF_8);
        } else if (v instanceof BigDecimal) {
            BigDecimal d = (BigDecimal) v;
            return d.toPlainString();
        } else if (v instanceof LocalDateTime) {
            LocalDateTime t = (LocalDateTime) v;
            return t.getNano() == 0 ? t.format(DATETIME_TEXT_WHOLE)
                    : t.format(DATETIME_TEXT);
        } else if (v instanceof Duration) {
            Duration d = (Duration) v;
            return timeText(d);
        } else {
            return v.toString();
        }
    }

    private static String timeText(Duration d) {
        Duration a = d.abs();
        long s = a.getSeconds();
        String base = String.format("%s%02d:%02d:%02d", d.isNegative() ? "-" : "", s / 3600, (s / 60) % 60, s % 60);
        return a.getNano() == 0 ? base : base + String.format(".%06d", a.getNano() / 1000);
    }

    @Override
    public String getString(int i) throws SQLException {
        Object v = raw(i);
        return v == null ? null : text(v);
    }

    @Override
    public String getNString(int i) throws SQLException {
        return getString(i);
    }

    @Override
    public boolean getBoolean(int i) throws SQLException {
        Object v = raw(i);
        if (v == null) {
            return false;
        } else if (v instanceof Long) {
            Long l = (Long) v;
            return l != 0;
        } else if (v instanceof BigInteger) {
            BigInteger b = (BigInteger) v;
            return b.signum() != 0;
        } else if (v instanceof Double) {
            Double d = (Double) v;
            return d != 0;
        } else if (v instanceof BigDecimal) {
            BigDecimal d = (BigDecimal) v;
            return d.signum() != 0;
        } else if (v instanceof Boolean) {
            Boolean b = (Boolean) v;
            return b;
        } else if (v instanceof byte[] && ((byte[]) v).length == 1) {
            byte[] b = (byte[]) v;
            return b[0] != 0;
        } else if (v instanceof String) {
            String s = (String) v;
            switch (s.trim().toLowerCase(java.util.Locale.ROOT)) {
                case "1":
                case "true":
                case "y":
                case "yes":
                    return true;
                case "0":
                case "false":
                case "n":
                case "no":
                case "":
                    return false;
                default:
                    throw cannot(i, v, "boolean");
            }
        } else {
            throw cannot(i, v, "boolean");
        }
    }

    private long integer(int i, long min, long max, String to) throws SQLException {
        Object v = raw(i);
        long r;
        if (v == null) {
            return 0;
        } else if (v instanceof Long) {
            Long l = (Long) v;
            r = l;
        } else if (v instanceof BigInteger) {
            BigInteger b = (BigInteger) v;
            throw new SQLDataException("column " + i + ": " + b + " is out of range for " + to, "22003");
        } else if (v instanceof Double) {
            Double d = (Double) v;
            if (d.isNaN() || d < min || d > max) {
                throw new SQLDataException("column " + i + ": " + d + " is out of range for " + to, "22003");
            }
            r = d.longValue();
        } else if (v instanceof BigDecimal) {
            BigDecimal d = (BigDecimal) v;
            BigDecimal t = d.setScale(0, RoundingMode.DOWN);
            if (t.compareTo(BigDecimal.valueOf(min)) < 0 || t.compareTo(BigDecimal.valueOf(max)) > 0) {
                throw new SQLDataException("column " + i + ": " + d + " is out of range for " + to, "22003");
            }
            r = t.longValue();
        } else if (v instanceof Boolean) {
            Boolean b = (Boolean) v;
            r = b ? 1 : 0;
        } else if (v instanceof String) {
            String s = (String) v;
            try {
                r = new BigDecimal(s.trim()).setScale(0, RoundingMode.DOWN).longValueExact();
            } catch (NumberFormatException | ArithmeticException e) {
                throw cannot(i, v, to);
            }
        } else if (v instanceof byte[] && ((byte[]) v).length <= 8) {
            byte[] b = (byte[]) v;
            // BIT(n)
            long x = 0;
            for (byte y : b) {
                x = (x << 8) | (y & 0xFF);
            }
            r = x;
        } else {
            throw cannot(i, v, to);
        }
        if (r < min || r > max) {
            throw new SQLDataException("column " + i + " (" + name(i) + "): " + r + " is out of range for " + to, "22003");
        }
        return r;
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
        Object v = raw(i);
        if (v == null) {
            return 0;
        } else if (v instanceof Number) {
            Number n = (Number) v;
            return n.doubleValue();
        } else if (v instanceof Boolean) {
            Boolean b = (Boolean) v;
            return b ? 1 : 0;
        } else if (v instanceof String) {
            String s = (String) v;
            try {
                return Double.parseDouble(s.trim());
            } catch (NumberFormatException e) {
                throw cannot(i, v, "double");
            }
        } else {
            throw cannot(i, v, "double");
        }
    }

    @Override
    public float getFloat(int i) throws SQLException {
        return (float) getDouble(i);
    }

    @Override
    public BigDecimal getBigDecimal(int i) throws SQLException {
        Object v = raw(i);
        if (v == null) {
            return null;
        } else if (v instanceof BigDecimal) {
            BigDecimal d = (BigDecimal) v;
            return d;
        } else if (v instanceof Long) {
            Long l = (Long) v;
            return BigDecimal.valueOf(l);
        } else if (v instanceof BigInteger) {
            BigInteger b = (BigInteger) v;
            return new BigDecimal(b);
        } else if (v instanceof Double) {
            Double d = (Double) v;
            return BigDecimal.valueOf(d);
        } else if (v instanceof String) {
            String s = (String) v;
            try {
                return new BigDecimal(s.trim());
            } catch (NumberFormatException e) {
                throw cannot(i, v, "BigDecimal");
            }
        } else {
            throw cannot(i, v, "BigDecimal");
        }
    }

    @Deprecated
    @Override
    public BigDecimal getBigDecimal(int i, int scale) throws SQLException {
        BigDecimal d = getBigDecimal(i);
        return d == null ? null : d.setScale(scale, RoundingMode.HALF_UP);
    }

    @Override
    public byte[] getBytes(int i) throws SQLException {
        Object v = raw(i);
        if (v == null) {
            return null;
        } else if (v instanceof byte[]) {
            byte[] b = (byte[]) v;
            return b;
        } else {
            return text(v).getBytes(StandardCharsets.UTF_8);
        }
    }

    private LocalDateTime dateTime(int i, Object v) throws SQLException {
        if (v instanceof LocalDateTime) {
            LocalDateTime t = (LocalDateTime) v;
            return t;
        } else if (v instanceof LocalDate) {
            LocalDate d = (LocalDate) v;
            return d.atStartOfDay();
        } else if (v instanceof String) {
            String s = (String) v;
            try {
                String t = s.trim();
                return t.length() <= 10 ? LocalDate.parse(t).atStartOfDay() : LocalDateTime.parse(t.replace(' ', 'T'));
            } catch (java.time.format.DateTimeParseException e) {
                throw cannot(i, v, "a date/time");
            }
        } else {
            throw cannot(i, v, "a date/time");
        }
    }

    private LocalTime localTime(int i, Object v) throws SQLException {
        if (v instanceof Duration) {
            Duration d = (Duration) v;
            if (d.isNegative() || d.compareTo(Duration.ofDays(1)) >= 0) {
                throw new SQLDataException("column " + i + " (" + name(i) + "): TIME " + timeText(d)
                        + " is not a time of day; read it with getObject(i, Duration.class) or getString", "22008");
            }
            return LocalTime.ofNanoOfDay(d.toNanos());
        } else if (v instanceof LocalDateTime) {
            LocalDateTime t = (LocalDateTime) v;
            return t.toLocalTime();
        } else if (v instanceof String) {
            String s = (String) v;
            try {
                return LocalTime.parse(s.trim());
            } catch (java.time.format.DateTimeParseException e) {
                throw cannot(i, v, "a time");
            }
        } else {
            throw cannot(i, v, "a time");
        }
    }

    @Override
    public Date getDate(int i) throws SQLException {
        Object v = raw(i);
        return v == null ? null : Date.valueOf(dateTime(i, v).toLocalDate());
    }

    @Override
    public Time getTime(int i) throws SQLException {
        Object v = raw(i);
        return v == null ? null : Time.valueOf(localTime(i, v));
    }

    @Override
    public Timestamp getTimestamp(int i) throws SQLException {
        Object v = raw(i);
        return v == null ? null : Timestamp.valueOf(dateTime(i, v));
    }

    private static ZoneId zone(Calendar cal) {
        return cal == null ? ZoneId.systemDefault() : cal.getTimeZone().toZoneId();
    }

    @Override
    public Date getDate(int i, Calendar cal) throws SQLException {
        Object v = raw(i);
        return v == null ? null : new Date(dateTime(i, v).toLocalDate().atStartOfDay(zone(cal)).toInstant().toEpochMilli());
    }

    @Override
    public Time getTime(int i, Calendar cal) throws SQLException {
        Object v = raw(i);
        return v == null ? null : new Time(localTime(i, v).atDate(LocalDate.EPOCH).atZone(zone(cal)).toInstant().toEpochMilli());
    }

    @Override
    public Timestamp getTimestamp(int i, Calendar cal) throws SQLException {
        Object v = raw(i);
        return v == null ? null : Timestamp.from(dateTime(i, v).atZone(zone(cal)).toInstant());
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
            Long l = (Long) v;
            switch (c.typeCode()) {
                case 1:
                    return c.length() == 1 && !c.isUnsigned() ? (Object) (l != 0) : (Object) l.intValue();
                case 2:
                case 9:
                case 13:
                    return (Object) l.intValue();
                case 3:
                    return c.isUnsigned() ? l : (Object) l.intValue();
                default:
                    return l;
            }
        } else if (v instanceof Double) {
            Double d = (Double) v;
            return c.typeCode() == 4 ? (Object) d.floatValue() : d;
        } else if (v instanceof byte[] && c.typeCode() == 16 && c.length() == 1 && ((byte[]) v).length == 1) {
            byte[] b = (byte[]) v;
            return b[0] != 0;
        } else if (v instanceof LocalDate) {
            LocalDate d = (LocalDate) v;
            return Date.valueOf(d);
        } else if (v instanceof LocalDateTime) {
            LocalDateTime t = (LocalDateTime) v;
            return Timestamp.valueOf(t);
        } else if (v instanceof Duration) {
            Duration d = (Duration) v;
            return d.isNegative() || d.compareTo(Duration.ofDays(1)) >= 0 ? d : Time.valueOf(LocalTime.ofNanoOfDay(d.toNanos()));
        } else {
            return v;
        }
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
            r = text(v);
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
            r = v instanceof BigInteger ? (BigInteger) v : getBigDecimal(i).toBigIntegerExact();
        } else if (type == byte[].class) {
            r = getBytes(i);
        } else if (type == LocalDate.class) {
            r = dateTime(i, v).toLocalDate();
        } else if (type == LocalDateTime.class) {
            r = dateTime(i, v);
        } else if (type == LocalTime.class) {
            r = localTime(i, v);
        } else if (type == Duration.class) {
            r = v instanceof Duration ? (Duration) v : Duration.ofNanos(localTime(i, v).toNanoOfDay());
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
                r = UUID.fromString(text(v).trim());
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
