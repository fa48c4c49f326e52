package dev.staunch.internal;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The C ABI of staunch (include/staunch.h), declared by hand: the library
 * lookup, one downcall handle per function, and the layouts of the structs
 * that cross it. {@code NativeLayoutTest} checks every layout against the
 * library's {@code staunch_struct_size} / {@code staunch_field_offset}.
 *
 * <p>Not public API: use {@link dev.staunch.Staunch}.
 */
@SuppressWarnings("restricted")
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

    // ---- layouts -------------------------------------------------------

    public static final AddressLayout C_POINTER = ADDRESS;
    public static final ValueLayout.OfLong SIZE_T = JAVA_LONG;

    /** staunch_datetime: 12 bytes, align 4. */
    public static final StructLayout DATETIME = MemoryLayout.structLayout(
            JAVA_SHORT.withName("year"),
            JAVA_BYTE.withName("month"),
            JAVA_BYTE.withName("day"),
            JAVA_BYTE.withName("hour"),
            JAVA_BYTE.withName("minute"),
            JAVA_BYTE.withName("second"),
            MemoryLayout.paddingLayout(1),
            JAVA_INT.withName("microsecond")).withName("staunch_datetime");

    /** staunch_time: 16 bytes, align 4. */
    public static final StructLayout TIME = MemoryLayout.structLayout(
            JAVA_BOOLEAN.withName("negative"),
            MemoryLayout.paddingLayout(3),
            JAVA_INT.withName("days"),
            JAVA_BYTE.withName("hours"),
            JAVA_BYTE.withName("minutes"),
            JAVA_BYTE.withName("seconds"),
            MemoryLayout.paddingLayout(1),
            JAVA_INT.withName("microseconds")).withName("staunch_time");

    private static StructLayout valueLike(String name) {
        return MemoryLayout.structLayout(
                JAVA_INT.withName("type"),
                MemoryLayout.paddingLayout(4),
                JAVA_LONG.withName("i64"),
                JAVA_LONG.withName("u64"),
                JAVA_DOUBLE.withName("f64"),
                C_POINTER.withName("ptr"),
                SIZE_T.withName("len"),
                DATETIME.withName("datetime"),
                TIME.withName("time"),
                MemoryLayout.paddingLayout(4),
                MemoryLayout.sequenceLayout(2, JAVA_LONG).withName("_reserved")).withName(name);
    }

    /** staunch_param: 96 bytes, fixed for 1.x. */
    public static final StructLayout PARAM = valueLike("staunch_param");
    /** staunch_value: 96 bytes, fixed for 1.x. */
    public static final StructLayout VALUE = valueLike("staunch_value");

    public static final long V_TYPE = PARAM.byteOffset(MemoryLayout.PathElement.groupElement("type"));
    public static final long V_I64 = PARAM.byteOffset(MemoryLayout.PathElement.groupElement("i64"));
    public static final long V_U64 = PARAM.byteOffset(MemoryLayout.PathElement.groupElement("u64"));
    public static final long V_F64 = PARAM.byteOffset(MemoryLayout.PathElement.groupElement("f64"));
    public static final long V_PTR = PARAM.byteOffset(MemoryLayout.PathElement.groupElement("ptr"));
    public static final long V_LEN = PARAM.byteOffset(MemoryLayout.PathElement.groupElement("len"));
    public static final long V_DATETIME = PARAM.byteOffset(MemoryLayout.PathElement.groupElement("datetime"));
    public static final long V_TIME = PARAM.byteOffset(MemoryLayout.PathElement.groupElement("time"));
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

    /** staunch_stats (ABI 1.0's fields). */
    public static final StructLayout STATS;

    static {
        List<MemoryLayout> fields = new ArrayList<>();
        fields.add(SIZE_T.withName("size"));
        for (String f : STATS_FIELDS) {
            fields.add(JAVA_LONG.withName(f));
        }
        STATS = MemoryLayout.structLayout(fields.toArray(MemoryLayout[]::new)).withName("staunch_stats");
    }

    /** staunch_event (read only, passed by pointer). */
    public static final StructLayout EVENT = MemoryLayout.structLayout(
            JAVA_INT.withName("kind"),
            JAVA_INT.withName("status"),
            JAVA_LONG.withName("connection_id"),
            JAVA_LONG.withName("count"),
            JAVA_LONG.withName("duration_us"),
            C_POINTER.withName("message"),
            JAVA_LONG.withName("pool_id")).withName("staunch_event");

    /** staunch_result. */
    public static final StructLayout RESULT = MemoryLayout.structLayout(
            SIZE_T.withName("size"),
            JAVA_LONG.withName("affected_rows"),
            JAVA_LONG.withName("last_insert_id"),
            JAVA_INT.withName("warnings"),
            JAVA_BOOLEAN.withName("in_transaction"),
            JAVA_BOOLEAN.withName("autocommit"),
            MemoryLayout.paddingLayout(2),
            C_POINTER.withName("info")).withName("staunch_result");

    /** staunch_txn_options. */
    public static final StructLayout TXN_OPTIONS = MemoryLayout.structLayout(
            SIZE_T.withName("size"),
            JAVA_INT.withName("isolation"),
            JAVA_BOOLEAN.withName("read_only"),
            MemoryLayout.paddingLayout(3)).withName("staunch_txn_options");

    /** staunch_column_info. */
    public static final StructLayout COLUMN_INFO = MemoryLayout.structLayout(
            SIZE_T.withName("size"),
            JAVA_INT.withName("column_type"),
            JAVA_INT.withName("type_code"),
            JAVA_INT.withName("flags"),
            JAVA_INT.withName("charset"),
            JAVA_INT.withName("length"),
            JAVA_INT.withName("decimals"),
            C_POINTER.withName("name"),
            SIZE_T.withName("name_len"),
            C_POINTER.withName("org_name"),
            SIZE_T.withName("org_name_len"),
            C_POINTER.withName("table"),
            SIZE_T.withName("table_len"),
            C_POINTER.withName("org_table"),
            SIZE_T.withName("org_table_len"),
            C_POINTER.withName("schema"),
            SIZE_T.withName("schema_len")).withName("staunch_column_info");

    /** Every struct declared here, for the layout test. */
    public static final List<StructLayout> STRUCTS = List.of(
            DATETIME, TIME, PARAM, VALUE, STATS, EVENT, RESULT, TXN_OPTIONS, COLUMN_INFO);

    public static long offset(StructLayout s, String field) {
        return s.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    // ---- loading -------------------------------------------------------

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LOOKUP;
    private static final Throwable LOAD_FAILURE;
    /** Where the library was found (for messages). */
    public static final String SOURCE;

    static {
        SymbolLookup lookup = null;
        Throwable failure = null;
        String[] source = {"(not loaded)"};
        try {
            lookup = load(source);
        } catch (Throwable t) {
            failure = t;
        }
        LOOKUP = lookup;
        SOURCE = source[0];
        Throwable versionFailure = failure;
        if (failure == null) {
            versionFailure = checkVersion(lookup, source[0]);
        }
        LOAD_FAILURE = versionFailure;
    }

    private static SymbolLookup load(String[] source) throws IOException {
        String prop = System.getProperty("staunch.library");
        if (prop != null && !prop.isBlank()) {
            source[0] = "system property staunch.library=" + prop;
            return open(Path.of(prop), source[0]);
        }
        String env = System.getenv("STAUNCH_LIBRARY");
        if (env != null && !env.isBlank()) {
            source[0] = "environment variable STAUNCH_LIBRARY=" + env;
            return open(Path.of(env), source[0]);
        }
        try (InputStream in = Native.class.getResourceAsStream("/dev/staunch/native/libstaunch.so")) {
            if (in != null) {
                Path tmp = Files.createTempFile("libstaunch-", ".so");
                tmp.toFile().deleteOnExit();
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                source[0] = "the copy bundled in the jar (extracted to " + tmp + ")";
                return open(tmp, source[0]);
            }
        }
        source[0] = "System.loadLibrary(\"staunch\") (java.library.path=" + System.getProperty("java.library.path") + ")";
        try {
            System.loadLibrary("staunch");
        } catch (UnsatisfiedLinkError e) {
            throw new UnsatisfiedLinkError("libstaunch.so not found: set the system property staunch.library or "
                    + "the environment variable STAUNCH_LIBRARY to its path, bundle it in the jar under "
                    + "dev/staunch/native/, or put it on java.library.path (" + e.getMessage() + ")");
        }
        return SymbolLookup.loaderLookup();
    }

    private static SymbolLookup open(Path path, String what) {
        if (!Files.isRegularFile(path)) {
            throw new UnsatisfiedLinkError("libstaunch.so not found at " + path + " (from " + what + ")");
        }
        return SymbolLookup.libraryLookup(path, Arena.global());
    }

    private static Throwable checkVersion(SymbolLookup lookup, String source) {
        try {
            MethodHandle h = LINKER.downcallHandle(lookup.find("staunch_version").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT));
            int v = (int) h.invokeExact();
            int major = v / 10000;
            int minor = (v / 100) % 100;
            if (major != ABI_MAJOR || minor < ABI_MINOR) {
                return new UnsatisfiedLinkError("libstaunch from " + source + " is version " + major + "."
                        + minor + "." + (v % 100) + "; this binding needs " + ABI_MAJOR + "." + ABI_MINOR
                        + " or a later 1.x");
            }
            return null;
        } catch (Throwable t) {
            return t;
        }
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

    private static MethodHandle h(String name, FunctionDescriptor fd, Linker.Option... options) {
        if (LOOKUP == null) {
            return null;
        }
        return LOOKUP.find(name).map(a -> LINKER.downcallHandle(a, fd, options)).orElse(null);
    }

    /** For calls that never block and never call back: no thread-state transition. */
    private static final Linker.Option CRITICAL = Linker.Option.critical(false);

    private static FunctionDescriptor st(MemoryLayout... args) {
        return FunctionDescriptor.of(JAVA_INT, args);
    }

    // ---- functions -----------------------------------------------------

    public static final MethodHandle version = h("staunch_version", FunctionDescriptor.of(JAVA_INT), CRITICAL);
    public static final MethodHandle version_string = h("staunch_version_string", FunctionDescriptor.of(C_POINTER), CRITICAL);
    public static final MethodHandle error_message = h("staunch_error_message", FunctionDescriptor.of(C_POINTER, C_POINTER), CRITICAL);
    public static final MethodHandle error_status = h("staunch_error_status", FunctionDescriptor.of(JAVA_INT, C_POINTER), CRITICAL);
    public static final MethodHandle error_server_code = h("staunch_error_server_code", FunctionDescriptor.of(JAVA_INT, C_POINTER), CRITICAL);
    public static final MethodHandle error_sqlstate = h("staunch_error_sqlstate", FunctionDescriptor.of(C_POINTER, C_POINTER), CRITICAL);
    public static final MethodHandle error_free = h("staunch_error_free", FunctionDescriptor.ofVoid(C_POINTER), CRITICAL);
    public static final MethodHandle status_name = h("staunch_status_name", FunctionDescriptor.of(C_POINTER, JAVA_INT), CRITICAL);

    public static final MethodHandle options_new = h("staunch_options_new", st(C_POINTER, C_POINTER));
    public static final MethodHandle options_set = h("staunch_options_set", st(C_POINTER, C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle options_set_url = h("staunch_options_set_url", st(C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle options_set_event_callback = h("staunch_options_set_event_callback",
            st(C_POINTER, C_POINTER, C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle options_free = h("staunch_options_free", FunctionDescriptor.ofVoid(C_POINTER));

    public static final MethodHandle pool_open = h("staunch_pool_open", st(C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle pool_open_options = h("staunch_pool_open_options", st(C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle pool_get = h("staunch_pool_get", st(C_POINTER, JAVA_INT, C_POINTER, C_POINTER));
    public static final MethodHandle pool_get_read = h("staunch_pool_get_read", st(C_POINTER, JAVA_INT, C_POINTER, C_POINTER));
    public static final MethodHandle pool_get_cancellable = h("staunch_pool_get_cancellable",
            st(C_POINTER, JAVA_INT, C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle pool_get_read_cancellable = h("staunch_pool_get_read_cancellable",
            st(C_POINTER, JAVA_INT, C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle pool_try_get = h("staunch_pool_try_get", st(C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle pool_stats = h("staunch_pool_stats", st(C_POINTER, C_POINTER, C_POINTER), CRITICAL);
    public static final MethodHandle pool_soft_evict = h("staunch_pool_soft_evict", st(C_POINTER, C_POINTER));
    public static final MethodHandle pool_close = h("staunch_pool_close", st(C_POINTER, C_POINTER));
    public static final MethodHandle pool_id = h("staunch_pool_id", FunctionDescriptor.of(JAVA_LONG, C_POINTER), CRITICAL);
    public static final MethodHandle pool_free = h("staunch_pool_free", FunctionDescriptor.ofVoid(C_POINTER));
    public static final MethodHandle pool_free_nowait = h("staunch_pool_free_nowait", FunctionDescriptor.ofVoid(C_POINTER));

    public static final MethodHandle cancel_token_new = h("staunch_cancel_token_new", st(C_POINTER, C_POINTER), CRITICAL);
    public static final MethodHandle cancel_token_cancel = h("staunch_cancel_token_cancel", st(C_POINTER, C_POINTER));
    public static final MethodHandle cancel_token_is_cancelled = h("staunch_cancel_token_is_cancelled",
            FunctionDescriptor.of(JAVA_BOOLEAN, C_POINTER), CRITICAL);
    public static final MethodHandle cancel_token_free = h("staunch_cancel_token_free", FunctionDescriptor.ofVoid(C_POINTER), CRITICAL);

    public static final MethodHandle conn_execute = h("staunch_conn_execute",
            st(C_POINTER, C_POINTER, C_POINTER, SIZE_T, C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle conn_last_result = h("staunch_conn_last_result", st(C_POINTER, C_POINTER, C_POINTER), CRITICAL);
    public static final MethodHandle conn_query = h("staunch_conn_query",
            st(C_POINTER, C_POINTER, C_POINTER, SIZE_T, C_POINTER, C_POINTER));
    public static final MethodHandle conn_query_ex = h("staunch_conn_query_ex",
            st(C_POINTER, C_POINTER, C_POINTER, SIZE_T, JAVA_INT, C_POINTER, C_POINTER));
    public static final MethodHandle conn_count_params = h("staunch_conn_count_params",
            st(C_POINTER, C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle conn_begin = h("staunch_conn_begin", st(C_POINTER, C_POINTER));
    public static final MethodHandle conn_begin_ex = h("staunch_conn_begin_ex", st(C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle conn_commit = h("staunch_conn_commit", st(C_POINTER, C_POINTER));
    public static final MethodHandle conn_rollback = h("staunch_conn_rollback", st(C_POINTER, C_POINTER));
    public static final MethodHandle conn_ping = h("staunch_conn_ping", st(C_POINTER, C_POINTER));
    public static final MethodHandle conn_set_timeout = h("staunch_conn_set_timeout", st(C_POINTER, JAVA_INT, C_POINTER));
    public static final MethodHandle conn_cancel = h("staunch_conn_cancel", st(C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle conn_is_broken = h("staunch_conn_is_broken", FunctionDescriptor.of(JAVA_BOOLEAN, C_POINTER), CRITICAL);
    public static final MethodHandle conn_id = h("staunch_conn_id", FunctionDescriptor.of(JAVA_LONG, C_POINTER), CRITICAL);
    public static final MethodHandle conn_server_id = h("staunch_conn_server_id", st(C_POINTER, C_POINTER, C_POINTER), CRITICAL);
    public static final MethodHandle conn_release = h("staunch_conn_release", st(C_POINTER, C_POINTER));
    public static final MethodHandle conn_discard = h("staunch_conn_discard", st(C_POINTER, C_POINTER));
    public static final MethodHandle conn_free = h("staunch_conn_free", FunctionDescriptor.ofVoid(C_POINTER));

    public static final MethodHandle rows_column_count = h("staunch_rows_column_count", FunctionDescriptor.of(SIZE_T, C_POINTER), CRITICAL);
    public static final MethodHandle rows_column_info = h("staunch_rows_column_info",
            st(C_POINTER, SIZE_T, C_POINTER, C_POINTER), CRITICAL);
    public static final MethodHandle rows_next = h("staunch_rows_next", st(C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle rows_fetch = h("staunch_rows_fetch", st(C_POINTER, C_POINTER, SIZE_T, C_POINTER, C_POINTER));
    public static final MethodHandle rows_next_result = h("staunch_rows_next_result", st(C_POINTER, C_POINTER, C_POINTER));
    public static final MethodHandle rows_row_count = h("staunch_rows_row_count", st(C_POINTER, C_POINTER, C_POINTER), CRITICAL);
    public static final MethodHandle rows_affected_rows = h("staunch_rows_affected_rows", FunctionDescriptor.of(JAVA_LONG, C_POINTER), CRITICAL);
    public static final MethodHandle rows_last_insert_id = h("staunch_rows_last_insert_id", FunctionDescriptor.of(JAVA_LONG, C_POINTER), CRITICAL);
    public static final MethodHandle rows_warnings = h("staunch_rows_warnings", FunctionDescriptor.of(JAVA_INT, C_POINTER), CRITICAL);
    public static final MethodHandle rows_free = h("staunch_rows_free", FunctionDescriptor.ofVoid(C_POINTER));

    public static final MethodHandle struct_size = h("staunch_struct_size", FunctionDescriptor.of(SIZE_T, C_POINTER), CRITICAL);
    public static final MethodHandle field_offset = h("staunch_field_offset", FunctionDescriptor.of(SIZE_T, C_POINTER, C_POINTER), CRITICAL);

    /** Upcall type of staunch_event_callback. */
    public static final FunctionDescriptor EVENT_CALLBACK = FunctionDescriptor.ofVoid(C_POINTER, C_POINTER);
    /** Upcall type of staunch_finalizer. */
    public static final FunctionDescriptor FINALIZER = FunctionDescriptor.ofVoid(C_POINTER);

    public static Linker linker() {
        return LINKER;
    }

    // ---- helpers -------------------------------------------------------

    /** A NUL-terminated UTF-8 string at {@code p} (NULL: ""). */
    public static String string(MemorySegment p) {
        if (p.address() == 0) {
            return "";
        }
        return p.reinterpret(Long.MAX_VALUE).getString(0, StandardCharsets.UTF_8);
    }

    /** {@code len} bytes at {@code p} as UTF-8 text. */
    public static String string(MemorySegment p, long len) {
        if (len == 0) {
            return "";
        }
        byte[] b = p.reinterpret(len).toArray(JAVA_BYTE);
        return new String(b, StandardCharsets.UTF_8);
    }

    public static byte[] bytes(MemorySegment p, long len) {
        if (len == 0) {
            return new byte[0];
        }
        return p.reinterpret(len).toArray(JAVA_BYTE);
    }

    /** The name of a status code, e.g. "STAUNCH_POOL_EXHAUSTED". */
    public static String statusName(int status) {
        try {
            return string((MemorySegment) status_name.invokeExact(status));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
