package dev.staunch.jdbc;

import dev.staunch.Staunch;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.RowIdLifetime;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * {@link DatabaseMetaData} for MariaDB and MySQL, answering as MariaDB
 * Connector/J does at its defaults ({@code useCatalogTerm=CATALOG}: a database
 * is a JDBC catalog, schemas are empty; {@code nullDatabaseMeansCurrent=false};
 * {@code tinyInt1isBit}, {@code transformedBitIsBoolean}, {@code yearIsDateType}).
 *
 * <p>What depends on the server is read from it once per connection
 * (version, {@code lower_case_table_names}, {@code max_allowed_packet}); the
 * catalog methods are SQL over {@code information_schema} run through this
 * connection's own statements, so they read what the server says at the
 * time of the call. Plain JDBC on purpose: nothing here needs the native
 * layer. Names and patterns are bound to placeholders ({@link Bound}), never
 * written into the text: the library writes every literal, for the
 * session's real {@code sql_mode}.
 *
 * <p>Where Connector/J's answer is not what the server does, this class
 * answers what the server does; {@code MetaDataTest} lists each such
 * difference with its reason.
 */
public class StaunchDatabaseMetaData extends UnsupportedDatabaseMetaData {
    private final StaunchConnection connection;
    private String version;
    private int lowerCaseTableNames = -1;
    private long maxAllowedPacket;

    StaunchDatabaseMetaData(StaunchConnection connection) {
        this.connection = connection;
    }

    private void load() throws SQLException {
        if (version == null) {
            try (Statement s = connection.createStatement();
                 ResultSet r = s.executeQuery("SELECT VERSION(), @@lower_case_table_names, @@max_allowed_packet")) {
                r.next();
                lowerCaseTableNames = r.getInt(2);
                maxAllowedPacket = r.getLong(3);
                version = r.getString(1);
            }
        }
    }

    private boolean mariadb() throws SQLException {
        load();
        return version.toLowerCase(Locale.ROOT).contains("mariadb");
    }

    private int versionPart(int i) throws SQLException {
        load();
        String[] p = version.split("[.-]");
        try {
            return p.length > i ? Integer.parseInt(p[i].replaceAll("\\D.*", "")) : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private boolean atLeast(int major, int minor) throws SQLException {
        int ma = versionPart(0);
        return ma > major || (ma == major && versionPart(1) >= minor);
    }

    // ---- identification ----

    @Override public String getDatabaseProductName() throws SQLException { return mariadb() ? "MariaDB" : "MySQL"; }
    @Override public String getDatabaseProductVersion() throws SQLException { load(); return version; }
    @Override public int getDatabaseMajorVersion() throws SQLException { return versionPart(0); }
    @Override public int getDatabaseMinorVersion() throws SQLException { return versionPart(1); }
    @Override public String getDriverName() { return "staunch"; }
    @Override public String getDriverVersion() { return Staunch.version(); }
    @Override public int getDriverMajorVersion() { return Staunch.versionNumber() / 10000; }
    @Override public int getDriverMinorVersion() { return (Staunch.versionNumber() / 100) % 100; }
    @Override public int getJDBCMajorVersion() { return 4; }
    @Override public int getJDBCMinorVersion() { return 3; }
    @Override public String getURL() { return connection.dataSource().getJdbcUrl(); }
    @Override public Connection getConnection() { return connection; }

    /** The user name the pool logs in with (as Connector/J: not CURRENT_USER()'s user@host). */
    @Override
    public String getUserName() throws SQLException {
        String u = connection.dataSource().getUsername();
        if (u != null && !u.isEmpty()) {
            return u;
        }
        try (Statement s = connection.createStatement(); ResultSet r = s.executeQuery("SELECT SUBSTRING_INDEX(USER(), '@', 1)")) {
            return r.next() ? r.getString(1) : null;
        }
    }

    /** The server's {@code @@read_only} (as Connector/J), not the connection's read-only hint. */
    @Override
    public boolean isReadOnly() throws SQLException {
        try (Statement s = connection.createStatement(); ResultSet r = s.executeQuery("SELECT @@read_only")) {
            r.next();
            String v = r.getString(1);
            return "1".equals(v) || "ON".equalsIgnoreCase(v);
        }
    }

    // ---- identifiers: what lower_case_table_names makes of them ----

    private int lctn() throws SQLException {
        load();
        return lowerCaseTableNames;
    }

    @Override public boolean supportsMixedCaseIdentifiers() throws SQLException { return lctn() == 0; }
    @Override public boolean storesUpperCaseIdentifiers() { return false; }
    @Override public boolean storesLowerCaseIdentifiers() throws SQLException { return lctn() == 1; }
    @Override public boolean storesMixedCaseIdentifiers() throws SQLException { return lctn() == 2; }
    @Override public boolean supportsMixedCaseQuotedIdentifiers() throws SQLException { return lctn() == 0; }
    @Override public boolean storesUpperCaseQuotedIdentifiers() { return false; }
    @Override public boolean storesLowerCaseQuotedIdentifiers() throws SQLException { return lctn() == 1; }
    @Override public boolean storesMixedCaseQuotedIdentifiers() throws SQLException { return lctn() == 2; }
    @Override public String getIdentifierQuoteString() { return "`"; }
    @Override public String getSearchStringEscape() { return "\\"; }
    @Override public String getExtraNameCharacters() { return "#@"; }

    // ---- SQL vocabulary (the server's reserved words and functions) ----

    @Override
    public String getSQLKeywords() {
        return "ACCESSIBLE,ADD,ALL,ALTER,ANALYZE,AND,AS,ASC,ASENSITIVE,BEFORE,BETWEEN,BIGINT,BINARY,BLOB,BOTH,BY,CALL,"
                + "CASCADE,CASE,CHANGE,CHAR,CHARACTER,CHECK,COLLATE,COLUMN,CONDITION,CONSTRAINT,CONTINUE,CONVERT,CREATE,"
                + "CROSS,CURRENT_DATE,CURRENT_ROLE,CURRENT_TIME,CURRENT_TIMESTAMP,CURRENT_USER,CURSOR,DATABASE,DATABASES,"
                + "DAY_HOUR,DAY_MICROSECOND,DAY_MINUTE,DAY_SECOND,DEC,DECIMAL,DECLARE,DEFAULT,DELAYED,DELETE,"
                + "DELETE_DOMAIN_ID,DESC,DESCRIBE,DETERMINISTIC,DISTINCT,DISTINCTROW,DIV,DO_DOMAIN_IDS,DOUBLE,DROP,DUAL,"
                + "EACH,ELSE,ELSEIF,ENCLOSED,ESCAPED,EXCEPT,EXISTS,EXIT,EXPLAIN,FALSE,FETCH,FLOAT,FLOAT4,FLOAT8,FOR,FORCE,"
                + "FOREIGN,FROM,FULLTEXT,GENERAL,GRANT,GROUP,HAVING,HIGH_PRIORITY,HOUR_MICROSECOND,HOUR_MINUTE,"
                + "HOUR_SECOND,IF,IGNORE,IGNORE_DOMAIN_IDS,IGNORE_SERVER_IDS,IN,INDEX,INFILE,INNER,INOUT,INSENSITIVE,"
                + "INSERT,INT,INT1,INT2,INT3,INT4,INT8,INTEGER,INTERSECT,INTERVAL,INTO,IS,ITERATE,JOIN,KEY,KEYS,KILL,"
                + "LEADING,LEAVE,LEFT,LIKE,LIMIT,LINEAR,LINES,LOAD,LOCALTIME,LOCALTIMESTAMP,LOCK,LONG,LONGBLOB,LONGTEXT,"
                + "LOOP,LOW_PRIORITY,MASTER_HEARTBEAT_PERIOD,MASTER_SSL_VERIFY_SERVER_CERT,MATCH,MAXVALUE,MEDIUMBLOB,"
                + "MEDIUMINT,MEDIUMTEXT,MIDDLEINT,MINUTE_MICROSECOND,MINUTE_SECOND,MOD,MODIFIES,NATURAL,NOT,"
                + "NO_WRITE_TO_BINLOG,NULL,NUMERIC,OFFSET,ON,OPTIMIZE,OPTION,OPTIONALLY,OR,ORDER,OUT,OUTER,OUTFILE,OVER,"
                + "PAGE_CHECKSUM,PARSE_VCOL_EXPR,PARTITION,PRECISION,PRIMARY,PROCEDURE,PURGE,RANGE,READ,READS,"
                + "READ_WRITE,REAL,RECURSIVE,REF_SYSTEM_ID,REFERENCES,REGEXP,RELEASE,RENAME,REPEAT,REPLACE,REQUIRE,"
                + "RESIGNAL,RESTRICT,RETURN,RETURNING,REVOKE,RIGHT,RLIKE,ROW_NUMBER,ROWS,SCHEMA,SCHEMAS,"
                + "SECOND_MICROSECOND,SELECT,SENSITIVE,SEPARATOR,SET,SHOW,SIGNAL,SLOW,SMALLINT,SPATIAL,SPECIFIC,SQL,"
                + "SQLEXCEPTION,SQLSTATE,SQLWARNING,SQL_BIG_RESULT,SQL_CALC_FOUND_ROWS,SQL_SMALL_RESULT,SSL,STARTING,"
                + "STATS_AUTO_RECALC,STATS_PERSISTENT,STATS_SAMPLE_PAGES,STRAIGHT_JOIN,TABLE,TERMINATED,THEN,TINYBLOB,"
                + "TINYINT,TINYTEXT,TO,TRAILING,TRIGGER,TRUE,UNDO,UNION,UNIQUE,UNLOCK,UNSIGNED,UPDATE,USAGE,USE,USING,"
                + "UTC_DATE,UTC_TIME,UTC_TIMESTAMP,VALUES,VARBINARY,VARCHAR,VARCHARACTER,VARYING,WHEN,WHERE,WHILE,"
                + "WINDOW,WITH,WRITE,XOR,YEAR_MONTH,ZEROFILL";
    }

    @Override
    public String getNumericFunctions() {
        return "DIV,ABS,ACOS,ASIN,ATAN,ATAN2,CEIL,CEILING,CONV,COS,COT,CRC32,DEGREES,EXP,FLOOR,GREATEST,LEAST,LN,LOG,"
                + "LOG10,LOG2,MOD,OCT,PI,POW,POWER,RADIANS,RAND,ROUND,SIGN,SIN,SQRT,TAN,TRUNCATE";
    }

    @Override
    public String getStringFunctions() {
        return "ASCII,BIN,BIT_LENGTH,CAST,CHARACTER_LENGTH,CHAR_LENGTH,CONCAT,CONCAT_WS,CONVERT,ELT,EXPORT_SET,"
                + "EXTRACTVALUE,FIELD,FIND_IN_SET,FORMAT,FROM_BASE64,HEX,INSTR,LCASE,LEFT,LENGTH,LIKE,LOAD_FILE,LOCATE,"
                + "LOWER,LPAD,LTRIM,MAKE_SET,MATCH AGAINST,MID,NOT LIKE,NOT REGEXP,OCTET_LENGTH,ORD,POSITION,QUOTE,"
                + "REPEAT,REPLACE,REVERSE,RIGHT,RPAD,RTRIM,SOUNDEX,SOUNDS LIKE,SPACE,STRCMP,SUBSTR,SUBSTRING,"
                + "SUBSTRING_INDEX,TO_BASE64,TRIM,UCASE,UNHEX,UPDATEXML,UPPER,WEIGHT_STRING";
    }

    @Override
    public String getSystemFunctions() {
        return "DATABASE,USER,SYSTEM_USER,SESSION_USER,LAST_INSERT_ID,VERSION";
    }

    @Override
    public String getTimeDateFunctions() {
        return "ADDDATE,ADDTIME,CONVERT_TZ,CURDATE,CURRENT_DATE,CURRENT_TIME,CURRENT_TIMESTAMP,CURTIME,DATEDIFF,"
                + "DATE_ADD,DATE_FORMAT,DATE_SUB,DAY,DAYNAME,DAYOFMONTH,DAYOFWEEK,DAYOFYEAR,EXTRACT,FROM_DAYS,"
                + "FROM_UNIXTIME,GET_FORMAT,HOUR,LAST_DAY,LOCALTIME,LOCALTIMESTAMP,MAKEDATE,MAKETIME,MICROSECOND,"
                + "MINUTE,MONTH,MONTHNAME,NOW,PERIOD_ADD,PERIOD_DIFF,QUARTER,SECOND,SEC_TO_TIME,STR_TO_DATE,SUBDATE,"
                + "SUBTIME,SYSDATE,TIMEDIFF,TIMESTAMPADD,TIMESTAMPDIFF,TIME_FORMAT,TIME_TO_SEC,TO_DAYS,TO_SECONDS,"
                + "UNIX_TIMESTAMP,UTC_DATE,UTC_TIME,UTC_TIMESTAMP,WEEK,WEEKDAY,WEEKOFYEAR,YEAR,YEARWEEK";
    }

    // ---- what the server supports ----

    @Override public boolean allProceduresAreCallable() { return true; }
    @Override public boolean allTablesAreSelectable() { return true; }
    /** NULL sorts lowest: first ascending, last descending. */
    @Override public boolean nullsAreSortedHigh() { return false; }
    @Override public boolean nullsAreSortedLow() { return true; }
    @Override public boolean nullsAreSortedAtStart() { return false; }
    @Override public boolean nullsAreSortedAtEnd() { return false; }
    @Override public boolean usesLocalFiles() { return false; }
    @Override public boolean usesLocalFilePerTable() { return false; }
    @Override public boolean supportsAlterTableWithAddColumn() { return true; }
    @Override public boolean supportsAlterTableWithDropColumn() { return true; }
    @Override public boolean supportsColumnAliasing() { return true; }
    @Override public boolean nullPlusNonNullIsNull() { return true; }
    @Override public boolean supportsConvert() { return true; }
    @Override public boolean supportsTableCorrelationNames() { return true; }
    @Override public boolean supportsDifferentTableCorrelationNames() { return true; }
    @Override public boolean supportsExpressionsInOrderBy() { return true; }
    @Override public boolean supportsOrderByUnrelated() { return true; }
    @Override public boolean supportsGroupBy() { return true; }
    @Override public boolean supportsGroupByUnrelated() { return true; }
    @Override public boolean supportsGroupByBeyondSelect() { return true; }
    @Override public boolean supportsLikeEscapeClause() { return true; }
    @Override public boolean supportsMultipleResultSets() { return true; }
    @Override public boolean supportsMultipleTransactions() { return true; }
    @Override public boolean supportsNonNullableColumns() { return true; }
    @Override public boolean supportsMinimumSQLGrammar() { return true; }
    @Override public boolean supportsCoreSQLGrammar() { return true; }
    @Override public boolean supportsExtendedSQLGrammar() { return true; }
    @Override public boolean supportsANSI92EntryLevelSQL() { return true; }
    @Override public boolean supportsANSI92IntermediateSQL() { return true; }
    /** No FULL OUTER JOIN (among others), so not full SQL-92. */
    @Override public boolean supportsANSI92FullSQL() { return false; }
    @Override public boolean supportsIntegrityEnhancementFacility() { return true; }
    @Override public boolean supportsOuterJoins() { return true; }
    /** MariaDB and MySQL have no FULL [OUTER] JOIN. */
    @Override public boolean supportsFullOuterJoins() { return false; }
    @Override public boolean supportsLimitedOuterJoins() { return true; }
    @Override public String getSchemaTerm() { return "schema"; }
    @Override public String getProcedureTerm() { return "procedure"; }
    @Override public String getCatalogTerm() { return "database"; }
    @Override public boolean isCatalogAtStart() { return true; }
    @Override public String getCatalogSeparator() { return "."; }
    @Override public boolean supportsSchemasInDataManipulation() { return false; }
    @Override public boolean supportsSchemasInProcedureCalls() { return false; }
    @Override public boolean supportsSchemasInTableDefinitions() { return false; }
    @Override public boolean supportsSchemasInIndexDefinitions() { return false; }
    @Override public boolean supportsSchemasInPrivilegeDefinitions() { return false; }
    @Override public boolean supportsCatalogsInDataManipulation() { return true; }
    @Override public boolean supportsCatalogsInProcedureCalls() { return true; }
    @Override public boolean supportsCatalogsInTableDefinitions() { return true; }
    @Override public boolean supportsCatalogsInIndexDefinitions() { return true; }
    @Override public boolean supportsCatalogsInPrivilegeDefinitions() { return true; }
    @Override public boolean supportsPositionedDelete() { return false; }
    @Override public boolean supportsPositionedUpdate() { return false; }
    @Override public boolean supportsSelectForUpdate() { return true; }
    /** CALL through Statement and PreparedStatement, and prepareCall with IN, OUT and INOUT parameters. */
    @Override public boolean supportsStoredProcedures() { return true; }
    @Override public boolean supportsSubqueriesInComparisons() { return true; }
    @Override public boolean supportsSubqueriesInExists() { return true; }
    @Override public boolean supportsSubqueriesInIns() { return true; }
    @Override public boolean supportsSubqueriesInQuantifieds() { return true; }
    @Override public boolean supportsCorrelatedSubqueries() { return true; }
    @Override public boolean supportsUnion() { return true; }
    @Override public boolean supportsUnionAll() { return true; }
    @Override public boolean supportsOpenCursorsAcrossCommit() { return true; }
    @Override public boolean supportsOpenCursorsAcrossRollback() { return true; }
    @Override public boolean supportsOpenStatementsAcrossCommit() { return true; }
    @Override public boolean supportsOpenStatementsAcrossRollback() { return true; }

    // ---- limits (0: no limit or unknown) ----

    @Override public int getMaxBinaryLiteralLength() { return Integer.MAX_VALUE; }
    @Override public int getMaxCharLiteralLength() { return Integer.MAX_VALUE; }
    @Override public int getMaxColumnNameLength() { return 64; }
    @Override public int getMaxColumnsInGroupBy() { return 64; }
    @Override public int getMaxColumnsInIndex() { return 16; }
    @Override public int getMaxColumnsInOrderBy() { return 64; }
    @Override public int getMaxColumnsInSelect() { return Short.MAX_VALUE; }
    @Override public int getMaxColumnsInTable() { return 0; }
    @Override public int getMaxConnections() { return 0; }
    @Override public int getMaxCursorNameLength() { return 0; }
    @Override public int getMaxIndexLength() { return 256; }
    @Override public int getMaxSchemaNameLength() { return 0; }
    @Override public int getMaxProcedureNameLength() { return 64; }
    @Override public int getMaxCatalogNameLength() { return 0; }
    @Override public int getMaxRowSize() { return 0; }
    @Override public boolean doesMaxRowSizeIncludeBlobs() { return false; }
    @Override public int getMaxStatements() { return 0; }
    @Override public int getMaxTableNameLength() { return 64; }
    @Override public int getMaxTablesInSelect() { return 256; }
    @Override public int getMaxUserNameLength() { return 0; }
    @Override public long getMaxLogicalLobSize() { return 4294967295L; }

    /** A statement is one packet: the server refuses one longer than {@code max_allowed_packet}. */
    @Override
    public int getMaxStatementLength() throws SQLException {
        load();
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, maxAllowedPacket - 1));
    }

    // ---- transactions, result sets, statements ----

    @Override public int getDefaultTransactionIsolation() { return Connection.TRANSACTION_REPEATABLE_READ; }
    @Override public boolean supportsTransactions() { return true; }

    @Override
    public boolean supportsTransactionIsolationLevel(int level) {
        return level == Connection.TRANSACTION_READ_UNCOMMITTED || level == Connection.TRANSACTION_READ_COMMITTED
                || level == Connection.TRANSACTION_REPEATABLE_READ || level == Connection.TRANSACTION_SERIALIZABLE;
    }

    @Override public boolean supportsDataDefinitionAndDataManipulationTransactions() { return true; }
    @Override public boolean supportsDataManipulationTransactionsOnly() { return false; }
    @Override public boolean dataDefinitionCausesTransactionCommit() { return true; }
    @Override public boolean dataDefinitionIgnoredInTransactions() { return false; }
    @Override public boolean supportsResultSetType(int type) { return type == ResultSet.TYPE_FORWARD_ONLY; }
    @Override public boolean supportsResultSetConcurrency(int type, int c) { return type == ResultSet.TYPE_FORWARD_ONLY && c == ResultSet.CONCUR_READ_ONLY; }
    @Override public boolean ownUpdatesAreVisible(int type) { return false; }
    @Override public boolean ownDeletesAreVisible(int type) { return false; }
    @Override public boolean ownInsertsAreVisible(int type) { return false; }
    @Override public boolean othersUpdatesAreVisible(int type) { return false; }
    @Override public boolean othersDeletesAreVisible(int type) { return false; }
    @Override public boolean othersInsertsAreVisible(int type) { return false; }
    @Override public boolean updatesAreDetected(int type) { return false; }
    @Override public boolean deletesAreDetected(int type) { return false; }
    @Override public boolean insertsAreDetected(int type) { return false; }
    @Override public boolean supportsBatchUpdates() { return true; }
    @Override public boolean supportsSavepoints() { return true; }
    @Override public boolean supportsNamedParameters() { return false; }
    @Override public boolean supportsMultipleOpenResults() { return false; }
    @Override public boolean supportsGetGeneratedKeys() { return true; }
    @Override public boolean supportsResultSetHoldability(int h) { return h == ResultSet.HOLD_CURSORS_OVER_COMMIT; }
    @Override public int getResultSetHoldability() { return ResultSet.HOLD_CURSORS_OVER_COMMIT; }
    @Override public int getSQLStateType() { return sqlStateSQL; }
    /** A Blob or Clob here is a copy of the value: changing it changes nothing in the database. */
    @Override public boolean locatorsUpdateCopy() { return true; }
    @Override public boolean supportsStatementPooling() { return false; }
    @Override public RowIdLifetime getRowIdLifetime() { return RowIdLifetime.ROWID_UNSUPPORTED; }
    @Override public boolean supportsStoredFunctionsUsingCallSyntax() { return true; }
    @Override public boolean autoCommitFailureClosesAllResultSets() { return false; }
    @Override public boolean generatedKeyAlwaysReturned() { return true; }
    @Override public boolean supportsRefCursors() { return false; }
    @Override public boolean supportsSharding() { return false; }

    @Override
    public boolean supportsConvert(int from, int to) {
        switch (from) {
            case Types.TINYINT:
            case Types.SMALLINT:
            case Types.INTEGER:
            case Types.BIGINT:
            case Types.REAL:
            case Types.FLOAT:
            case Types.DECIMAL:
            case Types.NUMERIC:
            case Types.DOUBLE:
            case Types.BIT:
            case Types.BOOLEAN:
            case Types.BLOB:
                return numeric(to) || text(to) || binary(to);
            case Types.CHAR:
            case Types.CLOB:
            case Types.VARCHAR:
            case Types.LONGVARCHAR:
            case Types.BINARY:
            case Types.VARBINARY:
            case Types.LONGVARBINARY:
                return numeric(to) || text(to) || binary(to) || temporal(to) || to == Types.BLOB || to == Types.CLOB
                            || to == Types.NCHAR || to == Types.LONGNVARCHAR || to == Types.NCLOB;
            case Types.DATE:
                return to == Types.DATE || text(to) || binary(to);
            case Types.TIME:
                return to == Types.TIME || text(to) || binary(to);
            case Types.TIMESTAMP:
                return temporal(to) || text(to) || binary(to);
            default:
                return false;
        }
    }

    private static boolean numeric(int t) {
        switch (t) {
            case Types.TINYINT:
            case Types.SMALLINT:
            case Types.INTEGER:
            case Types.BIGINT:
            case Types.REAL:
            case Types.FLOAT:
            case Types.DECIMAL:
            case Types.NUMERIC:
            case Types.DOUBLE:
            case Types.BIT:
            case Types.BOOLEAN:
                return true;
            default:
                return false;
        }
    }

    private static boolean text(int t) {
        return t == Types.CHAR || t == Types.VARCHAR || t == Types.LONGVARCHAR;
    }

    private static boolean binary(int t) {
        return t == Types.BINARY || t == Types.VARBINARY || t == Types.LONGVARBINARY;
    }

    private static boolean temporal(int t) {
        return t == Types.DATE || t == Types.TIME || t == Types.TIMESTAMP;
    }

    // ---- SQL building ----

    /**
     * A catalog query and the values of its {@code ?} placeholders, in order: names and patterns
     * are bound, never written into the text, so the library (which escapes for the session's
     * real {@code sql_mode}, or prepares) is the one writer of SQL literals.
     */
    private static final class Bound {
        final String sql;
        final List<String> params;

        Bound(String sql, List<String> params) {
            this.sql = sql;
            this.params = params;
        }
    }

    /** A query's WHERE clause, for this connection's catalog term. */
    private Where where(String select) {
        return new Where(select, connection.schemaTerm());
    }

    /** A WHERE clause built condition by condition, its values bound. */
    private static final class Where {
        private final StringBuilder sql;
        private final boolean schemaTerm;
        private final List<String> params = new ArrayList<>();
        private boolean first = true;

        Where(String select, boolean schemaTerm) {
            sql = new StringBuilder(select);
            this.schemaTerm = schemaTerm;
        }

        Where and(String condition) {
            sql.append(first ? " WHERE " : " AND ").append(condition);
            first = false;
            return this;
        }

        /** A condition with one placeholder, and its value. */
        private Where bind(String condition, String value) {
            params.add(value);
            return and(condition);
        }

        /** {@code expr IN (?, ...)} for the non-null values; none places no condition. */
        Where in(String expr, String[] values) {
            StringBuilder marks = new StringBuilder();
            for (String v : values) {
                if (v != null) {
                    marks.append(marks.length() == 0 ? "?" : ", ?");
                    params.add(v);
                }
            }
            return marks.length() == 0 ? this : and(expr + " IN (" + marks + ")");
        }

        /**
         * A database named exactly (a catalog argument: JDBC says it is no
         * pattern): null places no condition, "" means the current database.
         */
        Where database(String column, String db) {
            if (db == null) {
                return this;
            }
            return db.isEmpty() ? and(column + " = DATABASE()") : bind(column + " = ?", db);
        }

        /**
         * The database a method's arguments name: its catalog argument (exact), or under
         * {@code useCatalogTerm=SCHEMA} its schema argument (a pattern when {@code pattern}; the
         * catalog argument is then ignored, as Connector/J ignores it).
         */
        Where db(boolean pattern, String column, String catalog, String schema) {
            if (!schemaTerm) {
                return database(column, catalog);
            }
            return pattern ? pattern(column, schema) : database(column, schema);
        }

        /** A JDBC pattern ({@code %}, {@code _}, escaped by {@code \}); null or "%" places no condition. */
        Where pattern(String column, String p) {
            if (p == null || p.equals("%")) {
                return this;
            }
            boolean wild = p.indexOf('%') >= 0 || p.indexOf('_') >= 0;
            return bind(column + (wild ? " LIKE ?" : " = ?"), p);
        }

        /** A name matched exactly (a table argument: not a pattern). */
        Where exact(String column, String name) {
            return bind(column + " = ?", name);
        }

        Bound orderBy(String order) {
            return new Bound(sql.append(" ORDER BY ").append(order).toString(), params);
        }

        /** The clause as text, for a subquery: one that binds no value. */
        String text() {
            if (!params.isEmpty()) {
                throw new IllegalStateException("a subquery's clause binds values");
            }
            return sql.toString();
        }
    }

    private static final java.util.regex.Pattern CAT_COLUMNS = java.util.regex.Pattern.compile(
            "([A-Z_.]*SCHEMA) (\\w*)_CAT, NULL (\\w*)_SCHEM\\b");
    private static final java.util.regex.Pattern CAT_ORDER = java.util.regex.Pattern.compile(
            "\\b(TABLE|PKTABLE|FKTABLE|PROCEDURE|FUNCTION)_CAT\\b");

    /**
     * Under {@code useCatalogTerm=SCHEMA}, as Connector/J: the database moves from the *_CAT column
     * to the *_SCHEM one, the catalog column says "def", and the order follows the schema.
     */
    private String term(String sql) {
        if (!connection.schemaTerm()) {
            return sql;
        }
        String cols = CAT_COLUMNS.matcher(sql).replaceAll("'def' $2_CAT, $1 $3_SCHEM");
        int order = cols.lastIndexOf(" ORDER BY ");
        if (order < 0) {
            return cols;
        }
        return cols.substring(0, order) + CAT_ORDER.matcher(cols.substring(order)).replaceAll("$1_SCHEM");
    }

    /** Runs a catalog query; closing the result set closes its statement. */
    private ResultSet query(String sql) throws SQLException {
        return query(new Bound(sql, List.of()));
    }

    /** Runs a catalog query with its values bound; closing the result set closes its statement. */
    private ResultSet query(Bound q) throws SQLException {
        String sql = term(q.sql);
        Statement s = q.params.isEmpty() ? connection.createStatement() : connection.prepareStatement(sql);
        try {
            s.closeOnCompletion();
            if (s instanceof PreparedStatement) {
                PreparedStatement ps = (PreparedStatement) s;
                for (int i = 0; i < q.params.size(); i++) {
                    ps.setString(i + 1, q.params.get(i));
                }
                return ps.executeQuery();
            }
            return s.executeQuery(sql);
        } catch (SQLException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private static SQLException required(String method, String arg) {
        return new SQLNonTransientException(method + ": '" + arg + "' must not be null", "HY009");
    }

    /** java.sql.Types of an information_schema DATA_TYPE ({@code full}: the COLUMN_TYPE/DTD_IDENTIFIER column). */
    private static String jdbcType(String full) {
        return "CASE DATA_TYPE"
                + " WHEN 'bit' THEN " + Types.BIT
                + " WHEN 'tinyint' THEN IF(" + full + " LIKE 'tinyint(1)%', " + Types.BOOLEAN + ", " + Types.TINYINT + ")"
                + " WHEN 'smallint' THEN " + Types.SMALLINT
                + " WHEN 'mediumint' THEN " + Types.INTEGER
                + " WHEN 'int' THEN " + Types.INTEGER
                + " WHEN 'bigint' THEN " + Types.BIGINT
                + " WHEN 'float' THEN " + Types.REAL
                + " WHEN 'double' THEN " + Types.DOUBLE
                + " WHEN 'decimal' THEN " + Types.DECIMAL
                + " WHEN 'date' THEN " + Types.DATE
                + " WHEN 'year' THEN " + Types.DATE
                + " WHEN 'time' THEN " + Types.TIME
                + " WHEN 'datetime' THEN " + Types.TIMESTAMP
                + " WHEN 'timestamp' THEN " + Types.TIMESTAMP
                + " WHEN 'char' THEN " + Types.CHAR
                + " WHEN 'varchar' THEN " + Types.VARCHAR
                + " WHEN 'tinytext' THEN " + Types.VARCHAR
                + " WHEN 'text' THEN " + Types.LONGVARCHAR
                + " WHEN 'mediumtext' THEN " + Types.LONGVARCHAR
                + " WHEN 'longtext' THEN " + Types.LONGVARCHAR
                + " WHEN 'enum' THEN " + Types.VARCHAR
                + " WHEN 'set' THEN " + Types.VARCHAR
                + " WHEN 'binary' THEN " + Types.BINARY
                + " WHEN 'varbinary' THEN " + Types.VARBINARY
                + " WHEN 'tinyblob' THEN " + Types.VARBINARY
                + " WHEN 'blob' THEN " + Types.LONGVARBINARY
                + " WHEN 'mediumblob' THEN " + Types.LONGVARBINARY
                + " WHEN 'longblob' THEN " + Types.LONGVARBINARY
                + " WHEN 'null' THEN " + Types.NULL
                + " ELSE " + Types.OTHER + " END";
    }

    /** The type's name without its size ({@code INT UNSIGNED} of {@code int(10) unsigned}); tinyint(1) is BOOLEAN. */
    private static final String TYPE_NAME = "IF(COLUMN_TYPE LIKE 'tinyint(1)%', 'BOOLEAN', UCASE(IF(COLUMN_TYPE LIKE '%(%)%',"
            + " CONCAT(SUBSTRING(COLUMN_TYPE, 1, LOCATE('(', COLUMN_TYPE) - 1), SUBSTRING(COLUMN_TYPE, 1 + LOCATE(')', COLUMN_TYPE))),"
            + " COLUMN_TYPE)))";

    /** Characters of a date/time's text (with its fraction), else the precision or the length in characters. */
    private static final String COLUMN_SIZE = "CASE DATA_TYPE WHEN 'date' THEN 10"
            + " WHEN 'time' THEN IF(DATETIME_PRECISION = 0, 10, CAST(11 + DATETIME_PRECISION AS SIGNED))"
            + " WHEN 'datetime' THEN IF(DATETIME_PRECISION = 0, 19, CAST(20 + DATETIME_PRECISION AS SIGNED))"
            + " WHEN 'timestamp' THEN IF(DATETIME_PRECISION = 0, 19, CAST(20 + DATETIME_PRECISION AS SIGNED))"
            + " ELSE IF(NUMERIC_PRECISION IS NULL, LEAST(CHARACTER_MAXIMUM_LENGTH, " + Integer.MAX_VALUE + "), NUMERIC_PRECISION) END";

    // ---- catalog methods ----

    @Override
    public ResultSet getCatalogs() throws SQLException {
        if (connection.schemaTerm()) { // no catalogs to list (Connector/J answers none either)
            return query("SELECT '' TABLE_CAT FROM DUAL WHERE 1 = 0");
        }
        return query("SELECT SCHEMA_NAME TABLE_CAT FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME");
    }

    @Override
    public ResultSet getSchemas() throws SQLException {
        return getSchemas(null, null);
    }

    @Override
    public ResultSet getSchemas(String catalog, String schemaPattern) throws SQLException {
        if (connection.schemaTerm()) {
            return query(where("SELECT SCHEMA_NAME TABLE_SCHEM, 'def' TABLE_CATALOG FROM information_schema.SCHEMATA")
                    .pattern("SCHEMA_NAME", schemaPattern).orderBy("SCHEMA_NAME"));
        }
        return query("SELECT '' TABLE_SCHEM, '' TABLE_CATALOG FROM DUAL WHERE 1 = 0");
    }

    @Override
    public ResultSet getTableTypes() throws SQLException {
        StringBuilder b = new StringBuilder("SELECT 'LOCAL TEMPORARY' TABLE_TYPE");
        if (mariadb() && atLeast(10, 3)) {
            b.append(" UNION ALL SELECT 'SEQUENCE'");
        }
        b.append(" UNION ALL SELECT 'SYSTEM TABLE' UNION ALL SELECT 'SYSTEM VIEW' UNION ALL SELECT 'TABLE' UNION ALL SELECT 'VIEW'");
        return query("SELECT TABLE_TYPE FROM (" + b + ") t ORDER BY TABLE_TYPE");
    }

    private static final String TABLE_TYPE = "IF(TABLE_SCHEMA IN ('mysql', 'performance_schema', 'sys'),"
            + " CASE TABLE_TYPE WHEN 'BASE TABLE' THEN 'SYSTEM TABLE' WHEN 'VIEW' THEN 'SYSTEM VIEW' ELSE TABLE_TYPE END,"
            + " CASE TABLE_TYPE WHEN 'BASE TABLE' THEN 'TABLE' WHEN 'SYSTEM VERSIONED' THEN 'TABLE'"
            + " WHEN 'TEMPORARY' THEN 'LOCAL TEMPORARY' ELSE TABLE_TYPE END)";

    @Override
    public ResultSet getTables(String catalog, String schemaPattern, String tableNamePattern, String[] types) throws SQLException {
        Where w = where("SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, " + TABLE_TYPE + " TABLE_TYPE,"
                + " TABLE_COMMENT REMARKS, NULL TYPE_CAT, NULL TYPE_SCHEM, NULL TYPE_NAME, NULL SELF_REFERENCING_COL_NAME,"
                + " NULL REF_GENERATION FROM information_schema.TABLES")
                .db(true, "TABLE_SCHEMA", catalog, schemaPattern)
                .pattern("TABLE_NAME", tableNamePattern);
        if (types != null) {
            w.in(TABLE_TYPE, types);
        }
        return query(w.orderBy("TABLE_TYPE, TABLE_CAT, TABLE_NAME"));
    }

    @Override
    public ResultSet getColumns(String catalog, String schemaPattern, String tableNamePattern, String columnNamePattern) throws SQLException {
        return query(where("SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, COLUMN_NAME, "
                + jdbcType("COLUMN_TYPE") + " DATA_TYPE, " + TYPE_NAME + " TYPE_NAME, " + COLUMN_SIZE + " COLUMN_SIZE,"
                + " 65535 BUFFER_LENGTH,"
                + " CONVERT(IF(DATA_TYPE = 'tinyint', 0, NUMERIC_SCALE), UNSIGNED INTEGER) DECIMAL_DIGITS,"
                + " 10 NUM_PREC_RADIX, IF(IS_NULLABLE = 'YES', " + columnNullable + ", " + columnNoNulls + ") NULLABLE,"
                + " COLUMN_COMMENT REMARKS, COLUMN_DEFAULT COLUMN_DEF, 0 SQL_DATA_TYPE, 0 SQL_DATETIME_SUB,"
                + " LEAST(CHARACTER_OCTET_LENGTH, " + Integer.MAX_VALUE + ") CHAR_OCTET_LENGTH, ORDINAL_POSITION,"
                + " IS_NULLABLE, NULL SCOPE_CATALOG, NULL SCOPE_SCHEMA, NULL SCOPE_TABLE, NULL SOURCE_DATA_TYPE,"
                + " IF(EXTRA = 'auto_increment', 'YES', 'NO') IS_AUTOINCREMENT,"
                + " IF(EXTRA IN ('VIRTUAL', 'PERSISTENT', 'STORED', 'VIRTUAL GENERATED', 'STORED GENERATED'), 'YES', 'NO') IS_GENERATEDCOLUMN"
                + " FROM information_schema.COLUMNS")
                .db(true, "TABLE_SCHEMA", catalog, schemaPattern)
                .pattern("TABLE_NAME", tableNamePattern)
                .pattern("COLUMN_NAME", columnNamePattern)
                .orderBy("TABLE_CAT, TABLE_NAME, ORDINAL_POSITION"));
    }

    @Override
    public ResultSet getPrimaryKeys(String catalog, String schema, String table) throws SQLException {
        if (table == null) {
            throw required("getPrimaryKeys", "table");
        }
        return query(where("SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, COLUMN_NAME,"
                + " SEQ_IN_INDEX KEY_SEQ, INDEX_NAME PK_NAME FROM information_schema.STATISTICS")
                .and("INDEX_NAME = 'PRIMARY'")
                .db(false, "TABLE_SCHEMA", catalog, schema)
                .exact("TABLE_NAME", table)
                .orderBy("COLUMN_NAME"));
    }

    @Override
    public ResultSet getIndexInfo(String catalog, String schema, String table, boolean unique, boolean approximate) throws SQLException {
        if (table == null) {
            throw required("getIndexInfo", "table");
        }
        Where w = where("SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, NON_UNIQUE,"
                + (connection.schemaTerm() ? " 'def'" : " TABLE_SCHEMA") + " INDEX_QUALIFIER, INDEX_NAME, " + tableIndexOther + " TYPE, SEQ_IN_INDEX ORDINAL_POSITION,"
                + " COLUMN_NAME, COLLATION ASC_OR_DESC, CARDINALITY, NULL PAGES, NULL FILTER_CONDITION"
                + " FROM information_schema.STATISTICS")
                .db(false, "TABLE_SCHEMA", catalog, schema)
                .exact("TABLE_NAME", table);
        if (unique) {
            w.and("NON_UNIQUE = 0");
        }
        return query(w.orderBy("NON_UNIQUE, TYPE, INDEX_NAME, ORDINAL_POSITION"));
    }

    /** Foreign key columns, from KEY_COLUMN_USAGE joined to REFERENTIAL_CONSTRAINTS. */
    private static final String KEYS = "SELECT KCU.REFERENCED_TABLE_SCHEMA PKTABLE_CAT, NULL PKTABLE_SCHEM,"
            + " KCU.REFERENCED_TABLE_NAME PKTABLE_NAME, KCU.REFERENCED_COLUMN_NAME PKCOLUMN_NAME,"
            + " KCU.TABLE_SCHEMA FKTABLE_CAT, NULL FKTABLE_SCHEM, KCU.TABLE_NAME FKTABLE_NAME, KCU.COLUMN_NAME FKCOLUMN_NAME,"
            + " KCU.POSITION_IN_UNIQUE_CONSTRAINT KEY_SEQ, " + rule("RC.UPDATE_RULE") + " UPDATE_RULE, "
            + rule("RC.DELETE_RULE") + " DELETE_RULE, RC.CONSTRAINT_NAME FK_NAME, RC.UNIQUE_CONSTRAINT_NAME PK_NAME, "
            + importedKeyNotDeferrable + " DEFERRABILITY"
            + " FROM information_schema.KEY_COLUMN_USAGE KCU JOIN information_schema.REFERENTIAL_CONSTRAINTS RC"
            + " ON KCU.CONSTRAINT_SCHEMA = RC.CONSTRAINT_SCHEMA AND KCU.CONSTRAINT_NAME = RC.CONSTRAINT_NAME"
            + " AND KCU.TABLE_NAME = RC.TABLE_NAME";

    private static String rule(String column) {
        return "CASE " + column + " WHEN 'CASCADE' THEN " + importedKeyCascade + " WHEN 'SET NULL' THEN " + importedKeySetNull
                + " WHEN 'SET DEFAULT' THEN " + importedKeySetDefault + " WHEN 'NO ACTION' THEN " + importedKeyNoAction
                + " ELSE " + importedKeyRestrict + " END";
    }

    @Override
    public ResultSet getImportedKeys(String catalog, String schema, String table) throws SQLException {
        if (table == null) {
            throw required("getImportedKeys", "table");
        }
        return query(where(KEYS).db(false, "KCU.TABLE_SCHEMA", catalog, schema).exact("KCU.TABLE_NAME", table)
                .orderBy("PKTABLE_CAT, PKTABLE_NAME, KEY_SEQ"));
    }

    @Override
    public ResultSet getExportedKeys(String catalog, String schema, String table) throws SQLException {
        if (table == null) {
            throw required("getExportedKeys", "table");
        }
        return query(where(KEYS).db(false, "KCU.REFERENCED_TABLE_SCHEMA", catalog, schema).exact("KCU.REFERENCED_TABLE_NAME", table)
                .orderBy("FKTABLE_CAT, FKTABLE_NAME, KEY_SEQ"));
    }

    @Override
    public ResultSet getCrossReference(String parentCatalog, String parentSchema, String parentTable,
                                       String foreignCatalog, String foreignSchema, String foreignTable) throws SQLException {
        Where w = where(KEYS).db(false, "KCU.REFERENCED_TABLE_SCHEMA", parentCatalog, parentSchema).db(false, "KCU.TABLE_SCHEMA", foreignCatalog, foreignSchema);
        if (parentTable != null) {
            w.exact("KCU.REFERENCED_TABLE_NAME", parentTable);
        }
        if (foreignTable != null) {
            w.exact("KCU.TABLE_NAME", foreignTable);
        }
        return query(w.orderBy("FKTABLE_CAT, FKTABLE_NAME, KEY_SEQ"));
    }

    /**
     * The primary key's columns, else (when the table has none) its unique
     * keys' columns; generated columns are pseudo columns.
     */
    @Override
    public ResultSet getBestRowIdentifier(String catalog, String schema, String table, int scope, boolean nullable) throws SQLException {
        if (table == null) {
            throw required("getBestRowIdentifier", "table");
        }
        String noPk = where("SELECT 1 FROM information_schema.COLUMNS P").and("P.COLUMN_KEY = 'PRI'")
                .and("P.TABLE_SCHEMA = C.TABLE_SCHEMA").and("P.TABLE_NAME = C.TABLE_NAME").text();
        Where w = where("SELECT " + bestRowSession + " SCOPE, COLUMN_NAME, " + jdbcType("COLUMN_TYPE") + " DATA_TYPE,"
                + " DATA_TYPE TYPE_NAME, IF(NUMERIC_PRECISION IS NULL, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION) COLUMN_SIZE,"
                + " 0 BUFFER_LENGTH, NUMERIC_SCALE DECIMAL_DIGITS,"
                + " IF(EXTRA IN ('VIRTUAL', 'PERSISTENT', 'STORED', 'VIRTUAL GENERATED', 'STORED GENERATED'), "
                + bestRowPseudo + ", " + bestRowNotPseudo + ") PSEUDO_COLUMN FROM information_schema.COLUMNS C")
                .and("(COLUMN_KEY = 'PRI' OR (COLUMN_KEY = 'UNI' AND NOT EXISTS (" + noPk + ")))")
                .db(false, "TABLE_SCHEMA", catalog, schema)
                .exact("TABLE_NAME", table);
        if (!nullable) {
            w.and("IS_NULLABLE = 'NO'");
        }
        return query(w.orderBy("ORDINAL_POSITION"));
    }

    /** Columns the server changes whenever the row changes: {@code ON UPDATE CURRENT_TIMESTAMP}. */
    @Override
    public ResultSet getVersionColumns(String catalog, String schema, String table) throws SQLException {
        if (table == null) {
            throw required("getVersionColumns", "table");
        }
        return query(where("SELECT NULL SCOPE, COLUMN_NAME, " + jdbcType("COLUMN_TYPE") + " DATA_TYPE, "
                + TYPE_NAME + " TYPE_NAME, " + COLUMN_SIZE + " COLUMN_SIZE, 65535 BUFFER_LENGTH,"
                + " DATETIME_PRECISION DECIMAL_DIGITS, " + versionColumnNotPseudo + " PSEUDO_COLUMN FROM information_schema.COLUMNS")
                .and("EXTRA LIKE '%on update%'")
                .db(false, "TABLE_SCHEMA", catalog, schema)
                .exact("TABLE_NAME", table)
                .orderBy("ORDINAL_POSITION"));
    }

    @Override
    public ResultSet getProcedures(String catalog, String schemaPattern, String procedureNamePattern) throws SQLException {
        return query(where("SELECT ROUTINE_SCHEMA PROCEDURE_CAT, NULL PROCEDURE_SCHEM, ROUTINE_NAME PROCEDURE_NAME,"
                + " NULL RESERVED1, NULL RESERVED2, NULL RESERVED3, ROUTINE_COMMENT REMARKS,"
                + " CASE ROUTINE_TYPE WHEN 'FUNCTION' THEN " + procedureReturnsResult + " WHEN 'PROCEDURE' THEN " + procedureNoResult
                + " ELSE " + procedureResultUnknown + " END PROCEDURE_TYPE, SPECIFIC_NAME FROM information_schema.ROUTINES")
                .db(true, "ROUTINE_SCHEMA", catalog, schemaPattern)
                .pattern("ROUTINE_NAME", procedureNamePattern)
                .orderBy("PROCEDURE_CAT, PROCEDURE_NAME, SPECIFIC_NAME"));
    }

    private static final String PARAM_SIZE = "CASE DATA_TYPE WHEN 'date' THEN 10"
            + " WHEN 'time' THEN IF(DATETIME_PRECISION = 0, 10, CAST(11 + DATETIME_PRECISION AS SIGNED))"
            + " WHEN 'datetime' THEN IF(DATETIME_PRECISION = 0, 19, CAST(20 + DATETIME_PRECISION AS SIGNED))"
            + " WHEN 'timestamp' THEN IF(DATETIME_PRECISION = 0, 19, CAST(20 + DATETIME_PRECISION AS SIGNED))"
            + " ELSE IF(NUMERIC_PRECISION IS NULL, LEAST(CHARACTER_MAXIMUM_LENGTH, " + Integer.MAX_VALUE + "), NUMERIC_PRECISION) END";

    @Override
    public ResultSet getProcedureColumns(String catalog, String schemaPattern, String procedureNamePattern, String columnNamePattern) throws SQLException {
        return query(where("SELECT SPECIFIC_SCHEMA PROCEDURE_CAT, NULL PROCEDURE_SCHEM, SPECIFIC_NAME PROCEDURE_NAME,"
                + " PARAMETER_NAME COLUMN_NAME, CASE PARAMETER_MODE WHEN 'IN' THEN " + procedureColumnIn
                + " WHEN 'OUT' THEN " + procedureColumnOut + " WHEN 'INOUT' THEN " + procedureColumnInOut
                + " ELSE IF(PARAMETER_MODE IS NULL, " + procedureColumnReturn + ", " + procedureColumnUnknown + ") END COLUMN_TYPE, "
                + jdbcType("DTD_IDENTIFIER") + " DATA_TYPE, DATA_TYPE TYPE_NAME, " + PARAM_SIZE + " `PRECISION`, "
                + PARAM_SIZE + " `LENGTH`, CASE DATA_TYPE WHEN 'time' THEN CAST(DATETIME_PRECISION AS SIGNED)"
                + " WHEN 'datetime' THEN CAST(DATETIME_PRECISION AS SIGNED) WHEN 'timestamp' THEN CAST(DATETIME_PRECISION AS SIGNED)"
                + " ELSE NUMERIC_SCALE END `SCALE`, 10 RADIX, " + procedureNullableUnknown + " NULLABLE, NULL REMARKS,"
                + " NULL COLUMN_DEF, 0 SQL_DATA_TYPE, 0 SQL_DATETIME_SUB, CHARACTER_OCTET_LENGTH CHAR_OCTET_LENGTH,"
                + " ORDINAL_POSITION, '' IS_NULLABLE, SPECIFIC_NAME FROM information_schema.PARAMETERS")
                .db(true, "SPECIFIC_SCHEMA", catalog, schemaPattern)
                .pattern("SPECIFIC_NAME", procedureNamePattern)
                .pattern("PARAMETER_NAME", columnNamePattern)
                .orderBy("SPECIFIC_SCHEMA, SPECIFIC_NAME, ORDINAL_POSITION"));
    }

    @Override
    public ResultSet getFunctions(String catalog, String schemaPattern, String functionNamePattern) throws SQLException {
        return query(where("SELECT ROUTINE_SCHEMA FUNCTION_CAT, NULL FUNCTION_SCHEM, ROUTINE_NAME FUNCTION_NAME,"
                + " ROUTINE_COMMENT REMARKS, " + functionNoTable + " FUNCTION_TYPE, SPECIFIC_NAME FROM information_schema.ROUTINES")
                .and("ROUTINE_TYPE = 'FUNCTION'")
                .db(true, "ROUTINE_SCHEMA", catalog, schemaPattern)
                .pattern("ROUTINE_NAME", functionNamePattern)
                .orderBy("FUNCTION_CAT, FUNCTION_NAME, SPECIFIC_NAME"));
    }

    @Override
    public ResultSet getFunctionColumns(String catalog, String schemaPattern, String functionNamePattern, String columnNamePattern) throws SQLException {
        return query(where("SELECT SPECIFIC_SCHEMA FUNCTION_CAT, NULL FUNCTION_SCHEM, SPECIFIC_NAME FUNCTION_NAME,"
                + " PARAMETER_NAME COLUMN_NAME, CASE PARAMETER_MODE WHEN 'IN' THEN " + functionColumnIn
                + " WHEN 'OUT' THEN " + functionColumnOut + " WHEN 'INOUT' THEN " + functionColumnInOut
                + " ELSE " + functionReturn + " END COLUMN_TYPE, " + jdbcType("DTD_IDENTIFIER") + " DATA_TYPE,"
                + " DATA_TYPE TYPE_NAME, NUMERIC_PRECISION `PRECISION`, CHARACTER_MAXIMUM_LENGTH `LENGTH`, NUMERIC_SCALE `SCALE`,"
                + " 10 RADIX, " + functionNullableUnknown + " NULLABLE, NULL REMARKS, CHARACTER_OCTET_LENGTH CHAR_OCTET_LENGTH,"
                + " ORDINAL_POSITION, '' IS_NULLABLE, SPECIFIC_NAME FROM information_schema.PARAMETERS")
                .and("ROUTINE_TYPE = 'FUNCTION'")
                .db(true, "SPECIFIC_SCHEMA", catalog, schemaPattern)
                .pattern("SPECIFIC_NAME", functionNamePattern)
                .pattern("PARAMETER_NAME", columnNamePattern)
                .orderBy("FUNCTION_CAT, FUNCTION_NAME, SPECIFIC_NAME, ORDINAL_POSITION"));
    }

    @Override
    public ResultSet getTablePrivileges(String catalog, String schemaPattern, String tableNamePattern) throws SQLException {
        return query(where("SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, NULL GRANTOR, GRANTEE,"
                + " PRIVILEGE_TYPE PRIVILEGE, IS_GRANTABLE FROM information_schema.TABLE_PRIVILEGES")
                .db(true, "TABLE_SCHEMA", catalog, schemaPattern)
                .pattern("TABLE_NAME", tableNamePattern)
                .orderBy("TABLE_CAT, TABLE_NAME, PRIVILEGE"));
    }

    @Override
    public ResultSet getColumnPrivileges(String catalog, String schema, String table, String columnNamePattern) throws SQLException {
        if (table == null) {
            throw required("getColumnPrivileges", "table");
        }
        return query(where("SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, COLUMN_NAME, NULL GRANTOR,"
                + " GRANTEE, PRIVILEGE_TYPE PRIVILEGE, IS_GRANTABLE FROM information_schema.COLUMN_PRIVILEGES")
                .db(false, "TABLE_SCHEMA", catalog, schema)
                .exact("TABLE_NAME", table)
                .pattern("COLUMN_NAME", columnNamePattern)
                .orderBy("COLUMN_NAME, PRIVILEGE"));
    }

    @Override
    public ResultSet getClientInfoProperties() throws SQLException {
        return query("SELECT 'ApplicationName' NAME, 16777215 MAX_LEN, '' DEFAULT_VALUE,"
                + " 'The name of the application currently utilizing the connection' DESCRIPTION"
                + " UNION ALL SELECT 'ClientHostname', 16777215, '',"
                + " 'The hostname of the computer the application using the connection is running on'"
                + " UNION ALL SELECT 'ClientUser', 16777215, '', 'The name of the user that the application using the connection"
                + " is performing work for. This may not be the same as the user name that was used in establishing the connection.'");
    }

    /** One row of getTypeInfo: name, java.sql.Types, precision, literal quote, create params, case sensitive, unsigned, auto increment, scale range. */
    private static final class TypeRow {
        private final String name;
        private final int type;
        private final long precision;
        private final String quote;
        private final String params;
        private final boolean caseSensitive;
        private final boolean unsigned;
        private final boolean autoIncrement;
        private final int minScale;
        private final int maxScale;

        public TypeRow(String name, int type, long precision, String quote, String params, boolean caseSensitive, boolean unsigned, boolean autoIncrement, int minScale, int maxScale) {
            this.name = name;
            this.type = type;
            this.precision = precision;
            this.quote = quote;
            this.params = params;
            this.caseSensitive = caseSensitive;
            this.unsigned = unsigned;
            this.autoIncrement = autoIncrement;
            this.minScale = minScale;
            this.maxScale = maxScale;
        }

        public String name() {
            return name;
        }

        public int type() {
            return type;
        }

        public long precision() {
            return precision;
        }

        public String quote() {
            return quote;
        }

        public String params() {
            return params;
        }

        public boolean caseSensitive() {
            return caseSensitive;
        }

        public boolean unsigned() {
            return unsigned;
        }

        public boolean autoIncrement() {
            return autoIncrement;
        }

        public int minScale() {
            return minScale;
        }

        public int maxScale() {
            return maxScale;
        }

        @Override
        public boolean equals(Object other) {
            if (this == other) {
                return true;
            }
            if (!(other instanceof TypeRow)) {
                return false;
            }
            TypeRow o = (TypeRow) other;
            return Objects.equals(name, o.name) && type == o.type && precision == o.precision && Objects.equals(quote, o.quote) && Objects.equals(params, o.params) && caseSensitive == o.caseSensitive && unsigned == o.unsigned && autoIncrement == o.autoIncrement && minScale == o.minScale && maxScale == o.maxScale;
        }

        @Override
        public int hashCode() {
            return Objects.hash(name, type, precision, quote, params, caseSensitive, unsigned, autoIncrement, minScale, maxScale);
        }

        @Override
        public String toString() {
            return "TypeRow[name=" + name + ", type=" + type + ", precision=" + precision + ", quote=" + quote + ", params=" + params + ", caseSensitive=" + caseSensitive + ", unsigned=" + unsigned + ", autoIncrement=" + autoIncrement + ", minScale=" + minScale + ", maxScale=" + maxScale + "]";
        }
    }

    private static final String INT_PARAMS = "[(M)] [UNSIGNED] [ZEROFILL]";
    private static final String CHARSET = "[CHARACTER SET charset_name] [COLLATE collation_name]";

    private static final TypeRow[] TYPES = {
        new TypeRow("BIT", Types.BIT, 1, "", "[(M)]", true, false, false, 0, 0),
        new TypeRow("TINYINT", Types.TINYINT, 3, "", INT_PARAMS, true, false, true, 0, 0),
        new TypeRow("TINYINT UNSIGNED", Types.TINYINT, 3, "", INT_PARAMS, true, true, true, 0, 0),
        new TypeRow("BIGINT", Types.BIGINT, 19, "", INT_PARAMS, true, false, true, 0, 0),
        new TypeRow("BIGINT UNSIGNED", Types.BIGINT, 20, "", "[(M)] [ZEROFILL]", true, true, true, 0, 0),
        new TypeRow("LONG VARBINARY", Types.LONGVARBINARY, 16777215, "'", "", true, false, false, 0, 0),
        new TypeRow("MEDIUMBLOB", Types.LONGVARBINARY, 16777215, "'", "", true, false, false, 0, 0),
        new TypeRow("LONGBLOB", Types.LONGVARBINARY, Integer.MAX_VALUE, "'", "", true, false, false, 0, 0),
        new TypeRow("BLOB", Types.LONGVARBINARY, 65535, "'", "", true, false, false, 0, 0),
        new TypeRow("TINYBLOB", Types.VARBINARY, 255, "'", "", true, false, false, 0, 0),
        new TypeRow("VARBINARY", Types.VARBINARY, 255, "'", "(M)", true, false, false, 0, 0),
        new TypeRow("BINARY", Types.BINARY, 255, "'", "(M)", true, false, false, 0, 0),
        new TypeRow("LONG VARCHAR", Types.LONGVARCHAR, 16777215, "'", CHARSET, false, false, false, 0, 0),
        new TypeRow("MEDIUMTEXT", Types.LONGVARCHAR, 16777215, "'", CHARSET, false, false, false, 0, 0),
        new TypeRow("LONGTEXT", Types.LONGVARCHAR, Integer.MAX_VALUE, "'", CHARSET, false, false, false, 0, 0),
        new TypeRow("TEXT", Types.LONGVARCHAR, 65535, "'", CHARSET, false, false, false, 0, 0),
        new TypeRow("CHAR", Types.CHAR, 255, "'", "[(M)] " + CHARSET, false, false, false, 0, 0),
        new TypeRow("NUMERIC", Types.NUMERIC, 65, "", "[(M[,D])] [ZEROFILL]", true, false, true, -308, 308),
        new TypeRow("DECIMAL", Types.DECIMAL, 65, "", "[(M[,D])] [ZEROFILL]", true, false, true, -308, 308),
        new TypeRow("INTEGER", Types.INTEGER, 10, "", INT_PARAMS, true, false, true, 0, 0),
        new TypeRow("INTEGER UNSIGNED", Types.INTEGER, 10, "", "[(M)] [ZEROFILL]", true, true, true, 0, 0),
        new TypeRow("INT", Types.INTEGER, 10, "", INT_PARAMS, true, false, true, 0, 0),
        new TypeRow("INT UNSIGNED", Types.INTEGER, 10, "", "[(M)] [ZEROFILL]", true, true, true, 0, 0),
        new TypeRow("MEDIUMINT", Types.INTEGER, 7, "", INT_PARAMS, true, false, true, 0, 0),
        new TypeRow("MEDIUMINT UNSIGNED", Types.INTEGER, 8, "", "[(M)] [ZEROFILL]", true, true, true, 0, 0),
        new TypeRow("SMALLINT", Types.SMALLINT, 5, "", INT_PARAMS, true, false, true, 0, 0),
        new TypeRow("SMALLINT UNSIGNED", Types.SMALLINT, 5, "", "[(M)] [ZEROFILL]", true, true, true, 0, 0),
        new TypeRow("FLOAT", Types.REAL, 10, "", "[(M,D)] [ZEROFILL]", false, false, true, -38, 38),
        new TypeRow("DOUBLE", Types.DOUBLE, 17, "", "[(M,D)] [ZEROFILL]", false, false, true, -308, 308),
        new TypeRow("DOUBLE PRECISION", Types.DOUBLE, 17, "", "[(M,D)] [ZEROFILL]", false, false, true, -308, 308),
        new TypeRow("REAL", Types.DOUBLE, 17, "", "[(M,D)] [ZEROFILL]", false, false, true, -308, 308),
        new TypeRow("VARCHAR", Types.VARCHAR, 255, "'", "(M) " + CHARSET, false, false, false, 0, 0),
        new TypeRow("ENUM", Types.VARCHAR, 65535, "'", "('value1','value2',...) " + CHARSET, false, false, false, 0, 0),
        new TypeRow("TINYTEXT", Types.VARCHAR, 255, "'", CHARSET, false, false, false, 0, 0),
        new TypeRow("SET", Types.VARCHAR, 64, "'", "('value1','value2',...) " + CHARSET, false, false, false, 0, 0),
        new TypeRow("BOOL", Types.BOOLEAN, 1, "", "", true, false, false, 0, 0),
        new TypeRow("BOOLEAN", Types.BOOLEAN, 1, "", "", true, false, false, 0, 0),
        new TypeRow("DATE", Types.DATE, 10, "'", "", false, false, false, 0, 0),
        new TypeRow("TIME", Types.TIME, 17, "'", "[(fsp)]", false, false, false, 0, 6),
        new TypeRow("DATETIME", Types.TIMESTAMP, 26, "'", "[(fsp)]", false, false, false, 0, 6),
        new TypeRow("TIMESTAMP", Types.TIMESTAMP, 26, "'", "[(fsp)]", false, false, false, 0, 6),
    };

    /** The server's types, ordered by DATA_TYPE then by how closely each maps to it (JDBC's order). */
    @Override
    public ResultSet getTypeInfo() throws SQLException {
        java.util.List<TypeRow> rows = new java.util.ArrayList<>(java.util.List.of(TYPES));
        if (mariadb() && atLeast(10, 7)) {
            rows.add(new TypeRow("UUID", Types.OTHER, 36, "'", "", false, true, false, 0, 0));
        }
        if (mariadb() && atLeast(11, 7)) {
            rows.add(new TypeRow("VECTOR", Types.VARBINARY, 65532, "'", "(M)", true, false, false, 0, 0));
        }
        rows.sort(java.util.Comparator.comparingInt(TypeRow::type));
        StringBuilder b = new StringBuilder();
        List<String> params = new ArrayList<>();
        for (TypeRow t : rows) {
            params.addAll(java.util.Arrays.asList(t.name(), t.quote(), t.quote(), t.params(), t.name()));
            b.append(b.length() == 0 ? "SELECT " : " UNION ALL SELECT ")
                    .append("? TYPE_NAME, ")
                    .append(t.type()).append(" DATA_TYPE, ")
                    .append(t.precision()).append(" `PRECISION`, ")
                    .append("? LITERAL_PREFIX, ")
                    .append("? LITERAL_SUFFIX, ")
                    .append("? CREATE_PARAMS, ")
                    .append(typeNullable).append(" NULLABLE, ")
                    .append(t.caseSensitive()).append(" CASE_SENSITIVE, ")
                    .append(typeSearchable).append(" SEARCHABLE, ")
                    .append(t.unsigned()).append(" UNSIGNED_ATTRIBUTE, ")
                    .append("FALSE FIXED_PREC_SCALE, ")
                    .append(t.autoIncrement()).append(" AUTO_INCREMENT, ")
                    .append("? LOCAL_TYPE_NAME, ")
                    .append(t.minScale()).append(" MINIMUM_SCALE, ")
                    .append(t.maxScale()).append(" MAXIMUM_SCALE, ")
                    .append("0 SQL_DATA_TYPE, 0 SQL_DATETIME_SUB, 10 NUM_PREC_RADIX");
        }
        return query(new Bound(b.toString(), params));
    }

    @Override
    public ResultSet getPseudoColumns(String catalog, String schemaPattern, String tableNamePattern, String columnNamePattern) throws SQLException {
        return query("SELECT ' ' TABLE_CAT, ' ' TABLE_SCHEM, ' ' TABLE_NAME, ' ' COLUMN_NAME, 0 DATA_TYPE, 0 COLUMN_SIZE,"
                + " 0 DECIMAL_DIGITS, 10 NUM_PREC_RADIX, ' ' COLUMN_USAGE, ' ' REMARKS, 0 CHAR_OCTET_LENGTH, 'YES' IS_NULLABLE"
                + " FROM DUAL WHERE 1 = 0");
    }

    @Override
    public ResultSet getUDTs(String catalog, String schemaPattern, String typeNamePattern, int[] types) throws SQLException {
        return query("SELECT ' ' TYPE_CAT, NULL TYPE_SCHEM, ' ' TYPE_NAME, ' ' CLASS_NAME, 0 DATA_TYPE, ' ' REMARKS,"
                + " 0 BASE_TYPE FROM DUAL WHERE 1 = 0");
    }

    @Override
    public ResultSet getSuperTypes(String catalog, String schemaPattern, String typeNamePattern) throws SQLException {
        return query("SELECT ' ' TYPE_CAT, NULL TYPE_SCHEM, ' ' TYPE_NAME, ' ' SUPERTYPE_CAT, ' ' SUPERTYPE_SCHEM,"
                + " ' ' SUPERTYPE_NAME FROM DUAL WHERE 1 = 0");
    }

    @Override
    public ResultSet getSuperTables(String catalog, String schemaPattern, String tableNamePattern) throws SQLException {
        return query("SELECT ' ' TABLE_CAT, ' ' TABLE_SCHEM, ' ' TABLE_NAME, ' ' SUPERTABLE_NAME FROM DUAL WHERE 1 = 0");
    }

    @Override
    public ResultSet getAttributes(String catalog, String schemaPattern, String typeNamePattern, String attributeNamePattern) throws SQLException {
        return query("SELECT ' ' TYPE_CAT, ' ' TYPE_SCHEM, ' ' TYPE_NAME, ' ' ATTR_NAME, 0 DATA_TYPE, ' ' ATTR_TYPE_NAME,"
                + " 0 ATTR_SIZE, 0 DECIMAL_DIGITS, 0 NUM_PREC_RADIX, 0 NULLABLE, ' ' REMARKS, ' ' ATTR_DEF, 0 SQL_DATA_TYPE,"
                + " 0 SQL_DATETIME_SUB, 0 CHAR_OCTET_LENGTH, 0 ORDINAL_POSITION, ' ' IS_NULLABLE, ' ' SCOPE_CATALOG,"
                + " ' ' SCOPE_SCHEMA, ' ' SCOPE_TABLE, 0 SOURCE_DATA_TYPE FROM DUAL WHERE 1 = 0");
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
