package dev.staunch;

import dev.staunch.internal.Abi;
import dev.staunch.internal.Call;
import dev.staunch.internal.Cleanup;
import dev.staunch.internal.Mem;
import dev.staunch.internal.Native;
import dev.staunch.internal.Poller;
import dev.staunch.internal.Values;
import dev.staunch.internal.VirtualThreads;
import java.lang.ref.Cleaner;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.function.Function;

/**
 * The answer of a query: one or more result sets, each a cursor over rows.
 * {@link #next()} moves to the next row; the getters read the current row by
 * column index (from 0) or name. Not thread-safe. Close it (a Cleaner frees
 * one that became unreachable without it). A buffered answer stays valid
 * after its connection is closed.
 */
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

    private static final long VSZ = Abi.VALUE_SIZE;
    private static final int BATCH_ROWS = 64;

    private final State state;
    private final Cleaner.Cleanable cleanable;
    private int ncols;
    private long rowsInBatch;
    private long rowInBatch = -1;
    private boolean endOfSet;
    private List<Column> columns;
    private boolean lastWasNull;
    /**
     * Where {@link Native#gathers} (the JNI path): the current batch's text,
     * decimal and byte values, copied in one call when the first of them is
     * read, and where value k of the batch starts in it; null to read each
     * value where it is.
     */
    private byte[] gathered;
    private int[] gatheredAt;
    private boolean gatherTried;

    private static final class State implements Runnable {
        final long handle;
        Mem.Seg values = Mem.Seg.NULL;
        long capacity;
        volatile boolean freed;

        State(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            if (!freed) {
                freed = true;
                Native.rows_free(handle);
                Mem.free(values);
                values = Mem.Seg.NULL;
            }
        }
    }

    Rows(long handle) {
        this.state = new State(handle);
        this.cleanable = Cleanup.CLEANER.register(this, state);
        startSet();
    }

    private void startSet() {
        gathered = null;
        gatherTried = false;
        ncols = (int) Native.rows_column_count(state.handle);
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
                Mem.Seg info = a.allocate(Abi.COLUMN_INFO_SIZE);
                Mem.Seg err = a.errSlot();
                for (int i = 0; i < ncols; i++) {
                    info.putLong(0, Abi.COLUMN_INFO_SIZE);
                    Call.check(Native.rows_column_info(state.handle, i, info.address(), err.address()), err);
                    cs.add(new Column(str(info, Abi.CI_NAME), info.getInt(Abi.CI_COLUMN_TYPE),
                            info.getInt(Abi.CI_TYPE_CODE), info.getInt(Abi.CI_FLAGS),
                            info.getInt(Abi.CI_CHARSET), info.getInt(Abi.CI_LENGTH),
                            info.getInt(Abi.CI_DECIMALS), str(info, Abi.CI_ORG_NAME), str(info, Abi.CI_TABLE),
                            str(info, Abi.CI_ORG_TABLE), str(info, Abi.CI_SCHEMA)));
                }
            }
            columns = List.copyOf(cs);
        }
        return columns;
    }

    private static String str(Mem.Seg info, long field) {
        return Native.string(info.getAddress(field), info.getLong(field + 8));
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
                + cs.stream().map(Column::name).collect(java.util.stream.Collectors.toList()) + ")", 0, "");
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
        gathered = null;
        gatherTried = false;
        try (Mem.Scope a = new Mem.Scope()) {
            if (state.values.address() == 0) {
                Mem.Seg cnt = a.allocate(8);
                long rows = BATCH_ROWS;
                if (Native.rows_row_count(state.handle, cnt.address(), 0) == 0) {
                    rows = Math.max(1, Math.min(BATCH_ROWS, cnt.getLong(0)));
                }
                state.capacity = rows * ncols;
                state.values = Mem.malloc(state.capacity * VSZ);
            } else if (state.capacity < ncols) {
                Mem.free(state.values);
                state.values = Mem.Seg.NULL;
                state.capacity = (long) BATCH_ROWS * ncols;
                state.values = Mem.malloc(state.capacity * VSZ);
            }
            Mem.Seg n = a.allocate(8);
            Mem.Seg err = a.errSlot();
            Poller poller;
            if (VirtualThreads.current() && (poller = Poller.get()) != null) {
                fetchParked(poller, a, n, err);
            } else {
                Call.check(Native.rows_fetch(state.handle, state.values.address(), state.capacity, n.address(),
                        err.address()), err);
            }
            rowsInBatch = n.getLong(0);
            rowInBatch = 0;
            if (rowsInBatch == 0) {
                endOfSet = true;
                rowInBatch = -1;
                return false;
            }
            return true;
        }
    }

    /**
     * The longest a virtual thread parks for a streamed answer's next rows
     * before it waits in the library instead. The library bounds a
     * statement's waits (its time limit, the liveness check) only while one
     * of its calls waits, so a park may not last as long as a stalled server.
     */
    private static final long STREAM_PARK_NS = 1_000_000_000L;

    /**
     * {@code staunch_rows_fetch} on a virtual thread, which must not hold its
     * carrier while rows are on their way: reads what has arrived, and parks
     * on the connection's socket while the next row has not (up to
     * {@link #STREAM_PARK_NS} a wait). Where no socket can announce the rows
     * (a prepared statement's, a TLS session's), or the server has been silent
     * that long, the fetch waits in the library, bounded as the statement is.
     */
    private void fetchParked(Poller poller, Mem.Scope a, Mem.Seg n, Mem.Seg err) {
        Mem.Seg waits = a.allocate(8);
        Mem.Seg fd = a.allocate(8);
        Mem.Seg connId = a.allocate(8);
        while (true) {
            waits.putLong(0, 0);
            Call.check(Native.rows_fetch_ready(state.handle, state.values.address(), state.capacity, n.address(),
                    waits.address(), err.address()), err);
            if (n.getLong(0) > 0 || !waits.getBoolean(0)) {
                return; // rows, or the set's end
            }
            fd.putInt(0, -1);
            Call.check(Native.rows_wait_fd(state.handle, fd.address(), connId.address(), err.address()), err);
            int wait = fd.getInt(0);
            if (wait < 0 || !poller.awaitReadable(wait, STREAM_PARK_NS)) {
                Call.check(Native.rows_fetch(state.handle, state.values.address(), state.capacity, n.address(),
                        err.address()), err);
                return;
            }
        }
    }

    /**
     * A batch's variable-length values are gathered in one copy when they take
     * at most this many bytes in all: about 1 kB a row, where copying a value
     * nobody reads costs about what the crossing for one that is read saves.
     * Past it, each value read is copied alone (a large answer read in part,
     * such as a streamed one, copies only what is read).
     */
    private static final long GATHER_MAX = 64 * 1024;

    /**
     * Copies the batch's text, decimal and byte values in one call when there
     * are several and together they are small (see {@link #GATHER_MAX}).
     */
    private void gather() {
        gatherTried = true;
        int count = (int) (rowsInBatch * ncols);
        if (gatheredAt == null || gatheredAt.length < count) {
            gatheredAt = new int[(int) state.capacity];
        }
        Mem.Seg v = state.values;
        long total = 0;
        int cells = 0;
        for (int k = 0; k < count; k++) {
            long o = k * VSZ;
            int type = v.getInt(o + Abi.V_TYPE);
            if (type == DECIMAL || type == TEXT || type == BYTES) {
                gatheredAt[k] = (int) total;
                total += v.getLong(o + Abi.V_LEN);
                cells++;
                if (total > GATHER_MAX) {
                    return;
                }
            }
        }
        if (cells > 1 && total > 0) {
            gathered = Native.gather(v.address(), count, (int) total);
        }
    }

    /** Moves to the next result set (of a CALL or multi-statement text); false after the last. */
    public boolean nextResult() {
        open();
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg has = a.allocate(8);
            Mem.Seg err = a.errSlot();
            Call.check(Native.rows_next_result(state.handle, has.address(), err.address()), err);
            boolean more = has.getBoolean(0);
            if (more) {
                startSet();
            } else {
                endOfSet = true;
                rowInBatch = -1;
                rowsInBatch = 0;
            }
            return more;
        }
    }

    /** Rows affected by the current result set's statement. */
    public long affectedRows() {
        open();
        return Native.rows_affected_rows(state.handle);
    }

    public long lastInsertId() {
        open();
        return Native.rows_last_insert_id(state.handle);
    }

    public int warnings() {
        open();
        return Native.rows_warnings(state.handle);
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
        return state.values.getInt(at(idx) + Abi.V_TYPE);
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
        Mem.Seg v = state.values;
        int type = v.getInt(o + Abi.V_TYPE);
        lastWasNull = false;
        Object r;
        switch (type) {
            case NULL:
                r = null;
                break;
            case INT:
                r = v.getLong(o + Abi.V_I64);
                break;
            case UINT: {
                long u = v.getLong(o + Abi.V_U64);
                r = u >= 0 ? (Object) u : new BigInteger(Long.toUnsignedString(u));
                break;
            }
            case DOUBLE:
                r = v.getDouble(o + Abi.V_F64);
                break;
            case DECIMAL:
                r = new BigDecimal(text(v, o));
                break;
            case TEXT:
                r = text(v, o);
                break;
            case BYTES:
                r = bytes(v, o);
                break;
            case DATE: {
                long d = o + Abi.V_DATETIME;
                int month = v.getByte(d + Abi.DT_MONTH);
                r = month == 0 ? null : LocalDate.of(v.getShort(d) & 0xFFFF, month, v.getByte(d + Abi.DT_DAY));
                break;
            }
            case DATETIME: {
                long d = o + Abi.V_DATETIME;
                int month = v.getByte(d + Abi.DT_MONTH);
                r = month == 0 ? null : LocalDateTime.of(v.getShort(d) & 0xFFFF, month,
                        v.getByte(d + Abi.DT_DAY), v.getByte(d + Abi.DT_HOUR),
                        v.getByte(d + Abi.DT_MINUTE), v.getByte(d + Abi.DT_SECOND),
                        v.getInt(d + Abi.DT_MICRO) * 1000);
                break;
            }
            case TIME: {
                long t = o + Abi.V_TIME;
                Duration dur = Duration.ofDays(v.getInt(t + Abi.TM_DAYS) & 0xFFFFFFFFL)
                        .plusHours(v.getByte(t + Abi.TM_HOURS))
                        .plusMinutes(v.getByte(t + Abi.TM_MINUTES))
                        .plusSeconds(v.getByte(t + Abi.TM_SECONDS))
                        .plusNanos((v.getInt(t + Abi.TM_MICRO) & 0xFFFFFFFFL) * 1000L);
                r = v.getBoolean(t + Abi.TM_NEG) ? dur.negated() : dur;
                break;
            }
            default:
                throw new StaunchException(Status.WRONG_TYPE, "column " + idx
                        + " has a type (" + type + ") this binding does not know; update the binding", 0, "");
        }
        lastWasNull = r == null;
        return r;
    }

    private String text(Mem.Seg v, long o) {
        if (!gatherTried && Native.gathers()) {
            gather();
        }
        long len = v.getLong(o + Abi.V_LEN);
        if (gathered != null) {
            return new String(gathered, gatheredAt[(int) (o / VSZ)], (int) len, StandardCharsets.UTF_8);
        }
        return Native.string(v.getAddress(o + Abi.V_PTR), len);
    }

    private byte[] bytes(Mem.Seg v, long o) {
        if (!gatherTried && Native.gathers()) {
            gather();
        }
        long len = v.getLong(o + Abi.V_LEN);
        if (gathered != null) {
            int from = gatheredAt[(int) (o / VSZ)];
            return Arrays.copyOfRange(gathered, from, from + (int) len);
        }
        return Native.bytes(v.getAddress(o + Abi.V_PTR), len);
    }

    private StaunchException wrong(int idx, String want, Object got) {
        return new StaunchException(Status.WRONG_TYPE, "column " + idx + " (" + columns().get(idx).name()
                + ") holds a " + (got == null ? "NULL" : got.getClass().getSimpleName()) + ", not " + want, 0, "");
    }

    /** {@link Values}' answer, or its mismatch as this API's error: WRONG_TYPE or OUT_OF_RANGE. */
    private <T> T convert(int idx, String want, Object v, Function<Object, T> to) {
        try {
            return to.apply(v);
        } catch (Values.Mismatch m) {
            if (m.kind() == Values.Kind.TYPE) {
                throw wrong(idx, want, v);
            }
            throw new StaunchException(Status.OUT_OF_RANGE, "column " + idx + ": " + m.getMessage(), 0, "");
        }
    }

    /** An integer column (exact: a DECIMAL or DOUBLE with a fraction, or a value out of range, fails). NULL: 0, see {@link #wasNull()}. */
    public long getLong(int idx) {
        Object v = getObject(idx);
        return v == null ? 0L : convert(idx, "an integer", v, Values::exactLong);
    }

    public long getLong(String name) {
        return getLong(indexOf(name));
    }

    public double getDouble(int idx) {
        Object v = getObject(idx);
        return v == null ? 0.0 : convert(idx, "a number", v, Values::toDouble);
    }

    public double getDouble(String name) {
        return getDouble(indexOf(name));
    }

    /** Text, or any value as text (bytes as UTF-8); null for NULL. */
    public String getString(int idx) {
        Object v = getObject(idx);
        return v == null ? null : Values.string(v);
    }

    public String getString(String name) {
        return getString(indexOf(name));
    }

    public byte[] getBytes(int idx) {
        Object v = getObject(idx);
        return v == null ? null : convert(idx, "bytes", v, Values::bytes);
    }

    public byte[] getBytes(String name) {
        return getBytes(indexOf(name));
    }

    public BigDecimal getBigDecimal(int idx) {
        Object v = getObject(idx);
        return v == null ? null : convert(idx, "a decimal", v, Values::decimal);
    }

    public BigDecimal getBigDecimal(String name) {
        return getBigDecimal(indexOf(name));
    }

    public LocalDate getLocalDate(int idx) {
        Object v = getObject(idx);
        return v == null ? null : convert(idx, "a date", v, Values::date);
    }

    public LocalDate getLocalDate(String name) {
        return getLocalDate(indexOf(name));
    }

    public LocalDateTime getLocalDateTime(int idx) {
        Object v = getObject(idx);
        return v == null ? null : convert(idx, "a date and time", v, Values::dateTime);
    }

    public LocalDateTime getLocalDateTime(String name) {
        return getLocalDateTime(indexOf(name));
    }

    /** A TIME column (a signed duration, in the server's range: up to 838:59:59.999999 either way). */
    public Duration getDuration(int idx) {
        Object v = getObject(idx);
        return v == null ? null : convert(idx, "a TIME", v, Values::duration);
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
        return new Iterator<Rows>() {
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
