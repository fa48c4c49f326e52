package dev.staunch.jdbc;

import dev.staunch.Conn;
import dev.staunch.Rows;
import dev.staunch.StaunchException;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link Statement} over the connection's staunch connection. SQL without
 * parameters goes as text (any statement works, several separated by
 * {@code ;} too). {@link #setQueryTimeout} is the statement's time limit in
 * staunch (the server ends the statement; staunch cuts off one the server
 * does not answer within 1 s more); past it the statement fails with
 * {@link java.sql.SQLTimeoutException}. {@link #cancel()} works from another
 * thread ({@code KILL QUERY}).
 */
public class StaunchStatement extends UnsupportedStatement {
    final StaunchConnection connection;
    private boolean closed;
    private int queryTimeout;
    int maxRows;
    private int fetchSize;
    private boolean closeOnCompletion;
    private StaunchResultSet current;
    private Rows pendingRows;
    private long updateCount = -1;
    private long firstKey;
    private long keyCount;
    private volatile boolean running;
    private List<String> batch;

    StaunchStatement(StaunchConnection connection) {
        this.connection = connection;
    }

    void open() throws SQLException {
        if (closed) {
            throw new SQLNonTransientException("the statement is closed", "HY010");
        }
        connection.open();
    }

    enum Mode { QUERY, UPDATE, ANY }

    /** Runs {@code sql}; returns true if the first result is a result set. */
    boolean run(String sql, Object[] params, Mode mode) throws SQLException {
        open();
        if (sql == null) {
            throw new SQLNonTransientException("sql must not be null", "HY009");
        }
        closeCurrent();
        updateCount = -1;
        firstKey = 0;
        keyCount = 0;
        connection.beforeStatement(queryTimeout);
        Conn c = connection.conn;
        running = true;
        try {
            if (mode == Mode.UPDATE) {
                Conn.Result r = params == null ? c.execute(sql) : c.execute(sql, params);
                updateCount = r.affectedRows();
                noteKeys(r.lastInsertId(), r.affectedRows());
                return false;
            }
            // Without parameters the library sends it as text (the pool's text_without_params,
            // which the data source defaults to true, as Connector/J sends such a statement).
            Rows rows = streams() ? c.queryStream(sql, params) : c.query(sql, params);
            boolean r = take(rows, mode);
            if (r && streams()) {
                connection.streaming(current);
            }
            return r;
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        } catch (IllegalArgumentException e) {
            throw SqlErrors.badArgument(e);
        } finally {
            running = false;
        }
    }

    private boolean take(Rows rows, Mode mode) throws SQLException {
        if (rows.columnCount() > 0) {
            current = new StaunchResultSet(this, new RowSource.Native(rows), maxRows);
            pendingRows = rows;
            return true;
        }
        updateCount = rows.affectedRows();
        noteKeys(rows.lastInsertId(), updateCount);
        if (mode == Mode.QUERY) {
            rows.close();
            throw new SQLNonTransientException("executeQuery: the statement returned no result set "
                    + "(use executeUpdate or execute)", "HY000");
        }
        pendingRows = rows;
        return false;
    }

    private void noteKeys(long first, long affected) {
        if (first != 0) {
            firstKey = first;
            keyCount = Math.max(1, affected);
        }
    }

    private void closeCurrent() throws SQLException {
        if (current != null) {
            current.closeFromStatement();
            current = null;
        }
        if (pendingRows != null) {
            pendingRows.close();
            pendingRows = null;
        }
    }

    void resultSetClosed(StaunchResultSet rs) throws SQLException {
        if (rs == current && streams() && pendingRows != null) {
            pendingRows.close(); // a streaming answer: read off its rest, which gives the connection back
            pendingRows = null;
        }
        if (rs == current && closeOnCompletion) {
            close();
        }
    }

    @Override
    public ResultSet executeQuery(String sql) throws SQLException {
        run(sql, null, Mode.QUERY);
        return current;
    }

    @Override
    public int executeUpdate(String sql) throws SQLException {
        return (int) Math.min(executeLargeUpdate(sql), Integer.MAX_VALUE);
    }

    @Override
    public long executeLargeUpdate(String sql) throws SQLException {
        run(sql, null, Mode.UPDATE);
        return updateCount;
    }

    @Override
    public int executeUpdate(String sql, int autoGeneratedKeys) throws SQLException {
        return executeUpdate(sql);
    }

    @Override
    public int executeUpdate(String sql, int[] columnIndexes) throws SQLException {
        return executeUpdate(sql);
    }

    @Override
    public int executeUpdate(String sql, String[] columnNames) throws SQLException {
        return executeUpdate(sql);
    }

    @Override
    public boolean execute(String sql) throws SQLException {
        return run(sql, null, Mode.ANY);
    }

    @Override
    public boolean execute(String sql, int autoGeneratedKeys) throws SQLException {
        return execute(sql);
    }

    @Override
    public boolean execute(String sql, int[] columnIndexes) throws SQLException {
        return execute(sql);
    }

    @Override
    public boolean execute(String sql, String[] columnNames) throws SQLException {
        return execute(sql);
    }

    @Override
    public ResultSet getResultSet() throws SQLException {
        open();
        return current;
    }

    @Override
    public int getUpdateCount() throws SQLException {
        open();
        return current != null ? -1 : (int) Math.min(updateCount, Integer.MAX_VALUE);
    }

    @Override
    public long getLargeUpdateCount() throws SQLException {
        open();
        return current != null ? -1 : updateCount;
    }

    @Override
    public boolean getMoreResults() throws SQLException {
        open();
        Rows rows = pendingRows;
        if (current != null) {
            current.closeFromStatement();
            current = null;
        }
        updateCount = -1;
        if (rows == null) {
            return false;
        }
        try {
            if (!rows.nextResult()) {
                rows.close();
                pendingRows = null;
                return false;
            }
            return take(rows, Mode.ANY);
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
    }

    @Override
    public boolean getMoreResults(int current) throws SQLException {
        return getMoreResults();
    }

    @Override
    public ResultSet getGeneratedKeys() throws SQLException {
        open();
        List<Object[]> rows = new ArrayList<>();
        for (long i = 0; i < keyCount; i++) {
            rows.add(new Object[] {firstKey + i});
        }
        return new StaunchResultSet(this, RowSource.keys(rows), 0);
    }

    /** Cancels the statement running now (from another thread): it fails, the connection stays usable. */
    @Override
    public void cancel() throws SQLException {
        if (closed || !running) {
            return;
        }
        try {
            connection.conn.cancel();
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
    }

    @Override
    public void close() throws SQLException {
        if (closed) {
            return;
        }
        closeCurrent();
        closed = true;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public Connection getConnection() throws SQLException {
        open();
        return connection;
    }

    @Override
    public int getQueryTimeout() throws SQLException {
        open();
        return queryTimeout;
    }

    @Override
    public void setQueryTimeout(int seconds) throws SQLException {
        open();
        if (seconds < 0) {
            throw new SQLNonTransientException("setQueryTimeout: seconds must not be negative, got " + seconds, "HY000");
        }
        queryTimeout = seconds;
    }

    @Override
    public int getMaxRows() throws SQLException {
        open();
        return maxRows;
    }

    @Override
    public void setMaxRows(int max) throws SQLException {
        open();
        if (max < 0) {
            throw new SQLNonTransientException("setMaxRows: must not be negative, got " + max, "HY000");
        }
        maxRows = max;
    }

    @Override
    public long getLargeMaxRows() throws SQLException {
        return getMaxRows();
    }

    @Override
    public void setLargeMaxRows(long max) throws SQLException {
        setMaxRows((int) Math.min(max, Integer.MAX_VALUE));
    }

    @Override
    public int getMaxFieldSize() throws SQLException {
        open();
        return 0;
    }

    @Override
    public void setMaxFieldSize(int max) throws SQLException {
        open();
        if (max != 0) {
            throw Errors.unsupported("Statement.setMaxFieldSize (other than 0)");
        }
    }

    @Override
    public void setEscapeProcessing(boolean enable) throws SQLException {
        open(); // no JDBC escape processing: SQL goes to the server as written
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
    public void setFetchDirection(int direction) throws SQLException {
        open();
        if (direction != ResultSet.FETCH_FORWARD) {
            throw Errors.unsupported("fetch directions other than FETCH_FORWARD");
        }
    }

    @Override
    public int getFetchDirection() throws SQLException {
        open();
        return ResultSet.FETCH_FORWARD;
    }

    /** Whether this statement's result sets read their rows as they arrive (see {@link #setFetchSize}). */
    boolean streams() {
        return fetchSize > 0 || fetchSize == Integer.MIN_VALUE;
    }

    /**
     * 0 (the default): a result set reads its whole answer at once. A positive
     * size, or {@code Integer.MIN_VALUE} (MySQL Connector/J's convention):
     * it reads the rows as they arrive, and until it is read to its end or
     * closed it holds the connection, which runs no other statement meanwhile
     * (as in Connector/J). Other negative sizes are refused.
     */
    @Override
    public void setFetchSize(int rows) throws SQLException {
        open();
        if (rows < 0 && rows != Integer.MIN_VALUE) {
            throw new SQLNonTransientException("setFetchSize: must be >= 0, or Integer.MIN_VALUE to stream, got "
                    + rows, "HY000");
        }
        fetchSize = rows;
    }

    @Override
    public int getFetchSize() throws SQLException {
        open();
        return fetchSize;
    }

    @Override
    public int getResultSetConcurrency() throws SQLException {
        return ResultSet.CONCUR_READ_ONLY;
    }

    @Override
    public int getResultSetType() throws SQLException {
        return ResultSet.TYPE_FORWARD_ONLY;
    }

    @Override
    public int getResultSetHoldability() throws SQLException {
        return ResultSet.HOLD_CURSORS_OVER_COMMIT;
    }

    @Override
    public void addBatch(String sql) throws SQLException {
        open();
        if (sql == null) {
            throw new SQLNonTransientException("sql must not be null", "HY009");
        }
        if (batch == null) {
            batch = new ArrayList<>();
        }
        batch.add(sql);
    }

    @Override
    public void clearBatch() throws SQLException {
        open();
        batch = null;
    }

    @Override
    public int[] executeBatch() throws SQLException {
        long[] l = executeLargeBatch();
        int[] r = new int[l.length];
        for (int i = 0; i < l.length; i++) {
            r[i] = (int) Math.min(l[i], Integer.MAX_VALUE);
        }
        return r;
    }

    @Override
    public long[] executeLargeBatch() throws SQLException {
        open();
        List<String> b = batch == null ? List.of() : batch;
        batch = null;
        long[] counts = new long[b.size()];
        for (int i = 0; i < counts.length; i++) {
            try {
                counts[i] = executeLargeUpdate(b.get(i));
            } catch (SQLException e) {
                throw new BatchUpdateException(e.getMessage(), e.getSQLState(), e.getErrorCode(),
                        java.util.Arrays.copyOf(counts, i), e);
            }
        }
        return counts;
    }

    @Override
    public void setPoolable(boolean poolable) throws SQLException {
        open();
    }

    @Override
    public boolean isPoolable() throws SQLException {
        open();
        return false;
    }

    @Override
    public void closeOnCompletion() throws SQLException {
        open();
        closeOnCompletion = true;
    }

    @Override
    public boolean isCloseOnCompletion() throws SQLException {
        open();
        return closeOnCompletion;
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
