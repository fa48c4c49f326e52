package dev.staunch.jdbc;

import dev.staunch.Staunch;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.RowIdLifetime;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Enough of {@link java.sql.DatabaseMetaData} for frameworks to identify the
 * server (product name "MariaDB" or "MySQL", version) and the driver's
 * capabilities. The catalog queries (getTables, getColumns, ...) throw
 * SQLFeatureNotSupportedException: query information_schema instead.
 */
public class StaunchDatabaseMetaData extends UnsupportedDatabaseMetaData {
    private final StaunchConnection connection;
    private String version;
    private String user;

    StaunchDatabaseMetaData(StaunchConnection connection) {
        this.connection = connection;
    }

    private void load() throws SQLException {
        if (version == null) {
            try (Statement s = connection.createStatement();
                 ResultSet r = s.executeQuery("SELECT VERSION(), CURRENT_USER()")) {
                r.next();
                version = r.getString(1);
                user = r.getString(2);
            }
        }
    }

    private boolean mariadb() throws SQLException {
        load();
        return version.toLowerCase(java.util.Locale.ROOT).contains("mariadb");
    }

    @Override public String getDatabaseProductName() throws SQLException { return mariadb() ? "MariaDB" : "MySQL"; }
    @Override public String getDatabaseProductVersion() throws SQLException { load(); return version; }

    private int versionPart(int i) throws SQLException {
        load();
        String[] p = version.split("[.-]");
        try {
            return p.length > i ? Integer.parseInt(p[i].replaceAll("\\D.*", "")) : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    @Override public int getDatabaseMajorVersion() throws SQLException { return versionPart(0); }
    @Override public int getDatabaseMinorVersion() throws SQLException { return versionPart(1); }
    @Override public String getDriverName() { return "staunch"; }
    @Override public String getDriverVersion() { return Staunch.version(); }
    @Override public int getDriverMajorVersion() { return Staunch.versionNumber() / 10000; }
    @Override public int getDriverMinorVersion() { return (Staunch.versionNumber() / 100) % 100; }
    @Override public int getJDBCMajorVersion() { return 4; }
    @Override public int getJDBCMinorVersion() { return 3; }
    @Override public String getURL() { return connection.dataSource().getJdbcUrl(); }
    @Override public String getUserName() throws SQLException { load(); return user; }
    @Override public Connection getConnection() { return connection; }
    @Override public boolean isReadOnly() throws SQLException { return connection.isReadOnly(); }
    @Override public boolean supportsTransactions() { return true; }
    @Override public boolean supportsBatchUpdates() { return true; }
    @Override public boolean supportsGetGeneratedKeys() { return true; }
    @Override public boolean supportsSavepoints() { return false; }
    @Override public boolean supportsNamedParameters() { return false; }
    @Override public boolean supportsMultipleOpenResults() { return false; }
    @Override public boolean supportsMultipleResultSets() { return true; }
    @Override public boolean supportsMultipleTransactions() { return true; }
    @Override public boolean supportsStoredProcedures() { return false; }
    @Override public boolean supportsResultSetType(int type) { return type == ResultSet.TYPE_FORWARD_ONLY; }
    @Override public boolean supportsResultSetConcurrency(int type, int c) { return type == ResultSet.TYPE_FORWARD_ONLY && c == ResultSet.CONCUR_READ_ONLY; }
    @Override public boolean supportsResultSetHoldability(int h) { return h == ResultSet.HOLD_CURSORS_OVER_COMMIT; }
    @Override public int getResultSetHoldability() { return ResultSet.HOLD_CURSORS_OVER_COMMIT; }
    @Override public boolean supportsTransactionIsolationLevel(int level) { return level != Connection.TRANSACTION_NONE; }
    @Override public int getDefaultTransactionIsolation() { return Connection.TRANSACTION_REPEATABLE_READ; }
    @Override public boolean supportsDataDefinitionAndDataManipulationTransactions() { return false; }
    @Override public boolean dataDefinitionCausesTransactionCommit() { return true; }
    @Override public boolean dataDefinitionIgnoredInTransactions() { return false; }
    @Override public String getIdentifierQuoteString() { return "`"; }
    @Override public String getCatalogSeparator() { return "."; }
    @Override public String getCatalogTerm() { return "database"; }
    @Override public String getSchemaTerm() { return ""; }
    @Override public boolean isCatalogAtStart() { return true; }
    @Override public int getSQLStateType() { return sqlStateSQL; }
    @Override public boolean locatorsUpdateCopy() { return true; }
    @Override public boolean supportsStatementPooling() { return false; }
    @Override public RowIdLifetime getRowIdLifetime() { return RowIdLifetime.ROWID_UNSUPPORTED; }
    @Override public boolean generatedKeyAlwaysReturned() { return true; }
    @Override public boolean supportsMixedCaseIdentifiers() { return false; }
    @Override public boolean storesLowerCaseIdentifiers() { return false; }
    @Override public boolean storesMixedCaseIdentifiers() { return true; }
    @Override public boolean storesUpperCaseIdentifiers() { return false; }
    @Override public boolean supportsMixedCaseQuotedIdentifiers() { return false; }
    @Override public boolean storesMixedCaseQuotedIdentifiers() { return true; }
    @Override public boolean nullsAreSortedLow() { return true; }
    @Override public boolean nullsAreSortedHigh() { return false; }
    @Override public boolean nullsAreSortedAtStart() { return false; }
    @Override public boolean nullsAreSortedAtEnd() { return false; }
    @Override public boolean usesLocalFiles() { return false; }
    @Override public boolean usesLocalFilePerTable() { return false; }
    @Override public String getSearchStringEscape() { return "\\"; }
    @Override public String getExtraNameCharacters() { return "#@"; }
    @Override public int getMaxConnections() { return 0; }
    @Override public boolean supportsColumnAliasing() { return true; }
    @Override public boolean supportsUnion() { return true; }
    @Override public boolean supportsUnionAll() { return true; }
    @Override public boolean supportsLimitedOuterJoins() { return true; }
    @Override public boolean supportsOuterJoins() { return true; }
    @Override public boolean supportsFullOuterJoins() { return false; }
    @Override public boolean supportsGroupBy() { return true; }
    @Override public boolean supportsOrderByUnrelated() { return true; }
    @Override public boolean supportsSubqueriesInExists() { return true; }
    @Override public boolean supportsSubqueriesInIns() { return true; }
    @Override public boolean supportsCorrelatedSubqueries() { return true; }
    @Override public boolean supportsLikeEscapeClause() { return true; }
    @Override public boolean supportsANSI92EntryLevelSQL() { return true; }
    @Override public boolean supportsOpenCursorsAcrossCommit() { return true; }
    @Override public boolean supportsOpenStatementsAcrossCommit() { return true; }
    @Override public boolean supportsOpenCursorsAcrossRollback() { return true; }
    @Override public boolean supportsOpenStatementsAcrossRollback() { return true; }
    @Override public boolean autoCommitFailureClosesAllResultSets() { return false; }
    @Override public boolean supportsStoredFunctionsUsingCallSyntax() { return false; }
    @Override public boolean supportsRefCursors() { return false; }
    @Override public boolean supportsSharding() { return false; }
    @Override public boolean allProceduresAreCallable() { return false; }
    @Override public boolean allTablesAreSelectable() { return false; }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return Errors.unwrap(this, iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this);
    }
}
