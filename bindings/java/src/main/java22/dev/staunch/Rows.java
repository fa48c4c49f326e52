package dev.staunch;

import dev.staunch.internal.Call;
import dev.staunch.internal.Mem;
import dev.staunch.internal.Native;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The answer of a query: one or more result sets, each a cursor over rows.
 * {@link #next()} moves to the next row; the getters read the current row by
 * column index (from 0) or name. Not thread-safe. Close it (a Cleaner frees
 * one that became unreachable without it). A buffered answer stays valid
 * after its connection is closed.
 */
@SuppressWarnings("restricted")
public final class Rows implements AutoCloseable, Iterable<Rows> {
    /** Column types as staunch reports them (STAUNCH_COLUMN_*). */
    public static final int NULL = 0, INT = 1, UINT = 2, DOUBLE = 3, DECIMAL = 4, TEXT = 5, BYTES = 6, DATE = 7,
            DATETIME = 8, TIME = 9;

    /** What the server says of a column. */
    public static final class Column {
        private final String name;
        private final int columnType;
        private final int typeCode;
        private final int flags;
        private final int charset;
        private final int length;
        private final int decimals;
        private final String orgName;
        private final String table;
        private final String orgTable;
        private final String schema;

        public Column(String name, int columnType, int typeCode, int flags, int charset, int length, int decimals, String orgName, String table, String orgTable, String schema) {
            this.name = name;
            this.columnType = columnType;
            this.typeCode = typeCode;
            this.flags = flags;
            this.charset = charset;
            this.length = length;
            this.decimals = decimals;
            this.orgName = orgName;
            this.table = table;
            this.orgTable = orgTable;
            this.schema = schema;
        }

        public String name() {
            return name;
        }

        public int columnType() {
            return columnType;
        }

        public int typeCode() {
            return typeCode;
        }

        public int flags() {
            return flags;
        }

        public int charset() {
            return charset;
        }

        public int length() {
            return length;
        }

        public int decimals() {
            return decimals;
        }

        public String orgName() {
            return orgName;
        }

        public String table() {
            return table;
        }

        public String orgTable() {
            return orgTable;
        }

        public String schema() {
            return schema;
        }

        @Override
        public boolean equals(Object other) {
            if (this == other) {
                return true;
            }
            if (!(other instanceof Column)) {
                return false;
            }
            Column o = (Column) other;
            return Objects.equals(name, o.name) && columnType == o.columnType && typeCode == o.typeCode && flags == o.flags && charset == o.charset && length == o.length && decimals == o.decimals && Objects.equals(orgName, o.orgName) && Objects.equals(table, o.table) && Objects.equals(orgTable, o.orgTable) && Objects.equals(schema, o.schema);
        }

        @Override
        public int hashCode() {
            return Objects.hash(name, columnType, typeCode, flags, charset, length, decimals, orgName, table, orgTable, schema);
        }

        @Override
        public String toString() {
            return "Column[name=" + name + ", columnType=" + columnType + ", typeCode=" + typeCode + ", flags=" + flags + ", charset=" + charset + ", length=" + length + ", decimals=" + decimals + ", orgName=" + orgName + ", table=" + table + ", orgTable=" + orgTable + ", schema=" + schema + "]";
        }

        public boolean isUnsigned() {
            return (flags & 32) != 0;
        }

        public boolean isNotNull() {
            return (flags & 1) != 0;
        }

        public boolean isAutoIncrement() {
            return (flags & 512) != 0;
        }
    }

    private static final long VSZ = Native.VALUE.byteSize();
    private static final int BATCH_ROWS = 64;

    private final State state;
    private final Cleaner.Cleanable cleanable;
    private int ncols;
    private long rowsInBatch;
    private long rowInBatch = -1;
    private boolean endOfSet;
    private List<Column> columns;
    private boolean lastWasNull;

    private static final class State implements Runnable {
        final MemorySegment handle;
        MemorySegment values = MemorySegment.NULL;
        long capacity;
        volatile boolean freed;

        State(MemorySegment handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            if (!freed) {
                freed = true;
                try {
                    Native.rows_free.invokeExact(handle);
                } catch (Throwable t) {
                    // never fails
                }
                Mem.free(values);
                values = MemorySegment.NULL;
            }
        }
    }

    Rows(MemorySegment handle) {
        this.state = new State(handle);
        this.cleanable = Mem.CLEANER.register(this, state);
        startSet();
    }

    private void startSet() {
        try {
            ncols = (int) (long) Native.rows_column_count.invokeExact(state.handle);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        columns = null;
        rowsInBatch = 0;
        rowInBatch = -1;
        endOfSet = ncols == 0;
    }

    private void open() {
        if (state.freed) {
            throw new StaunchException(Status.INVALID_ARGUMENT, "the rows are closed", 0, "");
        }
    }

    /** The number of columns of the current result set (0 for a statement without one). */
    public int columnCount() {
        return ncols;
    }

    /** The columns of the current result set. */
    public List<Column> columns() {
        open();
        if (columns == null) {
            List<Column> cs = new ArrayList<>(ncols);
            try (Mem.Scope a = new Mem.Scope()) {
                MemorySegment info = a.allocate(Native.COLUMN_INFO);
                MemorySegment err = Call.errSlot(a);
                for (int i = 0; i < ncols; i++) {
                    info.set(JAVA_LONG, 0, Native.COLUMN_INFO.byteSize());
                    Call.check((int) Native.rows_column_info.invokeExact(state.handle, (long) i, info, err), err);
                    cs.add(new Column(str(info, "name"), info.get(JAVA_INT, 8), info.get(JAVA_INT, 12),
                            info.get(JAVA_INT, 16), info.get(JAVA_INT, 20), info.get(JAVA_INT, 24),
                            info.get(JAVA_INT, 28), str(info, "org_name"), str(info, "table"),
                            str(info, "org_table"), str(info, "schema")));
                }
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
            columns = List.copyOf(cs);
        }
        return columns;
    }

    private static String str(MemorySegment info, String field) {
        MemorySegment p = info.get(ADDRESS, Native.offset(Native.COLUMN_INFO, field));
        long len = info.get(JAVA_LONG, Native.offset(Native.COLUMN_INFO, field + "_len"));
        return Native.string(p, len);
    }

    /** The index (from 0) of the column named {@code name} (case-insensitive; the first if several). */
    public int indexOf(String name) {
        List<Column> cs = columns();
        for (int i = 0; i < cs.size(); i++) {
            if (cs.get(i).name().equalsIgnoreCase(name)) {
                return i;
            }
        }
        throw new StaunchException(Status.BAD_INDEX, "no column named \"" + name + "\" (columns: "
                + cs.stream().map(Column::name).toList() + ")", 0, "");
    }

    /** Moves to the next row; false at the end of the current result set. */
    public boolean next() {
        open();
        if (endOfSet) {
            return false;
        }
        if (rowInBatch + 1 < rowsInBatch) {
            rowInBatch++;
            return true;
        }
        try (Mem.Scope a = new Mem.Scope()) {
            if (state.values.address() == 0) {
                MemorySegment cnt = a.allocate(JAVA_LONG);
                long rows = BATCH_ROWS;
                if ((int) Native.rows_row_count.invokeExact(state.handle, cnt, MemorySegment.NULL) == 0) {
                    rows = Math.max(1, Math.min(BATCH_ROWS, cnt.get(JAVA_LONG, 0)));
                }
                state.capacity = rows * ncols;
                state.values = Mem.malloc(state.capacity * VSZ);
            } else if (state.capacity < ncols) {
                Mem.free(state.values);
                state.values = MemorySegment.NULL;
                state.capacity = (long) BATCH_ROWS * ncols;
                state.values = Mem.malloc(state.capacity * VSZ);
            }
            MemorySegment n = a.allocate(JAVA_LONG);
            MemorySegment err = Call.errSlot(a);
            Call.check((int) Native.rows_fetch.invokeExact(state.handle, state.values, state.capacity, n, err), err);
            rowsInBatch = n.get(JAVA_LONG, 0);
            rowInBatch = 0;
            if (rowsInBatch == 0) {
                endOfSet = true;
                rowInBatch = -1;
                return false;
            }
            return true;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Moves to the next result set (of a CALL or multi-statement text); false after the last. */
    public boolean nextResult() {
        open();
        try (Mem.Scope a = new Mem.Scope()) {
            MemorySegment has = a.allocate(JAVA_BOOLEAN);
            MemorySegment err = Call.errSlot(a);
            Call.check((int) Native.rows_next_result.invokeExact(state.handle, has, err), err);
            boolean more = has.get(JAVA_BOOLEAN, 0);
            if (more) {
                startSet();
            } else {
                endOfSet = true;
                rowInBatch = -1;
                rowsInBatch = 0;
            }
            return more;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Rows affected by the current result set's statement. */
    public long affectedRows() {
        open();
        try {
            return (long) Native.rows_affected_rows.invokeExact(state.handle);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public long lastInsertId() {
        open();
        try {
            return (long) Native.rows_last_insert_id.invokeExact(state.handle);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    public int warnings() {
        open();
        try {
            return (int) Native.rows_warnings.invokeExact(state.handle);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    // ---- the current row -----------------------------------------------

    private long at(int idx) {
        open();
        if (rowInBatch < 0) {
            throw new StaunchException(Status.NO_ROW, "no current row: call next() first (and check it returned true)", 0, "");
        }
        if (idx < 0 || idx >= ncols) {
            throw new StaunchException(Status.BAD_INDEX, "column index " + idx + " is not in 0.." + (ncols - 1), 0, "");
        }
        return (rowInBatch * ncols + idx) * VSZ;
    }

    /** The column type of column {@code idx} in the current row (NULL for an SQL NULL). */
    public int typeOf(int idx) {
        return state.values.get(JAVA_INT, at(idx) + Native.V_TYPE);
    }

    public boolean isNull(int idx) {
        return typeOf(idx) == NULL;
    }

    public boolean isNull(String name) {
        return isNull(indexOf(name));
    }

    /** Whether the last getter read an SQL NULL. */
    public boolean wasNull() {
        return lastWasNull;
    }

    /**
     * Column {@code idx} in its natural Java type: null, Long (BigInteger for
     * an unsigned value above Long.MAX_VALUE), Double, BigDecimal, String,
     * byte[], LocalDate, LocalDateTime or Duration (TIME). Zero dates give null.
     */
    public Object getObject(int idx) {
        long o = at(idx);
        MemorySegment v = state.values;
        int type = v.get(JAVA_INT, o + Native.V_TYPE);
        lastWasNull = false;
        Object r = switch (type) {
            case NULL -> null;
            case INT -> v.get(JAVA_LONG, o + Native.V_I64);
            case UINT -> {
                long u = v.get(JAVA_LONG, o + Native.V_U64);
                yield u >= 0 ? (Object) u : new BigInteger(Long.toUnsignedString(u));
            }
            case DOUBLE -> v.get(JAVA_DOUBLE, o + Native.V_F64);
            case DECIMAL -> new BigDecimal(text(v, o));
            case TEXT -> text(v, o);
            case BYTES -> bytes(v, o);
            case DATE -> {
                long d = o + Native.V_DATETIME;
                int month = v.get(JAVA_BYTE, d + Native.DT_MONTH);
                yield month == 0 ? null : LocalDate.of(v.get(JAVA_SHORT, d) & 0xFFFF, month, v.get(JAVA_BYTE, d + Native.DT_DAY));
            }
            case DATETIME -> {
                long d = o + Native.V_DATETIME;
                int month = v.get(JAVA_BYTE, d + Native.DT_MONTH);
                yield month == 0 ? null : LocalDateTime.of(v.get(JAVA_SHORT, d) & 0xFFFF, month,
                        v.get(JAVA_BYTE, d + Native.DT_DAY), v.get(JAVA_BYTE, d + Native.DT_HOUR),
                        v.get(JAVA_BYTE, d + Native.DT_MINUTE), v.get(JAVA_BYTE, d + Native.DT_SECOND),
                        v.get(JAVA_INT, d + Native.DT_MICRO) * 1000);
            }
            case TIME -> {
                long t = o + Native.V_TIME;
                Duration dur = Duration.ofDays(v.get(JAVA_INT, t + Native.TM_DAYS) & 0xFFFFFFFFL)
                        .plusHours(v.get(JAVA_BYTE, t + Native.TM_HOURS))
                        .plusMinutes(v.get(JAVA_BYTE, t + Native.TM_MINUTES))
                        .plusSeconds(v.get(JAVA_BYTE, t + Native.TM_SECONDS))
                        .plusNanos((v.get(JAVA_INT, t + Native.TM_MICRO) & 0xFFFFFFFFL) * 1000L);
                yield v.get(JAVA_BOOLEAN, t + Native.TM_NEG) ? dur.negated() : dur;
            }
            default -> throw new StaunchException(Status.WRONG_TYPE, "column " + idx
                    + " has a type (" + type + ") this binding does not know; update the binding", 0, "");
        };
        lastWasNull = r == null;
        return r;
    }

    private static String text(MemorySegment v, long o) {
        return Native.string(v.get(ADDRESS, o + Native.V_PTR), v.get(JAVA_LONG, o + Native.V_LEN));
    }

    private static byte[] bytes(MemorySegment v, long o) {
        return Native.bytes(v.get(ADDRESS, o + Native.V_PTR), v.get(JAVA_LONG, o + Native.V_LEN));
    }

    private StaunchException wrong(int idx, String want, Object got) {
        return new StaunchException(Status.WRONG_TYPE, "column " + idx + " (" + columns().get(idx).name()
                + ") holds a " + (got == null ? "NULL" : got.getClass().getSimpleName()) + ", not " + want, 0, "");
    }

    /** An integer column (exact: a DECIMAL or DOUBLE with a fraction, or a value out of range, fails). NULL: 0, see {@link #wasNull()}. */
    public long getLong(int idx) {
        Object v = getObject(idx);
        return switch (v) {
            case null -> 0L;
            case Long l -> l;
            case BigInteger b -> throw new StaunchException(Status.OUT_OF_RANGE, "column " + idx + ": " + b
                    + " does not fit in a long", 0, "");
            case BigDecimal d -> {
                try {
                    yield d.longValueExact();
                } catch (ArithmeticException e) {
                    throw new StaunchException(Status.OUT_OF_RANGE, "column " + idx + ": " + d + " is not a long", 0, "");
                }
            }
            case Double d when d == Math.rint(d) && Math.abs(d) < 0x1p63 -> d.longValue();
            case String s -> {
                try {
                    yield Long.parseLong(s.trim());
                } catch (NumberFormatException e) {
                    throw wrong(idx, "an integer", v);
                }
            }
            default -> throw wrong(idx, "an integer", v);
        };
    }

    public long getLong(String name) {
        return getLong(indexOf(name));
    }

    public double getDouble(int idx) {
        Object v = getObject(idx);
        return switch (v) {
            case null -> 0.0;
            case Double d -> d;
            case Number n -> n.doubleValue();
            case String s -> {
                try {
                    yield Double.parseDouble(s.trim());
                } catch (NumberFormatException e) {
                    throw wrong(idx, "a number", v);
                }
            }
            default -> throw wrong(idx, "a number", v);
        };
    }

    public double getDouble(String name) {
        return getDouble(indexOf(name));
    }

    /** Text, or any value as text (bytes as UTF-8); null for NULL. */
    public String getString(int idx) {
        Object v = getObject(idx);
        return switch (v) {
            case null -> null;
            case String s -> s;
            case byte[] b -> new String(b, StandardCharsets.UTF_8);
            case BigDecimal d -> d.toPlainString();
            default -> v.toString();
        };
    }

    public String getString(String name) {
        return getString(indexOf(name));
    }

    public byte[] getBytes(int idx) {
        Object v = getObject(idx);
        return switch (v) {
            case null -> null;
            case byte[] b -> b;
            case String s -> s.getBytes(StandardCharsets.UTF_8);
            default -> throw wrong(idx, "bytes", v);
        };
    }

    public byte[] getBytes(String name) {
        return getBytes(indexOf(name));
    }

    public BigDecimal getBigDecimal(int idx) {
        Object v = getObject(idx);
        return switch (v) {
            case null -> null;
            case BigDecimal d -> d;
            case Long l -> BigDecimal.valueOf(l);
            case BigInteger b -> new BigDecimal(b);
            case Double d -> BigDecimal.valueOf(d);
            case String s -> {
                try {
                    yield new BigDecimal(s.trim());
                } catch (NumberFormatException e) {
                    throw wrong(idx, "a decimal", v);
                }
            }
            default -> throw wrong(idx, "a decimal", v);
        };
    }

    public BigDecimal getBigDecimal(String name) {
        return getBigDecimal(indexOf(name));
    }

    public LocalDate getLocalDate(int idx) {
        Object v = getObject(idx);
        return switch (v) {
            case null -> null;
            case LocalDate d -> d;
            case LocalDateTime t -> t.toLocalDate();
            default -> throw wrong(idx, "a date", v);
        };
    }

    public LocalDate getLocalDate(String name) {
        return getLocalDate(indexOf(name));
    }

    public LocalDateTime getLocalDateTime(int idx) {
        Object v = getObject(idx);
        return switch (v) {
            case null -> null;
            case LocalDateTime t -> t;
            case LocalDate d -> d.atStartOfDay();
            default -> throw wrong(idx, "a date and time", v);
        };
    }

    public LocalDateTime getLocalDateTime(String name) {
        return getLocalDateTime(indexOf(name));
    }

    /** A TIME column (a signed duration up to 838:59:59.999999). */
    public Duration getDuration(int idx) {
        Object v = getObject(idx);
        return switch (v) {
            case null -> null;
            case Duration d -> d;
            default -> throw wrong(idx, "a TIME", v);
        };
    }

    public Duration getDuration(String name) {
        return getDuration(indexOf(name));
    }

    public Object getObject(String name) {
        return getObject(indexOf(name));
    }

    /** Iterates the current result set's rows: each element is this cursor, on the next row. */
    @Override
    public Iterator<Rows> iterator() {
        return new Iterator<>() {
            Boolean ahead;

            @Override
            public boolean hasNext() {
                if (ahead == null) {
                    ahead = Rows.this.next();
                }
                return ahead;
            }

            @Override
            public Rows next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                ahead = null;
                return Rows.this;
            }
        };
    }

    public boolean isClosed() {
        return state.freed;
    }

    @Override
    public void close() {
        cleanable.clean();
    }
}
