package dev.staunch.jdbc;

import dev.staunch.Staunch;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * A {@link Driver} for {@code jdbc:staunch:} URLs, for the tools that take a
 * URL rather than a DataSource (Flyway's and Liquibase's command lines,
 * DriverManager). Registered by the service loader
 * ({@code META-INF/services/java.sql.Driver}).
 *
 * <p>Accepted: {@code jdbc:staunch://host:port/db?props} (the properties of a
 * {@code jdbc:mariadb://} URL, see {@link JdbcUrl}), and
 * {@code jdbc:staunch:mysql://...} or {@code jdbc:staunch:mariadb://...}.
 * Underneath is one staunch pool per distinct URL and properties, opened at
 * first use and kept for the life of the JVM (closed by a shutdown hook):
 * a connection's {@code close()} returns it to that pool.
 */
public final class StaunchDriver implements Driver {
    public static final String PREFIX = "jdbc:staunch:";

    private static final Map<String, StaunchDataSource> POOLS = new ConcurrentHashMap<>();

    static {
        try {
            DriverManager.registerDriver(new StaunchDriver());
        } catch (SQLException e) {
            throw new ExceptionInInitializerError(e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> POOLS.values().forEach(StaunchDataSource::close), "staunch-driver-close"));
    }

    @Override
    public boolean acceptsURL(String url) {
        return url != null && url.startsWith(PREFIX);
    }

    /** The URL this data source is given: jdbc:mariadb:// for jdbc:staunch://, the rest as written. */
    static String dataSourceUrl(String url) {
        String rest = url.substring(PREFIX.length());
        if (rest.startsWith("//")) {
            return "jdbc:mariadb:" + rest;
        }
        return rest.startsWith("mariadb:") ? "jdbc:" + rest : rest; // mysql://: staunch's own URL
    }

    @Override
    public Connection connect(String url, Properties info) throws SQLException {
        if (!acceptsURL(url)) {
            return null; // JDBC: another driver's URL
        }
        Map<String, String> props = new TreeMap<>();
        if (info != null) {
            for (String k : info.stringPropertyNames()) {
                props.put(k, info.getProperty(k));
            }
        }
        String key = url + "\u0000" + props;
        StaunchDataSource ds = POOLS.computeIfAbsent(key, k -> {
            StaunchDataSource d = new StaunchDataSource();
            d.setJdbcUrl(dataSourceUrl(url));
            d.setPoolName("staunch-driver-" + (POOLS.size() + 1));
            for (Map.Entry<String, String> e : props.entrySet()) {
                switch (e.getKey()) {
                    case "user":
                        d.setUsername(e.getValue());
                        break;
                    case "password":
                        d.setPassword(e.getValue());
                        break;
                    default:
                        d.addDataSourceProperty(e.getKey(), e.getValue());
                        break;
                }
            }
            return d;
        });
        return ds.getConnection();
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
        DriverPropertyInfo user = new DriverPropertyInfo("user", info == null ? null : info.getProperty("user"));
        DriverPropertyInfo password = new DriverPropertyInfo("password", null);
        return new DriverPropertyInfo[] {user, password};
    }

    @Override public int getMajorVersion() { return Staunch.versionNumber() / 10000; }
    @Override public int getMinorVersion() { return (Staunch.versionNumber() / 100) % 100; }
    @Override public boolean jdbcCompliant() { return false; }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException("staunch does not log through java.util.logging", "0A000");
    }
}
