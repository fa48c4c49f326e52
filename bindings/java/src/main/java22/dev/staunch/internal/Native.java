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
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
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
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The native path of JDK 22+ (FFM): the library lookup, one downcall handle
 * per function of the C ABI (include/staunch.h, declared by hand), the
 * static methods through which the binding calls them (the same as the JNI
 * path's Native: pointers as {@code long}), the event upcalls, and the
 * layouts of the structs that cross the ABI. This class and {@link Mem} are
 * the FFM half of the binding's native-access layer (META-INF/versions/22
 * of the jar); every other class is the base one, the same on both paths.
 * {@code NativeLayoutTest} checks every layout here and every number of
 * {@link Abi} against the library's {@code staunch_struct_size} /
 * {@code staunch_field_offset}.
 *
 * <p>Pointers cross as 64-bit integers ({@link #PTR}), as they do through
 * the JNI shim: a downcall then neither wraps nor unwraps a MemorySegment,
 * and the binding's logic is written once over {@code long}. Only 64-bit
 * targets are supported (the class refuses to load elsewhere).
 *
 * <p>Not public API: use {@link dev.staunch.Staunch}.
 */
@SuppressWarnings("restricted")
public final class Native {
    private Native() {}

    // ---- layouts -------------------------------------------------------

    /** A pointer field of a struct (the layouts below, for the layout test). */
    public static final AddressLayout C_POINTER = ADDRESS;
    public static final ValueLayout.OfLong SIZE_T = JAVA_LONG;
    /** A pointer argument or result of a function: its address as a long (64-bit targets). */
    public static final ValueLayout.OfLong PTR = JAVA_LONG;

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

    /** staunch_stats (ABI 1.0's fields). */
    public static final StructLayout STATS;

    static {
        List<MemoryLayout> fields = new ArrayList<>();
        fields.add(SIZE_T.withName("size"));
        for (String f : Abi.STATS_FIELDS) {
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

    /** staunch_trace_event (1.7; read only, passed by pointer to the tracer upcall; 1.12: held_us). */
    public static final StructLayout TRACE_EVENT = MemoryLayout.structLayout(
            JAVA_INT.withName("kind"),
            JAVA_INT.withName("error_code"),
            C_POINTER.withName("pool"),
            SIZE_T.withName("pool_len"),
            C_POINTER.withName("server"),
            SIZE_T.withName("server_len"),
            JAVA_LONG.withName("connection_id"),
            C_POINTER.withName("statement"),
            SIZE_T.withName("statement_len"),
            JAVA_LONG.withName("duration_us"),
            C_POINTER.withName("error"),
            SIZE_T.withName("error_len"),
            JAVA_LONG.withName("held_us")).withName("staunch_trace_event");

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

    /** staunch_batch (1.4; staunch_conn_query_batch: not called by this binding, whose
     * calls cost little next to a statement; declared for the layout test). */
    public static final StructLayout BATCH = MemoryLayout.structLayout(
            SIZE_T.withName("size"),
            C_POINTER.withName("recycle"),
            C_POINTER.withName("types"),
            SIZE_T.withName("types_cap"),
            C_POINTER.withName("values"),
            SIZE_T.withName("values_cap"),
            SIZE_T.withName("n_columns"),
            SIZE_T.withName("n_rows"),
            JAVA_LONG.withName("affected_rows"),
            JAVA_LONG.withName("last_insert_id")).withName("staunch_batch");

    /** Every struct declared here, for the layout test. */
    public static final List<StructLayout> STRUCTS = List.of(
            DATETIME, TIME, PARAM, VALUE, STATS, EVENT, TRACE_EVENT, RESULT, TXN_OPTIONS, COLUMN_INFO, BATCH);

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
            if (ADDRESS.byteSize() != 8) {
                throw new UnsatisfiedLinkError("staunch: this binding passes pointers as 64-bit integers; "
                        + "this platform's are " + ADDRESS.byteSize() * 8 + "-bit");
            }
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
            return Abi.checkVersion(v, source);
        } catch (Throwable t) {
            return t;
        }
    }

    /**
     * Which native path this JVM uses: "FFM". A method, not a constant: javac copies a
     * constant into the classes that read it, and those are compiled against the JNI Native.
     */
    public static String path() {
        return "FFM";
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
    public static final MethodHandle version_string = h("staunch_version_string", FunctionDescriptor.of(PTR), CRITICAL);
    public static final MethodHandle error_message = h("staunch_error_message", FunctionDescriptor.of(PTR, PTR), CRITICAL);
    public static final MethodHandle error_status = h("staunch_error_status", FunctionDescriptor.of(JAVA_INT, PTR), CRITICAL);
    public static final MethodHandle error_server_code = h("staunch_error_server_code", FunctionDescriptor.of(JAVA_INT, PTR), CRITICAL);
    public static final MethodHandle error_sqlstate = h("staunch_error_sqlstate", FunctionDescriptor.of(PTR, PTR), CRITICAL);
    public static final MethodHandle error_category = h("staunch_error_category", FunctionDescriptor.of(JAVA_INT, PTR), CRITICAL);
    public static final MethodHandle error_free = h("staunch_error_free", FunctionDescriptor.ofVoid(PTR), CRITICAL);
    public static final MethodHandle status_name = h("staunch_status_name", FunctionDescriptor.of(PTR, JAVA_INT), CRITICAL);

    public static final MethodHandle options_new = h("staunch_options_new", st(PTR, PTR));
    public static final MethodHandle options_set = h("staunch_options_set", st(PTR, PTR, PTR, PTR));
    public static final MethodHandle options_set_url = h("staunch_options_set_url", st(PTR, PTR, PTR));
    public static final MethodHandle options_set_default = h("staunch_options_set_default", st(PTR, PTR, PTR, PTR));
    public static final MethodHandle options_set_event_callback = h("staunch_options_set_event_callback",
            st(PTR, PTR, PTR, PTR, PTR));
    public static final MethodHandle options_set_tracer = h("staunch_options_set_tracer",
            st(PTR, PTR, PTR, PTR, PTR));
    public static final MethodHandle options_free = h("staunch_options_free", FunctionDescriptor.ofVoid(PTR));

    public static final MethodHandle pool_open = h("staunch_pool_open", st(PTR, PTR, PTR));
    public static final MethodHandle pool_open_options = h("staunch_pool_open_options", st(PTR, PTR, PTR));
    public static final MethodHandle pool_get = h("staunch_pool_get", st(PTR, JAVA_INT, PTR, PTR));
    public static final MethodHandle pool_get_read = h("staunch_pool_get_read", st(PTR, JAVA_INT, PTR, PTR));
    public static final MethodHandle pool_get_cancellable = h("staunch_pool_get_cancellable",
            st(PTR, JAVA_INT, PTR, PTR, PTR));
    public static final MethodHandle pool_get_read_cancellable = h("staunch_pool_get_read_cancellable",
            st(PTR, JAVA_INT, PTR, PTR, PTR));
    public static final MethodHandle pool_try_get = h("staunch_pool_try_get", st(PTR, PTR, PTR));
    public static final MethodHandle pool_get_start = h("staunch_pool_get_start",
            st(PTR, JAVA_INT, JAVA_BOOLEAN, JAVA_INT, PTR, PTR, PTR));
    public static final MethodHandle pending_get_fd = h("staunch_pending_get_fd", FunctionDescriptor.of(JAVA_INT, PTR),
            CRITICAL);
    public static final MethodHandle pending_get_remaining_ms = h("staunch_pending_get_remaining_ms",
            FunctionDescriptor.of(JAVA_INT, PTR), CRITICAL);
    public static final MethodHandle pending_get_finish = h("staunch_pending_get_finish", st(PTR, PTR, PTR));
    public static final MethodHandle pending_get_free = h("staunch_pending_get_free", FunctionDescriptor.ofVoid(PTR));
    public static final MethodHandle pool_stats = h("staunch_pool_stats", st(PTR, PTR, PTR), CRITICAL);
    public static final MethodHandle pool_metrics = h("staunch_pool_metrics", st(PTR, PTR, SIZE_T, PTR, PTR));
    public static final MethodHandle pool_name = h("staunch_pool_name", st(PTR, PTR, SIZE_T, PTR, PTR), CRITICAL);
    public static final MethodHandle pool_leak_threshold_ms = h("staunch_pool_leak_threshold_ms",
            FunctionDescriptor.of(JAVA_LONG, PTR), CRITICAL);
    public static final MethodHandle pool_soft_evict = h("staunch_pool_soft_evict", st(PTR, PTR));
    public static final MethodHandle pool_set_max_size = h("staunch_pool_set_max_size", st(PTR, JAVA_INT, PTR));
    public static final MethodHandle pool_set_min_idle = h("staunch_pool_set_min_idle", st(PTR, JAVA_INT, PTR));
    public static final MethodHandle pool_suspend = h("staunch_pool_suspend", st(PTR, PTR));
    public static final MethodHandle pool_resume = h("staunch_pool_resume", st(PTR, PTR));
    public static final MethodHandle pool_close = h("staunch_pool_close", st(PTR, PTR));
    public static final MethodHandle pool_id = h("staunch_pool_id", FunctionDescriptor.of(JAVA_LONG, PTR), CRITICAL);
    public static final MethodHandle pool_free = h("staunch_pool_free", FunctionDescriptor.ofVoid(PTR));
    public static final MethodHandle pool_free_nowait = h("staunch_pool_free_nowait", FunctionDescriptor.ofVoid(PTR));

    public static final MethodHandle cancel_token_new = h("staunch_cancel_token_new", st(PTR, PTR), CRITICAL);
    public static final MethodHandle cancel_token_cancel = h("staunch_cancel_token_cancel", st(PTR, PTR));
    public static final MethodHandle cancel_token_is_cancelled = h("staunch_cancel_token_is_cancelled",
            FunctionDescriptor.of(JAVA_BOOLEAN, PTR), CRITICAL);
    public static final MethodHandle cancel_token_free = h("staunch_cancel_token_free", FunctionDescriptor.ofVoid(PTR), CRITICAL);

    public static final MethodHandle conn_execute = h("staunch_conn_execute",
            st(PTR, PTR, PTR, SIZE_T, PTR, PTR, PTR));
    public static final MethodHandle conn_last_result = h("staunch_conn_last_result", st(PTR, PTR, PTR), CRITICAL);
    public static final MethodHandle conn_query = h("staunch_conn_query",
            st(PTR, PTR, PTR, SIZE_T, PTR, PTR));
    public static final MethodHandle conn_query_ex = h("staunch_conn_query_ex",
            st(PTR, PTR, PTR, SIZE_T, JAVA_INT, PTR, PTR));
    public static final MethodHandle conn_query_send_ex = h("staunch_conn_query_send_ex",
            st(PTR, PTR, PTR, SIZE_T, JAVA_INT, PTR, PTR));
    public static final MethodHandle conn_query_recv = h("staunch_conn_query_recv", st(PTR, JAVA_INT, PTR, PTR));
    public static final MethodHandle conn_count_params = h("staunch_conn_count_params",
            st(PTR, PTR, PTR, PTR));
    public static final MethodHandle conn_param_offsets = h("staunch_conn_param_offsets",
            st(PTR, PTR, PTR, SIZE_T, PTR, PTR));
    public static final MethodHandle url_userinfo_end = h("staunch_url_userinfo_end", st(PTR, PTR, PTR), CRITICAL);
    public static final MethodHandle conn_begin = h("staunch_conn_begin", st(PTR, PTR));
    public static final MethodHandle conn_begin_ex = h("staunch_conn_begin_ex", st(PTR, PTR, PTR));
    public static final MethodHandle conn_commit = h("staunch_conn_commit", st(PTR, PTR));
    public static final MethodHandle conn_rollback = h("staunch_conn_rollback", st(PTR, PTR));
    public static final MethodHandle conn_ping = h("staunch_conn_ping", st(PTR, PTR));
    public static final MethodHandle conn_set_timeout = h("staunch_conn_set_timeout", st(PTR, JAVA_INT, PTR));
    public static final MethodHandle conn_cancel = h("staunch_conn_cancel", st(PTR, PTR, PTR));
    public static final MethodHandle conn_is_broken = h("staunch_conn_is_broken", FunctionDescriptor.of(JAVA_BOOLEAN, PTR), CRITICAL);
    public static final MethodHandle conn_id = h("staunch_conn_id", FunctionDescriptor.of(JAVA_LONG, PTR), CRITICAL);
    public static final MethodHandle conn_server_id = h("staunch_conn_server_id", st(PTR, PTR, PTR), CRITICAL);
    public static final MethodHandle conn_set_borrower_stack = h("staunch_conn_set_borrower_stack", st(PTR, PTR, SIZE_T, PTR));
    public static final MethodHandle conn_release = h("staunch_conn_release", st(PTR, PTR));
    public static final MethodHandle conn_discard = h("staunch_conn_discard", st(PTR, PTR));
    public static final MethodHandle conn_free = h("staunch_conn_free", FunctionDescriptor.ofVoid(PTR));

    public static final MethodHandle rows_column_count = h("staunch_rows_column_count", FunctionDescriptor.of(SIZE_T, PTR), CRITICAL);
    public static final MethodHandle rows_column_info = h("staunch_rows_column_info",
            st(PTR, SIZE_T, PTR, PTR), CRITICAL);
    public static final MethodHandle rows_next = h("staunch_rows_next", st(PTR, PTR, PTR));
    public static final MethodHandle rows_fetch = h("staunch_rows_fetch", st(PTR, PTR, SIZE_T, PTR, PTR));
    public static final MethodHandle rows_fetch_ready = h("staunch_rows_fetch_ready", st(PTR, PTR, SIZE_T, PTR, PTR, PTR));
    public static final MethodHandle rows_wait_fd = h("staunch_rows_wait_fd", st(PTR, PTR, PTR, PTR));
    public static final MethodHandle rows_next_result = h("staunch_rows_next_result", st(PTR, PTR, PTR));
    public static final MethodHandle rows_row_count = h("staunch_rows_row_count", st(PTR, PTR, PTR), CRITICAL);
    public static final MethodHandle rows_affected_rows = h("staunch_rows_affected_rows", FunctionDescriptor.of(JAVA_LONG, PTR), CRITICAL);
    public static final MethodHandle rows_last_insert_id = h("staunch_rows_last_insert_id", FunctionDescriptor.of(JAVA_LONG, PTR), CRITICAL);
    public static final MethodHandle rows_warnings = h("staunch_rows_warnings", FunctionDescriptor.of(JAVA_INT, PTR), CRITICAL);
    public static final MethodHandle rows_free = h("staunch_rows_free", FunctionDescriptor.ofVoid(PTR));

    public static final MethodHandle struct_size = h("staunch_struct_size", FunctionDescriptor.of(SIZE_T, PTR), CRITICAL);
    public static final MethodHandle field_offset = h("staunch_field_offset", FunctionDescriptor.of(SIZE_T, PTR, PTR), CRITICAL);

    // ---- events --------------------------------------------------------

    /** The upcall stubs, made on the first pool with a listener. */
    private static final class Upcalls {
        static final long CALLBACK;
        static final long FINALIZER;
        static final long TRACE;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                CALLBACK = LINKER.upcallStub(
                        l.findStatic(Native.class, "onEvent", MethodType.methodType(void.class, long.class, long.class)),
                        FunctionDescriptor.ofVoid(PTR, PTR), Arena.global()).address();
                FINALIZER = LINKER.upcallStub(
                        l.findStatic(Native.class, "onFinalize", MethodType.methodType(void.class, long.class)),
                        FunctionDescriptor.ofVoid(PTR), Arena.global()).address();
                TRACE = LINKER.upcallStub(
                        l.findStatic(Native.class, "onTrace", MethodType.methodType(void.class, long.class, long.class)),
                        FunctionDescriptor.ofVoid(PTR, PTR), Arena.global()).address();
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    /** The upcall stub of staunch_event_callback: it calls {@link Events#onEvent}. */
    public static long eventCallback() {
        return Upcalls.CALLBACK;
    }

    /** The upcall stub of staunch_finalizer: it calls {@link Events#onFinalize}. */
    public static long eventFinalizer() {
        return Upcalls.FINALIZER;
    }

    /** The upcall stub of staunch_trace_callback: it calls {@link Events#onTrace}. */
    public static long traceCallback() {
        return Upcalls.TRACE;
    }

    /**
     * staunch_trace_callback(event, user_data), on the thread inside a downcall (so never a critical one).
     * The statement's text is read only when the registration asked for it ({@link Events#wantsText}).
     */
    private static void onTrace(long event, long userData) {
        try {
            long statement = Events.wantsText(userData) ? Mem.ALL.get(JAVA_LONG, event + Abi.T_STATEMENT) : 0;
            long error = Mem.ALL.get(JAVA_LONG, event + Abi.T_ERROR);
            Events.onTrace(userData, Mem.ALL.get(JAVA_INT, event + Abi.T_KIND),
                    Mem.ALL.get(JAVA_INT, event + Abi.T_ERROR_CODE),
                    text(Mem.ALL.get(JAVA_LONG, event + Abi.T_POOL), Mem.ALL.get(JAVA_LONG, event + Abi.T_POOL_LEN)),
                    text(Mem.ALL.get(JAVA_LONG, event + Abi.T_SERVER), Mem.ALL.get(JAVA_LONG, event + Abi.T_SERVER_LEN)),
                    Mem.ALL.get(JAVA_LONG, event + Abi.T_CONNECTION_ID),
                    statement == 0 ? null : string(statement, Mem.ALL.get(JAVA_LONG, event + Abi.T_STATEMENT_LEN)),
                    Mem.ALL.get(JAVA_LONG, event + Abi.T_DURATION_US),
                    error == 0 ? null : string(error, Mem.ALL.get(JAVA_LONG, event + Abi.T_ERROR_LEN)));
        } catch (Throwable ignored) {
            // nothing may cross into C
        }
    }

    /** ptr+len UTF-8 text, "" for NULL. */
    private static String text(long p, long len) {
        return p == 0 ? "" : string(p, len);
    }

    /** staunch_event_callback(event, user_data). Nothing thrown may leave an upcall (the JVM would exit). */
    private static void onEvent(long event, long userData) {
        try {
            long message = Mem.ALL.get(JAVA_LONG, event + Abi.E_MESSAGE);
            Events.onEvent(userData, Mem.ALL.get(JAVA_INT, event + Abi.E_KIND),
                    Mem.ALL.get(JAVA_INT, event + Abi.E_STATUS),
                    Mem.ALL.get(JAVA_LONG, event + Abi.E_CONNECTION_ID),
                    Mem.ALL.get(JAVA_LONG, event + Abi.E_COUNT),
                    Mem.ALL.get(JAVA_LONG, event + Abi.E_DURATION_US),
                    string(message),
                    Mem.ALL.get(JAVA_LONG, event + Abi.E_POOL_ID));
        } catch (Throwable ignored) {
            // nothing may cross into C
        }
    }

    /** staunch_finalizer(user_data). */
    private static void onFinalize(long userData) {
        try {
            Events.onFinalize(userData);
        } catch (Throwable ignored) {
            // nothing may cross into C
        }
    }

    // ---- helpers -------------------------------------------------------

    /** A NUL-terminated UTF-8 string at {@code p} (NULL: ""). */
    public static String string(long p) {
        if (p == 0) {
            return "";
        }
        return Mem.ALL.getString(p, StandardCharsets.UTF_8);
    }

    /** {@code len} bytes at {@code p} as UTF-8 text. */
    public static String string(long p, long len) {
        if (len == 0) {
            return "";
        }
        return new String(bytes(p, len), StandardCharsets.UTF_8);
    }

    /**
     * False: on this path {@link #bytes} is a plain memory copy, so the rows
     * read each value where it is (the JNI twin gathers a batch's values in
     * one crossing).
     */
    public static boolean gathers() {
        return false;
    }

    /** Not used on this path ({@link #gathers} is false): null. */
    public static byte[] gather(long values, long count, int total) {
        return null;
    }

    /** A copy of the {@code len} bytes at {@code p}. */
    public static byte[] bytes(long p, long len) {
        if (len == 0) {
            return new byte[0];
        }
        if (len < 0 || len > Integer.MAX_VALUE - 8) {
            throw new OutOfMemoryError("staunch: a value of " + len + " bytes does not fit in a Java array");
        }
        byte[] b = new byte[(int) len];
        MemorySegment.copy(Mem.ALL, JAVA_BYTE, p, b, 0, (int) len);
        return b;
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    // ---- the poller's epoll (internal/Poller), from libc ---------------------

    private static MethodHandle libc(String name, FunctionDescriptor fd) {
        return LINKER.defaultLookup().find(name).map(a -> LINKER.downcallHandle(a, fd)).orElse(null);
    }

    private static final MethodHandle EPOLL_CREATE1 = libc("epoll_create1", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle EPOLL_CTL = libc("epoll_ctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, PTR));
    private static final MethodHandle CLOSE = libc("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle EVENTFD = libc("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle EPOLL_WAIT = libc("epoll_wait",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, PTR, JAVA_INT, JAVA_INT));
    private static final int EPOLL_CLOEXEC = 0x80000;
    private static final int EPOLL_CTL_ADD = 1;
    private static final int EPOLL_CTL_DEL = 2;
    private static final int EPOLL_CTL_MOD = 3;
    private static final int EPOLLIN = 0x1;
    private static final int EPOLLONESHOT = 1 << 30;
    /** struct epoll_event: {uint32_t events; uint64_t data}, packed on x86-64 only. */
    private static final boolean EPOLL_PACKED = "amd64".equals(System.getProperty("os.arch"))
            || "x86_64".equals(System.getProperty("os.arch"));
    private static final long EPOLL_EVENT_SIZE = EPOLL_PACKED ? 12 : 16;
    private static final long EPOLL_DATA = EPOLL_PACKED ? 4 : 8;
    private static final int EPOLL_MAX = 64;
    /** The poller thread's event array (one thread waits at a time). */
    private static MemorySegment epollEvents;

    /** epoll_create1(EPOLL_CLOEXEC): the descriptor, or -1. */
    public static int pollerCreate() {
        if (EPOLL_CREATE1 == null || EPOLL_CTL == null || EPOLL_WAIT == null || EVENTFD == null || CLOSE == null) {
            return -1;
        }
        try {
            return (int) EPOLL_CREATE1.invokeExact(EPOLL_CLOEXEC);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC): a waiting borrow's signal, or -1. */
    public static int pollerEventfd() {
        try {
            return (int) EVENTFD.invokeExact(0, 0x800 | 0x80000);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** close(fd) of a descriptor {@link #pollerEventfd} made: 0 or -1. */
    public static int pollerClose(int fd) {
        try {
            return (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Arms {@code fd} once (EPOLLIN | EPOLLONESHOT) to report {@code id}: added when {@code add}, else re-armed; 0 or -1. */
    public static int pollerArm(int epfd, int fd, long id, boolean add) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ev = a.allocate(16, 8);
            ev.set(JAVA_INT, 0, EPOLLIN | EPOLLONESHOT);
            ev.set(JAVA_LONG_UNALIGNED, EPOLL_DATA, id);
            return (int) EPOLL_CTL.invokeExact(epfd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, ev.address());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Removes {@code fd}: 0 or -1. */
    public static int pollerDisarm(int epfd, int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ev = a.allocate(16, 8);
            return (int) EPOLL_CTL.invokeExact(epfd, EPOLL_CTL_DEL, fd, ev.address());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Waits up to {@code timeoutMs} (-1: no bound) for armed descriptors and
     * writes the ids of those ready into {@code ids} (at most 64): their
     * count, or -1 (EINTR among others). One thread at a time.
     */
    public static int pollerWait(int epfd, long[] ids, int timeoutMs) {
        if (epollEvents == null) {
            epollEvents = Arena.global().allocate(EPOLL_EVENT_SIZE * EPOLL_MAX, 8);
        }
        int cap = Math.min(ids.length, EPOLL_MAX);
        try {
            int n = (int) EPOLL_WAIT.invokeExact(epfd, epollEvents.address(), cap, timeoutMs);
            for (int i = 0; i < n; i++) {
                ids[i] = epollEvents.get(JAVA_LONG_UNALIGNED, i * EPOLL_EVENT_SIZE + EPOLL_DATA);
            }
            return n;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- the C ABI, pointers as long (tools/gen_jni.py) ---------------------

    // GENERATED BEGIN (tools/gen_jni.py)
    public static int version() {
        try {
            return (int) version.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long version_string() {
        try {
            return (long) version_string.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long error_message(long a0) {
        try {
            return (long) error_message.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int error_status(long a0) {
        try {
            return (int) error_status.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int error_server_code(long a0) {
        try {
            return (int) error_server_code.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long error_sqlstate(long a0) {
        try {
            return (long) error_sqlstate.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int error_category(long a0) {
        try {
            return (int) error_category.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void error_free(long a0) {
        try {
            error_free.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long status_name(int a0) {
        try {
            return (long) status_name.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int options_new(long a0, long a1) {
        try {
            return (int) options_new.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int options_set(long a0, long a1, long a2, long a3) {
        try {
            return (int) options_set.invokeExact(a0, a1, a2, a3);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int options_set_url(long a0, long a1, long a2) {
        try {
            return (int) options_set_url.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int options_set_default(long a0, long a1, long a2, long a3) {
        try {
            return (int) options_set_default.invokeExact(a0, a1, a2, a3);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int options_set_event_callback(long a0, long a1, long a2, long a3, long a4) {
        try {
            return (int) options_set_event_callback.invokeExact(a0, a1, a2, a3, a4);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int options_set_tracer(long a0, long a1, long a2, long a3, long a4) {
        try {
            return (int) options_set_tracer.invokeExact(a0, a1, a2, a3, a4);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void options_free(long a0) {
        try {
            options_free.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_open(long a0, long a1, long a2) {
        try {
            return (int) pool_open.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_open_options(long a0, long a1, long a2) {
        try {
            return (int) pool_open_options.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_get(long a0, int a1, long a2, long a3) {
        try {
            return (int) pool_get.invokeExact(a0, a1, a2, a3);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_get_read(long a0, int a1, long a2, long a3) {
        try {
            return (int) pool_get_read.invokeExact(a0, a1, a2, a3);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_get_cancellable(long a0, int a1, long a2, long a3, long a4) {
        try {
            return (int) pool_get_cancellable.invokeExact(a0, a1, a2, a3, a4);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_get_read_cancellable(long a0, int a1, long a2, long a3, long a4) {
        try {
            return (int) pool_get_read_cancellable.invokeExact(a0, a1, a2, a3, a4);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_try_get(long a0, long a1, long a2) {
        try {
            return (int) pool_try_get.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_get_start(long a0, int a1, boolean a2, int a3, long a4, long a5, long a6) {
        try {
            return (int) pool_get_start.invokeExact(a0, a1, a2, a3, a4, a5, a6);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pending_get_fd(long a0) {
        try {
            return (int) pending_get_fd.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pending_get_remaining_ms(long a0) {
        try {
            return (int) pending_get_remaining_ms.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pending_get_finish(long a0, long a1, long a2) {
        try {
            return (int) pending_get_finish.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void pending_get_free(long a0) {
        try {
            pending_get_free.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_stats(long a0, long a1, long a2) {
        try {
            return (int) pool_stats.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_metrics(long a0, long a1, long a2, long a3, long a4) {
        try {
            return (int) pool_metrics.invokeExact(a0, a1, a2, a3, a4);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_name(long a0, long a1, long a2, long a3, long a4) {
        try {
            return (int) pool_name.invokeExact(a0, a1, a2, a3, a4);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long pool_leak_threshold_ms(long a0) {
        try {
            return (long) pool_leak_threshold_ms.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_soft_evict(long a0, long a1) {
        try {
            return (int) pool_soft_evict.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_set_max_size(long a0, int a1, long a2) {
        try {
            return (int) pool_set_max_size.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_set_min_idle(long a0, int a1, long a2) {
        try {
            return (int) pool_set_min_idle.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_suspend(long a0, long a1) {
        try {
            return (int) pool_suspend.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_resume(long a0, long a1) {
        try {
            return (int) pool_resume.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int pool_close(long a0, long a1) {
        try {
            return (int) pool_close.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long pool_id(long a0) {
        try {
            return (long) pool_id.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void pool_free(long a0) {
        try {
            pool_free.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void pool_free_nowait(long a0) {
        try {
            pool_free_nowait.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int cancel_token_new(long a0, long a1) {
        try {
            return (int) cancel_token_new.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int cancel_token_cancel(long a0, long a1) {
        try {
            return (int) cancel_token_cancel.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static boolean cancel_token_is_cancelled(long a0) {
        try {
            return (boolean) cancel_token_is_cancelled.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void cancel_token_free(long a0) {
        try {
            cancel_token_free.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_execute(long a0, long a1, long a2, long a3, long a4, long a5, long a6) {
        try {
            return (int) conn_execute.invokeExact(a0, a1, a2, a3, a4, a5, a6);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_last_result(long a0, long a1, long a2) {
        try {
            return (int) conn_last_result.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_query(long a0, long a1, long a2, long a3, long a4, long a5) {
        try {
            return (int) conn_query.invokeExact(a0, a1, a2, a3, a4, a5);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_query_ex(long a0, long a1, long a2, long a3, int a4, long a5, long a6) {
        try {
            return (int) conn_query_ex.invokeExact(a0, a1, a2, a3, a4, a5, a6);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_query_send_ex(long a0, long a1, long a2, long a3, int a4, long a5, long a6) {
        try {
            return (int) conn_query_send_ex.invokeExact(a0, a1, a2, a3, a4, a5, a6);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_query_recv(long a0, int a1, long a2, long a3) {
        try {
            return (int) conn_query_recv.invokeExact(a0, a1, a2, a3);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_count_params(long a0, long a1, long a2, long a3) {
        try {
            return (int) conn_count_params.invokeExact(a0, a1, a2, a3);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_param_offsets(long a0, long a1, long a2, long a3, long a4, long a5) {
        try {
            return (int) conn_param_offsets.invokeExact(a0, a1, a2, a3, a4, a5);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int url_userinfo_end(long a0, long a1, long a2) {
        try {
            return (int) url_userinfo_end.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_begin(long a0, long a1) {
        try {
            return (int) conn_begin.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_begin_ex(long a0, long a1, long a2) {
        try {
            return (int) conn_begin_ex.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_commit(long a0, long a1) {
        try {
            return (int) conn_commit.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_rollback(long a0, long a1) {
        try {
            return (int) conn_rollback.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_ping(long a0, long a1) {
        try {
            return (int) conn_ping.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_set_timeout(long a0, int a1, long a2) {
        try {
            return (int) conn_set_timeout.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_cancel(long a0, long a1, long a2) {
        try {
            return (int) conn_cancel.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static boolean conn_is_broken(long a0) {
        try {
            return (boolean) conn_is_broken.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long conn_id(long a0) {
        try {
            return (long) conn_id.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_server_id(long a0, long a1, long a2) {
        try {
            return (int) conn_server_id.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_set_borrower_stack(long a0, long a1, long a2, long a3) {
        try {
            return (int) conn_set_borrower_stack.invokeExact(a0, a1, a2, a3);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_release(long a0, long a1) {
        try {
            return (int) conn_release.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int conn_discard(long a0, long a1) {
        try {
            return (int) conn_discard.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void conn_free(long a0) {
        try {
            conn_free.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long rows_column_count(long a0) {
        try {
            return (long) rows_column_count.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int rows_column_info(long a0, long a1, long a2, long a3) {
        try {
            return (int) rows_column_info.invokeExact(a0, a1, a2, a3);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int rows_next(long a0, long a1, long a2) {
        try {
            return (int) rows_next.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int rows_fetch(long a0, long a1, long a2, long a3, long a4) {
        try {
            return (int) rows_fetch.invokeExact(a0, a1, a2, a3, a4);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int rows_fetch_ready(long a0, long a1, long a2, long a3, long a4, long a5) {
        try {
            return (int) rows_fetch_ready.invokeExact(a0, a1, a2, a3, a4, a5);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int rows_wait_fd(long a0, long a1, long a2, long a3) {
        try {
            return (int) rows_wait_fd.invokeExact(a0, a1, a2, a3);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int rows_next_result(long a0, long a1, long a2) {
        try {
            return (int) rows_next_result.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int rows_row_count(long a0, long a1, long a2) {
        try {
            return (int) rows_row_count.invokeExact(a0, a1, a2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long rows_affected_rows(long a0) {
        try {
            return (long) rows_affected_rows.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long rows_last_insert_id(long a0) {
        try {
            return (long) rows_last_insert_id.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int rows_warnings(long a0) {
        try {
            return (int) rows_warnings.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void rows_free(long a0) {
        try {
            rows_free.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long struct_size(long a0) {
        try {
            return (long) struct_size.invokeExact(a0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long field_offset(long a0, long a1) {
        try {
            return (long) field_offset.invokeExact(a0, a1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
    // GENERATED END
}
