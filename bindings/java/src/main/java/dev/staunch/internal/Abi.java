package dev.staunch.internal;

import java.util.List;
import java.util.Map;

/**
 * The numbers of staunch's C ABI (include/staunch.h) that the binding uses,
 * written once for both native paths: flags, the sizes of the structs that
 * cross it and the offsets of their fields. {@code NativePathTest} (JNI) and
 * {@code NativeLayoutTest} (FFM) check every one against the library's
 * {@code staunch_struct_size} / {@code staunch_field_offset}.
 *
 * <p>Not public API.
 */
public final class Abi {
    private Abi() {}

    /** The major version this binding is written for. */
    public static final int ABI_MAJOR = 1;
    /**
     * The least minor version whose calls this binding uses (1.1: the decimal parameter, staunch_conn_count_params;
     * 1.6: staunch_pool_metrics, staunch_pool_name; 1.7: staunch_pool_leak_threshold_ms,
     * staunch_conn_set_borrower_stack, staunch_options_set_tracer; 1.8: staunch_options_set_default; 1.9: staunch_error_category, staunch_conn_param_offsets, staunch_url_userinfo_end; 1.13: the knob text_without_params, which the JDBC data
     * source defaults; the JNI shim resolves every function it declares when it loads).
     */
    public static final int ABI_MINOR = 13;

    /** STAUNCH_TIMEOUT_DEFAULT (UINT32_MAX) as a Java int. */
    public static final int TIMEOUT_DEFAULT = -1;
    public static final int QUERY_STREAM = 1;
    public static final int QUERY_TEXT = 2;
    public static final int QUERY_INTERPOLATE = 4;
    public static final int QUERY_PREPARE = 8;

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

    /** staunch_event (read by the FFM path's upcall; the JNI shim reads it in C). */
    public static final long EVENT_SIZE = 48;
    public static final long E_KIND = 0, E_STATUS = 4, E_CONNECTION_ID = 8, E_COUNT = 16, E_DURATION_US = 24,
            E_MESSAGE = 32, E_POOL_ID = 40;

    /** staunch_trace_event (1.7: read by the FFM path's upcall; the JNI shim reads it in C; 1.12: held_us). */
    public static final long TRACE_EVENT_SIZE = 96;
    public static final long T_KIND = 0, T_ERROR_CODE = 4, T_POOL = 8, T_POOL_LEN = 16, T_SERVER = 24, T_SERVER_LEN = 32,
            T_CONNECTION_ID = 40, T_STATEMENT = 48, T_STATEMENT_LEN = 56, T_DURATION_US = 64, T_ERROR = 72,
            T_ERROR_LEN = 80, T_HELD_US = 88;

    /** Each struct's size and field offsets above, by the header's names (for the layout tests). */
    public static final Map<String, Long> LAYOUT = Map.ofEntries(
            Map.entry("staunch_value", VALUE_SIZE),
            Map.entry("staunch_value.type", V_TYPE),
            Map.entry("staunch_value.i64", V_I64),
            Map.entry("staunch_value.u64", V_U64),
            Map.entry("staunch_value.f64", V_F64),
            Map.entry("staunch_value.ptr", V_PTR),
            Map.entry("staunch_value.len", V_LEN),
            Map.entry("staunch_value.datetime", V_DATETIME),
            Map.entry("staunch_value.time", V_TIME),
            Map.entry("staunch_param", VALUE_SIZE),
            Map.entry("staunch_param.type", V_TYPE),
            Map.entry("staunch_param.ptr", V_PTR),
            Map.entry("staunch_param.len", V_LEN),
            Map.entry("staunch_param.datetime", V_DATETIME),
            Map.entry("staunch_param.time", V_TIME),
            Map.entry("staunch_datetime.year", DT_YEAR),
            Map.entry("staunch_datetime.month", DT_MONTH),
            Map.entry("staunch_datetime.day", DT_DAY),
            Map.entry("staunch_datetime.hour", DT_HOUR),
            Map.entry("staunch_datetime.minute", DT_MINUTE),
            Map.entry("staunch_datetime.second", DT_SECOND),
            Map.entry("staunch_datetime.microsecond", DT_MICRO),
            Map.entry("staunch_time.negative", TM_NEG),
            Map.entry("staunch_time.days", TM_DAYS),
            Map.entry("staunch_time.hours", TM_HOURS),
            Map.entry("staunch_time.minutes", TM_MINUTES),
            Map.entry("staunch_time.seconds", TM_SECONDS),
            Map.entry("staunch_time.microseconds", TM_MICRO),
            Map.entry("staunch_stats", STATS_SIZE),
            Map.entry("staunch_stats.statements_cut", STATS_SIZE - 8),
            Map.entry("staunch_result", RESULT_SIZE),
            Map.entry("staunch_result.affected_rows", R_AFFECTED),
            Map.entry("staunch_result.last_insert_id", R_LAST_ID),
            Map.entry("staunch_result.warnings", R_WARNINGS),
            Map.entry("staunch_result.in_transaction", R_IN_TXN),
            Map.entry("staunch_result.autocommit", R_AUTOCOMMIT),
            Map.entry("staunch_result.info", R_INFO),
            Map.entry("staunch_txn_options", TXN_OPTIONS_SIZE),
            Map.entry("staunch_txn_options.isolation", O_ISOLATION),
            Map.entry("staunch_txn_options.read_only", O_READ_ONLY),
            Map.entry("staunch_column_info", COLUMN_INFO_SIZE),
            Map.entry("staunch_column_info.column_type", CI_COLUMN_TYPE),
            Map.entry("staunch_column_info.type_code", CI_TYPE_CODE),
            Map.entry("staunch_column_info.flags", CI_FLAGS),
            Map.entry("staunch_column_info.charset", CI_CHARSET),
            Map.entry("staunch_column_info.length", CI_LENGTH),
            Map.entry("staunch_column_info.decimals", CI_DECIMALS),
            Map.entry("staunch_column_info.name", CI_NAME),
            Map.entry("staunch_column_info.name_len", CI_NAME + 8),
            Map.entry("staunch_column_info.org_name", CI_ORG_NAME),
            Map.entry("staunch_column_info.table", CI_TABLE),
            Map.entry("staunch_column_info.org_table", CI_ORG_TABLE),
            Map.entry("staunch_column_info.schema", CI_SCHEMA),
            Map.entry("staunch_column_info.schema_len", CI_SCHEMA + 8),
            Map.entry("staunch_event", EVENT_SIZE),
            Map.entry("staunch_event.kind", E_KIND),
            Map.entry("staunch_event.status", E_STATUS),
            Map.entry("staunch_event.connection_id", E_CONNECTION_ID),
            Map.entry("staunch_event.count", E_COUNT),
            Map.entry("staunch_event.duration_us", E_DURATION_US),
            Map.entry("staunch_event.message", E_MESSAGE),
            Map.entry("staunch_event.pool_id", E_POOL_ID),
            Map.entry("staunch_trace_event", TRACE_EVENT_SIZE),
            Map.entry("staunch_trace_event.kind", T_KIND),
            Map.entry("staunch_trace_event.error_code", T_ERROR_CODE),
            Map.entry("staunch_trace_event.pool", T_POOL),
            Map.entry("staunch_trace_event.pool_len", T_POOL_LEN),
            Map.entry("staunch_trace_event.server", T_SERVER),
            Map.entry("staunch_trace_event.server_len", T_SERVER_LEN),
            Map.entry("staunch_trace_event.connection_id", T_CONNECTION_ID),
            Map.entry("staunch_trace_event.statement", T_STATEMENT),
            Map.entry("staunch_trace_event.statement_len", T_STATEMENT_LEN),
            Map.entry("staunch_trace_event.duration_us", T_DURATION_US),
            Map.entry("staunch_trace_event.error", T_ERROR),
            Map.entry("staunch_trace_event.error_len", T_ERROR_LEN),
            Map.entry("staunch_trace_event.held_us", T_HELD_US));

    /**
     * Null if a library of version {@code v} (major * 10000 + minor * 100 +
     * patch, from staunch_version) is one this binding can call, else why not.
     */
    static Throwable checkVersion(int v, String source) {
        int major = v / 10000;
        int minor = (v / 100) % 100;
        if (major != ABI_MAJOR || minor < ABI_MINOR) {
            return new UnsatisfiedLinkError("libstaunch from " + source + " is version " + major + "."
                    + minor + "." + (v % 100) + "; this binding needs " + ABI_MAJOR + "." + ABI_MINOR
                    + " or a later 1.x");
        }
        return null;
    }
}
