package dev.staunch.jdbc;

import dev.staunch.internal.Call;
import dev.staunch.internal.Mem;
import dev.staunch.internal.Native;
import dev.staunch.internal.Utf8;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Objects;
import java.util.Map;
import java.util.Set;

/**
 * Translates the JDBC URLs users already have ({@code jdbc:mysql://} of
 * MySQL Connector/J, {@code jdbc:mariadb://} of MariaDB Connector/J) to
 * staunch's configuration: a {@code mysql://host:port,.../db} URL and knobs.
 *
 * <p>Mapped: user, password, connectTimeout (ms), socketTimeout (ms: staunch's
 * query_timeout), useSSL, requireSSL, sslMode, verifyServerCertificate,
 * serverSslCert / trustCertificateKeyStoreUrl (a PEM file), sessionVariables
 * (init_sql), useAffectedRows (found_rows), localSocket, connectionAttributes
 * (connect_attrs: {@code name:value,name:value}, as both Connector/Js write it), useServerPrepStmts
 * (true: staunch's interpolate_params=false; MariaDB Connector/J's default,
 * false, is client-side interpolation: see {@link StaunchDataSource}),
 * rewriteBatchedStatements (true keeps interpolation, as in Connector/J,
 * where it turns useServerPrepStmts off; batches still run row by row),
 * useCatalogTerm (CATALOG or SCHEMA: which JDBC term a database is, in
 * {@link java.sql.DatabaseMetaData} and the connection's catalog and schema), and any of staunch's
 * own knobs by their names. Ignored (staunch's behaviour is fixed or the
 * property only tunes a driver staunch replaces): {@link #IGNORED}. Anything
 * else is an error naming the property, so that a setting is never silently
 * lost.
 */
public final class JdbcUrl {
    private JdbcUrl() {}

    /** Properties accepted and ignored, lower-cased. */
    public static final Set<String> IGNORED = Set.of(
            "useunicode", "characterencoding", "charset", "servertimezone", "connectiontimezone",
            "forceconnectiontimezonetosession", "uselegacydatetimecode", "usetimezone", "zerodatetimebehavior",
            "autoreconnect", "cacheprepstmts", "prepstmtcachesize", "prepstmtcachesqllimit",
            "allowpublickeyretrieval", "tcpkeepalive", "allowmultiqueries",
            "cacheresultsetmetadata", "cacheserverconfiguration", "elidesetautocommits", "maintaintimestats",
            "uselocalsessionstate", "uselocaltransactionstate", "usessl_default", "pooldatasource",
            "tinyint1isbit", "transformedbitisboolean", "yearisdatetype", "usecompression", "permitmysqlscheme",
            "allowlocalinfile", "useinformationschema", "nullcatalogmeanscurrent", "nulldatabasemeanscurrent",
            "autodeserialize", "usebulkstmts", "usebulkstmtsforinserts", "dumpqueriesonexception",
            "includeinnodbstatusinexceptions", "logger", "profilesql", "gatherperfmetrics", "cachecallablestmts");

    /** The translated configuration: a staunch URL (no credentials, no parameters) and knobs in order. */
    public static final class Translated {
        private final String url;
        private final Map<String, String> knobs;
        private final boolean schemaTerm;

        public Translated(String url, Map<String, String> knobs) {
            this(url, knobs, false);
        }

        /** {@code schemaTerm}: {@code useCatalogTerm=SCHEMA} (a database is a JDBC schema, the catalog "def"). */
        public Translated(String url, Map<String, String> knobs, boolean schemaTerm) {
            this.url = url;
            this.knobs = knobs;
            this.schemaTerm = schemaTerm;
        }

        /** True for {@code useCatalogTerm=SCHEMA}, as MariaDB Connector/J 3.x names the option. */
        public boolean schemaTerm() {
            return schemaTerm;
        }

        public String url() {
            return url;
        }

        public Map<String, String> knobs() {
            return knobs;
        }

        @Override
        public boolean equals(Object other) {
            if (this == other) {
                return true;
            }
            if (!(other instanceof Translated)) {
                return false;
            }
            Translated o = (Translated) other;
            return Objects.equals(url, o.url) && Objects.equals(knobs, o.knobs) && schemaTerm == o.schemaTerm;
        }

        @Override
        public int hashCode() {
            return Objects.hash(url, knobs, schemaTerm);
        }

        @Override
        public String toString() {
            return "Translated[url=" + url + ", knobs=" + knobs + (schemaTerm ? ", useCatalogTerm=SCHEMA" : "") + "]";
        }
    }

    public static Translated translate(String jdbcUrl) throws SQLException {
        if (jdbcUrl == null || jdbcUrl.isBlank()) {
            throw new SQLNonTransientException("jdbcUrl is not set (jdbc:mysql://host:port/db, jdbc:mariadb://..., or mysql://...)", "HY000");
        }
        String u = jdbcUrl.trim();
        String rest;
        Map<String, String> knobs = new LinkedHashMap<>();
        if (u.startsWith("mysql://")) {
            return new Translated(u, knobs);
        } else if (u.startsWith("jdbc:mysql://")) {
            rest = u.substring("jdbc:mysql://".length());
        } else if (u.startsWith("jdbc:mariadb://")) {
            rest = u.substring("jdbc:mariadb://".length());
        } else if (u.startsWith("jdbc:mariadb:replication://") || u.startsWith("jdbc:mysql:replication://")) {
            rest = u.substring(u.indexOf("://") + 3);
            knobs.put("topology", "replication");
        } else {
            // Only a scheme is quoted, never the rest: a user:password@ may follow.
            int sep = u.indexOf("://");
            String scheme = sep > 0 && u.substring(0, sep).matches("[A-Za-z][A-Za-z0-9+.:-]*")
                    ? u.substring(0, sep + 3) + "..." : "without a scheme";
            throw new SQLNonTransientException("jdbcUrl " + scheme + " is not supported: use jdbc:mysql://, "
                    + "jdbc:mariadb://, jdbc:mariadb:replication:// or staunch's mysql:// (failover, loadbalance, "
                    + "sequential and aurora modes are not: staunch has its own topology handling)", "HY000");
        }
        // The user-info is set aside first, so that a password holding an
        // unencoded / ? @ is never taken for a host, a database or a
        // property (and quoted in an error).
        int at = userinfoEnd(rest);
        String userinfo = at >= 0 ? rest.substring(0, at) : null;
        if (at >= 0) {
            rest = rest.substring(at + 1);
        }
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        String authority = rest;
        String db = "";
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            authority = rest.substring(0, slash);
            db = rest.substring(slash + 1);
        }
        if (userinfo != null) {
            // jdbc:mariadb://user:pass@host/db is accepted by MariaDB Connector/J.
            int colon = userinfo.indexOf(':');
            knobs.put("user", decodeUserinfo(colon >= 0 ? userinfo.substring(0, colon) : userinfo, "user"));
            if (colon >= 0) {
                knobs.put("password", decodeUserinfo(userinfo.substring(colon + 1), "password"));
            }
        }
        if (authority.startsWith("address=")) {
            throw new SQLNonTransientException("jdbcUrl: the address=(host=...)(port=...) form is not supported; "
                    + "write host:port", "HY000");
        }
        if (authority.isEmpty()) {
            authority = "localhost:3306";
        }
        StringBuilder url = new StringBuilder("mysql://").append(authority).append('/');
        if (!db.isEmpty()) {
            url.append(db);
        }
        boolean ssl = false;
        boolean verify = true;
        Boolean serverPrep = null;
        boolean rewriteBatched = false;
        String sslMode = null;
        boolean schemaTerm = false;
        if (query != null) {
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String k = eq >= 0 ? pair.substring(0, eq) : pair;
                String v = eq >= 0 ? decode(pair.substring(eq + 1)) : "true";
                String lk = k.toLowerCase(Locale.ROOT);
                switch (lk) {
                    case "user":
                        knobs.put("user", v);
                        break;
                    case "password":
                        knobs.put("password", v);
                        break;
                    case "connecttimeout": {
                        long ms = millis(k, v);
                        if (ms > 0) { // 0 means "no limit" in Connector/J: staunch always keeps one
                            knobs.put("connect_timeout", ms + "ms");
                        }
                        break;
                    }
                    case "sockettimeout": {
                        long ms = millis(k, v);
                        if (ms > 0) {
                            knobs.put("query_timeout", ms + "ms");
                        }
                        break;
                    }
                    case "usessl":
                    case "requiressl":
                        ssl = bool(k, v) || ssl;
                        break;
                    case "verifyservercertificate":
                        verify = bool(k, v);
                        break;
                    case "sslmode":
                        sslMode = v;
                        break;
                    case "serversslcert":
                    case "trustcertificatekeystoreurl": {
                        String path = v.startsWith("file:") ? v.substring(5) : v;
                        if (path.contains("-----BEGIN")) {
                            throw new SQLNonTransientException(k + ": give a path to a PEM file, not the certificate itself", "HY000");
                        }
                        knobs.put("tls_ca", path);
                        break;
                    }
                    case "sessionvariables":
                        knobs.put("init_sql", "SET SESSION " + v);
                        break;
                    case "useaffectedrows":
                        knobs.put("found_rows", Boolean.toString(!bool(k, v)));
                        break;
                    case "localsocket":
                        knobs.put("socket", v);
                        break;
                    case "connectionattributes":
                        if (v.trim().equalsIgnoreCase("none")) {
                            // Connector/J's way to send no attributes at all.
                            throw new SQLNonTransientException("jdbcUrl property " + k + "=none is not supported: "
                                    + "staunch always sends its connection attributes (program_name, staunch_version "
                                    + "and the client library's)", "HY000");
                        }
                        knobs.put("connect_attrs", v); // checked by staunch
                        break;
                    case "useserverprepstmts":
                        serverPrep = bool(k, v);
                        break;
                    case "rewritebatchedstatements":
                        rewriteBatched = bool(k, v);
                        break;
                    case "usecatalogterm":
                        // MariaDB Connector/J 3.x: CATALOG (the default) or SCHEMA, in any case.
                        if (v.equalsIgnoreCase("schema")) {
                            schemaTerm = true;
                        } else if (v.equalsIgnoreCase("catalog")) {
                            schemaTerm = false;
                        } else {
                            throw new SQLNonTransientException("jdbcUrl property " + k + "=" + v
                                    + ": expected CATALOG or SCHEMA", "HY000");
                        }
                        break;
                    default: {
                        if (IGNORED.contains(lk)) {
                            continue;
                        }
                        if (k.equals(lk) && k.matches("[a-z][a-z0-9_]*")) {
                            knobs.put(k, v); // one of staunch's own knobs (checked by staunch)
                            continue;
                        }
                        throw new SQLNonTransientException("jdbcUrl property " + k + " is not supported by staunch "
                                + "(mapped: user, password, connectTimeout, socketTimeout, useSSL, requireSSL, sslMode, "
                                + "verifyServerCertificate, serverSslCert, trustCertificateKeyStoreUrl, sessionVariables, "
                                + "useAffectedRows, localSocket, connectionAttributes, useServerPrepStmts, rewriteBatchedStatements, useCatalogTerm, and "
                                + "staunch's own knobs; ignored: " + IGNORED + ")", "HY000");
                    }
                }
            }
        }
        // As MariaDB Connector/J 3.x: rewriteBatchedStatements=true turns useServerPrepStmts off.
        if (rewriteBatched) {
            knobs.put("interpolate_params", "true");
        } else if (serverPrep != null) {
            knobs.put("interpolate_params", Boolean.toString(!serverPrep));
        }
        if (sslMode != null) {
            knobs.put("tls_mode", tlsMode(sslMode));
        } else if (ssl) {
            knobs.put("tls_mode", verify ? "verify_identity" : "required");
        }
        return new Translated(url.toString(), knobs, schemaTerm);
    }

    private static String decode(String s) throws SQLException {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            // URLDecoder's message quotes the text: say only what is wrong.
            throw new SQLNonTransientException("jdbcUrl has a bad percent escape in a property value "
                    + "(a % must be followed by two hex digits: write % itself as %25)", "HY000");
        }
    }

    /** Percent-decoding of the user-info: '+' stays '+', nothing of it is ever quoted. */
    private static String decodeUserinfo(String s, String what) throws SQLException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < s.length(); ) {
            char c = s.charAt(i);
            if (c == '%') {
                int hi = i + 2 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
                int lo = i + 2 < s.length() ? Character.digit(s.charAt(i + 2), 16) : -1;
                if (hi < 0 || lo < 0) {
                    throw new SQLNonTransientException("jdbcUrl: the " + what + " has a bad percent escape "
                            + "(a % must be followed by two hex digits: write % itself as %25)", "28000");
                }
                out.write(hi * 16 + lo);
                i += 3;
            } else {
                int cp = s.codePointAt(i);
                byte[] b = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
                out.write(b, 0, b.length);
                i += Character.charCount(cp);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * Where the user-info ends in the text after {@code ://} (the char index of its '@', -1 when there is
     * none), as the library's URL parser finds it (staunch_url_userinfo_end): one rule for every face, whatever
     * the password holds.
     */
    static int userinfoEnd(String rest) {
        Native.check(); // loads the library before Mem touches it (JNI path)
        try (Mem.Scope a = new Mem.Scope()) {
            Mem.Seg err = a.errSlot();
            Mem.Seg at = a.allocate(8);
            Call.check(Native.url_userinfo_end(a.allocateFrom(rest).address(), at.address(), err.address()), err);
            long b = at.getLong(0);
            return b == -1L ? -1 : Utf8.charIndexes(rest, new long[] {b})[0];
        }
    }

    private static long millis(String k, String v) throws SQLException {
        try {
            long ms = Long.parseLong(v.trim());
            if (ms < 0) {
                throw new NumberFormatException();
            }
            return ms;
        } catch (NumberFormatException e) {
            throw new SQLNonTransientException("jdbcUrl property " + k + " must be a whole number of milliseconds, got \"" + v + "\"", "HY000");
        }
    }

    private static boolean bool(String k, String v) throws SQLException {
        switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true":
            case "1":
            case "yes":
            case "":
                return true; // "" as Connector/J: a property named without a value
            case "false":
            case "0":
            case "no":
                return false;
            default:
                throw new SQLNonTransientException("jdbcUrl property " + k + " must be true or false, got \"" + v + "\"", "HY000");
        }
    }

    private static String tlsMode(String sslMode) throws SQLNonTransientException {
        switch (sslMode.toLowerCase(Locale.ROOT).replace('-', '_')) {
            case "disable":
            case "disabled":
                return "disabled";
            case "preferred":
            case "prefer":
                return "preferred";
            case "trust":
            case "required":
            case "require":
                return "required";
            case "verify_ca":
                return "verify_ca";
            case "verify_full":
            case "verify_identity":
                return "verify_identity";
            default:
                throw new SQLNonTransientException("sslMode " + sslMode + " is not one of disable, trust, "
                        + "verify-ca, verify-full (MariaDB) or DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY (MySQL)", "HY000");
        }
    }
}
