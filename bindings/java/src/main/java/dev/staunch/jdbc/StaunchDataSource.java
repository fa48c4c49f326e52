package dev.staunch.jdbc;

import dev.staunch.Conn;
import dev.staunch.EventListener;
import dev.staunch.Pool;
import dev.staunch.Staunch;
import dev.staunch.StaunchException;
import dev.staunch.Stats;
import dev.staunch.Status;
import dev.staunch.TraceListener;
import java.io.Closeable;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.logging.Logger;
import javax.management.ObjectName;
import javax.sql.DataSource;

/**
 * A {@link DataSource} backed by a staunch pool, configured with HikariCP's
 * property names where they mean the same thing, so that it drops in where
 * HikariDataSource is:
 *
 * <pre>{@code
 * StaunchDataSource ds = new StaunchDataSource();
 * ds.setJdbcUrl("jdbc:mariadb://db.example:3306/shop?connectTimeout=2000");
 * ds.setUsername("app");
 * ds.setPassword("secret");
 * ds.setMaximumPoolSize(20);
 * }</pre>
 *
 * <p>The pool opens at the first {@link #getConnection()} (or
 * {@link #open()}); configuration is frozen then. Properties left unset keep
 * staunch's defaults (not HikariCP's): connectionTimeout 10 s, connect timeout
 * 3 s per attempt, minimumIdle 0, maximumPoolSize 10, idleTimeout 10 min,
 * maxLifetime 30 min, keepaliveTime 2 min, validationTimeout 1 s.
 *
 * <p>Statements with parameters are sent as MariaDB Connector/J sends them by
 * default ({@code useServerPrepStmts=false}): the library writes each bound
 * value into the SQL as a literal escaped for the session's real
 * {@code sql_mode} (staunch's {@code interpolate_params=true}), one round
 * trip over the text protocol. {@code useServerPrepStmts=true} in the URL (or
 * as a data source property, or the knob {@code interpolate_params=false})
 * prepares them on the server instead; a statement the server refuses to
 * prepare is interpolated either way.
 */
public class StaunchDataSource implements DataSource, Closeable, StaunchPoolMXBean, StaunchConfigMXBean {
    private String jdbcUrl;
    private String username;
    private String password;
    private final Map<String, String> knobs = new LinkedHashMap<>();
    private boolean autoCommit = true;
    private boolean readOnly;
    private int transactionIsolation = -1;
    private String catalog;
    private String poolName;
    private boolean registerMbeans;
    private long connectionTimeoutMs = -1;
    private EventListener listener;
    private TraceListener tracer;
    /** An io.opentelemetry.api.OpenTelemetry, held as Object: see setOpenTelemetry. */
    private Object openTelemetry;
    private boolean traceStatementText;

    private volatile Pool pool;
    /** The open pool's name (the library's: what its metrics carry). */
    private volatile String openName;
    private volatile boolean closed;
    /** useCatalogTerm=SCHEMA in the JDBC URL (read when the pool opens). */
    private volatile boolean schemaTerm;
    private ObjectName mbeanName;
    private ObjectName configMbeanName;
    /** suspendPool before the pool opened: it opens suspended. Guarded by this. */
    private boolean suspended;
    /** {@link #whenOpen} actions waiting for the pool to open. Guarded by this; emptied when it opens. */
    private final List<Consumer<? super Pool>> openActions = new ArrayList<>();

    public StaunchDataSource() {}

    /** A data source from a JDBC or staunch URL. */
    public StaunchDataSource(String jdbcUrl) {
        this.jdbcUrl = jdbcUrl;
    }

    private void configurable() {
        if (pool != null || closed) {
            throw new IllegalStateException("the pool is already open: set properties before the first getConnection()");
        }
    }

    private static String ms(String property, long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException(property + " must not be negative, got " + ms);
        }
        return ms + "ms";
    }

    // ---- HikariCP's property names -------------------------------------

    private String driverClassName;

    public void setJdbcUrl(String jdbcUrl) { configurable(); this.jdbcUrl = jdbcUrl; }
    public String getJdbcUrl() { return jdbcUrl; }
    /** The same as jdbcUrl: the name Spring Boot's DataSourceBuilder binds {@code spring.datasource.url} to. */
    public void setUrl(String url) { setJdbcUrl(url); }
    public String getUrl() { return jdbcUrl; }

    /** Driver classes whose URLs staunch reads: naming one is accepted (staunch is the driver). */
    private static final java.util.Set<String> DRIVERS = java.util.Set.of("dev.staunch.jdbc.StaunchDriver",
            "org.mariadb.jdbc.Driver", "com.mysql.cj.jdbc.Driver", "com.mysql.jdbc.Driver");

    /**
     * HikariCP's driverClassName (Spring Boot sets it from the URL): staunch
     * talks to the server itself, so only the names of drivers for the URLs it
     * reads are accepted; any other is an error naming it.
     */
    public void setDriverClassName(String name) {
        configurable();
        if (name != null && !DRIVERS.contains(name)) {
            throw new IllegalArgumentException("driverClassName " + name + ": staunch is the driver; accepted names: " + DRIVERS);
        }
        this.driverClassName = name;
    }

    public String getDriverClassName() { return driverClassName; }
    public void setUsername(String username) { configurable(); this.username = username; }
    public String getUsername() { return username; }
    public void setPassword(String password) { configurable(); this.password = password; }
    public String getPassword() { return password; }

    /**
     * HikariCP's maximumPoolSize (staunch's max_size). As in HikariCP it can
     * be changed while the pool runs (here or through the config MXBean), up
     * to the knob max_size_cap (fixed at open; by default twice max_size, at
     * least 64): lowering it takes no borrowed connection away (connections
     * above it close as they are returned), raising it serves the threads
     * waiting now. A bad value is an IllegalArgumentException naming the knob.
     */
    @Override
    public synchronized void setMaximumPoolSize(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("maximumPoolSize must be at least 1, got " + n);
        }
        resize(n, "max_size", p -> p.setMaxSize(n));
    }

    @Override
    public synchronized int getMaximumPoolSize() { return Integer.parseInt(knobs.getOrDefault("max_size", "10")); }

    /** HikariCP's minimumIdle (staunch's min_idle): changeable while the pool runs, as maximumPoolSize. */
    @Override
    public synchronized void setMinimumIdle(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("minimumIdle must not be negative, got " + n);
        }
        resize(n, "min_idle", p -> p.setMinIdle(n));
    }

    @Override
    public synchronized int getMinimumIdle() { return Integer.parseInt(knobs.getOrDefault("min_idle", "0")); }

    /** A size knob: recorded for the pool to open with, or applied to the open pool (caller holds this). */
    private void resize(int n, String knob, java.util.function.Consumer<Pool> apply) {
        Pool p = pool;
        if (p == null) {
            configurable();
        } else if (closed) {
            throw new IllegalStateException("the data source " + getPoolName() + " is closed");
        } else {
            try {
                apply.accept(p);
            } catch (StaunchException e) {
                if (e.status() == Status.INVALID_CONFIG) {
                    throw new IllegalArgumentException(e.getMessage(), e);
                }
                throw e;
            }
        }
        knobs.put(knob, Integer.toString(n));
    }

    /**
     * Longest getConnection() waits, in ms (HikariCP: connectionTimeout). 0,
     * HikariCP's "no limit", becomes staunch's longest, 1 h: a wait always has a bound.
     */
    public void setConnectionTimeout(long ms) {
        configurable();
        long v = ms == 0 ? 3_600_000L : Math.min(ms, 3_600_000L);
        knobs.put("connection_timeout", ms("connectionTimeout", v));
        connectionTimeoutMs = v;
    }

    public long getConnectionTimeout() { return connectionTimeoutMs < 0 ? 10_000 : connectionTimeoutMs; }
    public void setValidationTimeout(long ms) { configurable(); knobs.put("validation_timeout", ms("validationTimeout", ms)); }
    /** 0: idle connections are never closed (HikariCP's meaning). */
    public void setIdleTimeout(long ms) { configurable(); knobs.put("idle_timeout", ms == 0 ? "off" : ms("idleTimeout", ms)); }
    /** 0: connections never retire (HikariCP's meaning). */
    public void setMaxLifetime(long ms) { configurable(); knobs.put("max_lifetime", ms == 0 ? "off" : ms("maxLifetime", ms)); }
    /** 0: no keepalive (HikariCP's meaning). */
    public void setKeepaliveTime(long ms) { configurable(); knobs.put("keepalive_interval", ms == 0 ? "off" : ms("keepaliveTime", ms)); }
    /** 0: off. */
    public void setLeakDetectionThreshold(long ms) { configurable(); knobs.put("leak_detection_threshold", ms == 0 ? "off" : ms("leakDetectionThreshold", ms)); }
    public void setConnectionInitSql(String sql) { configurable(); knobs.put("init_sql", sql == null ? "" : sql); }

    /** HikariCP: &gt; 0 makes one connection at open and fails if it cannot within that time; staunch's initialization_fail_timeout. */
    public void setInitializationFailTimeout(long ms) {
        configurable();
        if (ms > 0) {
            knobs.put("initialization_fail_timeout", ms + "ms");
        } else {
            knobs.remove("initialization_fail_timeout");
        }
    }

    public void setAutoCommit(boolean autoCommit) { configurable(); this.autoCommit = autoCommit; }
    public boolean isAutoCommit() { return autoCommit; }
    public void setReadOnly(boolean readOnly) { configurable(); this.readOnly = readOnly; }
    public boolean isReadOnly() { return readOnly; }
    public void setCatalog(String catalog) { configurable(); this.catalog = catalog; }

    /** HikariCP's names: TRANSACTION_READ_COMMITTED, ... (or READ_COMMITTED). */
    public void setTransactionIsolation(String level) {
        configurable();
        transactionIsolation = StaunchConnection.isolationByName(level);
    }

    /**
     * HikariCP's poolName: the name in messages, the MBean's name, and the pool's {@code pool_name} knob (its
     * {@link Pool#name()}, the {@code db_client_connection_pool_name} of {@link #metricsText()} and the
     * {@code name} tag of the Micrometer meters), unless the URL or a knob sets pool_name, which then wins.
     * The library takes 1 to 128 bytes without control characters.
     */
    public void setPoolName(String poolName) { configurable(); this.poolName = poolName; }

    /**
     * The pool's name: once the pool is open, the library's ({@link Pool#name()}: poolName, the URL's or a knob's
     * pool_name, else {@code staunch-N}); before, poolName, or "staunch" when none is set.
     */
    public String getPoolName() {
        String n = openName;
        if (n != null) {
            return n;
        }
        return poolName == null ? "staunch" : poolName;
    }
    public void setRegisterMbeans(boolean register) { configurable(); this.registerMbeans = register; }

    /** Unsupported HikariCP properties fail loudly rather than being ignored. */
    public void setConnectionTestQuery(String sql) {
        throw new UnsupportedOperationException("connectionTestQuery: staunch validates with COM_PING (bounded by validationTimeout)");
    }

    /** Driver properties, as in HikariCP's dataSourceProperties: the same names as jdbcUrl properties. */
    public void addDataSourceProperty(String name, Object value) {
        configurable();
        String sep = jdbcUrl != null && jdbcUrl.contains("?") ? "&" : "?";
        jdbcUrl = (jdbcUrl == null ? "" : jdbcUrl) + sep + name + "=" + java.net.URLEncoder.encode(String.valueOf(value), java.nio.charset.StandardCharsets.UTF_8);
    }

    public void setDataSourceProperties(Properties p) {
        for (String k : p.stringPropertyNames()) {
            addDataSourceProperty(k, p.getProperty(k));
        }
    }

    /** One of staunch's own knobs by name (see docs/knobs.md): {@code setKnob("connect_timeout", "500ms")}. */
    public void setKnob(String name, String value) {
        configurable();
        knobs.put(name, value);
    }

    /** Receives the pool's events (connects, failures, recoveries, leaks, ...). */
    public void setEventListener(EventListener listener) { configurable(); this.listener = listener; }

    /**
     * OpenTelemetry spans of the pool's borrows and statements ({@link dev.staunch.otel.StaunchTracing}),
     * children of the span current where {@link #getConnection()} and the statements run. {@code openTelemetry}
     * is an {@code io.opentelemetry.api.OpenTelemetry} (Spring Boot's bean, {@code GlobalOpenTelemetry.get()});
     * the parameter is an {@code Object}, as HikariCP's {@code setMetricRegistry}, so that this class names no
     * OpenTelemetry type and reflection over it (Spring's property binding) works without OpenTelemetry on the
     * class path. Null: no spans (nothing is registered with the library).
     */
    public void setOpenTelemetry(Object openTelemetry) {
        configurable();
        if (openTelemetry != null) {
            try {
                dev.staunch.otel.StaunchTracing.forOpenTelemetry(openTelemetry, false); // refuses what is not one, now
            } catch (LinkageError e) {
                throw new IllegalArgumentException("not an io.opentelemetry.api.OpenTelemetry: OpenTelemetry's API "
                        + "(io.opentelemetry:opentelemetry-api) is not on the class path", e);
            }
        }
        this.openTelemetry = openTelemetry;
    }

    /**
     * Whether statement spans carry the statement's text ({@code db.query.text}): false by default, as the
     * text may hold what the application put in it.
     */
    public void setTraceStatementText(boolean on) { configurable(); this.traceStatementText = on; }

    /** Hears each borrow's and statement's start and end (any tracer; it wins over {@link #setOpenTelemetry}). */
    public void setTraceListener(TraceListener tracer) { configurable(); this.tracer = tracer; }

    // ---- the pool ------------------------------------------------------

    /** True when the URL says {@code useCatalogTerm=SCHEMA}: a database is then a JDBC schema. */
    boolean schemaTerm() {
        return schemaTerm;
    }

    /** Opens the pool now (else the first getConnection does). */
    public Pool open() throws SQLException {
        Pool p = pool;
        if (p != null) {
            return p;
        }
        Pool opened;
        List<Consumer<? super Pool>> actions;
        synchronized (this) {
            if (closed) {
                throw new SQLNonTransientConnectionException("the data source " + getPoolName() + " is closed", "08003");
            }
            if (pool != null) {
                return pool;
            }
            JdbcUrl.Translated t = JdbcUrl.translate(jdbcUrl);
            schemaTerm = t.schemaTerm();
            Staunch.Builder b = Staunch.builder().url(t.url());
            t.knobs().forEach(b::knob);
            if (username != null) {
                b.knob("user", username);
            }
            if (password != null) {
                b.knob("password", password);
            }
            knobs.forEach(b::knob);
            // Defaults the library applies only to knobs the user does not give (useServerPrepStmts,
            // a property, setKnob, or the knob in a mysql:// URL): Connector/J's client-side
            // interpolation (useServerPrepStmts=false), poolName as the library pool's name (its
            // metrics), and autoCommit as the sessions' autocommit.
            b.defaultKnob("interpolate_params", "true");
            // And a statement without parameters as text, as written (Connector/J's way).
            b.defaultKnob("text_without_params", "true");
            // Sessions born as the connections' autoCommit wants them: no SET (and no reset on
            // return) for each borrow (see StaunchConnection).
            if (!autoCommit) {
                b.defaultKnob("autocommit", "false");
            }
            if (poolName != null) {
                b.defaultKnob("pool_name", poolName);
            }
            if (listener != null) {
                b.onEvent(listener);
            }
            if (tracer != null) {
                b.tracer(tracer);
            } else if (openTelemetry != null) {
                b.tracer(dev.staunch.otel.StaunchTracing.forOpenTelemetry(openTelemetry, traceStatementText));
            }
            try {
                opened = b.open();
            } catch (StaunchException e) {
                throw SqlErrors.of(e);
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw SqlErrors.badArgument(e);
            }
            try {
                openName = opened.name();
            } catch (StaunchException e) {
                // never fails on an open pool; getPoolName() keeps poolName
            }
            // suspendPool before the pool opened: suspended before anyone can borrow.
            if (suspended) {
                opened.suspend();
            }
            pool = opened;
            if (registerMbeans) {
                try {
                    mbeanName = new ObjectName("dev.staunch:type=Pool (" + getPoolName() + ")");
                    ManagementFactory.getPlatformMBeanServer().registerMBean(
                            new javax.management.StandardMBean(this, StaunchPoolMXBean.class, true), mbeanName);
                } catch (Exception e) {
                    mbeanName = null;
                }
                try {
                    configMbeanName = new ObjectName("dev.staunch:type=PoolConfig (" + getPoolName() + ")");
                    // An object is one MXBean: the config view is another object.
                    ManagementFactory.getPlatformMBeanServer().registerMBean(new ConfigView(this), configMbeanName);
                } catch (Exception e) {
                    configMbeanName = null;
                }
            }
            actions = new ArrayList<>(openActions);
            openActions.clear();
        }
        // Outside the lock: an action (a metrics binder) may take its own locks.
        for (Consumer<? super Pool> a : actions) {
            runOpenAction(a, opened);
        }
        return opened;
    }

    /**
     * Runs {@code action} with the pool once it is open: now, on this thread, if it already is; else on the thread
     * that opens it (the first {@link #getConnection()} or {@link #open()}), after it opened and before that call
     * returns. Never opens the pool itself, and never runs for a data source closed before its pool opened. An
     * action that throws is logged (System.Logger {@code dev.staunch}) and does not fail the open. For code that
     * wants the {@link Pool} without opening it early, as staunch's Spring Boot auto-configuration binds the pool's
     * Micrometer meters when it opens.
     */
    public void whenOpen(Consumer<? super Pool> action) {
        Objects.requireNonNull(action, "action");
        Pool p;
        synchronized (this) {
            p = pool;
            if (p == null) {
                if (!closed) {
                    openActions.add(action);
                }
                return;
            }
        }
        runOpenAction(action, p);
    }

    private static void runOpenAction(Consumer<? super Pool> action, Pool p) {
        try {
            action.accept(p);
        } catch (RuntimeException e) {
            System.getLogger("dev.staunch").log(System.Logger.Level.WARNING, "staunch: a whenOpen action threw; ignored", e);
        }
    }

    /** The native pool (opens it if needed). */
    public Pool pool() throws SQLException {
        return open();
    }

    @Override
    public Connection getConnection() throws SQLException {
        Pool p = open();
        Duration timeout = connectionTimeoutMs < 0 ? null : Duration.ofMillis(Math.max(connectionTimeoutMs, 1));
        Conn c;
        try {
            c = p.get(timeout);
        } catch (StaunchException e) {
            if (e.status() == Status.CANCELLED && Thread.currentThread().isInterrupted()) {
                SQLException s = new SQLException(getPoolName() + " - Interrupted during connection acquisition", "08001");
                s.initCause(e);
                throw s;
            }
            throw SqlErrors.of(e);
        }
        return new StaunchConnection(this, c, autoCommit, readOnly, transactionIsolation, catalog);
    }

    @Override
    public Connection getConnection(String user, String pass) throws SQLException {
        if (java.util.Objects.equals(user, username) && java.util.Objects.equals(pass, password)) {
            return getConnection();
        }
        throw new SQLFeatureNotSupportedException("getConnection(user, password) with other credentials than the pool's "
                + "is not supported: a pool connects as one user", "0A000");
    }

    public boolean isClosed() {
        return closed;
    }

    /** Closes the pool (idempotent). Borrowed connections report closed on use. */
    @Override
    public void close() {
        Pool p;
        synchronized (this) {
            closed = true;
            openActions.clear();
            p = pool;
            for (ObjectName n : new ObjectName[] {mbeanName, configMbeanName}) {
                if (n != null) {
                    try {
                        ManagementFactory.getPlatformMBeanServer().unregisterMBean(n);
                    } catch (Exception e) {
                        // already gone
                    }
                }
            }
            mbeanName = null;
            configMbeanName = null;
        }
        if (p != null) {
            p.close();
        }
    }

    /** HikariCP's getHikariPoolMXBean(): this data source's management view. */
    public StaunchPoolMXBean getPoolMXBean() {
        return this;
    }

    /** The config MXBean as registered: the data source's own setters. */
    private static final class ConfigView implements StaunchConfigMXBean {
        private final StaunchDataSource ds;

        ConfigView(StaunchDataSource ds) {
            this.ds = ds;
        }

        @Override public int getMaximumPoolSize() { return ds.getMaximumPoolSize(); }
        @Override public void setMaximumPoolSize(int n) { ds.setMaximumPoolSize(n); }
        @Override public int getMinimumIdle() { return ds.getMinimumIdle(); }
        @Override public void setMinimumIdle(int n) { ds.setMinimumIdle(n); }
        @Override public String getPoolName() { return ds.getPoolName(); }
    }

    /** HikariCP's getHikariConfigMXBean(): the settings that can change while the pool runs. */
    public StaunchConfigMXBean getConfigMXBean() {
        return this;
    }

    /**
     * The open pool's figures as Prometheus text ({@link Pool#metricsText()}); empty when the pool is not open yet
     * (this does not open it) or is closed.
     */
    public String metricsText() {
        Pool p = pool;
        if (p == null || closed) {
            return "";
        }
        try {
            return p.metricsText();
        } catch (StaunchException e) {
            return ""; // closed meanwhile
        }
    }

    private Stats stats() {
        Pool p = pool;
        return p == null ? null : p.stats();
    }

    @Override public int getIdleConnections() { Stats s = stats(); return s == null ? 0 : (int) s.idle(); }
    @Override public int getActiveConnections() { Stats s = stats(); return s == null ? 0 : (int) s.active(); }
    @Override public int getTotalConnections() { Stats s = stats(); return s == null ? 0 : (int) s.total(); }
    @Override public int getThreadsAwaitingConnection() { Stats s = stats(); return s == null ? 0 : (int) s.waiting(); }

    @Override
    public void softEvictConnections() {
        Pool p = pool;
        if (p != null) {
            p.softEvict();
        }
    }

    /**
     * getConnection waits (within connectionTimeout, and an interrupt ends
     * the wait) until {@link #resumePool()}: the pool's own suspend
     * (staunch_pool_suspend), so the pool makes no connection meanwhile
     * either. Before the pool opens, it opens suspended.
     */
    @Override
    public synchronized void suspendPool() {
        suspended = true;
        Pool p = pool;
        if (p != null && !closed) {
            p.suspend();
        }
    }

    @Override
    public synchronized void resumePool() {
        suspended = false;
        Pool p = pool;
        if (p != null && !closed) {
            p.resume();
        }
    }

    // ---- DataSource odds and ends -------------------------------------

    @Override public PrintWriter getLogWriter() { return null; }
    @Override public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {
        if (seconds > 0) {
            setConnectionTimeout(seconds * 1000L);
        }
    }

    @Override public int getLoginTimeout() { return (int) (getConnectionTimeout() / 1000); }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException("staunch does not log through java.util.logging", "0A000");
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (iface == Pool.class) {
            return iface.cast(open());
        }
        return Errors.unwrap(this, iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this) || iface == Pool.class;
    }

    @Override
    public String toString() {
        return "StaunchDataSource (" + getPoolName() + ")";
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }
}
