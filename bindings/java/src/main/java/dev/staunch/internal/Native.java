package dev.staunch.internal;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * The JNI path (JDK 11 to 21): finds libstaunch and the JNI shim
 * (libstaunch_jni.so, src/main/c), and the struct offsets of include/staunch.h
 * that the Java side reads. On JDK 22+ the multi-release jar's
 * META-INF/versions/22 copy of this class (FFM) is used instead.
 *
 * <p>Not public API: use {@link dev.staunch.Staunch}.
 */
public final class Native {
    private Native() {}

    /** The major version this binding is written for. */
    public static final int ABI_MAJOR = 1;
    /** The least minor version whose calls this binding uses (1.1: the decimal parameter, staunch_conn_count_params). */
    public static final int ABI_MINOR = 1;

    /** STAUNCH_TIMEOUT_DEFAULT (UINT32_MAX) as a Java int. */
    public static final int TIMEOUT_DEFAULT = -1;
    public static final int QUERY_STREAM = 1;
    public static final int QUERY_TEXT = 2;
    public static final int QUERY_INTERPOLATE = 4;
    public static final int QUERY_PREPARE = 8;

    // ---- layouts (the same numbers as the FFM layouts; JniLayoutTest checks them against the library) ----

    /** staunch_param / staunch_value: 96 bytes, fixed for 1.x. */
    public static final long VALUE_SIZE = 96;
    public static final long V_TYPE = 0, V_I64 = 8, V_U64 = 16, V_F64 = 24, V_PTR = 32, V_LEN = 40, V_DATETIME = 48,
            V_TIME = 60;
    public static final long DT_YEAR = 0, DT_MONTH = 2, DT_DAY = 3, DT_HOUR = 4, DT_MINUTE = 5, DT_SECOND = 6, DT_MICRO = 8;
    public static final long TM_NEG = 0, TM_DAYS = 4, TM_HOURS = 8, TM_MINUTES = 9, TM_SECONDS = 10, TM_MICRO = 12;

    /** The fields of staunch_stats, in order (all uint64 after {@code size}). */
    public static final List<String> STATS_FIELDS = List.of(
            "total", "active", "idle", "reserved", "waiting", "pending_creates", "connecting",
            "adder_threads", "acquired", "acquire_timeouts", "created", "closed_idle_timeout",
            "closed_max_lifetime", "closed_broken", "closed_evicted", "closed_pool_closed",
            "connect_failures", "abandoned_connects", "validation_failures", "keepalives",
            "leaks_reported", "rollbacks_on_return", "violations", "acquire_count", "acquire_p50_us",
            "acquire_p99_us", "acquire_max_us", "connect_count", "connect_p50_us", "connect_p99_us",
            "connect_max_us", "max_size", "acquires_waited", "acquire_wait_us", "acquires_cancelled",
            "resets_on_return", "statements_cut");
    public static final long STATS_SIZE = 8 + 8L * 37;

    public static final long RESULT_SIZE = 40;
    public static final long R_AFFECTED = 8, R_LAST_ID = 16, R_WARNINGS = 24, R_IN_TXN = 28, R_AUTOCOMMIT = 29, R_INFO = 32;

    public static final long TXN_OPTIONS_SIZE = 16;
    public static final long O_ISOLATION = 8, O_READ_ONLY = 12;

    public static final long COLUMN_INFO_SIZE = 112;
    public static final long CI_COLUMN_TYPE = 8, CI_TYPE_CODE = 12, CI_FLAGS = 16, CI_CHARSET = 20, CI_LENGTH = 24,
            CI_DECIMALS = 28, CI_NAME = 32, CI_ORG_NAME = 48, CI_TABLE = 64, CI_ORG_TABLE = 80, CI_SCHEMA = 96;

    /** Each struct's size and field offsets above, by the header's names (for the layout test). */
    public static final java.util.Map<String, Long> LAYOUT = java.util.Map.ofEntries(
            java.util.Map.entry("staunch_value", VALUE_SIZE),
            java.util.Map.entry("staunch_value.type", V_TYPE),
            java.util.Map.entry("staunch_value.i64", V_I64),
            java.util.Map.entry("staunch_value.u64", V_U64),
            java.util.Map.entry("staunch_value.f64", V_F64),
            java.util.Map.entry("staunch_value.ptr", V_PTR),
            java.util.Map.entry("staunch_value.len", V_LEN),
            java.util.Map.entry("staunch_value.datetime", V_DATETIME),
            java.util.Map.entry("staunch_value.time", V_TIME),
            java.util.Map.entry("staunch_param", VALUE_SIZE),
            java.util.Map.entry("staunch_param.type", V_TYPE),
            java.util.Map.entry("staunch_param.ptr", V_PTR),
            java.util.Map.entry("staunch_param.len", V_LEN),
            java.util.Map.entry("staunch_param.datetime", V_DATETIME),
            java.util.Map.entry("staunch_param.time", V_TIME),
            java.util.Map.entry("staunch_stats", STATS_SIZE),
            java.util.Map.entry("staunch_stats.statements_cut", STATS_SIZE - 8),
            java.util.Map.entry("staunch_result", RESULT_SIZE),
            java.util.Map.entry("staunch_result.affected_rows", R_AFFECTED),
            java.util.Map.entry("staunch_result.last_insert_id", R_LAST_ID),
            java.util.Map.entry("staunch_result.warnings", R_WARNINGS),
            java.util.Map.entry("staunch_result.in_transaction", R_IN_TXN),
            java.util.Map.entry("staunch_result.autocommit", R_AUTOCOMMIT),
            java.util.Map.entry("staunch_result.info", R_INFO),
            java.util.Map.entry("staunch_txn_options", TXN_OPTIONS_SIZE),
            java.util.Map.entry("staunch_txn_options.isolation", O_ISOLATION),
            java.util.Map.entry("staunch_txn_options.read_only", O_READ_ONLY),
            java.util.Map.entry("staunch_column_info", COLUMN_INFO_SIZE),
            java.util.Map.entry("staunch_column_info.column_type", CI_COLUMN_TYPE),
            java.util.Map.entry("staunch_column_info.type_code", CI_TYPE_CODE),
            java.util.Map.entry("staunch_column_info.flags", CI_FLAGS),
            java.util.Map.entry("staunch_column_info.charset", CI_CHARSET),
            java.util.Map.entry("staunch_column_info.length", CI_LENGTH),
            java.util.Map.entry("staunch_column_info.decimals", CI_DECIMALS),
            java.util.Map.entry("staunch_column_info.name", CI_NAME),
            java.util.Map.entry("staunch_column_info.name_len", CI_NAME + 8),
            java.util.Map.entry("staunch_column_info.org_name", CI_ORG_NAME),
            java.util.Map.entry("staunch_column_info.table", CI_TABLE),
            java.util.Map.entry("staunch_column_info.org_table", CI_ORG_TABLE),
            java.util.Map.entry("staunch_column_info.schema", CI_SCHEMA),
            java.util.Map.entry("staunch_column_info.schema_len", CI_SCHEMA + 8));

    // ---- loading -------------------------------------------------------

    private static final Throwable LOAD_FAILURE;
    /** Where the library was found (for messages). */
    public static final String SOURCE;
    /** Where the JNI shim was found. */
    public static final String SHIM_SOURCE;
    /** Which native path this JVM uses. */
    public static final String PATH = "JNI";

    static {
        Throwable failure = null;
        String[] source = {"(not loaded)"};
        String[] shimSource = {"(not loaded)"};
        try {
            Path lib = findLibrary(source);
            loadShim(lib, shimSource);
            String e = Jni.init(lib.toString().getBytes(StandardCharsets.UTF_8));
            if (e != null) {
                throw new UnsatisfiedLinkError("libstaunch.so from " + source[0] + ": " + e);
            }
            failure = checkVersion(source[0]);
        } catch (Throwable t) {
            failure = t;
        }
        SOURCE = source[0];
        SHIM_SOURCE = shimSource[0];
        LOAD_FAILURE = failure;
    }

    private static Path findLibrary(String[] source) throws IOException {
        String prop = System.getProperty("staunch.library");
        if (prop != null && !prop.isBlank()) {
            source[0] = "system property staunch.library=" + prop;
            return existing(Paths.get(prop), source[0]);
        }
        String env = System.getenv("STAUNCH_LIBRARY");
        if (env != null && !env.isBlank()) {
            source[0] = "environment variable STAUNCH_LIBRARY=" + env;
            return existing(Paths.get(env), source[0]);
        }
        Path bundled = extract("libstaunch.so");
        if (bundled != null) {
            source[0] = "the copy bundled in the jar (extracted to " + bundled + ")";
            return bundled;
        }
        String path = System.getProperty("java.library.path", "");
        source[0] = "java.library.path=" + path;
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty()) {
                Path p = Paths.get(dir, "libstaunch.so");
                if (Files.isRegularFile(p)) {
                    source[0] = "java.library.path (" + p + ")";
                    return p;
                }
            }
        }
        throw new UnsatisfiedLinkError("libstaunch.so not found: set the system property staunch.library or "
                + "the environment variable STAUNCH_LIBRARY to its path, bundle it in the jar under "
                + "dev/staunch/native/, or put it on java.library.path (" + path + ")");
    }

    private static void loadShim(Path lib, String[] source) throws IOException {
        String prop = System.getProperty("staunch.jni.library");
        String env = System.getenv("STAUNCH_JNI_LIBRARY");
        Path p;
        if (prop != null && !prop.isBlank()) {
            source[0] = "system property staunch.jni.library=" + prop;
            p = existing(Paths.get(prop), source[0]);
        } else if (env != null && !env.isBlank()) {
            source[0] = "environment variable STAUNCH_JNI_LIBRARY=" + env;
            p = existing(Paths.get(env), source[0]);
        } else if ((p = extract("libstaunch_jni.so")) != null) {
            source[0] = "the copy bundled in the jar (extracted to " + p + ")";
        } else if (lib.getParent() != null && Files.isRegularFile(lib.resolveSibling("libstaunch_jni.so"))) {
            p = lib.resolveSibling("libstaunch_jni.so");
            source[0] = "beside libstaunch.so (" + p + ")";
        } else {
            source[0] = "System.loadLibrary(\"staunch_jni\")";
            try {
                System.loadLibrary("staunch_jni");
                return;
            } catch (UnsatisfiedLinkError e) {
                throw new UnsatisfiedLinkError("libstaunch_jni.so (staunch's JNI shim, for JDK 11 to 21) not found: "
                        + "set the system property staunch.jni.library or the environment variable STAUNCH_JNI_LIBRARY "
                        + "to its path, bundle it in the jar under dev/staunch/native/, put it beside libstaunch.so, "
                        + "or run on JDK 22+ (" + e.getMessage() + ")");
            }
        }
        System.load(p.toAbsolutePath().toString());
    }

    private static Path extract(String name) throws IOException {
        try (InputStream in = Native.class.getResourceAsStream("/dev/staunch/native/" + name)) {
            if (in == null) {
                return null;
            }
            Path tmp = Files.createTempFile(name.replace(".so", "-"), ".so");
            tmp.toFile().deleteOnExit();
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            return tmp;
        }
    }

    private static Path existing(Path path, String what) {
        if (!Files.isRegularFile(path)) {
            throw new UnsatisfiedLinkError(path.getFileName() + " not found at " + path + " (from " + what + ")");
        }
        return path.toAbsolutePath();
    }

    private static Throwable checkVersion(String source) {
        int v = Jni.version();
        int major = v / 10000;
        int minor = (v / 100) % 100;
        if (major != ABI_MAJOR || minor < ABI_MINOR) {
            return new UnsatisfiedLinkError("libstaunch from " + source + " is version " + major + "."
                    + minor + "." + (v % 100) + "; this binding needs " + ABI_MAJOR + "." + ABI_MINOR
                    + " or a later 1.x");
        }
        return null;
    }

    /** Throws a clear error if the library could not be loaded. */
    public static void check() {
        if (LOAD_FAILURE != null) {
            IllegalStateException e = new IllegalStateException(
                    "staunch: the native library could not be loaded (" + SOURCE + "): " + LOAD_FAILURE.getMessage());
            e.initCause(LOAD_FAILURE);
            throw e;
        }
    }

    public static boolean loaded() {
        return LOAD_FAILURE == null;
    }

    // ---- helpers -------------------------------------------------------

    /** A NUL-terminated UTF-8 string at {@code p} (NULL: ""). */
    public static String string(long p) {
        if (p == 0) {
            return "";
        }
        return string(p, Jni.strlen(p));
    }

    /** {@code len} bytes at {@code p} as UTF-8 text. */
    public static String string(long p, long len) {
        if (len == 0) {
            return "";
        }
        return new String(bytes(p, len), StandardCharsets.UTF_8);
    }

    public static byte[] bytes(long p, long len) {
        if (len == 0) {
            return new byte[0];
        }
        if (len < 0 || len > Integer.MAX_VALUE - 8) {
            throw new OutOfMemoryError("staunch: a value of " + len + " bytes does not fit in a Java array");
        }
        return Jni.bytes(p, len);
    }

    /** The name of a status code, e.g. "STAUNCH_POOL_EXHAUSTED". */
    public static String statusName(int status) {
        return string(Jni.status_name(status));
    }
}
