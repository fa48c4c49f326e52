package dev.staunch.jdbc;

import dev.staunch.Rows;
import dev.staunch.StaunchException;
import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.sql.SQLSyntaxErrorException;
import java.sql.SQLType;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Calendar;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@link java.sql.CallableStatement} for {@code CALL proc(?, ...)} and
 * {@code {? = call func(?, ...)}}, run on the client side: a parameter given
 * to {@link #registerOutParameter} is passed to the procedure as a session
 * variable ({@code @_staunch_outN}), set first from its bound value when it
 * also has one (INOUT); after the call one {@code SELECT} reads the variables
 * back. IN values (and INOUT ones, in the {@code SET}) travel bound, as in a
 * {@link java.sql.PreparedStatement}. The procedure's own result sets are the
 * statement's results ({@link #getResultSet}, {@link #getMoreResults}). A
 * function call is {@code SELECT func(?, ...)}: parameter 1 is its value.
 * A parameter can also be named (the {@code String} overloads), as MariaDB
 * Connector/J names them: the routine's parameter of that name, compared
 * without case, at its position in {@code information_schema.PARAMETERS}
 * (read once per statement); a function's value, position 0, has no name.
 */
public class StaunchCallableStatement extends UnsupportedCallableStatement {
    private static final Pattern FUNCTION = Pattern.compile(
            "(?is)\\s*\\{?\\s*\\?\\s*=\\s*call\\s+([^(\\s]+)\\s*(\\(.*\\))?\\s*}?\\s*;?\\s*");
    private static final Pattern PROCEDURE = Pattern.compile("(?is)\\s*\\{?\\s*(call\\s+[^}]*?)\\s*}?\\s*;?\\s*");
    /** The routine's name after CALL: {@code name}, {@code db.name}, either part in backquotes. */
    private static final Pattern ROUTINE = Pattern.compile(
            "(?s)\\s*(?:call\\s+)?((?:`(?:[^`]|``)*`|[^`\\s(.]+)(?:\\s*\\.\\s*(?:`(?:[^`]|``)*`|[^`\\s(.]+))?)\\s*(?:\\(.*)?",
            Pattern.CASE_INSENSITIVE);

    /** Function call syntax: the JDBC parameter 1 is the return value, the SQL's placeholders are 2..n. */
    private final boolean function;
    /** The JDBC indexes (from 1) registered as OUT (or INOUT, when also set). */
    private final boolean[] out;
    /** The OUT values of the last execution, as a one-row result set; null before. */
    private StaunchResultSet outValues;
    /** For each JDBC index, its column in {@link #outValues} (from 1), or 0. */
    private int[] outColumn;
    private boolean lastWasNull;
    /** The routine as written in the call ({@code name} or {@code db.name}). */
    private final String routine;
    /** The routine's parameter names by position (a function's value first, null), read on first use. */
    private List<String> names;

    private StaunchCallableStatement(StaunchConnection connection, String sql, String routine, boolean function)
            throws SQLException {
        super(connection, sql);
        this.function = function;
        this.routine = routine;
        this.out = new boolean[paramCount + (function ? 1 : 0)];
    }

    /** Parses the CALL syntax JDBC allows: {@code [{]call p(...)[}]} or {@code {? = call f(...)}}. */
    static StaunchCallableStatement of(StaunchConnection connection, String sql) throws SQLException {
        if (sql == null) {
            throw new SQLNonTransientException("sql must not be null", "HY009");
        }
        Matcher f = FUNCTION.matcher(sql);
        if (f.matches()) {
            String args = f.group(2) == null ? "()" : f.group(2);
            return new StaunchCallableStatement(connection, "SELECT " + f.group(1) + args, f.group(1), true);
        }
        Matcher p = PROCEDURE.matcher(sql);
        if (p.matches()) {
            Matcher r = ROUTINE.matcher(p.group(1));
            return new StaunchCallableStatement(connection, p.group(1), r.matches() ? r.group(1) : null, false);
        }
        throw new SQLNonTransientException("prepareCall takes \"CALL proc(?, ...)\", \"{call proc(?, ...)}\" or "
                + "\"{? = call func(?, ...)}\", not: " + sql, "42000");
    }

    private int total() {
        return out.length;
    }

    private void checkIndex(int i) throws SQLException {
        open();
        if (i < 1 || i > total()) {
            throw new SQLNonTransientException("parameter index " + i + " is not in 1.." + total()
                    + " (the call has " + total() + " parameters)", "07009");
        }
    }

    // ---- registering OUT parameters --------------------------------------

    @Override
    public void registerOutParameter(int i, int sqlType) throws SQLException {
        checkIndex(i);
        if (function && i != 1) {
            throw new SQLNonTransientException("parameter " + i + " of a function call is IN: only parameter 1 "
                    + "(the function's value) is OUT", "07009");
        }
        out[i - 1] = true;
    }

    @Override
    public void registerOutParameter(int i, int sqlType, int scale) throws SQLException {
        registerOutParameter(i, sqlType);
    }

    @Override
    public void registerOutParameter(int i, int sqlType, String typeName) throws SQLException {
        registerOutParameter(i, sqlType);
    }

    @Override
    public void registerOutParameter(int i, SQLType sqlType) throws SQLException {
        registerOutParameter(i, 0);
    }

    @Override
    public void registerOutParameter(int i, SQLType sqlType, int scale) throws SQLException {
        registerOutParameter(i, 0);
    }

    @Override
    public void registerOutParameter(int i, SQLType sqlType, String typeName) throws SQLException {
        registerOutParameter(i, 0);
    }

    // ---- binding: the PreparedStatement setters, shifted by one for a function call ----
    // (setBlob/setClob of a stream and setNCharacterStream are not overridden: the PreparedStatement
    // ones call setBinaryStream/setCharacterStream, which shift; shifting here too would shift twice.)

    private int shifted(int i) throws SQLException {
        if (!function) {
            return i;
        }
        if (i == 1) {
            throw new SQLNonTransientException("parameter 1 of a function call is its value (OUT): it takes no value",
                    "07009");
        }
        return i - 1;
    }

    @Override public void setNull(int i, int t) throws SQLException { super.setNull(shifted(i), t); }
    @Override public void setNull(int i, int t, String n) throws SQLException { super.setNull(shifted(i), t, n); }
    @Override public void setBoolean(int i, boolean x) throws SQLException { super.setBoolean(shifted(i), x); }
    @Override public void setByte(int i, byte x) throws SQLException { super.setByte(shifted(i), x); }
    @Override public void setShort(int i, short x) throws SQLException { super.setShort(shifted(i), x); }
    @Override public void setInt(int i, int x) throws SQLException { super.setInt(shifted(i), x); }
    @Override public void setLong(int i, long x) throws SQLException { super.setLong(shifted(i), x); }
    @Override public void setFloat(int i, float x) throws SQLException { super.setFloat(shifted(i), x); }
    @Override public void setDouble(int i, double x) throws SQLException { super.setDouble(shifted(i), x); }
    @Override public void setBigDecimal(int i, BigDecimal x) throws SQLException { super.setBigDecimal(shifted(i), x); }
    @Override public void setString(int i, String x) throws SQLException { super.setString(shifted(i), x); }
    @Override public void setNString(int i, String x) throws SQLException { super.setNString(shifted(i), x); }
    @Override public void setBytes(int i, byte[] x) throws SQLException { super.setBytes(shifted(i), x); }
    @Override public void setDate(int i, Date x) throws SQLException { super.setDate(shifted(i), x); }
    @Override public void setTime(int i, Time x) throws SQLException { super.setTime(shifted(i), x); }
    @Override public void setTimestamp(int i, Timestamp x) throws SQLException { super.setTimestamp(shifted(i), x); }
    @Override public void setDate(int i, Date x, Calendar c) throws SQLException { super.setDate(shifted(i), x, c); }
    @Override public void setTime(int i, Time x, Calendar c) throws SQLException { super.setTime(shifted(i), x, c); }
    @Override public void setTimestamp(int i, Timestamp x, Calendar c) throws SQLException { super.setTimestamp(shifted(i), x, c); }
    @Override public void setObject(int i, Object x) throws SQLException { super.setObject(shifted(i), x); }
    @Override public void setObject(int i, Object x, int t) throws SQLException { super.setObject(shifted(i), x, t); }
    @Override public void setObject(int i, Object x, int t, int s) throws SQLException { super.setObject(shifted(i), x, t, s); }
    @Override public void setObject(int i, Object x, SQLType t) throws SQLException { super.setObject(shifted(i), x, t); }
    @Override public void setObject(int i, Object x, SQLType t, int s) throws SQLException { super.setObject(shifted(i), x, t, s); }
    @Override public void setBinaryStream(int i, InputStream x) throws SQLException { super.setBinaryStream(shifted(i), x); }
    @Override public void setBinaryStream(int i, InputStream x, int n) throws SQLException { super.setBinaryStream(shifted(i), x, n); }
    @Override public void setBinaryStream(int i, InputStream x, long n) throws SQLException { super.setBinaryStream(shifted(i), x, n); }
    @Override public void setAsciiStream(int i, InputStream x) throws SQLException { super.setAsciiStream(shifted(i), x); }
    @Override public void setAsciiStream(int i, InputStream x, int n) throws SQLException { super.setAsciiStream(shifted(i), x, n); }
    @Override public void setAsciiStream(int i, InputStream x, long n) throws SQLException { super.setAsciiStream(shifted(i), x, n); }
    @Override public void setCharacterStream(int i, Reader x) throws SQLException { super.setCharacterStream(shifted(i), x); }
    @Override public void setCharacterStream(int i, Reader x, int n) throws SQLException { super.setCharacterStream(shifted(i), x, n); }
    @Override public void setCharacterStream(int i, Reader x, long n) throws SQLException { super.setCharacterStream(shifted(i), x, n); }
    @Override public void setBlob(int i, Blob x) throws SQLException { super.setBlob(shifted(i), x); }
    @Override public void setClob(int i, Clob x) throws SQLException { super.setClob(shifted(i), x); }

    // ---- parameters by name ---------------------------------------------

    /** One part of a routine name, its backquotes removed. */
    private static String unquote(String part) {
        part = part.trim();
        if (part.length() >= 2 && part.startsWith("`") && part.endsWith("`")) {
            return part.substring(1, part.length() - 1).replace("``", "`");
        }
        return part;
    }

    /** The routine's parameter names in order, from information_schema (as Connector/J reads them). */
    private List<String> names() throws SQLException {
        if (names != null) {
            return names;
        }
        if (routine == null) {
            throw new SQLNonTransientException("parameters by name need a routine name after CALL: " + sql, "42000");
        }
        int dot = -1;
        boolean quoted = false;
        for (int k = 0; k < routine.length(); k++) {
            char ch = routine.charAt(k);
            if (ch == '`') {
                quoted = !quoted;
            } else if (ch == '.' && !quoted) {
                dot = k;
                break;
            }
        }
        String db = dot < 0 ? null : unquote(routine.substring(0, dot));
        String name = unquote(dot < 0 ? routine : routine.substring(dot + 1));
        // The names bound, not written into the text: the library is the one writer of literals.
        String query = "SELECT PARAMETER_NAME FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = "
                + (db == null ? "DATABASE()" : "?") + " AND SPECIFIC_NAME = ?"
                + " AND ROUTINE_TYPE = '" + (function ? "FUNCTION" : "PROCEDURE") + "' ORDER BY ORDINAL_POSITION";
        Object[] args = db == null ? new Object[] {name} : new Object[] {db, name};
        List<String> found = new ArrayList<>();
        try (Rows r = connection.conn.query(query, args)) {
            while (r.next()) {
                Object v = r.getObject(0);
                found.add(v == null ? null : v.toString());
            }
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
        names = found;
        return names;
    }

    /** The JDBC index of the parameter named {@code name}: its position among the routine's parameters. */
    private int index(String name) throws SQLException {
        open();
        if (name == null) {
            throw new SQLSyntaxErrorException("parameter name cannot be null", "42000");
        }
        List<String> all = names();
        for (int k = 0; k < all.size(); k++) {
            if (name.equalsIgnoreCase(all.get(k))) {
                if (all.size() != total()) {
                    throw new SQLNonTransientException("parameter name " + name + ": a name maps to the routine's "
                            + "parameter of that position, so every parameter of " + routine + " must be a ? "
                            + "in the call (it has " + (function ? all.size() - 1 : all.size()) + ", the call "
                            + (function ? total() - 1 : total()) + ")", "07009");
                }
                return k + 1;
            }
        }
        List<String> named = new ArrayList<>();
        for (String n : all) {
            if (n != null) {
                named.add(n);
            }
        }
        throw new SQLSyntaxErrorException("parameter name " + name + " not found (" + routine
                + (named.isEmpty() ? " has no named parameters" : "'s parameters: " + String.join(", ", named)) + ")",
                "42000");
    }

    @Override public void registerOutParameter(String n, int t) throws SQLException { registerOutParameter(index(n), t); }
    @Override public void registerOutParameter(String n, int t, int scale) throws SQLException { registerOutParameter(index(n), t, scale); }
    @Override public void registerOutParameter(String n, int t, String type) throws SQLException { registerOutParameter(index(n), t, type); }
    @Override public void registerOutParameter(String n, SQLType t) throws SQLException { registerOutParameter(index(n), t); }
    @Override public void registerOutParameter(String n, SQLType t, int scale) throws SQLException { registerOutParameter(index(n), t, scale); }
    @Override public void registerOutParameter(String n, SQLType t, String type) throws SQLException { registerOutParameter(index(n), t, type); }

    @Override public void setNull(String n, int t) throws SQLException { setNull(index(n), t); }
    @Override public void setNull(String n, int t, String type) throws SQLException { setNull(index(n), t, type); }
    @Override public void setBoolean(String n, boolean x) throws SQLException { setBoolean(index(n), x); }
    @Override public void setByte(String n, byte x) throws SQLException { setByte(index(n), x); }
    @Override public void setShort(String n, short x) throws SQLException { setShort(index(n), x); }
    @Override public void setInt(String n, int x) throws SQLException { setInt(index(n), x); }
    @Override public void setLong(String n, long x) throws SQLException { setLong(index(n), x); }
    @Override public void setFloat(String n, float x) throws SQLException { setFloat(index(n), x); }
    @Override public void setDouble(String n, double x) throws SQLException { setDouble(index(n), x); }
    @Override public void setBigDecimal(String n, BigDecimal x) throws SQLException { setBigDecimal(index(n), x); }
    @Override public void setString(String n, String x) throws SQLException { setString(index(n), x); }
    @Override public void setNString(String n, String x) throws SQLException { setNString(index(n), x); }
    @Override public void setBytes(String n, byte[] x) throws SQLException { setBytes(index(n), x); }
    @Override public void setDate(String n, Date x) throws SQLException { setDate(index(n), x); }
    @Override public void setTime(String n, Time x) throws SQLException { setTime(index(n), x); }
    @Override public void setTimestamp(String n, Timestamp x) throws SQLException { setTimestamp(index(n), x); }
    @Override public void setDate(String n, Date x, Calendar c) throws SQLException { setDate(index(n), x, c); }
    @Override public void setTime(String n, Time x, Calendar c) throws SQLException { setTime(index(n), x, c); }
    @Override public void setTimestamp(String n, Timestamp x, Calendar c) throws SQLException { setTimestamp(index(n), x, c); }
    @Override public void setObject(String n, Object x) throws SQLException { setObject(index(n), x); }
    @Override public void setObject(String n, Object x, int t) throws SQLException { setObject(index(n), x, t); }
    @Override public void setObject(String n, Object x, int t, int s) throws SQLException { setObject(index(n), x, t, s); }
    @Override public void setObject(String n, Object x, SQLType t) throws SQLException { setObject(index(n), x, t); }
    @Override public void setObject(String n, Object x, SQLType t, int s) throws SQLException { setObject(index(n), x, t, s); }
    @Override public void setBinaryStream(String n, InputStream x) throws SQLException { setBinaryStream(index(n), x); }
    @Override public void setBinaryStream(String n, InputStream x, int len) throws SQLException { setBinaryStream(index(n), x, len); }
    @Override public void setBinaryStream(String n, InputStream x, long len) throws SQLException { setBinaryStream(index(n), x, len); }
    @Override public void setAsciiStream(String n, InputStream x) throws SQLException { setAsciiStream(index(n), x); }
    @Override public void setAsciiStream(String n, InputStream x, int len) throws SQLException { setAsciiStream(index(n), x, len); }
    @Override public void setAsciiStream(String n, InputStream x, long len) throws SQLException { setAsciiStream(index(n), x, len); }
    @Override public void setCharacterStream(String n, Reader x) throws SQLException { setCharacterStream(index(n), x); }
    @Override public void setCharacterStream(String n, Reader x, int len) throws SQLException { setCharacterStream(index(n), x, len); }
    @Override public void setCharacterStream(String n, Reader x, long len) throws SQLException { setCharacterStream(index(n), x, len); }
    @Override public void setNCharacterStream(String n, Reader x) throws SQLException { setNCharacterStream(index(n), x); }
    @Override public void setNCharacterStream(String n, Reader x, long len) throws SQLException { setNCharacterStream(index(n), x, len); }
    @Override public void setBlob(String n, Blob x) throws SQLException { setBlob(index(n), x); }
    @Override public void setBlob(String n, InputStream x) throws SQLException { setBlob(index(n), x); }
    @Override public void setBlob(String n, InputStream x, long len) throws SQLException { setBlob(index(n), x, len); }
    @Override public void setClob(String n, Clob x) throws SQLException { setClob(index(n), x); }
    @Override public void setClob(String n, Reader x) throws SQLException { setClob(index(n), x); }
    @Override public void setClob(String n, Reader x, long len) throws SQLException { setClob(index(n), x, len); }

    @Override public String getString(String n) throws SQLException { return getString(index(n)); }
    @Override public String getNString(String n) throws SQLException { return getNString(index(n)); }
    @Override public boolean getBoolean(String n) throws SQLException { return getBoolean(index(n)); }
    @Override public byte getByte(String n) throws SQLException { return getByte(index(n)); }
    @Override public short getShort(String n) throws SQLException { return getShort(index(n)); }
    @Override public int getInt(String n) throws SQLException { return getInt(index(n)); }
    @Override public long getLong(String n) throws SQLException { return getLong(index(n)); }
    @Override public float getFloat(String n) throws SQLException { return getFloat(index(n)); }
    @Override public double getDouble(String n) throws SQLException { return getDouble(index(n)); }
    @Override public BigDecimal getBigDecimal(String n) throws SQLException { return getBigDecimal(index(n)); }
    @Override public byte[] getBytes(String n) throws SQLException { return getBytes(index(n)); }
    @Override public Date getDate(String n) throws SQLException { return getDate(index(n)); }
    @Override public Time getTime(String n) throws SQLException { return getTime(index(n)); }
    @Override public Timestamp getTimestamp(String n) throws SQLException { return getTimestamp(index(n)); }
    @Override public Date getDate(String n, Calendar c) throws SQLException { return getDate(index(n), c); }
    @Override public Time getTime(String n, Calendar c) throws SQLException { return getTime(index(n), c); }
    @Override public Timestamp getTimestamp(String n, Calendar c) throws SQLException { return getTimestamp(index(n), c); }
    @Override public Object getObject(String n) throws SQLException { return getObject(index(n)); }
    @Override public Object getObject(String n, Map<String, Class<?>> m) throws SQLException { return getObject(index(n), m); }
    @Override public <T> T getObject(String n, Class<T> type) throws SQLException { return getObject(index(n), type); }
    @Override public Blob getBlob(String n) throws SQLException { return getBlob(index(n)); }
    @Override public Clob getClob(String n) throws SQLException { return getClob(index(n)); }
    @Override public NClob getNClob(String n) throws SQLException { return getNClob(index(n)); }
    @Override public Reader getCharacterStream(String n) throws SQLException { return getCharacterStream(index(n)); }
    @Override public Reader getNCharacterStream(String n) throws SQLException { return getNCharacterStream(index(n)); }

    // ---- running --------------------------------------------------------

    /** A call reads its answer whole whatever the fetch size: its OUT values are read after it. */
    @Override
    boolean streams() {
        return false;
    }

    private static String var(int jdbcIndex) {
        return "@_staunch_out" + jdbcIndex;
    }

    /** Runs the call: SET of the INOUT values, the CALL (or SELECT), then the read-back of the OUT ones. */
    private boolean call(Mode mode) throws SQLException {
        open();
        outValues = null;
        outColumn = null;
        if (function) {
            if (!out[0]) {
                throw new SQLNonTransientException("a function call needs registerOutParameter(1, ...) for its value",
                        "07001");
            }
            boolean rs = run(sql, bound(), Mode.QUERY);
            ResultSet r = getResultSet();
            List<Object[]> row = new ArrayList<>();
            if (rs && r.next()) {
                // The natural value, as a procedure's OUT values are kept: getObject's JDBC type
                // (an Integer, a java.sql.Date) is chosen again when read, and every getter reads it.
                row.add(new Object[] {((StaunchResultSet) r).natural(1)});
            }
            List<Rows.Column> cols = List.of(((StaunchResultSet) r).column(1));
            r.close();
            keep(cols, row, new int[] {1});
            return false;
        }
        List<Integer> at = connection.placeholders(sql);
        StringBuilder call = new StringBuilder();
        StringBuilder set = new StringBuilder();
        List<Object> inValues = new ArrayList<>();
        List<Object> setValues = new ArrayList<>();
        List<Integer> outs = new ArrayList<>();
        int from = 0;
        for (int k = 0; k < paramCount; k++) {
            int pos = at.get(k);
            call.append(sql, from, pos);
            from = pos + 1;
            if (out[k]) {
                call.append(var(k + 1));
                outs.add(k + 1);
                if (this.set[k]) {
                    set.append(set.length() == 0 ? "SET " : ", ").append(var(k + 1)).append(" = ?");
                    setValues.add(params[k]);
                }
            } else {
                if (!this.set[k]) {
                    throw new SQLNonTransientException("parameter " + (k + 1) + " of " + paramCount
                            + " is neither set nor registered as OUT", "07001");
                }
                call.append('?');
                inValues.add(params[k]);
            }
        }
        call.append(sql, from, sql.length());
        if (!outs.isEmpty()) {
            // OUT-only ones start NULL, not with what an earlier call left in the session.
            for (int j : outs) {
                if (!this.set[j - 1]) {
                    set.append(set.length() == 0 ? "SET " : ", ").append(var(j)).append(" = NULL");
                }
            }
            run(set.toString(), setValues.toArray(), Mode.UPDATE);
        }
        boolean first = run(call.toString(), inValues.toArray(), mode == Mode.QUERY ? Mode.QUERY : Mode.ANY);
        if (!outs.isEmpty()) {
            StringBuilder read = new StringBuilder("SELECT ");
            for (int j = 0; j < outs.size(); j++) {
                read.append(j == 0 ? "" : ", ").append(var(outs.get(j)));
            }
            int[] columnOf = new int[total()];
            for (int j = 0; j < outs.size(); j++) {
                columnOf[outs.get(j) - 1] = j + 1;
            }
            try (Rows r = connection.conn.queryText(read.toString())) {
                List<Object[]> row = new ArrayList<>();
                if (r.next()) {
                    Object[] v = new Object[outs.size()];
                    for (int j = 0; j < v.length; j++) {
                        v[j] = r.getObject(j);
                    }
                    row.add(v);
                }
                keep(r.columns(), row, columnOf);
            } catch (StaunchException e) {
                throw SqlErrors.of(e);
            }
        }
        return first;
    }

    private void keep(List<Rows.Column> cols, List<Object[]> row, int[] columnOf) throws SQLException {
        outValues = new StaunchResultSet(null, new RowSource.Listed(cols, row), 0);
        if (!outValues.next()) {
            throw new SQLNonTransientException("the call's OUT values could not be read back", "HY000");
        }
        outColumn = columnOf;
    }

    @Override
    public ResultSet executeQuery() throws SQLException {
        call(Mode.QUERY);
        return getResultSet();
    }

    @Override
    public long executeLargeUpdate() throws SQLException {
        call(Mode.UPDATE);
        return Math.max(0, getLargeUpdateCount());
    }

    @Override
    public boolean execute() throws SQLException {
        return call(Mode.ANY);
    }

    @Override
    public void addBatch() throws SQLException {
        throw Errors.unsupported("CallableStatement.addBatch");
    }

    // ---- reading OUT parameters -------------------------------------------

    private int col(int i) throws SQLException {
        checkIndex(i);
        if (!out[i - 1]) {
            throw new SQLNonTransientException("parameter " + i + " was not registered with registerOutParameter",
                    "07009");
        }
        if (outValues == null || outColumn[i - 1] == 0) {
            throw new SQLNonTransientException("no OUT value for parameter " + i + ": execute the call first", "HY010");
        }
        return outColumn[i - 1];
    }

    /** Reads OUT parameter {@code i} through the one-row result set of OUT values, noting NULL. */
    private interface Getter<T> {
        T get(StaunchResultSet rs, int column) throws SQLException;
    }

    private <T> T read(int i, Getter<T> g) throws SQLException {
        int c = col(i);
        T v = g.get(outValues, c);
        lastWasNull = outValues.wasNull();
        return v;
    }

    @Override
    public boolean wasNull() throws SQLException {
        open();
        return lastWasNull;
    }

    @Override public String getString(int i) throws SQLException { return read(i, StaunchResultSet::getString); }
    @Override public String getNString(int i) throws SQLException { return read(i, StaunchResultSet::getNString); }
    @Override public boolean getBoolean(int i) throws SQLException { return read(i, StaunchResultSet::getBoolean); }
    @Override public byte getByte(int i) throws SQLException { return read(i, StaunchResultSet::getByte); }
    @Override public short getShort(int i) throws SQLException { return read(i, StaunchResultSet::getShort); }
    @Override public int getInt(int i) throws SQLException { return read(i, StaunchResultSet::getInt); }
    @Override public long getLong(int i) throws SQLException { return read(i, StaunchResultSet::getLong); }
    @Override public float getFloat(int i) throws SQLException { return read(i, StaunchResultSet::getFloat); }
    @Override public double getDouble(int i) throws SQLException { return read(i, StaunchResultSet::getDouble); }
    @Override public BigDecimal getBigDecimal(int i) throws SQLException { return read(i, StaunchResultSet::getBigDecimal); }

    @Deprecated
    @Override
    @SuppressWarnings("deprecation")
    public BigDecimal getBigDecimal(int i, int scale) throws SQLException {
        return read(i, (rs, c) -> rs.getBigDecimal(c, scale));
    }

    @Override public byte[] getBytes(int i) throws SQLException { return read(i, StaunchResultSet::getBytes); }
    @Override public Date getDate(int i) throws SQLException { return read(i, StaunchResultSet::getDate); }
    @Override public Time getTime(int i) throws SQLException { return read(i, StaunchResultSet::getTime); }
    @Override public Timestamp getTimestamp(int i) throws SQLException { return read(i, StaunchResultSet::getTimestamp); }
    @Override public Date getDate(int i, Calendar cal) throws SQLException { return read(i, (rs, c) -> rs.getDate(c, cal)); }
    @Override public Time getTime(int i, Calendar cal) throws SQLException { return read(i, (rs, c) -> rs.getTime(c, cal)); }
    @Override public Timestamp getTimestamp(int i, Calendar cal) throws SQLException { return read(i, (rs, c) -> rs.getTimestamp(c, cal)); }
    @Override public Object getObject(int i) throws SQLException { return read(i, StaunchResultSet::getObject); }
    @Override public Object getObject(int i, Map<String, Class<?>> m) throws SQLException { return read(i, (rs, c) -> rs.getObject(c, m)); }
    @Override public <T> T getObject(int i, Class<T> type) throws SQLException { return read(i, (rs, c) -> rs.getObject(c, type)); }
    @Override public Blob getBlob(int i) throws SQLException { return read(i, StaunchResultSet::getBlob); }
    @Override public Clob getClob(int i) throws SQLException { return read(i, StaunchResultSet::getClob); }
    @Override public NClob getNClob(int i) throws SQLException { return read(i, StaunchResultSet::getNClob); }
    @Override public Reader getCharacterStream(int i) throws SQLException { return read(i, StaunchResultSet::getCharacterStream); }
    @Override public Reader getNCharacterStream(int i) throws SQLException { return read(i, StaunchResultSet::getNCharacterStream); }

    @Override
    public String toString() {
        return "StaunchCallableStatement[" + sql + "]";
    }
}
