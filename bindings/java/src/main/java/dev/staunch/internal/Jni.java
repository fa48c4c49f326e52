package dev.staunch.internal;

import java.nio.ByteBuffer;

/**
 * The JNI shim's functions (src/main/c/staunch_jni.c): one per C ABI function
 * the binding calls, with pointers as {@code long}, plus a few for memory.
 * Only {@link Native} loads it; the JNI path of JDK 11 to 21.
 *
 * <p>Not public API.
 */
public final class Jni {
    private Jni() {}

    /** Opens libstaunch at {@code path} (UTF-8, no NUL) and resolves its functions: null, or what failed. */
    static native String init(byte[] path);

    /** The address of a direct buffer. */
    static native long address(ByteBuffer direct);

    /** A direct buffer over {@code len} bytes at {@code addr} (memory the library owns). */
    static native ByteBuffer view(long addr, long len);

    /** A copy of {@code len} bytes at {@code addr}. */
    static native byte[] bytes(long addr, long len);

    /**
     * The text, decimal and byte values among {@code count} staunch_values at
     * {@code values}, one after another in one array of {@code total} bytes;
     * null if their lengths do not add up to {@code total}.
     */
    static native byte[] gather(long values, long count, int total);

    /** malloc(len): 0 when it fails. */
    static native long malloc(long len);

    /** free(addr). */
    static native void free(long addr);

    /** strlen of the C string at {@code addr} (0 for NULL). */
    static native long strlen(long addr);

    /** The shim's staunch_event_callback and staunch_finalizer (they call {@link Events}). */
    static native long eventCallback();

    static native long eventFinalizer();

    /** The shim's staunch_trace_callback (it calls {@link Events#onTrace}). */
    static native long traceCallback();

    /** The poller's epoll (see {@link Native#pollerWait}): each -1 on failure. */
    static native int pollerCreate();

    static native int pollerEventfd();

    static native int pollerClose(int fd);

    static native int pollerArm(int epfd, int fd, long id, boolean add);

    static native int pollerDisarm(int epfd, int fd);

    static native int pollerWait(int epfd, long[] ids, int timeoutMs);

    // GENERATED BEGIN (tools/gen_jni.py)
    public static native int version();
    public static native long version_string();
    public static native long error_message(long a0);
    public static native int error_status(long a0);
    public static native int error_server_code(long a0);
    public static native long error_sqlstate(long a0);
    public static native int error_category(long a0);
    public static native void error_free(long a0);
    public static native long status_name(int a0);
    public static native int options_new(long a0, long a1);
    public static native int options_set(long a0, long a1, long a2, long a3);
    public static native int options_set_url(long a0, long a1, long a2);
    public static native int options_set_default(long a0, long a1, long a2, long a3);
    public static native int options_set_event_callback(long a0, long a1, long a2, long a3, long a4);
    public static native int options_set_tracer(long a0, long a1, long a2, long a3, long a4);
    public static native void options_free(long a0);
    public static native int pool_open(long a0, long a1, long a2);
    public static native int pool_open_options(long a0, long a1, long a2);
    public static native int pool_get(long a0, int a1, long a2, long a3);
    public static native int pool_get_read(long a0, int a1, long a2, long a3);
    public static native int pool_get_cancellable(long a0, int a1, long a2, long a3, long a4);
    public static native int pool_get_read_cancellable(long a0, int a1, long a2, long a3, long a4);
    public static native int pool_try_get(long a0, long a1, long a2);
    public static native int pool_get_start(long a0, int a1, boolean a2, int a3, long a4, long a5, long a6);
    public static native int pending_get_fd(long a0);
    public static native int pending_get_remaining_ms(long a0);
    public static native int pending_get_finish(long a0, long a1, long a2);
    public static native void pending_get_free(long a0);
    public static native int pool_stats(long a0, long a1, long a2);
    public static native int pool_metrics(long a0, long a1, long a2, long a3, long a4);
    public static native int pool_name(long a0, long a1, long a2, long a3, long a4);
    public static native long pool_leak_threshold_ms(long a0);
    public static native int pool_soft_evict(long a0, long a1);
    public static native int pool_set_max_size(long a0, int a1, long a2);
    public static native int pool_set_min_idle(long a0, int a1, long a2);
    public static native int pool_suspend(long a0, long a1);
    public static native int pool_resume(long a0, long a1);
    public static native int pool_close(long a0, long a1);
    public static native long pool_id(long a0);
    public static native void pool_free(long a0);
    public static native void pool_free_nowait(long a0);
    public static native int cancel_token_new(long a0, long a1);
    public static native int cancel_token_cancel(long a0, long a1);
    public static native boolean cancel_token_is_cancelled(long a0);
    public static native void cancel_token_free(long a0);
    public static native int conn_execute(long a0, long a1, long a2, long a3, long a4, long a5, long a6);
    public static native int conn_last_result(long a0, long a1, long a2);
    public static native int conn_query(long a0, long a1, long a2, long a3, long a4, long a5);
    public static native int conn_query_ex(long a0, long a1, long a2, long a3, int a4, long a5, long a6);
    public static native int conn_query_send_ex(long a0, long a1, long a2, long a3, int a4, long a5, long a6);
    public static native int conn_query_recv(long a0, int a1, long a2, long a3);
    public static native int conn_count_params(long a0, long a1, long a2, long a3);
    public static native int conn_param_offsets(long a0, long a1, long a2, long a3, long a4, long a5);
    public static native int url_userinfo_end(long a0, long a1, long a2);
    public static native int conn_begin(long a0, long a1);
    public static native int conn_begin_ex(long a0, long a1, long a2);
    public static native int conn_commit(long a0, long a1);
    public static native int conn_rollback(long a0, long a1);
    public static native int conn_ping(long a0, long a1);
    public static native int conn_set_timeout(long a0, int a1, long a2);
    public static native int conn_cancel(long a0, long a1, long a2);
    public static native boolean conn_is_broken(long a0);
    public static native long conn_id(long a0);
    public static native int conn_server_id(long a0, long a1, long a2);
    public static native int conn_set_borrower_stack(long a0, long a1, long a2, long a3);
    public static native int conn_release(long a0, long a1);
    public static native int conn_discard(long a0, long a1);
    public static native void conn_free(long a0);
    public static native long rows_column_count(long a0);
    public static native int rows_column_info(long a0, long a1, long a2, long a3);
    public static native int rows_next(long a0, long a1, long a2);
    public static native int rows_fetch(long a0, long a1, long a2, long a3, long a4);
    public static native int rows_fetch_ready(long a0, long a1, long a2, long a3, long a4, long a5);
    public static native int rows_wait_fd(long a0, long a1, long a2, long a3);
    public static native int rows_next_result(long a0, long a1, long a2);
    public static native int rows_row_count(long a0, long a1, long a2);
    public static native long rows_affected_rows(long a0);
    public static native long rows_last_insert_id(long a0);
    public static native int rows_warnings(long a0);
    public static native void rows_free(long a0);
    public static native long struct_size(long a0);
    public static native long field_offset(long a0, long a1);
    // GENERATED END
}
