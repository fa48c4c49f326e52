package dev.staunch.jdbc;

import dev.staunch.Conn;
import dev.staunch.StaunchException;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.CallableStatement;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLNonTransientException;
import java.sql.SQLWarning;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.Executor;

/**
 * A {@link Connection} over a borrowed staunch connection. {@link #close()}
 * returns it to the pool (staunch rolls back a transaction left open and
 * resets a changed session before anyone else gets it).
 *
 * <p>autoCommit off is the session's {@code autocommit=0} (the pool's, when the
 * data source's autoCommit is off; else set at the first statement after
 * {@code setAutoCommit(false)}, and the session is reset on return), so the
 * server opens a transaction only where a statement needs one; with an
 * isolation level or read-only set, the first statement starts one instead,
 * with them ({@code START TRANSACTION [READ ONLY]}, the level for that
 * transaction only), so nothing leaks to the next borrower. Whether a
 * transaction is open is the library's word ({@link Conn#transactionOpen()}):
 * {@link #commit()} and {@link #rollback()} send nothing when none is, so a
 * read-only block costs no COMMIT. With autoCommit on, each statement is its
 * own transaction at the server's level (read-only is then a hint, as JDBC
 * allows).
 */
public class StaunchConnection extends UnsupportedConnection {
    private final StaunchDataSource ds;
    final Conn conn;
    private volatile boolean closed;
    private boolean autoCommit;
    private boolean readOnly;
    private int isolation; // -1: the server's default
    private String catalog;
    /** The session's autocommit may differ from autoCommit: compared before the next statement. */
    private boolean autocommitUnchecked = true;
    private int networkTimeoutMs;
    /** What staunch_conn_set_timeout was last told: -1 the pool's query_timeout. */
    private int currentLimitMs = -1;
    /** Made on the first setClientInfo (most connections never have any). */
    private Properties clientInfo;
    private StaunchDatabaseMetaData metaData;

    StaunchConnection(StaunchDataSource ds, Conn conn, boolean autoCommit, boolean readOnly, int isolation, String catalog) {
        this.ds = ds;
        this.conn = conn;
        this.autoCommit = autoCommit;
        this.readOnly = readOnly;
        this.isolation = isolation;
        this.catalog = catalog;
    }

    StaunchDataSource dataSource() {
        return ds;
    }

    void open() throws SQLException {
        if (closed) {
            throw new SQLNonTransientConnectionException("the connection is closed", "08003");
        }
    }

    /** The streaming result set that may hold the connection, or null. */
    private StaunchResultSet stream;

    void streaming(StaunchResultSet rs) {
        stream = rs;
    }

    /** JDBC's rule for streaming result sets: no other statement until it is read to its end or closed. */
    private void notStreaming() throws SQLException {
        if (stream != null) {
            if (stream.holdsConnection()) {
                throw new SQLNonTransientException("a streaming result set (fetch size set) is open on this "
                        + "connection: read it to its end or close it before running another statement", "HY010");
            }
            stream = null;
        }
    }

    /**
     * The number of {@code ?} placeholders in {@code sql} as the server reads
     * it under this session's {@code sql_mode} (the library's SQL scanner, the
     * one that sends the statement: NO_BACKSLASH_ESCAPES and ANSI_QUOTES
     * change what is quoted).
     */
    int countParams(String sql) throws SQLException {
        open();
        notStreaming();
        try {
            return conn.countParams(sql);
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
    }

    /**
     * Where the {@code ?} placeholders of {@code sql} are (char indexes), by the same scanner as
     * {@link #countParams}, in one native call.
     */
    List<Integer> placeholders(String sql) throws SQLException {
        open();
        notStreaming();
        try {
            int[] at = conn.placeholders(sql);
            List<Integer> out = new ArrayList<>(at.length);
            for (int i : at) {
                out.add(i);
            }
            return out;
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
    }

    /**
     * Before a statement: the session's autocommit as autoCommit says, the
     * transaction an isolation level or read-only asks for, and the
     * statement's time limit.
     */
    void beforeStatement(int queryTimeoutSeconds) throws SQLException {
        open();
        notStreaming();
        try {
            int want = queryTimeoutSeconds > 0 ? (int) Math.min(queryTimeoutSeconds * 1000L, Integer.MAX_VALUE)
                    : networkTimeoutMs > 0 ? networkTimeoutMs : -1;
            if (want != currentLimitMs) {
                conn.setTimeout(want < 0 ? null : Duration.ofMillis(want));
                currentLimitMs = want;
            }
            if (autocommitUnchecked) {
                if (autoCommit != conn.sessionAutocommit()) {
                    conn.execute(autoCommit ? "SET autocommit=1" : "SET autocommit=0");
                }
                autocommitUnchecked = false;
            }
            if (!autoCommit && (isolation >= 0 || readOnly) && !conn.transactionOpen()) {
                conn.begin(isolation(isolation), readOnly);
            }
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
    }

    private static Conn.Isolation isolation(int level) {
        switch (level) {
            case TRANSACTION_READ_UNCOMMITTED:
                return Conn.Isolation.READ_UNCOMMITTED;
            case TRANSACTION_READ_COMMITTED:
                return Conn.Isolation.READ_COMMITTED;
            case TRANSACTION_REPEATABLE_READ:
                return Conn.Isolation.REPEATABLE_READ;
            case TRANSACTION_SERIALIZABLE:
                return Conn.Isolation.SERIALIZABLE;
            default:
                return Conn.Isolation.DEFAULT;
        }
    }

    static int isolationByName(String name) {
        if (name == null) {
            return -1;
        }
        String n = name.trim().toUpperCase(java.util.Locale.ROOT);
        if (n.startsWith("TRANSACTION_")) {
            n = n.substring("TRANSACTION_".length());
        }
        switch (n.replace(' ', '_').replace('-', '_')) {
            case "READ_UNCOMMITTED":
                return TRANSACTION_READ_UNCOMMITTED;
            case "READ_COMMITTED":
                return TRANSACTION_READ_COMMITTED;
            case "REPEATABLE_READ":
                return TRANSACTION_REPEATABLE_READ;
            case "SERIALIZABLE":
                return TRANSACTION_SERIALIZABLE;
            default:
                throw new IllegalArgumentException("transactionIsolation " + name + " is not one of "
                    + "TRANSACTION_READ_UNCOMMITTED, TRANSACTION_READ_COMMITTED, TRANSACTION_REPEATABLE_READ, TRANSACTION_SERIALIZABLE");
        }
    }

    /** The staunch connection underneath (for cancel(), stats, ...). */
    public Conn nativeConnection() {
        return conn;
    }

    @Override
    public Statement createStatement() throws SQLException {
        open();
        return new StaunchStatement(this);
    }

    private static void checkType(int type, int concurrency) throws SQLException {
        if (type != ResultSet.TYPE_FORWARD_ONLY || concurrency != ResultSet.CONCUR_READ_ONLY) {
            throw new SQLFeatureNotSupportedException("only TYPE_FORWARD_ONLY, CONCUR_READ_ONLY result sets are "
                    + "supported (staunch reads whole answers; scroll the list you make of them)", "0A000");
        }
    }

    @Override
    public Statement createStatement(int type, int concurrency) throws SQLException {
        checkType(type, concurrency);
        return createStatement();
    }

    @Override
    public Statement createStatement(int type, int concurrency, int holdability) throws SQLException {
        checkType(type, concurrency);
        return createStatement();
    }

    @Override
    public PreparedStatement prepareStatement(String sql) throws SQLException {
        open();
        if (sql == null) {
            throw new SQLNonTransientException("sql must not be null", "HY009");
        }
        return new StaunchPreparedStatement(this, sql);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
        return prepareStatement(sql); // the generated keys are always at hand (last_insert_id)
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
        return prepareStatement(sql, Statement.RETURN_GENERATED_KEYS);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
        return prepareStatement(sql, Statement.RETURN_GENERATED_KEYS);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int type, int concurrency) throws SQLException {
        checkType(type, concurrency);
        return prepareStatement(sql);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int type, int concurrency, int holdability) throws SQLException {
        checkType(type, concurrency);
        return prepareStatement(sql);
    }

    /** {@code CALL proc(?, ...)} or {@code {? = call func(?, ...)}}: see {@link StaunchCallableStatement}. */
    @Override
    public CallableStatement prepareCall(String sql) throws SQLException {
        open();
        return StaunchCallableStatement.of(this, sql);
    }

    @Override
    public CallableStatement prepareCall(String sql, int type, int concurrency) throws SQLException {
        checkType(type, concurrency);
        return prepareCall(sql);
    }

    @Override
    public CallableStatement prepareCall(String sql, int type, int concurrency, int holdability) throws SQLException {
        checkType(type, concurrency);
        return prepareCall(sql);
    }

    @Override
    public String nativeSQL(String sql) throws SQLException {
        open();
        return sql;
    }

    @Override
    public void setAutoCommit(boolean on) throws SQLException {
        open();
        if (on && !autoCommit) {
            commit(); // JDBC: switching autocommit on commits the open transaction
        }
        autocommitUnchecked |= on != autoCommit;
        autoCommit = on;
    }

    @Override
    public boolean getAutoCommit() throws SQLException {
        open();
        return autoCommit;
    }

    @Override
    public void commit() throws SQLException {
        open();
        notStreaming();
        try {
            if (conn.transactionOpen()) {
                conn.commit();
            }
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
    }

    @Override
    public void rollback() throws SQLException {
        open();
        notStreaming();
        try {
            if (conn.transactionOpen()) {
                conn.rollback();
            }
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
    }

    @Override
    public Blob createBlob() throws SQLException {
        open();
        return new Lobs.Bytes(new byte[0]);
    }

    @Override
    public Clob createClob() throws SQLException {
        open();
        return new Lobs.Text("");
    }

    @Override
    public NClob createNClob() throws SQLException {
        open();
        return new Lobs.Text("");
    }

    /** A savepoint of the open transaction, by SQL ({@code SAVEPOINT}); JDBC's ids and names. */
    private static final class StaunchSavepoint implements Savepoint {
        private final int id;
        private final String name;

        public StaunchSavepoint(int id, String name) {
            this.id = id;
            this.name = name;
        }

        public int id() {
            return id;
        }

        public String name() {
            return name;
        }

        @Override
        public boolean equals(Object other) {
            if (this == other) {
                return true;
            }
            if (!(other instanceof StaunchSavepoint)) {
                return false;
            }
            StaunchSavepoint o = (StaunchSavepoint) other;
            return id == o.id && Objects.equals(name, o.name);
        }

        @Override
        public int hashCode() {
            return Objects.hash(id, name);
        }

        @Override
        public String toString() {
            return "StaunchSavepoint[id=" + id + ", name=" + name + "]";
        }

        @Override
        public int getSavepointId() throws SQLException {
            if (name != null) {
                throw new SQLNonTransientException("a named savepoint has no id", "HY024");
            }
            return id;
        }

        @Override
        public String getSavepointName() throws SQLException {
            if (name == null) {
                throw new SQLNonTransientException("an unnamed savepoint has no name", "HY024");
            }
            return name;
        }

        String sqlName() {
            return "`" + (name == null ? "staunch_sp_" + id : name).replace("`", "``") + "`";
        }
    }

    private int savepoints;

    private Savepoint savepoint(String name) throws SQLException {
        open();
        if (autoCommit) {
            throw new SQLNonTransientException("a savepoint needs a transaction: autoCommit is on", "25000");
        }
        StaunchSavepoint sp = name == null ? new StaunchSavepoint(++savepoints, null) : new StaunchSavepoint(0, name);
        try (Statement s = createStatement()) {
            s.execute("SAVEPOINT " + sp.sqlName()); // the statement begins the transaction if none is open
        }
        return sp;
    }

    @Override
    public Savepoint setSavepoint() throws SQLException {
        return savepoint(null);
    }

    @Override
    public Savepoint setSavepoint(String name) throws SQLException {
        if (name == null) {
            throw new SQLNonTransientException("setSavepoint: the name must not be null", "HY009");
        }
        return savepoint(name);
    }

    private StaunchSavepoint ours(Savepoint sp) throws SQLException {
        open();
        if (!(sp instanceof StaunchSavepoint)) {
            throw new SQLNonTransientException("not a savepoint of this connection: " + sp, "3B001");
        }
        if (autoCommit || !transactionOpen()) {
            throw new SQLNonTransientException("no transaction is open: its savepoints are gone", "3B001");
        }
        return (StaunchSavepoint) sp;
    }

    /** Whether a transaction is open, as the library says. */
    private boolean transactionOpen() throws SQLException {
        try {
            return conn.transactionOpen();
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
    }

    @Override
    public void rollback(Savepoint sp) throws SQLException {
        StaunchSavepoint s = ours(sp);
        try (Statement st = createStatement()) {
            st.execute("ROLLBACK TO SAVEPOINT " + s.sqlName());
        }
    }

    @Override
    public void releaseSavepoint(Savepoint sp) throws SQLException {
        StaunchSavepoint s = ours(sp);
        try (Statement st = createStatement()) {
            st.execute("RELEASE SAVEPOINT " + s.sqlName());
        }
    }

    /** Returns the connection to the pool; idempotent. */
    @Override
    public void close() throws SQLException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (stream != null) {
                stream.close(); // reads off the rest of the answer, so the connection goes back whole
                stream = null;
            }
            conn.close();
        } catch (StaunchException e) {
            throw SqlErrors.of(e);
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public DatabaseMetaData getMetaData() throws SQLException {
        open();
        if (metaData == null) {
            metaData = new StaunchDatabaseMetaData(this);
        }
        return metaData;
    }

    @Override
    public void setReadOnly(boolean ro) throws SQLException {
        open();
        readOnly = ro;
    }

    @Override
    public boolean isReadOnly() throws SQLException {
        open();
        return readOnly;
    }

    /** True for {@code useCatalogTerm=SCHEMA}: a database is a JDBC schema, the catalog is "def". */
    boolean schemaTerm() {
        return ds.schemaTerm();
    }

    /**
     * {@code USE c}: this connection's statements then default to database
     * {@code c}. The pool selects its own database again before the session
     * is borrowed by anyone else. Ignored under {@code useCatalogTerm=SCHEMA}
     * (then {@link #setSchema} does it), as in MariaDB Connector/J.
     */
    @Override
    public void setCatalog(String c) throws SQLException {
        open();
        if (!schemaTerm()) {
            use(c);
        }
    }

    /** The current database; "def" under {@code useCatalogTerm=SCHEMA} (as Connector/J). */
    @Override
    public String getCatalog() throws SQLException {
        open();
        return schemaTerm() ? "def" : database();
    }

    /** {@code USE schema} under {@code useCatalogTerm=SCHEMA}; otherwise ignored (MySQL has no other schemas), as Connector/J. */
    @Override
    public void setSchema(String schema) throws SQLException {
        open();
        if (schemaTerm()) {
            use(schema);
        }
    }

    /** The current database under {@code useCatalogTerm=SCHEMA}, else null (as Connector/J). */
    @Override
    public String getSchema() throws SQLException {
        open();
        return schemaTerm() ? database() : null;
    }

    private void use(String db) throws SQLException {
        if (db == null || db.equals(catalog)) {
            return;
        }
        try (Statement s = createStatement()) {
            s.execute("USE `" + db.replace("`", "``") + "`");
        }
        catalog = db;
    }

    private String database() throws SQLException {
        if (catalog == null) {
            try (Statement s = createStatement(); ResultSet r = s.executeQuery("SELECT DATABASE()")) {
                catalog = r.next() ? r.getString(1) : null;
            }
        }
        return catalog;
    }

    @Override
    public void setTransactionIsolation(int level) throws SQLException {
        open();
        switch (level) {
            case TRANSACTION_READ_UNCOMMITTED:
            case TRANSACTION_READ_COMMITTED:
            case TRANSACTION_REPEATABLE_READ:
            case TRANSACTION_SERIALIZABLE:
                isolation = level;
                break;
            default:
                throw new SQLNonTransientException("transaction isolation " + level + " is not a JDBC level", "HY024");
        }
    }

    @Override
    public int getTransactionIsolation() throws SQLException {
        open();
        return isolation < 0 ? TRANSACTION_REPEATABLE_READ : isolation;
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
    public Map<String, Class<?>> getTypeMap() throws SQLException {
        open();
        return new java.util.HashMap<>();
    }

    @Override
    public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
        if (map != null && !map.isEmpty()) {
            throw Errors.unsupported("Connection.setTypeMap (user-defined types)");
        }
    }

    @Override
    public void setHoldability(int h) throws SQLException {
        open();
        if (h != ResultSet.HOLD_CURSORS_OVER_COMMIT) {
            throw new SQLFeatureNotSupportedException("result sets are always held over commit (they are read whole)", "0A000");
        }
    }

    @Override
    public int getHoldability() throws SQLException {
        open();
        return ResultSet.HOLD_CURSORS_OVER_COMMIT;
    }

    /** A COM_PING bounded by {@code timeout} seconds (0: the connection's own limit). */
    @Override
    public boolean isValid(int timeout) throws SQLException {
        if (timeout < 0) {
            throw new SQLNonTransientException("isValid: timeout must not be negative, got " + timeout, "HY000");
        }
        if (closed || conn.isBroken()) {
            return false;
        }
        try {
            if (timeout > 0) {
                conn.setTimeout(Duration.ofSeconds(timeout));
                currentLimitMs = timeout * 1000;
            }
            conn.ping();
            return true;
        } catch (StaunchException e) {
            return false;
        }
    }

    @Override
    public void setClientInfo(String name, String value) {
        if (name != null && value != null) {
            if (clientInfo == null) {
                clientInfo = new Properties();
            }
            clientInfo.setProperty(name, value);
        }
    }

    @Override
    public void setClientInfo(Properties properties) {
        clientInfo = new Properties();
        if (properties != null) {
            clientInfo.putAll(properties);
        }
    }

    @Override
    public String getClientInfo(String name) throws SQLException {
        return clientInfo == null ? null : clientInfo.getProperty(name);
    }

    @Override
    public Properties getClientInfo() throws SQLException {
        Properties p = new Properties();
        if (clientInfo != null) {
            p.putAll(clientInfo);
        }
        return p;
    }

    /**
     * Marks the connection closed at once, cancels a statement running on it,
     * and closes it (rather than returning it to the pool) on {@code executor}.
     */
    @Override
    public void abort(Executor executor) throws SQLException {
        if (executor == null) {
            throw new SQLNonTransientException("abort: executor must not be null", "HY009");
        }
        if (closed) {
            return;
        }
        closed = true;
        executor.execute(() -> {
            try {
                conn.cancel();
            } catch (RuntimeException e) {
                // the discard below closes it anyway
            }
            conn.discard();
        });
    }

    /**
     * The statement time limit of this connection, in ms (0: none). staunch
     * has no per-read socket timeout to set; this is the limit past which the
     * server ends a statement and staunch cuts off one the server does not
     * answer within 1 s more ({@link java.sql.SQLTimeoutException}).
     */
    @Override
    public void setNetworkTimeout(Executor executor, int ms) throws SQLException {
        open();
        if (ms < 0) {
            throw new SQLNonTransientException("setNetworkTimeout: milliseconds must not be negative, got " + ms, "HY000");
        }
        networkTimeoutMs = ms;
    }

    @Override
    public int getNetworkTimeout() throws SQLException {
        open();
        return networkTimeoutMs;
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (!iface.isInstance(this) && iface.isInstance(conn)) {
            return iface.cast(conn);
        }
        return Errors.unwrap(this, iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this) || iface.isInstance(conn);
    }

    @Override
    public String toString() {
        return "StaunchConnection(" + conn + ")";
    }
}
