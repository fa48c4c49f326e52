package dev.staunch.internal;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;

/**
 * The native path of JDK 11 to 21 (JNI): finds libstaunch and the JNI shim
 * (libstaunch_jni.so, src/main/c), and gives the binding the C ABI as static
 * methods with pointers as {@code long} (each forwards to {@link Jni}) and
 * the few memory reads the rest needs. This class and {@link Mem} are the
 * binding's whole native-access layer: on JDK 22+ the multi-release jar's
 * META-INF/versions/22 copies of these two (FFM, the same methods) are
 * loaded instead, and every other class is the same on both paths.
 *
 * <p>Not public API: use {@link dev.staunch.Staunch}.
 */
public final class Native {
    private Native() {}

    // ---- loading -------------------------------------------------------

    private static final Throwable LOAD_FAILURE;
    /** Where the library was found (for messages). */
    public static final String SOURCE;
    /** Where the JNI shim was found. */
    public static final String SHIM_SOURCE;

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
        return Abi.checkVersion(v, source);
    }

    /**
     * Which native path this JVM uses: "JNI". A method, not a constant: javac copies a
     * constant into the classes that read it, and those are compiled against the JNI Native.
     */
    public static String path() {
        return "JNI";
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

    /**
     * Whether {@link #gather} copies a fetched batch's variable-length values
     * in one call. On this path each {@link #bytes} is a JNI crossing (about
     * as dear as a short copy), so a batch of rows gathers them once.
     */
    public static boolean gathers() {
        return true;
    }

    /**
     * The text, decimal and byte values among {@code count} staunch_values at
     * {@code values}, one after another in one array of {@code total} bytes
     * (the sum of their lengths); null if the lengths do not add up.
     */
    public static byte[] gather(long values, long count, int total) {
        return Jni.gather(values, count, total);
    }

    /** The shim's staunch_event_callback (it calls {@link Events#onEvent}). */
    public static long eventCallback() {
        return Jni.eventCallback();
    }

    /** The shim's staunch_finalizer (it calls {@link Events#onFinalize}). */
    public static long eventFinalizer() {
        return Jni.eventFinalizer();
    }

    /** The shim's staunch_trace_callback (it calls {@link Events}, on the borrowing thread). */
    public static long traceCallback() {
        return Jni.traceCallback();
    }

    // ---- the poller's epoll (internal/Poller) ----------------------------

    /** epoll_create1(EPOLL_CLOEXEC): the descriptor, or -1. */
    public static int pollerCreate() {
        return Jni.pollerCreate();
    }

    /** eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC): a waiting borrow's signal, or -1. */
    public static int pollerEventfd() {
        return Jni.pollerEventfd();
    }

    /** close(fd) of a descriptor {@link #pollerEventfd} made: 0 or -1. */
    public static int pollerClose(int fd) {
        return Jni.pollerClose(fd);
    }

    /** Arms {@code fd} once (EPOLLIN | EPOLLONESHOT) to report {@code id}: added when {@code add}, else re-armed; 0 or -1. */
    public static int pollerArm(int epfd, int fd, long id, boolean add) {
        return Jni.pollerArm(epfd, fd, id, add);
    }

    /** Removes {@code fd}: 0 or -1. */
    public static int pollerDisarm(int epfd, int fd) {
        return Jni.pollerDisarm(epfd, fd);
    }

    /**
     * Waits up to {@code timeoutMs} (-1: no bound) for armed descriptors and
     * writes the ids of those ready into {@code ids} (at most 64): their
     * count, or -1 (EINTR among others). One thread at a time.
     */
    public static int pollerWait(int epfd, long[] ids, int timeoutMs) {
        return Jni.pollerWait(epfd, ids, timeoutMs);
    }

    // ---- the C ABI (tools/gen_jni.py) -----------------------------------

    // GENERATED BEGIN (tools/gen_jni.py)
    public static int version() {
        return Jni.version();
    }

    public static long version_string() {
        return Jni.version_string();
    }

    public static long error_message(long a0) {
        return Jni.error_message(a0);
    }

    public static int error_status(long a0) {
        return Jni.error_status(a0);
    }

    public static int error_server_code(long a0) {
        return Jni.error_server_code(a0);
    }

    public static long error_sqlstate(long a0) {
        return Jni.error_sqlstate(a0);
    }

    public static int error_category(long a0) {
        return Jni.error_category(a0);
    }

    public static void error_free(long a0) {
        Jni.error_free(a0);
    }

    public static long status_name(int a0) {
        return Jni.status_name(a0);
    }

    public static int options_new(long a0, long a1) {
        return Jni.options_new(a0, a1);
    }

    public static int options_set(long a0, long a1, long a2, long a3) {
        return Jni.options_set(a0, a1, a2, a3);
    }

    public static int options_set_url(long a0, long a1, long a2) {
        return Jni.options_set_url(a0, a1, a2);
    }

    public static int options_set_default(long a0, long a1, long a2, long a3) {
        return Jni.options_set_default(a0, a1, a2, a3);
    }

    public static int options_set_event_callback(long a0, long a1, long a2, long a3, long a4) {
        return Jni.options_set_event_callback(a0, a1, a2, a3, a4);
    }

    public static int options_set_tracer(long a0, long a1, long a2, long a3, long a4) {
        return Jni.options_set_tracer(a0, a1, a2, a3, a4);
    }

    public static void options_free(long a0) {
        Jni.options_free(a0);
    }

    public static int pool_open(long a0, long a1, long a2) {
        return Jni.pool_open(a0, a1, a2);
    }

    public static int pool_open_options(long a0, long a1, long a2) {
        return Jni.pool_open_options(a0, a1, a2);
    }

    public static int pool_get(long a0, int a1, long a2, long a3) {
        return Jni.pool_get(a0, a1, a2, a3);
    }

    public static int pool_get_read(long a0, int a1, long a2, long a3) {
        return Jni.pool_get_read(a0, a1, a2, a3);
    }

    public static int pool_get_cancellable(long a0, int a1, long a2, long a3, long a4) {
        return Jni.pool_get_cancellable(a0, a1, a2, a3, a4);
    }

    public static int pool_get_read_cancellable(long a0, int a1, long a2, long a3, long a4) {
        return Jni.pool_get_read_cancellable(a0, a1, a2, a3, a4);
    }

    public static int pool_try_get(long a0, long a1, long a2) {
        return Jni.pool_try_get(a0, a1, a2);
    }

    public static int pool_get_start(long a0, int a1, boolean a2, int a3, long a4, long a5, long a6) {
        return Jni.pool_get_start(a0, a1, a2, a3, a4, a5, a6);
    }

    public static int pending_get_fd(long a0) {
        return Jni.pending_get_fd(a0);
    }

    public static int pending_get_remaining_ms(long a0) {
        return Jni.pending_get_remaining_ms(a0);
    }

    public static int pending_get_finish(long a0, long a1, long a2) {
        return Jni.pending_get_finish(a0, a1, a2);
    }

    public static void pending_get_free(long a0) {
        Jni.pending_get_free(a0);
    }

    public static int pool_stats(long a0, long a1, long a2) {
        return Jni.pool_stats(a0, a1, a2);
    }

    public static int pool_metrics(long a0, long a1, long a2, long a3, long a4) {
        return Jni.pool_metrics(a0, a1, a2, a3, a4);
    }

    public static int pool_name(long a0, long a1, long a2, long a3, long a4) {
        return Jni.pool_name(a0, a1, a2, a3, a4);
    }

    public static long pool_leak_threshold_ms(long a0) {
        return Jni.pool_leak_threshold_ms(a0);
    }

    public static int pool_soft_evict(long a0, long a1) {
        return Jni.pool_soft_evict(a0, a1);
    }

    public static int pool_set_max_size(long a0, int a1, long a2) {
        return Jni.pool_set_max_size(a0, a1, a2);
    }

    public static int pool_set_min_idle(long a0, int a1, long a2) {
        return Jni.pool_set_min_idle(a0, a1, a2);
    }

    public static int pool_suspend(long a0, long a1) {
        return Jni.pool_suspend(a0, a1);
    }

    public static int pool_resume(long a0, long a1) {
        return Jni.pool_resume(a0, a1);
    }

    public static int pool_close(long a0, long a1) {
        return Jni.pool_close(a0, a1);
    }

    public static long pool_id(long a0) {
        return Jni.pool_id(a0);
    }

    public static void pool_free(long a0) {
        Jni.pool_free(a0);
    }

    public static void pool_free_nowait(long a0) {
        Jni.pool_free_nowait(a0);
    }

    public static int cancel_token_new(long a0, long a1) {
        return Jni.cancel_token_new(a0, a1);
    }

    public static int cancel_token_cancel(long a0, long a1) {
        return Jni.cancel_token_cancel(a0, a1);
    }

    public static boolean cancel_token_is_cancelled(long a0) {
        return Jni.cancel_token_is_cancelled(a0);
    }

    public static void cancel_token_free(long a0) {
        Jni.cancel_token_free(a0);
    }

    public static int conn_execute(long a0, long a1, long a2, long a3, long a4, long a5, long a6) {
        return Jni.conn_execute(a0, a1, a2, a3, a4, a5, a6);
    }

    public static int conn_last_result(long a0, long a1, long a2) {
        return Jni.conn_last_result(a0, a1, a2);
    }

    public static int conn_query(long a0, long a1, long a2, long a3, long a4, long a5) {
        return Jni.conn_query(a0, a1, a2, a3, a4, a5);
    }

    public static int conn_query_ex(long a0, long a1, long a2, long a3, int a4, long a5, long a6) {
        return Jni.conn_query_ex(a0, a1, a2, a3, a4, a5, a6);
    }

    public static int conn_query_send_ex(long a0, long a1, long a2, long a3, int a4, long a5, long a6) {
        return Jni.conn_query_send_ex(a0, a1, a2, a3, a4, a5, a6);
    }

    public static int conn_query_recv(long a0, int a1, long a2, long a3) {
        return Jni.conn_query_recv(a0, a1, a2, a3);
    }

    public static int conn_count_params(long a0, long a1, long a2, long a3) {
        return Jni.conn_count_params(a0, a1, a2, a3);
    }

    public static int conn_param_offsets(long a0, long a1, long a2, long a3, long a4, long a5) {
        return Jni.conn_param_offsets(a0, a1, a2, a3, a4, a5);
    }

    public static int url_userinfo_end(long a0, long a1, long a2) {
        return Jni.url_userinfo_end(a0, a1, a2);
    }

    public static int conn_begin(long a0, long a1) {
        return Jni.conn_begin(a0, a1);
    }

    public static int conn_begin_ex(long a0, long a1, long a2) {
        return Jni.conn_begin_ex(a0, a1, a2);
    }

    public static int conn_commit(long a0, long a1) {
        return Jni.conn_commit(a0, a1);
    }

    public static int conn_rollback(long a0, long a1) {
        return Jni.conn_rollback(a0, a1);
    }

    public static int conn_ping(long a0, long a1) {
        return Jni.conn_ping(a0, a1);
    }

    public static int conn_set_timeout(long a0, int a1, long a2) {
        return Jni.conn_set_timeout(a0, a1, a2);
    }

    public static int conn_cancel(long a0, long a1, long a2) {
        return Jni.conn_cancel(a0, a1, a2);
    }

    public static boolean conn_is_broken(long a0) {
        return Jni.conn_is_broken(a0);
    }

    public static long conn_id(long a0) {
        return Jni.conn_id(a0);
    }

    public static int conn_server_id(long a0, long a1, long a2) {
        return Jni.conn_server_id(a0, a1, a2);
    }

    public static int conn_set_borrower_stack(long a0, long a1, long a2, long a3) {
        return Jni.conn_set_borrower_stack(a0, a1, a2, a3);
    }

    public static int conn_release(long a0, long a1) {
        return Jni.conn_release(a0, a1);
    }

    public static int conn_discard(long a0, long a1) {
        return Jni.conn_discard(a0, a1);
    }

    public static void conn_free(long a0) {
        Jni.conn_free(a0);
    }

    public static long rows_column_count(long a0) {
        return Jni.rows_column_count(a0);
    }

    public static int rows_column_info(long a0, long a1, long a2, long a3) {
        return Jni.rows_column_info(a0, a1, a2, a3);
    }

    public static int rows_next(long a0, long a1, long a2) {
        return Jni.rows_next(a0, a1, a2);
    }

    public static int rows_fetch(long a0, long a1, long a2, long a3, long a4) {
        return Jni.rows_fetch(a0, a1, a2, a3, a4);
    }

    public static int rows_fetch_ready(long a0, long a1, long a2, long a3, long a4, long a5) {
        return Jni.rows_fetch_ready(a0, a1, a2, a3, a4, a5);
    }

    public static int rows_wait_fd(long a0, long a1, long a2, long a3) {
        return Jni.rows_wait_fd(a0, a1, a2, a3);
    }

    public static int rows_next_result(long a0, long a1, long a2) {
        return Jni.rows_next_result(a0, a1, a2);
    }

    public static int rows_row_count(long a0, long a1, long a2) {
        return Jni.rows_row_count(a0, a1, a2);
    }

    public static long rows_affected_rows(long a0) {
        return Jni.rows_affected_rows(a0);
    }

    public static long rows_last_insert_id(long a0) {
        return Jni.rows_last_insert_id(a0);
    }

    public static int rows_warnings(long a0) {
        return Jni.rows_warnings(a0);
    }

    public static void rows_free(long a0) {
        Jni.rows_free(a0);
    }

    public static long struct_size(long a0) {
        return Jni.struct_size(a0);
    }

    public static long field_offset(long a0, long a1) {
        return Jni.field_offset(a0, a1);
    }
    // GENERATED END
}
