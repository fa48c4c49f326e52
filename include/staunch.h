/*
 * staunch.h: the C API of staunch, a MySQL/MariaDB connection pool that never
 * hangs.
 *
 *     staunch_pool *pool = NULL;
 *     staunch_error *err = NULL;
 *     if (staunch_pool_open("mysql://app:secret@127.0.0.1:3306/shop", &pool, &err)) {
 *         fprintf(stderr, "%s\n", staunch_error_message(err));
 *         staunch_error_free(err);
 *         return 1;
 *     }
 *     staunch_conn *conn = NULL;
 *     staunch_param id = staunch_param_i64(42);
 *     if (staunch_pool_get(pool, 2000, &conn, &err) != STAUNCH_OK ||   // bounded wait
 *         staunch_conn_execute(conn, "UPDATE t SET n = n + 1 WHERE id = ?", &id, 1,
 *                              NULL, NULL, &err) != STAUNCH_OK) {
 *         fprintf(stderr, "%s: %s\n", staunch_status_name(staunch_error_status(err)),
 *                 staunch_error_message(err));
 *         staunch_error_free(err);
 *     }
 *     staunch_conn_free(conn);                  // back to the pool (NULL is fine)
 *     staunch_pool_free(pool);
 *
 * Thread safety
 *   A staunch_pool is thread-safe: any number of threads may call any pool
 *   function on it at once, except staunch_pool_free, which must come last.
 *   A staunch_conn may move between threads but is used by one thread at a
 *   time; a call made while another thread is inside a call on the same
 *   connection fails with STAUNCH_CONN_BUSY (it is not undefined behaviour).
 *   The one exception is staunch_conn_cancel (and the never-blocking
 *   staunch_conn_id / _is_broken), made to be called from another thread
 *   while a statement runs. A staunch_cancel_token is thread-safe.
 *   staunch_rows and staunch_options are not thread-safe: one thread at a time.
 *   A staunch_error is immutable: read it from any thread. Event callbacks run
 *   on pool threads or on the calling thread, several at once (see
 *   staunch_options_set_event_callback).
 *
 * Ownership
 *   Every object staunch creates is returned through an out-parameter
 *   (staunch_x **out) and owned by the caller, who frees it with the matching
 *   function: staunch_pool_free, staunch_conn_free, staunch_rows_free,
 *   staunch_options_free, staunch_error_free. Pointers staunch returns into an
 *   object (a message, a column name, a text value) are owned by that object
 *   and valid as long as the function's documentation says, at most until it
 *   is freed. Strings and arrays passed in are only read during the call.
 *   A connection or row set stays valid after its pool is freed (the
 *   connection then only reports STAUNCH_CLOSED); free it as usual.
 *
 * NULL
 *   Every pointer argument is checked: NULL where an object is needed gives
 *   STAUNCH_NULL_ARGUMENT, never a crash. Optional out-parameters say "may be
 *   NULL". Every _free function accepts NULL. The err argument may be NULL
 *   (then no error object is made). Other invalid pointers (freed, dangling,
 *   not from staunch) are undefined behaviour, as everywhere in C.
 *
 * Blocking
 *   Each function says whether it blocks and for how long at most. Borrowing
 *   (staunch_pool_get) is bounded by its timeout whatever the network does;
 *   releasing a connection by validation_timeout (the rollback of a
 *   transaction left open); statements by the query_timeout knob if set (per
 *   socket read), otherwise by the server. Nothing blocks while holding a lock
 *   another caller needs.
 *
 * Panics
 *   No Rust panic crosses this API: each function catches them and returns
 *   STAUNCH_PANIC (a bug in staunch: please report it with the message);
 *   functions that return no status return a neutral value (0, "", nothing).
 *
 * Errors
 *   Fallible functions return a staunch_status: STAUNCH_OK (0) or a code from
 *   a stable range (never reused): 1xx the caller passed something unusable,
 *   2xx the pool could not hand out a connection, 3xx the database failed the
 *   statement, 9xx a bug in staunch. staunch_status_name() names a code. Their
 *   last parameter, staunch_error **err, may be NULL; otherwise, on failure
 *   only, *err receives an error object with the message, the status, the
 *   server's error number and SQLSTATE (initialize it to NULL, and free it
 *   with staunch_error_free). Out-parameters are written only on success.
 *
 * Versions and the ABI promise
 *   STAUNCH_VERSION (major * 10000 + minor * 100 + patch) is the version of
 *   this header; staunch_version() the version of the library loaded. A
 *   program or binding checks at load that staunch_version() / 10000 equals
 *   the STAUNCH_VERSION_MAJOR it was built for, and that the library's
 *   minor version is at least the one whose calls it uses. The shared
 *   library's SONAME is libstaunch.so.<major>.
 *
 *   Within one major version (1.x), a release never removes or renames a
 *   function, type, constant or field; never changes a function's
 *   parameters or meaning, a constant's value, a status code's meaning, or
 *   a struct's existing fields; and never changes the size or layout of
 *   staunch_param, staunch_value, staunch_datetime or staunch_time (arrays
 *   of them cross the ABI; staunch_param and staunch_value keep _reserved
 *   room instead). A minor release may add functions, constants, status
 *   codes (in the ranges above: treat an unknown code by its range), event
 *   kinds (STAUNCH_EVENT_OTHER says what to do with one you do not know),
 *   knobs, flags bits (which older libraries refuse with
 *   STAUNCH_INVALID_ARGUMENT), and fields at the end of the size-prefixed
 *   structs (staunch_stats, staunch_result, staunch_column_info,
 *   staunch_txn_options: the caller sets .size, the library writes or reads
 *   only what both know) and of staunch_event and staunch_trace_event
 *   (passed by pointer, read only: a field added in 1.N is there when
 *   staunch_version() is 1.N or later). Opaque handles may change
 *   freely. Anything else is a new major version. staunch_struct_size /
 *   staunch_field_offset give the layout the library was built with, for
 *   bindings that declare the structs by hand.
 *
 *   A cffi-ready variant of this header, include/staunch_cdef.h (the same
 *   declarations without preprocessor lines or comments), is generated
 *   with it.
 */

#ifndef STAUNCH_H
#define STAUNCH_H

/* Generated by cbindgen from src/ffi; do not edit (run scripts/check-header.sh --update). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * Major version of the library (the `X` of `X.Y.Z`).
 */
#define STAUNCH_VERSION_MAJOR 1

/**
 * Minor version of the library.
 */
#define STAUNCH_VERSION_MINOR 13

/**
 * Patch version of the library.
 */
#define STAUNCH_VERSION_PATCH 0

/**
 * The version as one number, `major * 10000 + minor * 100 + patch`, for
 * `#if STAUNCH_VERSION >= 10203`. Compare with `staunch_version()` at run
 * time to detect a header/library mismatch. (Literal numbers, so that
 * cffi's `cdef` takes them; a test checks them against Cargo.toml's
 * `library-version`.)
 */
#define STAUNCH_VERSION 11300

/**
 * Pass as `timeout_ms` to `staunch_pool_get` to wait the pool's
 * `connection_timeout` (10 s unless configured), or to
 * `staunch_conn_set_timeout` for the pool's `query_timeout`. (UINT32_MAX.)
 */
#define STAUNCH_TIMEOUT_DEFAULT 4294967295

/**
 * `flags` of `staunch_conn_query_ex`: read the rows as they arrive instead
 * of whole. The row set then holds the connection (every other call on it
 * fails with STAUNCH_CONN_BUSY) until the first result set is read to its
 * end, the caller moves to the next result set, or the row set is freed.
 */
#define STAUNCH_QUERY_STREAM 1

/**
 * `flags` of `staunch_conn_query_ex`: send the statement as text (the text
 * protocol), for statements MySQL cannot prepare (error 1295: some SHOW,
 * `CALL` of procedures with OUT parameters, ...); `n_params` must be 0.
 * Values still come typed by their columns.
 */
#define STAUNCH_QUERY_TEXT 2

/**
 * `flags` of `staunch_conn_query_ex`: send the statement by client-side
 * interpolation whatever the pool's `interpolate_params` knob says: the
 * library writes each parameter into the text as a literal escaped for the
 * session's real state (its `sql_mode`'s NO_BACKSLASH_ESCAPES, as the
 * server's status flags report it; utf8mb4): bytes as `_binary X'..'`,
 * numbers in canonical form (doubles with an exponent, exact), decimals as
 * DECIMAL literals, dates as `DATE'..'`, date-times as `TIMESTAMP'..'`
 * with microseconds, times as `TIME'..'`. One round trip, over the text
 * protocol; values still come typed by their columns. A double that is
 * NaN or infinite fails with STAUNCH_INVALID_ARGUMENT.
 */
#define STAUNCH_QUERY_INTERPOLATE 4

/**
 * `flags` of `staunch_conn_query_ex`: prepare the statement on the server
 * whatever the pool's `interpolate_params` knob says (a statement the
 * server refuses to prepare, error 1295 or a syntax error at prepare time,
 * is still sent interpolated). Not with STAUNCH_QUERY_INTERPOLATE.
 */
#define STAUNCH_QUERY_PREPARE 8

/**
 * A flag of `staunch_conn_prepare_ex`: a statement the server cannot
 * prepare (1295, "not supported in the prepared statement protocol") is
 * not an error; it runs as text whenever it runs, as every statement the
 * server refuses to prepare does.
 */
#define STAUNCH_PREPARE_TEXT_OK 1

/**
 * A flag of `staunch_options_set_tracer_ex`: events are kept on the thread
 * that raises them, not delivered during the call, until that thread calls
 * `staunch_trace_flush` (each with `held_us`). For hosts that must take a
 * lock of their own to run a callback (Python's GIL): they run the
 * callbacks where they hold it anyway, after the call.
 */
#define STAUNCH_TRACE_DEFERRED 1

/**
 * A cancel token: `staunch_cancel_token_cancel` makes every
 * `staunch_pool_get_cancellable` / `_get_read_cancellable` waiting with it
 * return STAUNCH_CANCELLED promptly, and every later one at once (a token
 * stays cancelled; make a new one per request). Thread-safe: any thread may
 * cancel it while others wait with it. Free with
 * `staunch_cancel_token_free` once no call uses it.
 */
typedef struct staunch_cancel_token staunch_cancel_token;

/**
 * A connection borrowed from a pool by `staunch_pool_get`. Give it back with
 * `staunch_conn_release` (the handle stays, unusable) or `staunch_conn_free`
 * (returns it if needed and frees the handle). May move between threads but
 * is used by one thread at a time: a call made while another thread is inside
 * a call on the same connection fails with STAUNCH_CONN_BUSY. The one
 * exception is `staunch_conn_cancel`, made to be called from another thread
 * while a statement runs.
 */
typedef struct staunch_conn staunch_conn;

/**
 * An error object: what went wrong, in detail. Created by staunch when a
 * call fails and the caller passed a non-NULL `staunch_error **err`; owned by
 * the caller, who frees it with `staunch_error_free`. Immutable: may be read
 * from any thread.
 */
typedef struct staunch_error staunch_error;

/**
 * A pool configuration: a URL and/or knobs, and an optional event callback.
 * Created by `staunch_options_new`, freed by `staunch_options_free`; one
 * options object can open any number of pools. Not thread-safe: use it from
 * one thread at a time (`staunch_pool_open_options` only reads it).
 */
typedef struct staunch_options staunch_options;

/**
 * A borrow under way that waits without a thread of its own
 * (`staunch_pool_get_start`), for a host whose threads must not block in
 * the library: Go's netpoller, Python's asyncio, a JVM's virtual threads.
 * It waits in the pool's queue, in turn with the callers blocked in
 * `staunch_pool_get`. One thread at a time per handle; free it with
 * `staunch_pending_get_free`, before the pool.
 */
typedef struct staunch_pending_get staunch_pending_get;

/**
 * A pool of connections. Created by `staunch_pool_open` or
 * `staunch_pool_open_options`, freed by `staunch_pool_free`. Thread-safe:
 * every function taking a pool may be called from any number of threads at
 * once, except `staunch_pool_free`, which must be the last call on it.
 */
typedef struct staunch_pool staunch_pool;

/**
 * The answer to `staunch_conn_query` / `staunch_conn_query_ex`: one or more
 * result sets (a `CALL` gives several), each with column metadata, rows and
 * what its closing packet said; a cursor over the current set's rows.
 * Free with `staunch_rows_free`. Not thread-safe: one thread at a time (it
 * may move between threads).
 */
typedef struct staunch_rows staunch_rows;

/**
 * A status code returned by every fallible function. 0 (`STAUNCH_OK`) is
 * success; see the `STAUNCH_*` constants for the others. Codes are stable and
 * never reused; new ones may be added within the ranges.
 */
typedef uint32_t staunch_status;

/**
 * What kind of failure a server error is (`STAUNCH_CATEGORY_*`): one table
 * in the library, keyed by the server's error number with the SQLSTATE's
 * class for numbers it does not name, so that every binding raises the same
 * exception class for the same error. Numbers are stable and never reused;
 * new categories may be added, and a binding should treat one it does not
 * know as `STAUNCH_CATEGORY_OPERATIONAL`.
 */
typedef uint32_t staunch_category;

/**
 * What happened, in a `staunch_event`.
 */
typedef uint32_t staunch_event_kind;

/**
 * One pool event, passed to the callback set with
 * `staunch_options_set_event_callback`. The struct and `message` are valid
 * only during the callback: copy what you need.
 */
typedef struct staunch_event {
    /**
     * One of the STAUNCH_EVENT_* values.
     */
    staunch_event_kind kind;
    /**
     * For failures (connect_failed, validation_failed, acquire_timeout):
     * the status the error maps to; otherwise STAUNCH_OK.
     */
    staunch_status status;
    /**
     * The pool-wide number of the connection concerned, 0 when the event is
     * not about one connection.
     */
    uint64_t connection_id;
    /**
     * Consecutive failed connects (connect_failed: including this one;
     * recovered: before the success); unreplicated_writes: the number of
     * transactions; otherwise 0.
     */
    uint64_t count;
    /**
     * A duration in microseconds (connected: the connect; recovered: the
     * outage; leak_suspected: how long it has been borrowed); otherwise 0.
     */
    uint64_t duration_us;
    /**
     * A human-readable description, NUL-terminated UTF-8, never NULL.
     */
    const char *message;
    /**
     * The pool the event comes from (`staunch_pool_id`).
     */
    uint64_t pool_id;
} staunch_event;

/**
 * The C callback type.
 */
typedef void (*staunch_event_callback)(const struct staunch_event *event, void *user_data);

/**
 * Called once with `user_data` when no pool or options need it any more.
 */
typedef void (*staunch_finalizer)(void *user_data);

/**
 * The type of a `staunch_param`.
 */
typedef uint32_t staunch_param_type;

/**
 * A DATE, DATETIME or TIMESTAMP value (DATE: the time fields are 0). Zero
 * dates ('0000-00-00') are represented with zeros.
 */
typedef struct staunch_datetime {
    /**
     * 0 to 9999.
     */
    uint16_t year;
    /**
     * 1 to 12 (0 in a zero date).
     */
    uint8_t month;
    /**
     * 1 to 31 (0 in a zero date).
     */
    uint8_t day;
    /**
     * 0 to 23.
     */
    uint8_t hour;
    /**
     * 0 to 59.
     */
    uint8_t minute;
    /**
     * 0 to 59.
     */
    uint8_t second;
    /**
     * 0 to 999999.
     */
    uint32_t microsecond;
} staunch_datetime;

/**
 * A TIME value: a signed duration of up to 838:59:59.999999, as
 * `days * 24 + hours` hours, minutes, seconds and microseconds.
 */
typedef struct staunch_time {
    /**
     * True for a negative duration.
     */
    bool negative;
    /**
     * Whole days.
     */
    uint32_t days;
    /**
     * 0 to 23.
     */
    uint8_t hours;
    /**
     * 0 to 59.
     */
    uint8_t minutes;
    /**
     * 0 to 59.
     */
    uint8_t seconds;
    /**
     * 0 to 999999.
     */
    uint32_t microseconds;
} staunch_time;

/**
 * One statement parameter, bound to a `?` placeholder (values are sent
 * separately from the SQL text, never quoted into it). Set `type` and the
 * field it names; the other fields are not read. The `staunch_param_*`
 * functions build them. Its layout is fixed for every 1.x release (96
 * bytes on 64-bit targets, `_reserved` included; see
 * `staunch_struct_size`).
 */
typedef struct staunch_param {
    /**
     * One of the STAUNCH_PARAM_* values.
     */
    staunch_param_type type;
    /**
     * The value of a STAUNCH_PARAM_INT64.
     */
    int64_t i64;
    /**
     * The value of a STAUNCH_PARAM_UINT64.
     */
    uint64_t u64;
    /**
     * The value of a STAUNCH_PARAM_DOUBLE.
     */
    double f64;
    /**
     * The data of a STAUNCH_PARAM_TEXT or STAUNCH_PARAM_BYTES.
     */
    const void *ptr;
    /**
     * Its length in bytes.
     */
    size_t len;
    /**
     * The value of a STAUNCH_PARAM_DATE or STAUNCH_PARAM_DATETIME.
     */
    struct staunch_datetime datetime;
    /**
     * The value of a STAUNCH_PARAM_TIME.
     */
    struct staunch_time time;
    /**
     * Room for later types; set to zero (the helpers do), never read.
     */
    uint64_t _reserved[2];
} staunch_param;

/**
 * A snapshot of a pool: gauges (what the pool holds now) and cumulative
 * counters (since the pool opened). Filled by `staunch_pool_stats`. Gauges are
 * read one after the other without stopping the pool, so under load they may
 * not add up exactly; `active + idle + reserved == total` holds when the pool
 * is quiet. Latencies are upper bucket edges (a p50 of 64 means "at most
 * 64 µs") except the maxima, which are exact.
 *
 * Set `size` to `sizeof(staunch_stats)` before the call: fields are only
 * ever added at the end, and a library older than the header fills the
 * ones it knows (and sets `size` to how many bytes it wrote).
 */
typedef struct staunch_stats {
    /**
     * The caller's `sizeof(staunch_stats)`; on return, the bytes written.
     */
    size_t size;
    /**
     * Gauge: connections open (idle, in use, or held by a pool thread).
     */
    uint64_t total;
    /**
     * Gauge: connections borrowed by the application.
     */
    uint64_t active;
    /**
     * Gauge: connections ready to hand out.
     */
    uint64_t idle;
    /**
     * Gauge: connections held by pool threads (keepalive, retirement).
     */
    uint64_t reserved;
    /**
     * Gauge: threads blocked in staunch_pool_get.
     */
    uint64_t waiting;
    /**
     * Gauge: connection requests queued or being connected.
     */
    uint64_t pending_creates;
    /**
     * Gauge: connects running now.
     */
    uint64_t connecting;
    /**
     * Gauge: connect threads alive.
     */
    uint64_t adder_threads;
    /**
     * Counter: successful gets.
     */
    uint64_t acquired;
    /**
     * Counter: gets that timed out.
     */
    uint64_t acquire_timeouts;
    /**
     * Counter: connections created.
     */
    uint64_t created;
    /**
     * Counter: connections closed after idle_timeout.
     */
    uint64_t closed_idle_timeout;
    /**
     * Counter: connections closed at max_lifetime.
     */
    uint64_t closed_max_lifetime;
    /**
     * Counter: connections closed as broken (failed validation, keepalive,
     * I/O error, failed rollback on return).
     */
    uint64_t closed_broken;
    /**
     * Counter: connections closed by soft eviction, or as surplus above a
     * lowered max_size (`staunch_pool_set_max_size`).
     */
    uint64_t closed_evicted;
    /**
     * Counter: connections closed because the pool closed.
     */
    uint64_t closed_pool_closed;
    /**
     * Counter: failed connect attempts.
     */
    uint64_t connect_failures;
    /**
     * Counter: connects cut off at connect_timeout.
     */
    uint64_t abandoned_connects;
    /**
     * Counter: failed validations (on borrow or keepalive).
     */
    uint64_t validation_failures;
    /**
     * Counter: keepalive checks run.
     */
    uint64_t keepalives;
    /**
     * Counter: borrowed connections reported as possible leaks.
     */
    uint64_t leaks_reported;
    /**
     * Counter: transactions rolled back because a connection was released
     * inside one.
     */
    uint64_t rollbacks_on_return;
    /**
     * Counter: broken internal invariants observed (must be 0).
     */
    uint64_t violations;
    /**
     * Number of gets the acquire latency figures cover.
     */
    uint64_t acquire_count;
    /**
     * Time callers waited in get (an immediate hand-out counts as < 1 µs):
     * median, 99th percentile, maximum, in microseconds.
     */
    uint64_t acquire_p50_us;
    uint64_t acquire_p99_us;
    uint64_t acquire_max_us;
    /**
     * Number of successful connects the connect latency figures cover.
     */
    uint64_t connect_count;
    /**
     * Time one successful connect took: median, 99th percentile, maximum,
     * in microseconds.
     */
    uint64_t connect_p50_us;
    uint64_t connect_p99_us;
    uint64_t connect_max_us;
    /**
     * Gauge: the most connections the pool opens (max_size in force, see
     * `staunch_pool_set_max_size`; summed over the hosts of a topology pool).
     */
    uint64_t max_size;
    /**
     * Counter: successful gets that found no idle connection and waited.
     */
    uint64_t acquires_waited;
    /**
     * Counter: the time those gets waited in total, in microseconds.
     */
    uint64_t acquire_wait_us;
    /**
     * Counter: gets cancelled through their cancel token.
     */
    uint64_t acquires_cancelled;
    /**
     * Counter: sessions reset on release because their state changed.
     */
    uint64_t resets_on_return;
    /**
     * Counter: statements cut off by the pool because their server did not
     * answer within the time limit plus 1 s (the connection was closed).
     */
    uint64_t statements_cut;
} staunch_stats;

/**
 * What a statement run by `staunch_conn_execute` did, and the session's
 * state after it: filled by `staunch_conn_last_result` (set `size` to
 * `sizeof(staunch_result)` first; fields added later go at the end).
 */
typedef struct staunch_result {
    /**
     * The caller's `sizeof(staunch_result)`.
     */
    size_t size;
    /**
     * Rows affected (summed over the result sets of a multi-statement).
     */
    uint64_t affected_rows;
    /**
     * The last AUTO_INCREMENT id generated, or 0.
     */
    uint64_t last_insert_id;
    /**
     * Warnings raised (read them with `SHOW WARNINGS`).
     */
    uint32_t warnings;
    /**
     * A transaction is open in the session, as the server last reported
     * (explicit, implicit under autocommit=0, or LOCK TABLES).
     */
    bool in_transaction;
    /**
     * `autocommit` is on in the session, as the server last reported.
     */
    bool autocommit;
    /**
     * The server's info string for the statement ("Rows matched: 1
     * Changed: 1 Warnings: 0", "Records: 3 Duplicates: 0 ..."), "" if none:
     * NUL-terminated, owned by the connection handle, valid until the next
     * statement on it or its free.
     */
    const char *info;
} staunch_result;

/**
 * The type of a result column, from the server's column metadata. It tells
 * which getter reads the column's values.
 */
typedef uint32_t staunch_column_type;

/**
 * One value of a row, as `staunch_rows_fetch` gives it: `type` says which
 * field holds it (a STAUNCH_COLUMN_* value: STAUNCH_COLUMN_NULL for SQL
 * NULL, INT in `i64`, UINT in `u64`, DOUBLE in `f64` (FLOAT columns too),
 * DECIMAL, TEXT and BYTES as `len` bytes at `ptr` (not NUL-terminated
 * for BYTES; TEXT and DECIMAL are followed by a NUL), DATE and DATETIME in
 * `datetime`, TIME in `time`). `ptr` points into the row set: valid until
 * its next fetch, `staunch_rows_next`, `staunch_rows_next_result` or
 * `staunch_rows_free`. Its layout is fixed for every 1.x release (96
 * bytes on 64-bit targets).
 */
typedef struct staunch_value {
    /**
     * A STAUNCH_COLUMN_* value.
     */
    uint32_t type;
    int64_t i64;
    uint64_t u64;
    double f64;
    const char *ptr;
    size_t len;
    struct staunch_datetime datetime;
    struct staunch_time time;
    /**
     * Zero; room for later types.
     */
    uint64_t _reserved[2];
} staunch_value;

/**
 * The first of an answer, read by the call that runs the statement
 * (`staunch_conn_query_batch`), so that a caller paying for each foreign
 * call (a Python `ctypes` call costs about as much as a small statement's
 * decoding) reads a small answer in one. The caller gives the room, the
 * call fills it. Set `size` to `sizeof(staunch_batch)` first (fields added
 * later go at the end). Every field is 8 bytes on 64-bit targets, so a
 * binding may read it as an array of 64-bit words.
 */
typedef struct staunch_batch {
    /**
     * The caller's `sizeof(staunch_batch)`.
     */
    size_t size;
    /**
     * In: a row set of the caller's to free before the statement runs
     * (typically its previous answer), or NULL. The call frees it, as
     * `staunch_rows_free` would, whatever its outcome, and sets the field
     * to NULL (unless `size` is wrong: then it is left alone).
     */
    struct staunch_rows *recycle;
    /**
     * In: room for `types_cap` column types, or NULL.
     */
    staunch_column_type *types;
    /**
     * In: how many types fit in `types`.
     */
    size_t types_cap;
    /**
     * In: room for `values_cap` values, or NULL.
     */
    struct staunch_value *values;
    /**
     * In: how many values fit in `values`.
     */
    size_t values_cap;
    /**
     * Out: the first result set's column count; its first `types_cap`
     * column types are in `types` (as `staunch_rows_column_types` gives
     * them).
     */
    size_t n_columns;
    /**
     * Out: the rows written to `values`, as `staunch_rows_fetch` writes
     * them (as many whole rows as fit; they point into the row set, valid
     * until its next fetch, move or free). Always 0 for a streaming answer
     * (its rows are read by the caller's fetches, which may wait) and when
     * `values_cap` holds no whole row. Fewer rows than fit: the current set
     * has no more.
     */
    size_t n_rows;
    /**
     * Out: `staunch_rows_affected_rows` of the first result set.
     */
    uint64_t affected_rows;
    /**
     * Out: `staunch_rows_last_insert_id` of the first result set.
     */
    uint64_t last_insert_id;
} staunch_batch;

/**
 * The isolation level of a transaction started by `staunch_conn_begin_ex`.
 */
typedef uint32_t staunch_isolation;

/**
 * How `staunch_conn_begin_ex` starts a transaction. Set `size` to
 * `sizeof(staunch_txn_options)` (fields added later go at the end, default
 * 0).
 */
typedef struct staunch_txn_options {
    /**
     * The caller's `sizeof(staunch_txn_options)`.
     */
    size_t size;
    /**
     * One of the STAUNCH_ISOLATION_* values.
     */
    staunch_isolation isolation;
    /**
     * `START TRANSACTION READ ONLY`.
     */
    bool read_only;
} staunch_txn_options;

/**
 * What the server says of one result column, for drivers (Python's
 * `cursor.description`, JDBC's `ResultSetMetaData`). Filled by
 * `staunch_rows_column_info`: set `size` to `sizeof(staunch_column_info)`
 * first; fields added in later versions go at the end, so a caller built
 * against an older header gets the fields it knows. The strings are
 * NUL-terminated UTF-8, owned by the row set and valid until it is freed;
 * each `_len` excludes the NUL.
 */
typedef struct staunch_column_info {
    /**
     * The caller's `sizeof(staunch_column_info)` (the fields that fit in it
     * are written).
     */
    size_t size;
    /**
     * staunch's type: which getter reads the column (STAUNCH_COLUMN_*).
     */
    staunch_column_type column_type;
    /**
     * The MySQL type code (`enum_field_types`: 1 TINY, 4 FLOAT, 5 DOUBLE,
     * 7 TIMESTAMP, 10 DATE, 12 DATETIME, 13 YEAR, 16 BIT, 245 JSON, 246
     * NEWDECIMAL, 252 BLOB/TEXT, 253 VAR_STRING, 254 STRING, ...).
     */
    uint32_t type_code;
    /**
     * The MySQL column flags: 1 NOT NULL, 2 PRIMARY KEY, 4 UNIQUE KEY,
     * 8 MULTIPLE KEY, 16 BLOB, 32 UNSIGNED, 64 ZEROFILL, 128 BINARY,
     * 256 ENUM, 512 AUTO_INCREMENT, 1024 TIMESTAMP, 2048 SET.
     */
    uint32_t flags;
    /**
     * The character set (collation) id; 63 is binary.
     */
    uint32_t charset;
    /**
     * The display length (in bytes of the character set); TINYINT(1) has 1.
     */
    uint32_t length;
    /**
     * Digits after the decimal point (DECIMAL, FLOAT, DOUBLE; fractional
     * seconds of temporal types).
     */
    uint32_t decimals;
    /**
     * The column's name as the result gives it (its alias, if any).
     */
    const char *name;
    size_t name_len;
    /**
     * The column's name in its table (empty for an expression).
     */
    const char *org_name;
    size_t org_name_len;
    /**
     * The table as the query names it (its alias, if any).
     */
    const char *table;
    size_t table_len;
    /**
     * The table's name.
     */
    const char *org_table;
    size_t org_table_len;
    /**
     * The database of the table.
     */
    const char *schema;
    size_t schema_len;
} staunch_column_info;

/**
 * What a `staunch_trace_event` reports: one of the STAUNCH_TRACE_* values.
 */
typedef uint32_t staunch_trace_kind;

/**
 * One start or end (see `staunch_options_set_tracer`). The library owns
 * it and its strings, valid only during the callback: copy what you keep.
 * Strings are UTF-8 given as pointer and length, without a NUL.
 */
typedef struct staunch_trace_event {
    /**
     * One of the STAUNCH_TRACE_* values.
     */
    staunch_trace_kind kind;
    /**
     * At an end that failed with a server error: its number; else 0.
     */
    uint32_t error_code;
    /**
     * The pool's name (`pool_name`, or `staunch-N`).
     */
    const char *pool;
    size_t pool_len;
    /**
     * The server's `host:port` (or socket path); empty at ACQUIRE_START
     * and at a failed ACQUIRE_END.
     */
    const char *server;
    size_t server_len;
    /**
     * The connection's number in the pool (`staunch_conn_id`), 0 if none.
     */
    uint64_t connection_id;
    /**
     * The statement's text at STATEMENT_START and STATEMENT_END, NULL when
     * it has none here (a prepared statement's execute). It may hold what
     * the application put in it: record it only where the user opted in.
     */
    const char *statement;
    size_t statement_len;
    /**
     * At an end: microseconds since its start; else 0.
     */
    uint64_t duration_us;
    /**
     * At an end that failed: the error's text; else NULL. A server's may
     * quote the statement or a value (1064, 1062): record it only where the
     * statement's text is.
     */
    const char *error;
    size_t error_len;
    /**
     * Microseconds between the event and this callback (since 1.12.0): 0
     * unless the tracer is deferred (`STAUNCH_TRACE_DEFERRED`), whose
     * events wait for `staunch_trace_flush`. The event happened this long
     * before the callback, on the same thread.
     */
    uint64_t held_us;
} staunch_trace_event;

/**
 * The tracer callback type.
 */
typedef void (*staunch_trace_callback)(const struct staunch_trace_event *event, void *user_data);

/**
 * Success.
 */
#define STAUNCH_OK 0

/**
 * A pointer argument that must not be NULL was NULL.
 */
#define STAUNCH_NULL_ARGUMENT 100

/**
 * A string argument (SQL, URL, knob, text parameter) is not valid UTF-8, or
 * a text column holds bytes that are not UTF-8.
 */
#define STAUNCH_INVALID_UTF8 101

/**
 * A column index is not below `staunch_rows_column_count`.
 */
#define STAUNCH_BAD_INDEX 102

/**
 * The getter does not match the column's type (e.g. `staunch_rows_get_i64`
 * on a text column). The message names the getter to use.
 */
#define STAUNCH_WRONG_TYPE 103

/**
 * A value does not fit where it goes (an unsigned value above INT64_MAX read
 * with `staunch_rows_get_i64`, a DATETIME parameter with month 13, ...).
 */
#define STAUNCH_OUT_OF_RANGE 104

/**
 * The connection handle was released (`staunch_conn_release`): only
 * `staunch_conn_free` may be called on it now.
 */
#define STAUNCH_USE_AFTER_RELEASE 105

/**
 * Invalid configuration: a bad URL, an unknown knob, a value out of its
 * range. The message names the knob.
 */
#define STAUNCH_INVALID_CONFIG 106

/**
 * The value is SQL NULL: test with `staunch_rows_is_null` first.
 */
#define STAUNCH_NULL_VALUE 107

/**
 * No current row: `staunch_rows_next` was not called yet or returned no row.
 */
#define STAUNCH_NO_ROW 108

/**
 * The number of parameters differs from the number of `?` placeholders.
 */
#define STAUNCH_PARAM_COUNT 109

/**
 * A parameter has an unknown `type`.
 */
#define STAUNCH_BAD_PARAM_TYPE 110

/**
 * The connection handle is in use by another thread right now. A
 * `staunch_conn` must be used by one thread at a time.
 */
#define STAUNCH_CONN_BUSY 111

/**
 * Another misuse of the API.
 */
#define STAUNCH_INVALID_ARGUMENT 112

/**
 * `staunch_pool_get` timed out while every connection was in use.
 */
#define STAUNCH_POOL_EXHAUSTED 200

/**
 * `staunch_pool_get` timed out and no connection could be made: the message
 * says why (e.g. no greeting from host:port within connect_timeout).
 */
#define STAUNCH_UNREACHABLE 201

/**
 * The server refused connections for a reason retrying will not fix (wrong
 * password, unknown database): reported at once, without waiting.
 */
#define STAUNCH_CONNECT_REJECTED 202

/**
 * One connect attempt failed.
 */
#define STAUNCH_CONNECT_FAILED 203

/**
 * The pool is closed (`staunch_pool_close` / `staunch_pool_free`), also
 * reported by connections borrowed from it before.
 */
#define STAUNCH_CLOSED 204

/**
 * No server may take writes now: the primary was declared dead and no new
 * one (a host with read_only=0) is known yet, or two hosts claim to be
 * primary (split brain). Reported at once; the message says which.
 */
#define STAUNCH_NO_WRITER 205

/**
 * The server answered a statement with an error: see
 * `staunch_error_server_code` and `staunch_error_sqlstate`.
 */
#define STAUNCH_SERVER_ERROR 300

/**
 * An I/O error on the connection (reset, timeout, lost). The connection is
 * discarded when released.
 */
#define STAUNCH_IO_ERROR 301

/**
 * The connection broke during an earlier statement (a failure that may have
 * left part of an answer unread): every later statement on it fails with
 * this at once, never with another statement's answer. Release or free it
 * (it is closed, not returned) and get another.
 */
#define STAUNCH_BROKEN 302

/**
 * A statement ran past its time limit (the `query_timeout` knob, or the
 * connection's own). Ended by the server, the connection stays usable; cut
 * off by the client because the server did not answer, the connection is
 * broken (STAUNCH_BROKEN afterwards). The message names the limit.
 */
#define STAUNCH_STATEMENT_TIMEOUT 303

/**
 * The caller cancelled: a get waiting with a cancel token, or a statement
 * stopped through its connection's cancel (the connection stays usable).
 */
#define STAUNCH_CANCELLED 304

/**
 * The server stopped answering during the statement: it waited past the
 * pool's `liveness_threshold`, and a check on a side connection found the
 * server not answering, restarted or replaced, or no longer running the
 * statement's connection. Its socket was shut down; the connection is
 * broken (STAUNCH_BROKEN afterwards) and closed when released. The message
 * says what was checked and what happened.
 */
#define STAUNCH_SERVER_UNRESPONSIVE 305

/**
 * The server rolled the whole transaction back because it lost a conflict:
 * a deadlock or, in a Galera cluster, a certification failure (server error
 * 1213, SQLSTATE 40001, both in the error object). The connection stays
 * usable; running the transaction again from its start may succeed.
 */
#define STAUNCH_CONFLICT 306

/**
 * A broken internal invariant in staunch. Please report it.
 */
#define STAUNCH_INTERNAL 900

/**
 * staunch panicked inside the call; the panic was caught at the boundary.
 * Please report it.
 */
#define STAUNCH_PANIC 901

/**
 * The error did not come from the server (see its status instead).
 */
#define STAUNCH_CATEGORY_NONE 0

/**
 * A constraint refused the change: duplicate key, foreign key, NOT NULL,
 * CHECK (PEP 249 IntegrityError, SQLSTATE class 23).
 */
#define STAUNCH_CATEGORY_INTEGRITY 1

/**
 * The statement is wrong: syntax, unknown table or column (PEP 249
 * ProgrammingError, class 42).
 */
#define STAUNCH_CATEGORY_PROGRAMMING 2

/**
 * A value does not fit: too long, out of range (PEP 249 DataError, class 22).
 */
#define STAUNCH_CATEGORY_DATA 3

/**
 * The server does not support what was asked (PEP 249 NotSupportedError,
 * class 0A).
 */
#define STAUNCH_CATEGORY_NOT_SUPPORTED 4

/**
 * The database failed for a reason outside the statement's text (PEP 249
 * OperationalError): every error nothing else names.
 */
#define STAUNCH_CATEGORY_OPERATIONAL 5

/**
 * The server's own internal failure, an error number below 1000 (PEP 249
 * InternalError).
 */
#define STAUNCH_CATEGORY_INTERNAL 6

/**
 * A missing privilege or wrong credentials (operational in PEP 249; JDBC
 * SQLInvalidAuthorizationSpecException, class 28).
 */
#define STAUNCH_CATEGORY_ACCESS 7

/**
 * The connection was refused or lost (operational; JDBC
 * SQLNonTransientConnectionException, class 08).
 */
#define STAUNCH_CATEGORY_CONNECTION 8

/**
 * The server rolled the transaction back: deadlock, certification failure
 * (operational; JDBC SQLTransactionRollbackException, class 40).
 */
#define STAUNCH_CATEGORY_ROLLBACK 9

/**
 * The server ended the statement at its time limit (operational; JDBC
 * SQLTimeoutException).
 */
#define STAUNCH_CATEGORY_TIMEOUT 10

/**
 * A lock wait timed out; the statement may succeed when tried again
 * (operational; JDBC SQLTransientException).
 */
#define STAUNCH_CATEGORY_TRANSIENT 11

/**
 * SQL NULL (no field is read).
 */
#define STAUNCH_PARAM_NULL 0

/**
 * A signed 64-bit integer in `i64`.
 */
#define STAUNCH_PARAM_INT64 1

/**
 * An unsigned 64-bit integer in `u64`.
 */
#define STAUNCH_PARAM_UINT64 2

/**
 * A double in `f64`.
 */
#define STAUNCH_PARAM_DOUBLE 3

/**
 * UTF-8 text: `len` bytes at `ptr` (no NUL needed; `ptr` may be NULL when
 * `len` is 0). Text that is not UTF-8 fails with STAUNCH_INVALID_UTF8.
 */
#define STAUNCH_PARAM_TEXT 4

/**
 * Binary data: `len` bytes at `ptr`, NULs allowed (`ptr` may be NULL when
 * `len` is 0).
 */
#define STAUNCH_PARAM_BYTES 5

/**
 * A DATE in `datetime` (year, month, day; the time fields must be 0).
 */
#define STAUNCH_PARAM_DATE 6

/**
 * A DATETIME or TIMESTAMP in `datetime`.
 */
#define STAUNCH_PARAM_DATETIME 7

/**
 * A TIME in `time`.
 */
#define STAUNCH_PARAM_TIME 8

/**
 * An exact decimal number as text: `len` bytes at `ptr` in plain digits,
 * `[+-]digits[.digits]` or `[+-].digits` (no exponent, no spaces), at most
 * 65 digits of which at most 38 after the point. Anything else fails with
 * STAUNCH_INVALID_ARGUMENT naming the parameter, and nothing is sent. The
 * server treats it as an exact DECIMAL (in arithmetic, comparison and
 * storage; `SELECT ?` gives a DECIMAL column) on both ways a statement is
 * sent.
 */
#define STAUNCH_PARAM_DECIMAL 9

/**
 * The session's own level (the server's default unless changed).
 */
#define STAUNCH_ISOLATION_DEFAULT 0

#define STAUNCH_ISOLATION_READ_UNCOMMITTED 1

#define STAUNCH_ISOLATION_READ_COMMITTED 2

#define STAUNCH_ISOLATION_REPEATABLE_READ 3

#define STAUNCH_ISOLATION_SERIALIZABLE 4

/**
 * The column is always NULL (e.g. `SELECT NULL`).
 */
#define STAUNCH_COLUMN_NULL 0

/**
 * Signed integers (TINYINT to BIGINT, YEAR): `staunch_rows_get_i64`.
 */
#define STAUNCH_COLUMN_INT 1

/**
 * UNSIGNED integers: `staunch_rows_get_u64` (`_get_i64` if it fits).
 */
#define STAUNCH_COLUMN_UINT 2

/**
 * FLOAT and DOUBLE: `staunch_rows_get_double` (a FLOAT is widened exactly).
 */
#define STAUNCH_COLUMN_DOUBLE 3

/**
 * DECIMAL: exact, as text ("12.50") with `staunch_rows_get_text`.
 */
#define STAUNCH_COLUMN_DECIMAL 4

/**
 * Character data (CHAR, VARCHAR, TEXT, ENUM, SET, JSON):
 * `staunch_rows_get_text` (or `_get_bytes`).
 */
#define STAUNCH_COLUMN_TEXT 5

/**
 * Binary data (BINARY, VARBINARY, BLOB, BIT, GEOMETRY): `staunch_rows_get_bytes`.
 */
#define STAUNCH_COLUMN_BYTES 6

/**
 * DATE: `staunch_rows_get_datetime` (time fields 0).
 */
#define STAUNCH_COLUMN_DATE 7

/**
 * DATETIME and TIMESTAMP: `staunch_rows_get_datetime`.
 */
#define STAUNCH_COLUMN_DATETIME 8

/**
 * TIME: `staunch_rows_get_time`.
 */
#define STAUNCH_COLUMN_TIME 9

/**
 * An event this version of the header has no name for (`message` says
 * what it is). Ignore it, or log the message.
 */
#define STAUNCH_EVENT_OTHER 0

/**
 * A new connection is ready (`connection_id`, `duration_us` = connect time,
 * `message` = the endpoint).
 */
#define STAUNCH_EVENT_CONNECTED 1

/**
 * One connect attempt failed (`message` = the error, `status`, `count` =
 * consecutive failures so far).
 */
#define STAUNCH_EVENT_CONNECT_FAILED 2

/**
 * A connect succeeded after failures: the database is reachable again
 * (`count` = failures before, `duration_us` = length of the outage).
 */
#define STAUNCH_EVENT_RECOVERED 3

/**
 * A connection was closed (`connection_id`, `message` = the reason:
 * idle_timeout, max_lifetime, broken, evicted, pool_closed).
 */
#define STAUNCH_EVENT_CLOSED 4

/**
 * A validation (on borrow or keepalive) failed and the connection was closed
 * (`connection_id`, `message` = the error, `status`).
 */
#define STAUNCH_EVENT_VALIDATION_FAILED 5

/**
 * A connection has been borrowed longer than `leak_detection_threshold`
 * (`connection_id`, `message` = who borrowed it and for how long, then,
 * after "borrowed at:", the stack `staunch_conn_set_borrower_stack` gave;
 * `duration_us`).
 */
#define STAUNCH_EVENT_LEAK_SUSPECTED 6

/**
 * A `staunch_pool_get` timed out (`message` = the error, `status`).
 */
#define STAUNCH_EVENT_ACQUIRE_TIMEOUT 7

/**
 * The pool was closed.
 */
#define STAUNCH_EVENT_POOL_CLOSED 8

/**
 * Topology pools: a former primary, superseded by a promotion the pool
 * followed, answers with read_only=0 (a stale primary). It gets no writes
 * and no reads; fence it. `message` names it and the current writer.
 */
#define STAUNCH_EVENT_STALE_PRIMARY_WRITABLE 9

/**
 * Topology pools: writes moved to another host, and these transactions the
 * former primary committed are missing there (`count` = how many; `message`
 * names both hosts and the GTID ranges, and says whether the figure is
 * final or a lower bound from the former primary's last answer, in which
 * case a final event follows when it answers again).
 */
#define STAUNCH_EVENT_UNREPLICATED_WRITES 10

/**
 * A borrow begins (before any wait).
 */
#define STAUNCH_TRACE_ACQUIRE_START 1

/**
 * The borrow ended: with a connection (`connection_id`, `server`), or
 * failed (`error`).
 */
#define STAUNCH_TRACE_ACQUIRE_END 2

/**
 * A statement is about to be sent on a borrowed connection.
 */
#define STAUNCH_TRACE_STATEMENT_START 3

/**
 * Its answer was read to its end, or it failed (`error`). A streamed
 * answer ends when it is read to its end or its row set freed.
 */
#define STAUNCH_TRACE_STATEMENT_END 4

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * The version of the library that is loaded, as `STAUNCH_VERSION` encodes it
 * (`major * 10000 + minor * 100 + patch`). Never blocks; any thread.
 */
uint32_t staunch_version(void);

/**
 * The version of the library that is loaded, e.g. "0.1.0". Static string.
 * Never blocks; any thread.
 */
const char *staunch_version_string(void);

/**
 * The message of an error: one line saying what failed and why (for a
 * timeout: the pool state and the last connect error). NUL-terminated UTF-8,
 * owned by `err`, valid until `staunch_error_free(err)`. Returns "" when
 * `err` is NULL. Never blocks; may be called from any thread.
 */
const char *staunch_error_message(const struct staunch_error *err);

/**
 * The status code of an error (the same value the failing call returned).
 * Returns STAUNCH_NULL_ARGUMENT when `err` is NULL. Never blocks; any thread.
 */
staunch_status staunch_error_status(const struct staunch_error *err);

/**
 * The MySQL/MariaDB error number the server sent (e.g. 1146 for an unknown
 * table, 1045 for access denied), or 0 when the error did not come from the
 * server or `err` is NULL. Never blocks; any thread.
 */
uint32_t staunch_error_server_code(const struct staunch_error *err);

/**
 * The five-character SQLSTATE the server sent with its error (e.g. "42S02"),
 * or "" when there is none or `err` is NULL. Owned by `err`, valid until
 * `staunch_error_free(err)`. Never blocks; any thread.
 */
const char *staunch_error_sqlstate(const struct staunch_error *err);

/**
 * The category of the server error in `err` (`STAUNCH_CATEGORY_*`), from
 * its error number and SQLSTATE; STAUNCH_CATEGORY_NONE when the error did
 * not come from the server or `err` is NULL. Never blocks; any thread.
 */
staunch_category staunch_error_category(const struct staunch_error *err);

/**
 * Frees an error object. NULL is a no-op. Strings obtained from it become
 * invalid. Must not be called twice on the same error, nor while another
 * thread reads it. Never blocks; any thread.
 */
void staunch_error_free(struct staunch_error *err);

/**
 * The name of a status code, e.g. "STAUNCH_POOL_EXHAUSTED", or
 * "STAUNCH_UNKNOWN_STATUS" for a number staunch does not know. The string is
 * static. Never blocks; any thread.
 */
const char *staunch_status_name(staunch_status status);

/**
 * Creates an options object with every knob at its default (connect to
 * 127.0.0.1:3306, max_size 10, connection_timeout 10s, connect_timeout 3s,
 * ...; see docs/knobs.md for the list). On success `*out` receives it; free it
 * with `staunch_options_free`. Never blocks; any thread.
 */
staunch_status staunch_options_new(struct staunch_options **out, struct staunch_error **err);

/**
 * Sets one knob by name from its text form, as in a URL parameter: e.g.
 * ("max_size", "8"), ("connect_timeout", "250ms"), ("idle_timeout", "off").
 * Knobs apply in call order with `staunch_options_set_url` (the later wins);
 * a default (`staunch_options_set_default`) never replaces them.
 *
 * An unknown knob fails at once with STAUNCH_INVALID_CONFIG naming it. A
 * value that does not parse or is out of range is reported, naming the knob,
 * by `staunch_pool_open_options` (ranges are checked when the whole
 * configuration is known). Both strings are copied. Never blocks; one thread
 * at a time per options object.
 */
staunch_status staunch_options_set(struct staunch_options *opts,
                                   const char *knob,
                                   const char *value,
                                   struct staunch_error **err);

/**
 * Sets a knob's default, by name from its text form: `value` applies
 * unless the user gives that knob, through the URL of
 * `staunch_options_set_url` (its query, or its user, password, host, port
 * or database) or through `staunch_options_set`, whether before or after
 * this call. For a binding's own defaults, e.g. `("interpolate_params",
 * "true")` where the language's drivers interpolate, which a URL saying
 * `interpolate_params=false` overrides. A later default replaces an
 * earlier one.
 *
 * An unknown knob, or a value that does not parse, fails at once with
 * STAUNCH_INVALID_CONFIG naming the knob (even when the user's value wins);
 * ranges are checked by `staunch_pool_open_options`. Both strings are
 * copied. Never blocks; one thread at a time per options object. Since 1.8.
 */
staunch_status staunch_options_set_default(struct staunch_options *opts,
                                           const char *knob,
                                           const char *value,
                                           struct staunch_error **err);

/**
 * Applies a URL, `mysql://user:pass@host:port/db?knob=value&...`: host,
 * port, user, password, database and any knobs it names. Knobs apply in call
 * order with `staunch_options_set`; a default (`staunch_options_set_default`)
 * never replaces what the URL gives. A malformed URL is reported by
 * `staunch_pool_open_options`. The string is copied. Never blocks; one thread
 * at a time per options object.
 */
staunch_status staunch_options_set_url(struct staunch_options *opts,
                                       const char *url,
                                       struct staunch_error **err);

/**
 * Declares `name` a URL parameter of the binding, not of staunch (a
 * database/sql or JDBC option, e.g. Go's `parseTime`): a URL applied after
 * this call (`staunch_options_set_url`) neither applies nor refuses a
 * parameter of that name, so a binding hands its user's whole URL to the
 * library and reads its own parameters from `staunch_url_query`. A knob's
 * name (see `staunch_knob_name`), an empty name or one holding `= & ? # /
 * @` is STAUNCH_INVALID_CONFIG. The string is copied. Never blocks; one
 * thread at a time per options object. Since 1.9.
 */
staunch_status staunch_options_claim_param(struct staunch_options *opts,
                                           const char *name,
                                           struct staunch_error **err);

/**
 * Sets the event callback of the pools opened from these options (replacing
 * any previous one, whose finalizer then runs if nothing else uses it).
 *
 * `callback` is called for every event (see staunch_event) on the thread
 * that observed it: pool threads (staunch-adder-N, staunch-housekeeper,
 * staunch-watchdog) for connects, keepalive, retirement and leaks; the
 * calling thread for validation failures on borrow, timeouts of
 * staunch_pool_get, connections closed on release and staunch_pool_close
 * (one a pool thread holds as the pool closes is closed on that thread).
 * Several threads may call it at once. It must be quick, must not block, and
 * must not call staunch functions (other than reading the event); no pool
 * lock is held while it runs. It may run before staunch_pool_open_options
 * returns (connect events of the first connections).
 *
 * On success, ownership of `user_data` passes to staunch: `finalizer` (may
 * be NULL) is called exactly once with it, when neither these options nor
 * any pool opened from them can call `callback` again, that is after
 * staunch_options_free and staunch_pool_free of every such pool, on the
 * thread of the last of those calls. A NULL `callback` removes the callback;
 * `finalizer` is then called at once. On failure (NULL `opts`) the finalizer
 * is not called. Never blocks; one thread at a time per options object.
 */
staunch_status staunch_options_set_event_callback(struct staunch_options *opts,
                                                  staunch_event_callback callback,
                                                  void *user_data,
                                                  staunch_finalizer finalizer,
                                                  struct staunch_error **err);

/**
 * How many knobs there are: `staunch_knob_name` names them, for a binding
 * that tells its own options from staunch's. Never blocks; any thread. Since 1.8.
 */
size_t staunch_knob_count(void);

/**
 * The name of knob `index` (0 to `staunch_knob_count() - 1`), as
 * `staunch_options_set` and URLs take it: a static string. NULL for an
 * index past the end. Never blocks; any thread. Since 1.8.
 */
const char *staunch_knob_name(size_t index);

/**
 * Writes `url` with every password replaced by `<redacted>` (the
 * user-info's and any `*password=` parameter), as staunch's own messages
 * quote URLs, into `buf` as `staunch_pool_metrics` writes its text
 * (`snprintf`'s rules, `*len` the redacted URL's length). A malformed URL
 * is redacted too (when its user-info cannot be told apart, all of it is
 * replaced), never an error. Never blocks; any thread. Since 1.8.
 */
staunch_status staunch_url_redact(const char *url,
                                  char *buf,
                                  size_t cap,
                                  size_t *len,
                                  struct staunch_error **err);

/**
 * Writes the `knob=value&...` part of `url` (after its `?`, percent-encoded
 * as written; "" when there is none) into `buf` as `staunch_pool_metrics`
 * writes its text (`snprintf`'s rules, `*len` the query's length), found as
 * `staunch_options_set_url` finds it: after the user-info, whatever the
 * password holds (a `?` or `@` in it included). For a binding that reads
 * its own parameters (`staunch_options_claim_param`) from the URL the
 * library parses. Never blocks; any thread. Since 1.9.
 */
staunch_status staunch_url_query(const char *url,
                                 char *buf,
                                 size_t cap,
                                 size_t *len,
                                 struct staunch_error **err);

/**
 * Writes to `*at` the byte offset of the `@` that ends `url`'s user-info,
 * found as `staunch_options_set_url` finds it (the first `@` after which the
 * URL reads as hosts, database and parameters, whatever the password holds),
 * or SIZE_MAX when there is no user-info. `url` may lack a scheme: a
 * binding that translates its own URL form (`jdbc:mysql://`) passes what
 * follows its prefix, and sets the password aside before reading the rest.
 * Never blocks; any thread. Since 1.9.
 */
staunch_status staunch_url_userinfo_end(const char *url, size_t *at, struct staunch_error **err);

/**
 * Frees an options object. NULL is a no-op. Pools opened from it are not
 * affected. Runs the event callback's finalizer if no pool uses it. Never
 * blocks (beyond the finalizer). Must be the last call on the options.
 */
void staunch_options_free(struct staunch_options *opts);

/**
 * Opens a pool from a URL, `mysql://user:pass@host:port/db?knob=value&...`
 * (every knob can be given as a parameter, e.g. `?max_size=8&connect_timeout=1s`).
 * Events go to the `log` crate (nowhere, unless a Rust logger is installed);
 * use `staunch_pool_open_options` for an event callback.
 *
 * On success `*out` receives the pool; free it with `staunch_pool_free`. A bad
 * URL or knob gives STAUNCH_INVALID_CONFIG naming it. Does not connect and
 * never blocks, unless the knob `initialization_fail_timeout` is set: then it
 * makes one connection first and blocks until it succeeds or that timeout
 * passes (at least connect_timeout + 100 ms). Any thread.
 */
staunch_status staunch_pool_open(const char *url,
                                 struct staunch_pool **out,
                                 struct staunch_error **err);

/**
 * Opens a pool from an options object (which is only read: it may be freed
 * right after, or open more pools). Errors, ownership and blocking as for
 * `staunch_pool_open`; a knob value that is malformed or out of range gives
 * STAUNCH_INVALID_CONFIG naming the knob. Any thread, but not concurrently
 * with calls that modify `opts`.
 */
staunch_status staunch_pool_open_options(const struct staunch_options *opts,
                                         struct staunch_pool **out,
                                         struct staunch_error **err);

/**
 * Borrows a connection, waiting at most `timeout_ms` milliseconds
 * (STAUNCH_TIMEOUT_DEFAULT: the pool's connection_timeout; 0: fail at once
 * unless a connection is idle). Blocks at most that long, whatever the
 * network does (validating an idle connection counts within it). On success
 * `*out` receives the connection, owned by the caller: give it back with
 * `staunch_conn_free` (or `staunch_conn_release`, then `staunch_conn_free`).
 *
 * Fails with STAUNCH_POOL_EXHAUSTED (every connection in use) or
 * STAUNCH_UNREACHABLE (no connection could be made: the message says why,
 * e.g. which host:port sent no greeting) when the time is up,
 * STAUNCH_CONNECT_REJECTED at once when the server refuses the credentials
 * or database, STAUNCH_CLOSED if the pool is or gets closed. Thread-safe.
 */
staunch_status staunch_pool_get(struct staunch_pool *pool,
                                uint32_t timeout_ms,
                                struct staunch_conn **out,
                                struct staunch_error **err);

/**
 * Borrows a connection for reading: from a healthy replica when the pool has
 * several hosts (`topology=replication`), else (or when none qualifies and
 * `read_fallback=writer`) from the writer. Same timeout, ownership, blocking
 * and thread-safety rules as `staunch_pool_get`.
 */
staunch_status staunch_pool_get_read(struct staunch_pool *pool,
                                     uint32_t timeout_ms,
                                     struct staunch_conn **out,
                                     struct staunch_error **err);

/**
 * `staunch_pool_get` that `staunch_cancel_token_cancel`, called from any
 * thread, ends promptly with STAUNCH_CANCELLED (the waiter leaves the
 * queue; a connection handed over as the cancel came goes back to the
 * pool). A token already cancelled fails at once. `token` may be NULL (then
 * this is `staunch_pool_get`); it is only used during the call. Same
 * timeout, ownership, blocking and thread-safety rules as
 * `staunch_pool_get` otherwise.
 */
staunch_status staunch_pool_get_cancellable(struct staunch_pool *pool,
                                            uint32_t timeout_ms,
                                            const struct staunch_cancel_token *token,
                                            struct staunch_conn **out,
                                            struct staunch_error **err);

/**
 * `staunch_pool_get_read`, cancellable as `staunch_pool_get_cancellable`.
 */
staunch_status staunch_pool_get_read_cancellable(struct staunch_pool *pool,
                                                 uint32_t timeout_ms,
                                                 const struct staunch_cancel_token *token,
                                                 struct staunch_conn **out,
                                                 struct staunch_error **err);

/**
 * Starts a borrow that never waits in this call (since 1.11.0): when a
 * connection is idle, `*out` receives it as `staunch_pool_get` gives one
 * and `*pending` NULL; otherwise `*out` is NULL and `*pending` receives a
 * borrow waiting in the pool's queue (owned by the caller). Wait until
 * `staunch_pending_get_fd` is readable (poll, epoll, an event loop) or
 * `staunch_pending_get_remaining_ms` has passed, then call
 * `staunch_pending_get_finish`.
 *
 * `signal_fd` -1: the borrow makes an eventfd of its own. Otherwise an
 * eventfd of the caller's (non-blocking), which a host keeps registered in
 * its event loop and reuses from borrow to borrow: the library writes to
 * it (an 8-byte 1) when the borrow has something and reads it to clear it,
 * never closes it, and stops using it once the borrow finished or was
 * freed; a signal left over from an earlier borrow only makes a finish
 * find nothing yet. `read` routes as `staunch_pool_get_read`
 * (a replica; the writer after a replica's failure when read_fallback
 * allows). `timeout_ms` bounds the whole borrow as in `staunch_pool_get`
 * (STAUNCH_TIMEOUT_DEFAULT: the pool's connection_timeout). Errors: those
 * of `staunch_pool_get`, at once. To give up (a cancelled task), free the
 * pending borrow: the pool is left as if it had never waited.
 *
 * Waits in the call only while the pool is suspended (as
 * `staunch_pool_get`, within the bound), and for the validation of an idle
 * connection unused past validation_interval (a ping, bounded by what is
 * left of the bound), as `staunch_pool_get` does. Thread-safe.
 */
staunch_status staunch_pool_get_start(struct staunch_pool *pool,
                                      uint32_t timeout_ms,
                                      bool read,
                                      int32_t signal_fd,
                                      struct staunch_conn **out,
                                      struct staunch_pending_get **pending,
                                      struct staunch_error **err);

/**
 * The descriptor a pending borrow's host waits on: readable when
 * `staunch_pending_get_finish` has something (a connection, or a failure
 * such as the pool's close). The same for the borrow's whole life: the
 * caller's `signal_fd`, or one the borrow owns (do not close it; reading it
 * is harmless). -1 for NULL. Never blocks.
 */
int32_t staunch_pending_get_fd(const struct staunch_pending_get *pending);

/**
 * Milliseconds left until the borrow's bound, rounded up (0 once it
 * passed, and for NULL): no descriptor turns readable at the bound, so the
 * host's wait ends then too, and `staunch_pending_get_finish` reports the
 * timeout. Never blocks.
 */
uint32_t staunch_pending_get_remaining_ms(const struct staunch_pending_get *pending);

/**
 * Finishes a pending borrow if it can be now, without waiting: STAUNCH_OK
 * with `*out` the connection (as `staunch_pool_get` gives it), STAUNCH_OK
 * with `*out` NULL when not yet (a wake-up with nothing for it, or a
 * connection that failed its validation and was replaced: wait for the
 * descriptor again), or the error that ended it (STAUNCH_POOL_EXHAUSTED or
 * STAUNCH_UNREACHABLE once the bound passed, STAUNCH_CLOSED...). After a
 * connection or an error the borrow is over: finishing it again fails with
 * STAUNCH_INVALID_ARGUMENT; free it. Blocks only for the validation of a
 * connection idle past validation_interval (bounded by what is left of the
 * bound). One thread at a time per pending borrow.
 */
staunch_status staunch_pending_get_finish(struct staunch_pending_get *pending,
                                          struct staunch_conn **out,
                                          struct staunch_error **err);

/**
 * Frees a pending borrow. One that has not finished is given up: it leaves
 * the pool's queue as a cancelled `staunch_pool_get_cancellable` does (a
 * connection handed to it meanwhile goes back to the pool). NULL is a
 * no-op. Never blocks (beyond a short lock).
 */
void staunch_pending_get_free(struct staunch_pending_get *pending);

/**
 * Borrows a connection, runs one query on it and gives the connection back,
 * all in one call: `staunch_pool_get`, `staunch_conn_query_ex` and
 * `staunch_conn_free` without the connection handle, for a statement that
 * needs nothing else of its connection (a binding's pool-level `query`
 * makes one call into the library instead of three). `*out` receives the
 * answer, buffered (it owns its data; free it with `staunch_rows_free`);
 * for a statement that returns no rows, `staunch_rows_affected_rows` and
 * `staunch_rows_last_insert_id` give what it did. With
 * STAUNCH_QUERY_STREAM (since 1.3.0) the answer is streamed instead: the
 * row set holds the connection, which goes back to the pool when the first
 * result set has been read to its end (the sets after it are read whole
 * then) or the row set is freed, whichever comes first; its reads wait as
 * a streamed answer's of `staunch_conn_query_ex` do.
 *
 * `timeout_ms` bounds the wait for a connection as in `staunch_pool_get`.
 * `sql`, `params`, `n_params` and `flags` as in `staunch_conn_query_ex`.
 * Errors: those of
 * `staunch_pool_get`, then those of `staunch_conn_query_ex`; after a
 * failed statement the connection goes back to the pool (or is closed, if
 * the failure broke it), as `staunch_conn_free` does. Not cancellable
 * from another thread: for a statement that must be, borrow a connection
 * (`staunch_pool_get_cancellable`, `staunch_conn_cancel`). Blocks for the
 * wait, the statement (within the pool's query_timeout) and the return
 * (nothing after a statement that only read). Thread-safe.
 */
staunch_status staunch_pool_query(struct staunch_pool *pool,
                                  uint32_t timeout_ms,
                                  const char *sql,
                                  const struct staunch_param *params,
                                  size_t n_params,
                                  uint32_t flags,
                                  struct staunch_rows **out,
                                  struct staunch_error **err);

/**
 * Borrows a connection if one is idle right now; never waits and never
 * connects. On STAUNCH_OK, `*out` receives the connection (owned by the
 * caller, as from `staunch_pool_get`), or NULL when none is idle. Fails with STAUNCH_CLOSED if the pool is closed. Blocks at most
 * validation_timeout (a connection idle for longer than alive_bypass_window
 * is validated first). Thread-safe.
 */
staunch_status staunch_pool_try_get(struct staunch_pool *pool,
                                    struct staunch_conn **out,
                                    struct staunch_error **err);

/**
 * Fills `*out` with a snapshot of the pool's gauges and counters: set
 * `out->size = sizeof(staunch_stats)` first (a smaller size gives the
 * fields that fit; less than a `size_t`, STAUNCH_INVALID_ARGUMENT). Works
 * on a closed pool too. Never blocks (reads atomics). Thread-safe.
 */
staunch_status staunch_pool_stats(const struct staunch_pool *pool,
                                  struct staunch_stats *out,
                                  struct staunch_error **err);

/**
 * Writes the pool's figures as Prometheus text (exposition format 0.0.4,
 * which OpenMetrics parsers read too) into `buf`, as `snprintf` does: at
 * most `cap - 1` bytes and a NUL, and `*len` = the text's whole length
 * (without the NUL); when `*len >= cap` the text was cut: call again with
 * `*len + 1` bytes (a little more: the figures move). `buf` may be NULL
 * with `cap` 0 to ask for the length.
 *
 * The names follow OpenTelemetry's semantic conventions for database client
 * connections as its Prometheus exporter writes them
 * (`db_client_connection_count{db_client_connection_state="idle"}`,
 * `db_client_connection_wait_time_seconds`, `..._create_time_seconds`,
 * `..._use_time_seconds`, `db_client_operation_duration_seconds`,
 * `db_client_connection_timeouts_total`, ...), with staunch's own figures
 * as `staunch_*`; every series is labelled with the pool's name
 * (`pool_name`) and the host (`server_address`, `server_port`). The first
 * call turns timings on: from then on borrows and statements are timed for
 * the `use_time` and operation histograms (`timings=on` in the URL does
 * so from the start). Works on a closed pool. Never blocks. Thread-safe.
 */
staunch_status staunch_pool_metrics(const struct staunch_pool *pool,
                                    char *buf,
                                    size_t cap,
                                    size_t *len,
                                    struct staunch_error **err);

/**
 * The pool's `leak_detection_threshold` in milliseconds, 0 when leak
 * detection is off (or for NULL): a binding gives the borrower's stack
 * (`staunch_conn_set_borrower_stack`) only when it is set. Never blocks;
 * any thread.
 */
uint64_t staunch_pool_leak_threshold_ms(const struct staunch_pool *pool);

/**
 * How many servers the pool has a pool for: 1, or the hosts of a
 * topology pool (the writer and the replicas, or the Galera nodes), in
 * the URL's order. 0 for NULL. Never blocks; any thread.
 */
size_t staunch_pool_host_count(const struct staunch_pool *pool);

/**
 * Fills `*out` with host `index`'s figures (as `staunch_pool_stats` does
 * for the whole pool: set `out->size` first), and writes its `host:port`
 * into `endpoint` by `snprintf`'s rules (`*endpoint_len` its whole
 * length; `endpoint` may be NULL with `endpoint_cap` 0). `index` from 0
 * to `staunch_pool_host_count() - 1`, else STAUNCH_INVALID_ARGUMENT.
 * `*is_writer` (may be NULL) receives whether writes go there now. Works
 * on a closed pool. Never blocks. Thread-safe.
 */
staunch_status staunch_pool_host_stats(const struct staunch_pool *pool,
                                       size_t index,
                                       struct staunch_stats *out,
                                       char *endpoint,
                                       size_t endpoint_cap,
                                       size_t *endpoint_len,
                                       bool *is_writer,
                                       struct staunch_error **err);

/**
 * Writes the pool's name (`pool_name`, or `staunch-N`) into `buf` as
 * `staunch_pool_metrics` writes its text (`snprintf`'s rules, `*len` the
 * name's length). Never blocks. Thread-safe.
 */
staunch_status staunch_pool_name(const struct staunch_pool *pool,
                                 char *buf,
                                 size_t cap,
                                 size_t *len,
                                 struct staunch_error **err);

/**
 * Retires every current connection: idle ones now (in the background),
 * borrowed ones when they are released. New connections replace them on
 * demand. Use after a failover or a credentials change. Never blocks.
 * Thread-safe.
 */
staunch_status staunch_pool_soft_evict(struct staunch_pool *pool, struct staunch_error **err);

/**
 * Changes the pool's max_size while it runs (per host, as the knob), e.g.
 * for HikariCP's `setMaximumPoolSize` or Go's `SetMaxOpenConns`. `size`
 * must be between 1 and the pool's max_size_cap (a knob fixed at open;
 * by default twice max_size, at least 64) and not below the current
 * min_idle; otherwise STAUNCH_INVALID_CONFIG naming the knob, and nothing
 * changes. Lowering it takes no borrowed connection away: connections above
 * the new size are closed as they are released (idle ones at once, in the
 * background), counted in `closed_evicted`; threads waiting in
 * staunch_pool_get get the connections released after that. Raising it has
 * connections made for threads waiting now. `staunch_stats.max_size` shows
 * the size in force (summed over the hosts of a topology pool). Never
 * blocks. Thread-safe.
 */
staunch_status staunch_pool_set_max_size(struct staunch_pool *pool,
                                         uint32_t size,
                                         struct staunch_error **err);

/**
 * Changes the pool's min_idle while it runs (per host), e.g. for HikariCP's
 * `setMinimumIdle`: between 0 and the current max_size, otherwise
 * STAUNCH_INVALID_CONFIG naming the knob, and nothing changes. Connections
 * up to a raised min_idle are made in the background; those above a lowered
 * one retire after idle_timeout. Never blocks. Thread-safe.
 */
staunch_status staunch_pool_set_min_idle(struct staunch_pool *pool,
                                         uint32_t min_idle,
                                         struct staunch_error **err);

/**
 * Suspends the pool (HikariCP's `suspendPool`): staunch_pool_get and the
 * calls that borrow wait, each within its own timeout (and cancellable as
 * it is), until `staunch_pool_resume`; staunch_pool_try_get finds nothing.
 * Borrowed connections are unaffected, and no connection is made
 * meanwhile. Idempotent. Never blocks. Thread-safe.
 */
staunch_status staunch_pool_suspend(struct staunch_pool *pool, struct staunch_error **err);

/**
 * Ends a `staunch_pool_suspend`: waiting borrowers proceed. Idempotent (a
 * pool not suspended is left as it is). Never blocks. Thread-safe.
 */
staunch_status staunch_pool_resume(struct staunch_pool *pool, struct staunch_error **err);

/**
 * Closes the pool: threads waiting in staunch_pool_get fail with
 * STAUNCH_CLOSED, connects in flight are cut off, idle connections are closed
 * now, borrowed ones when released (using them meanwhile gives
 * STAUNCH_CLOSED). A connection a pool thread holds at that moment (a
 * keepalive check, a new connection being added) is closed by that thread,
 * and this waits for it, at most `validation_timeout` + 1 s: when it
 * returns, only borrowed connections are open. Idempotent; the handle stays
 * valid (for stats) until `staunch_pool_free`. Does not wait for the pool's
 * threads to exit, which they do promptly on their own; closing idle
 * connections sends each a goodbye packet, bounded by the socket timeouts.
 * Thread-safe.
 */
staunch_status staunch_pool_close(struct staunch_pool *pool, struct staunch_error **err);

/**
 * This pool's number among the pools the process opened (from 1; the
 * `pool_id` of its events), 0 for NULL. Never blocks; any thread.
 */
uint64_t staunch_pool_id(const struct staunch_pool *pool);

/**
 * Closes the pool (as `staunch_pool_close`) and frees the handle. NULL is a
 * no-op. Connections still borrowed stay valid handles: they report
 * STAUNCH_CLOSED on use and must still be freed with `staunch_conn_free`.
 * A row set streaming from `staunch_pool_query` holds its connection the
 * same way: its rows still read, and it must still be freed.
 *
 * It first waits until the pool's threads have exited (joined), normally
 * well under a millisecond, at most 1 s (a connect stuck where it cannot be
 * cut off, such as a host name lookup, is left to finish on its own); their
 * events until then reach the callback. Once this returns, the event
 * callback is not called again for this pool (it waits for callbacks
 * running on other threads to return), and, unless connection handles of
 * the pool (or such row sets) are left, nothing of the pool runs any
 * more. Must be the last call on this pool handle, and must not run
 * concurrently with other calls on it.
 */
void staunch_pool_free(struct staunch_pool *pool);

/**
 * `staunch_pool_free` for a caller that must not block (a garbage
 * collector's finalizer, a thread holding its runtime's lock that an event
 * callback may need): frees the handle and returns at once; a thread of
 * its own closes the pool, waits for its threads and shuts the event
 * callback as `staunch_pool_free` does. Until then events may still reach
 * the callback: the callback's finalizer, which runs after its last call,
 * is the sign it is over. NULL is a no-op. Must be the last call on the
 * pool handle. (If the system cannot start a thread, it does the work
 * itself, as `staunch_pool_free`.)
 */
void staunch_pool_free_nowait(struct staunch_pool *pool);

/**
 * A SQL NULL parameter. The `staunch_param_*` builders never fail, never
 * block, and may be called from any thread; text and bytes parameters
 * point at the caller's data, which must stay valid until the statement
 * call returns.
 */
struct staunch_param staunch_param_null(void);

/**
 * A signed 64-bit integer parameter.
 */
struct staunch_param staunch_param_i64(int64_t v);

/**
 * An unsigned 64-bit integer parameter.
 */
struct staunch_param staunch_param_u64(uint64_t v);

/**
 * A double parameter.
 */
struct staunch_param staunch_param_double(double v);

/**
 * A UTF-8 text parameter of `len` bytes at `s` (no NUL needed; checked
 * when the statement runs).
 */
struct staunch_param staunch_param_text_len(const char *s, size_t len);

/**
 * A NUL-terminated UTF-8 text parameter (NULL gives SQL NULL).
 */
struct staunch_param staunch_param_text(const char *s);

/**
 * A decimal parameter of `len` bytes of text at `s` (see
 * STAUNCH_PARAM_DECIMAL; checked when the statement runs).
 */
struct staunch_param staunch_param_decimal(const char *s, size_t len);

/**
 * A binary parameter of `len` bytes at `data` (NULs allowed), sent as
 * binary data (never checked or converted as text).
 */
struct staunch_param staunch_param_bytes(const void *data, size_t len);

/**
 * A DATE parameter (checked when the statement runs).
 */
struct staunch_param staunch_param_date(uint16_t year, uint8_t month, uint8_t day);

/**
 * A DATETIME or TIMESTAMP parameter.
 */
struct staunch_param staunch_param_datetime(struct staunch_datetime v);

/**
 * A TIME parameter.
 */
struct staunch_param staunch_param_time(struct staunch_time v);

/**
 * Creates a cancel token, not cancelled. `*out` receives it, owned by the
 * caller. Never blocks; any thread.
 */
staunch_status staunch_cancel_token_new(struct staunch_cancel_token **out,
                                        struct staunch_error **err);

/**
 * Cancels the token: gets waiting with it return STAUNCH_CANCELLED (the
 * pool is left as if they had never waited), later ones fail at once.
 * Idempotent. Never blocks (beyond a short lock); any thread, at any time
 * before `staunch_cancel_token_free`. Safe to call from a signal-free
 * context only (it takes a lock): not from a signal handler.
 */
staunch_status staunch_cancel_token_cancel(const struct staunch_cancel_token *token,
                                           struct staunch_error **err);

/**
 * Whether the token was cancelled (false for NULL). Never blocks; any
 * thread.
 */
bool staunch_cancel_token_is_cancelled(const struct staunch_cancel_token *token);

/**
 * Frees a token. NULL is a no-op. Must not run while a call uses the token
 * (wait for the get it was given to return first).
 */
void staunch_cancel_token_free(struct staunch_cancel_token *token);

/**
 * Runs a statement that returns no rows (INSERT, UPDATE, DDL, SET, ...; rows
 * a statement does return are read and discarded).
 *
 * With `n_params` > 0 the values are bound to its `?` placeholders (wrong
 * count: STAUNCH_PARAM_COUNT), the pool's default way: prepared, or
 * interpolated by the library with the `interpolate_params` knob (see
 * STAUNCH_QUERY_INTERPOLATE); a statement the server refuses to prepare is
 * interpolated either way. With none it is sent as text, so any statement
 * works, including several separated by `;`.
 * `params` may be NULL when `n_params` is 0; it is only read during the
 * call. `affected_rows` and `last_insert_id` may be NULL; they are written on
 * success only. `staunch_conn_last_result` gives these and more.
 *
 * Errors: STAUNCH_SERVER_ERROR (see staunch_error_server_code / _sqlstate;
 * the connection stays usable), STAUNCH_STATEMENT_TIMEOUT (past its time
 * limit: ended by the server, the connection stays usable; cut off by the
 * client when the server did not answer, the connection is then broken),
 * STAUNCH_CANCELLED (`staunch_conn_cancel`; the connection stays usable),
 * STAUNCH_IO_ERROR and STAUNCH_BROKEN (the connection is out of step:
 * every later call fails with STAUNCH_BROKEN, and it is closed on
 * release), parameter errors (1xx), STAUNCH_USE_AFTER_RELEASE,
 * STAUNCH_CLOSED (the pool was closed), STAUNCH_CONN_BUSY.
 *
 * Blocks for the statement: as long as the server takes, or within the
 * connection's time limit (the query_timeout knob, or
 * `staunch_conn_set_timeout`): the server ends a statement at it; the
 * client cuts off one whose server did not answer 1 s later. One thread at
 * a time per connection (another thread gets STAUNCH_CONN_BUSY at once).
 */
staunch_status staunch_conn_execute(struct staunch_conn *conn,
                                    const char *sql,
                                    const struct staunch_param *params,
                                    size_t n_params,
                                    uint64_t *affected_rows,
                                    uint64_t *last_insert_id,
                                    struct staunch_error **err);

/**
 * What the last `staunch_conn_execute` on this connection did (see
 * `staunch_result`; zeros before the first one): set `out->size =
 * sizeof(staunch_result)` before the call; the fields that fit are written.
 * Never blocks. Same rules as `staunch_conn_execute` otherwise.
 */
staunch_status staunch_conn_last_result(struct staunch_conn *conn,
                                        struct staunch_result *out,
                                        struct staunch_error **err);

/**
 * Runs a query and reads its answer into a row set (`?` placeholders take
 * `params`; the statement is prepared, or interpolated with the pool's
 * `interpolate_params` knob; one without parameters goes as text with the
 * `text_without_params` knob; values come typed either way):
 * `staunch_conn_query_ex` with no flags. Of a statement returning several
 * result sets (CALL), every one is kept: move on with
 * `staunch_rows_next_result`.
 *
 * Errors, blocking and threads as for `staunch_conn_execute`; the whole
 * answer is held in memory (see `STAUNCH_QUERY_STREAM` for large ones).
 */
staunch_status staunch_conn_query(struct staunch_conn *conn,
                                  const char *sql,
                                  const struct staunch_param *params,
                                  size_t n_params,
                                  struct staunch_rows **out,
                                  struct staunch_error **err);

/**
 * Runs a query and gives its answer as a row set: `*out` receives it;
 * iterate with `staunch_rows_next` / `staunch_rows_fetch`, free with
 * `staunch_rows_free`. `flags`: 0, or any of `STAUNCH_QUERY_STREAM`,
 * `STAUNCH_QUERY_TEXT`, and one of `STAUNCH_QUERY_INTERPOLATE` /
 * `STAUNCH_QUERY_PREPARE` (other bits, or both of those:
 * STAUNCH_INVALID_ARGUMENT). A buffered
 * row set owns its data: it stays valid after the connection is released or
 * freed. A streaming one holds the connection (see STAUNCH_QUERY_STREAM);
 * freeing the connection's handle first is fine: the connection goes back
 * to the pool when the row set is done with it.
 *
 * Errors, blocking and threads as for `staunch_conn_execute`.
 */
staunch_status staunch_conn_query_ex(struct staunch_conn *conn,
                                     const char *sql,
                                     const struct staunch_param *params,
                                     size_t n_params,
                                     uint32_t flags,
                                     struct staunch_rows **out,
                                     struct staunch_error **err);

/**
 * Sends a text statement (no parameters: as `staunch_conn_query_ex` with
 * `STAUNCH_QUERY_TEXT`) without waiting for its answer, for a caller that
 * waits in its own event loop (Go's netpoller, epoll, io_uring) rather than
 * in a blocked thread. `*wait_fd` receives a socket that becomes readable
 * when the answer begins to arrive, or when the statement ends otherwise
 * (its time limit, the liveness check, `staunch_conn_cancel`: each of
 * these cuts or answers on it, so a wait on it is bounded as a statement
 * is); -1 when there is nothing to wait for (the answer is read in
 * already). Over TLS too: the socket under it is what turns readable. The fd is only to wait on: never read,
 * write, close it or change its flags; it stays open until the answer is
 * received. Watch it level- or edge-triggered: no byte is read from it
 * before `staunch_conn_query_recv`. Then call `staunch_conn_query_recv`
 * (it blocks for what has not arrived); meanwhile any other call on the
 * connection fails with STAUNCH_CONN_BUSY, except `staunch_conn_cancel`,
 * `staunch_conn_release` and `staunch_conn_free` (which read the answer
 * off). `flags`: 0 or STAUNCH_QUERY_TEXT. Since 1.5.
 */
staunch_status staunch_conn_query_send(struct staunch_conn *conn,
                                       const char *sql,
                                       uint32_t flags,
                                       int *wait_fd,
                                       struct staunch_error **err);

/**
 * `staunch_conn_query_send` for a statement with parameters: sent as
 * `staunch_conn_query_ex` would send it (prepared, or interpolated into
 * text, as the pool's defaults and `flags` say: 0, STAUNCH_QUERY_TEXT,
 * STAUNCH_QUERY_INTERPOLATE or STAUNCH_QUERY_PREPARE), its answer then
 * received by `staunch_conn_query_recv`. A statement sent prepared that
 * the connection's statement cache does not hold yet is prepared first,
 * and that round trip is waited for here (once per connection and
 * statement); the execute's answer is what `*wait_fd` announces. The
 * parameters are read during this call only. Same rules as
 * `staunch_conn_query_send` otherwise. Since 1.10.
 */
staunch_status staunch_conn_query_send_ex(struct staunch_conn *conn,
                                          const char *sql,
                                          const struct staunch_param *params,
                                          size_t n_params,
                                          uint32_t flags,
                                          int *wait_fd,
                                          struct staunch_error **err);

/**
 * Receives the answer to the statement `staunch_conn_query_send` sent,
 * waiting for what has not arrived (bounded as any statement is), and
 * gives it as `staunch_conn_query_ex` does: `*out` receives the row set,
 * buffered, or streaming with `flags` STAUNCH_QUERY_STREAM (0 or that
 * flag). The statement's failure (its server error, a cancel, a cut) is
 * this call's. With no statement sent: STAUNCH_INVALID_ARGUMENT. Since
 * 1.5.
 */
staunch_status staunch_conn_query_recv(struct staunch_conn *conn,
                                       uint32_t flags,
                                       struct staunch_rows **out,
                                       struct staunch_error **err);

/**
 * `staunch_conn_query_ex`, with the first of the answer read in the same
 * call into `batch` (see `staunch_batch`): the first result set's column
 * count and types, its affected rows and AUTO_INCREMENT id, and, for a
 * buffered answer, as many of its rows as fit. `batch->recycle`, a row set
 * of the caller's (its previous answer, say), is freed first. `*out`
 * receives the row set as `staunch_conn_query_ex` gives it, positioned
 * after the rows in the batch: read on with `staunch_rows_fetch` (when the
 * batch was full) and `staunch_rows_next_result`, free it with
 * `staunch_rows_free` (or hand it to the next call as `recycle`). For a
 * caller whose every foreign call costs (Python's `ctypes`), a small
 * answer costs one call instead of four. Since 1.4.
 *
 * Errors, blocking and threads as for `staunch_conn_execute`; a NULL
 * `batch`: STAUNCH_NULL_ARGUMENT; one whose `size` is smaller than this
 * library's `staunch_batch`: STAUNCH_INVALID_ARGUMENT (and `recycle` is
 * not freed).
 */
staunch_status staunch_conn_query_batch(struct staunch_conn *conn,
                                        const char *sql,
                                        const struct staunch_param *params,
                                        size_t n_params,
                                        uint32_t flags,
                                        struct staunch_batch *batch,
                                        struct staunch_rows **out,
                                        struct staunch_error **err);

/**
 * Writes to `*out` the number of `?` placeholders in `sql` as this
 * connection's server reads them, under the session's current `sql_mode`
 * (the library's one SQL scanner, the one both ways of sending use): a `?`
 * counts unless it is inside '...', "..." (an identifier under
 * ANSI_QUOTES), backticks, a `#` or `-- ` comment, or a C-style comment
 * other than the executable ones the server runs (a slash and star followed by `!`,
 * `!NNNNN` up to the server's version, or `M!` on MariaDB); a
 * backslash escapes nothing under NO_BACKSLASH_ESCAPES. Sends nothing,
 * except one round trip when the session's `sql_mode` is not known (after
 * a multi-statement or a CALL) and once per connection when
 * a versioned executable comment needs the server's version. Same rules
 * as `staunch_conn_execute` otherwise.
 */
staunch_status staunch_conn_count_params(struct staunch_conn *conn,
                                         const char *sql,
                                         size_t *out,
                                         struct staunch_error **err);

/**
 * Where the `?` placeholders of `sql` are: the byte offset in `sql` of each,
 * in order, by the same scanner and rules as `staunch_conn_count_params`,
 * so that a binding that rewrites placeholders (JDBC's named and `{call}`
 * parameters) needs one call instead of counting every prefix. Writes the
 * first `min(*count, cap)` offsets into `offsets` (NULL is fine when `cap`
 * is 0) and the number of placeholders into `*count`; when `*count` is
 * above `cap`, call again with room for `*count`. Round trips, blocking and
 * threads as for `staunch_conn_count_params`.
 */
staunch_status staunch_conn_param_offsets(struct staunch_conn *conn,
                                          const char *sql,
                                          size_t *offsets,
                                          size_t cap,
                                          size_t *count,
                                          struct staunch_error **err);

/**
 * Starts a transaction (`START TRANSACTION`). Errors, blocking and threads
 * as for `staunch_conn_execute`.
 */
staunch_status staunch_conn_begin(struct staunch_conn *conn, struct staunch_error **err);

/**
 * Starts a transaction with an isolation level and/or read only. The level
 * applies to this transaction only (`SET TRANSACTION ISOLATION LEVEL ...`,
 * without SESSION), so nothing of it stays in the session for the next
 * borrower. `opts` NULL is `staunch_conn_begin`. Errors, blocking (one round
 * trip, two with a level) and threads as for `staunch_conn_execute`.
 */
staunch_status staunch_conn_begin_ex(struct staunch_conn *conn,
                                     const struct staunch_txn_options *opts,
                                     struct staunch_error **err);

/**
 * Commits the current transaction (`COMMIT`). Errors, blocking and threads
 * as for `staunch_conn_execute`.
 */
staunch_status staunch_conn_commit(struct staunch_conn *conn, struct staunch_error **err);

/**
 * Rolls the current transaction back (`ROLLBACK`). Errors, blocking and
 * threads as for `staunch_conn_execute`.
 */
staunch_status staunch_conn_rollback(struct staunch_conn *conn, struct staunch_error **err);

/**
 * Prepares `sql` on the connection without running it (through the
 * connection's statement cache, so running it with parameters later costs
 * no second prepare), so that a statement the server refuses is reported
 * now: what a driver's `Prepare` needs. `n_params` (may be NULL) receives
 * the number of `?` placeholders, on success only.
 *
 * Errors: STAUNCH_SERVER_ERROR (a syntax error, an unknown table, 1295 for
 * a statement the server cannot prepare: it can still run as text), and as
 * for `staunch_conn_execute`. Blocks for one round trip, bounded as a
 * statement. Same rules as `staunch_conn_execute` otherwise.
 */
staunch_status staunch_conn_prepare(struct staunch_conn *conn,
                                    const char *sql,
                                    uint32_t *n_params,
                                    struct staunch_error **err);

/**
 * `staunch_conn_prepare` with `flags` (since 1.12.0): 0, or
 * `STAUNCH_PREPARE_TEXT_OK`, with which a statement the server cannot
 * prepare (1295) succeeds, `n_params` receiving its placeholders as the
 * library's scanner counts them (`staunch_conn_count_params`): what a
 * driver whose `Prepare` must accept `SHOW ... LIKE ?` wants (the
 * reference drivers send such a statement interpolated). An unknown flag
 * is refused (STAUNCH_INVALID_ARGUMENT). Otherwise as
 * `staunch_conn_prepare`.
 */
staunch_status staunch_conn_prepare_ex(struct staunch_conn *conn,
                                       const char *sql,
                                       uint32_t flags,
                                       uint32_t *n_params,
                                       struct staunch_error **err);

/**
 * Checks the connection is alive (`COM_PING`). On failure (STAUNCH_IO_ERROR)
 * the connection is broken: discarded when released. Blocks for one round
 * trip (bounded by the connection's time limit, if any). Same rules as
 * `staunch_conn_execute` otherwise.
 */
staunch_status staunch_conn_ping(struct staunch_conn *conn, struct staunch_error **err);

/**
 * Sets this connection's statement time limit, until it is released:
 * `timeout_ms` milliseconds, 0 for none, or STAUNCH_TIMEOUT_DEFAULT for the
 * pool's `query_timeout`. The server ends a statement past it
 * (STAUNCH_STATEMENT_TIMEOUT, the connection stays usable; it changes the
 * session's `max_statement_time` before the next statement, one round trip
 * when the limit differs); a statement whose server has not answered 1 s
 * after the limit is cut off (STAUNCH_STATEMENT_TIMEOUT, the connection is
 * then broken). Never blocks. Same rules as `staunch_conn_execute`
 * otherwise.
 */
staunch_status staunch_conn_set_timeout(struct staunch_conn *conn,
                                        uint32_t timeout_ms,
                                        struct staunch_error **err);

/**
 * Gives the stack where the host program borrowed this connection (its
 * language's own: a Python traceback, a Java or Go stack trace), `len`
 * bytes of UTF-8 text (invalid sequences are replaced), for the leak report
 * should the connection stay borrowed past `leak_detection_threshold`. Does
 * nothing when leak detection is off
 * (`staunch_pool_leak_threshold_ms` says 0): call it only then, right after
 * the borrow. Kept up to 64 KiB. Never blocks. Same rules as the other
 * calls on a connection (one thread at a time).
 */
staunch_status staunch_conn_set_borrower_stack(struct staunch_conn *conn,
                                               const char *text,
                                               size_t len,
                                               struct staunch_error **err);

/**
 * Cancels the statement running on this connection, from any thread (the
 * one exception to "one thread at a time"): `KILL QUERY` over a connection
 * of its own to the same server. The statement then fails with
 * STAUNCH_CANCELLED and the connection stays usable. `*cancelled` (may be
 * NULL) receives whether a statement was running (false: nothing was sent).
 * Only the statement running at the call is affected, never a later one.
 * Blocks for the kill: at most the pool's `connect_timeout` + 1 s; an error
 * (STAUNCH_CONNECT_FAILED, ...) says the kill could not be sent. Safe to
 * call on a released handle (it does nothing then).
 */
staunch_status staunch_conn_cancel(const struct staunch_conn *conn,
                                   bool *cancelled,
                                   struct staunch_error **err);

/**
 * Whether an earlier statement broke this connection (it then refuses
 * every statement with STAUNCH_BROKEN and is closed on release). False for
 * NULL or a released handle. Never blocks; any thread (a busy connection
 * reads as not broken).
 */
bool staunch_conn_is_broken(const struct staunch_conn *conn);

/**
 * The pool-wide number of this connection, as in events (a leak report's
 * `connection_id`); 0 for NULL. Never blocks; any thread.
 */
uint64_t staunch_conn_id(const struct staunch_conn *conn);

/**
 * Writes the server's id of this session (`CONNECTION_ID()`, the number
 * `KILL` and the process list use) to `*out`. Never blocks. Same rules as
 * `staunch_conn_execute` otherwise.
 */
staunch_status staunch_conn_server_id(struct staunch_conn *conn,
                                      uint64_t *out,
                                      struct staunch_error **err);

/**
 * Writes the server this connection is to, as `host:port` (`[v6]:port`,
 * or `unix:path`: the `server` of trace events, the `server_address` and
 * `server_port` of metrics), into `buf` by `snprintf`'s rules (at most
 * `cap - 1` bytes and a NUL; `*len` its whole length; `buf` may be NULL
 * with `cap` 0). In a topology pool, the host the connection was borrowed
 * from. Never blocks. Same rules as `staunch_conn_execute` otherwise.
 */
staunch_status staunch_conn_server(struct staunch_conn *conn,
                                   char *buf,
                                   size_t cap,
                                   size_t *len,
                                   struct staunch_error **err);

/**
 * Returns the connection to its pool but keeps the handle: any further call
 * on it except this one and `staunch_conn_free` fails with
 * STAUNCH_USE_AFTER_RELEASE; the handle is still freed with
 * `staunch_conn_free`. Idempotent. Works after the pool was closed (the
 * connection is then closed). Fails only for NULL or STAUNCH_CONN_BUSY.
 *
 * Blocks while the session is made ready for the next borrower: nothing for
 * a borrow that only read; a transaction left open is rolled back, a
 * changed session reset (at most a few round trips, each bounded by
 * validation_timeout). One thread at a time per connection.
 */
staunch_status staunch_conn_release(struct staunch_conn *conn, struct staunch_error **err);

/**
 * Closes the connection instead of returning it to the pool (JDBC's
 * `abort`), and keeps the handle as `staunch_conn_release` does. Closing
 * writes a goodbye packet and never waits for an answer. Idempotent; fails
 * only for NULL or STAUNCH_CONN_BUSY.
 */
staunch_status staunch_conn_discard(struct staunch_conn *conn, struct staunch_error **err);

/**
 * Releases the connection if it was not (as `staunch_conn_release`, which
 * may block for the round trips that make the session ready for the next
 * borrower, each bounded by validation_timeout: nothing after a read-only
 * borrow) and frees the handle. NULL is a no-op. Must be the last call on
 * the handle, not concurrent with another call on it. Works after the pool
 * was freed. From a finalizer that must not block, call
 * `staunch_conn_discard` first.
 */
void staunch_conn_free(struct staunch_conn *conn);

/**
 * The number of columns of the current result set (0 for a statement
 * without a result set, or a NULL `rows`). Never blocks. One thread at a
 * time per row set (as for every staunch_rows function).
 */
size_t staunch_rows_column_count(const struct staunch_rows *rows);

/**
 * The name of column `idx` (its alias if the query gave one): `*name`
 * receives a NUL-terminated UTF-8 string owned by `rows`, valid until the
 * next `staunch_rows_next_result` or `staunch_rows_free`; `*len` (may be
 * NULL) its length without the NUL. STAUNCH_BAD_INDEX if `idx` is not below
 * the column count. Never blocks; one thread at a time per row set.
 */
staunch_status staunch_rows_column_name(const struct staunch_rows *rows,
                                        size_t idx,
                                        const char **name,
                                        size_t *len,
                                        struct staunch_error **err);

/**
 * The type of column `idx` (a STAUNCH_COLUMN_* value) in `*out`.
 * STAUNCH_BAD_INDEX if `idx` is not below the column count. Never blocks;
 * one thread at a time per row set.
 */
staunch_status staunch_rows_column_type(const struct staunch_rows *rows,
                                        size_t idx,
                                        staunch_column_type *out,
                                        struct staunch_error **err);

/**
 * The current result set's column count (as `staunch_rows_column_count`),
 * with the types of its first `cap` columns (STAUNCH_COLUMN_* values, as
 * `staunch_rows_column_type` gives them) written to
 * `types[0 .. min(count, cap)]`: one call for what took one per column.
 * Nothing is written when `types` is NULL. 0 for a NULL `rows`. Never
 * blocks; one thread at a time per row set. Since 1.1.
 */
size_t staunch_rows_column_types(const struct staunch_rows *rows,
                                 staunch_column_type *types,
                                 size_t cap);

/**
 * What the server says of column `idx` (see `staunch_column_info`): set
 * `out->size = sizeof(staunch_column_info)` before the call; the fields
 * that fit in it are written (STAUNCH_INVALID_ARGUMENT if it is smaller
 * than the `size` field). Strings valid until the next
 * `staunch_rows_next_result` or `staunch_rows_free`. STAUNCH_BAD_INDEX if
 * `idx` is not below the column count. Never blocks; one thread at a time
 * per row set.
 */
staunch_status staunch_rows_column_info(const struct staunch_rows *rows,
                                        size_t idx,
                                        struct staunch_column_info *out,
                                        struct staunch_error **err);

/**
 * Every column's `staunch_column_info` in one call (a driver's
 * `cursor.description` / `ResultSetMetaData` of a whole result): `out`
 * points to `cap` structs of `out[0].size` bytes each; set `out[0].size =
 * sizeof(staunch_column_info)` (the other elements' `size` is written, not
 * read). The first `cap` columns (all of them, if fewer) are filled as
 * `staunch_rows_column_info` fills one; read the count with
 * `staunch_rows_column_count`. Strings valid until the next
 * `staunch_rows_next_result` or `staunch_rows_free`. Never blocks; one
 * thread at a time per row set. Since 1.4.
 */
staunch_status staunch_rows_column_infos(const struct staunch_rows *rows,
                                         struct staunch_column_info *out,
                                         size_t cap,
                                         struct staunch_error **err);

/**
 * Moves to the next row of the current result set: `*has_row` receives
 * true if there is one, false at the set's end (then getters fail with
 * STAUNCH_NO_ROW). Pointers obtained from getters for the previous row
 * become invalid. A buffered row set never blocks; a streaming one
 * (`STAUNCH_QUERY_STREAM`) blocks for the row's arrival, a wait bounded as
 * a statement is (`query_timeout` / `staunch_conn_set_timeout`: the limit
 * plus 1 s of grace, counted while the read waits, not while the caller
 * takes its time between rows), and reports an error met on the way (the
 * connection is then broken). One thread at a time per row set.
 */
staunch_status staunch_rows_next(struct staunch_rows *rows,
                                 bool *has_row,
                                 struct staunch_error **err);

/**
 * The bulk getter: reads the next rows of the current result set into
 * `values`, row after row, `staunch_rows_column_count` values each, as many
 * whole rows as fit in `capacity` values; `*n_rows` receives how many (0 at
 * the set's end). Each value is tagged (see `staunch_value`); text and
 * bytes point into the row set, valid until the next fetch, `_next`,
 * `_next_result` or `_free`. `capacity` must hold at least one row
 * (STAUNCH_INVALID_ARGUMENT otherwise, unless the set has no columns). The
 * one-value getters have no current row after a fetch. Blocking as for
 * `staunch_rows_next`. One thread at a time per row set.
 */
staunch_status staunch_rows_fetch(struct staunch_rows *rows,
                                  struct staunch_value *values,
                                  size_t capacity,
                                  size_t *n_rows,
                                  struct staunch_error **err);

/**
 * `staunch_rows_fetch` that never waits: it reads the rows that have
 * arrived whole and stops at one that has not; `*waits` receives true
 * when it stopped for that (`*n_rows` may then be 0 before the set's end:
 * wait for more with `staunch_rows_fetch`, or try again later), false when
 * it stopped for `capacity` or at the set's end (so `*n_rows` below
 * what `capacity` holds, without `*waits`, is the end). A buffered row
 * set never waits. A streaming one, text or prepared, plain or TLS, reads
 * what has arrived: its buffer, and what the socket holds, read without
 * waiting; at the end of the first result set, the rest of a multi-result
 * answer is waited for, not read (`*waits`). Lets a caller that must stay
 * responsive (a Go goroutine under a context that can end, an event loop)
 * hand only real waits to another thread, or wait for the socket itself
 * (`staunch_rows_wait_fd`). Same rules as `staunch_rows_fetch` otherwise.
 */
staunch_status staunch_rows_fetch_ready(struct staunch_rows *rows,
                                        struct staunch_value *values,
                                        size_t capacity,
                                        size_t *n_rows,
                                        bool *waits,
                                        struct staunch_error **err);

/**
 * The socket to wait on when `staunch_rows_fetch_ready` said `*waits`:
 * `*fd` receives it while the rest of the row set's first result set
 * arrives on it and the next row's bytes have not all arrived (wait until
 * it is readable with poll or epoll, then call `staunch_rows_fetch_ready`
 * again), -1 when a socket would not do (a buffered row set, its first
 * set read, a stream the protocol layer does not read, or a row that
 * arrives in packets of 16 MiB: then wait with `staunch_rows_fetch`);
 * `*conn_id` the pool-wide number of its connection (`staunch_conn_id`),
 * a key for what a caller keeps per socket (the fd's number may be reused
 * after the connection closes; the connection's number never is), 0 with
 * -1. Ask again before each wait: the answer changes as rows are read.
 * The fd is only to wait on: never read, written, closed or changed. A
 * wait on it is not a statement's wait: the statement's time limit and
 * liveness check count only while a staunch call waits, so bound it (a
 * timeout, then `staunch_rows_fetch`). Never blocks; one thread at a
 * time per row set. Since 1.6.
 */
staunch_status staunch_rows_wait_fd(struct staunch_rows *rows,
                                    int *fd,
                                    uint64_t *conn_id,
                                    struct staunch_error **err);

/**
 * Moves to the next result set of a statement that returned several (a
 * `CALL`, multi-statement text): `*has_result` receives true if there is
 * one (its columns, rows and figures are then current), false after the
 * last. The current set's unread rows are skipped. Blocking as for
 * `staunch_rows_next`. One thread at a time per row set.
 */
staunch_status staunch_rows_next_result(struct staunch_rows *rows,
                                        bool *has_result,
                                        struct staunch_error **err);

/**
 * The number of rows of the current result set of a buffered row set, in
 * `*out` (read ones included). STAUNCH_INVALID_ARGUMENT for a streaming
 * row set (the count is not known until the rows are read). Never blocks;
 * one thread at a time per row set.
 */
staunch_status staunch_rows_row_count(const struct staunch_rows *rows,
                                      uint64_t *out,
                                      struct staunch_error **err);

/**
 * Reads a column of the current row into `*out` (see the getters below for
 * each type). The getters fail with STAUNCH_NULL_VALUE on NULL,
 * STAUNCH_WRONG_TYPE for a column of another type (the message names the
 * right getter), STAUNCH_BAD_INDEX, STAUNCH_NO_ROW; `*out` is written only
 * on success. They never block; one thread at a time per row set.
 *
 * `*out` receives whether column `idx` of the current row is SQL NULL.
 */
staunch_status staunch_rows_is_null(const struct staunch_rows *rows,
                                    size_t idx,
                                    bool *out,
                                    struct staunch_error **err);

/**
 * Reads an integer column of the current row into `*out`: INT columns, and
 * UINT ones when the value fits (else STAUNCH_OUT_OF_RANGE). Fails with
 * STAUNCH_NULL_VALUE on NULL, STAUNCH_WRONG_TYPE for other columns (the
 * message names the right getter), STAUNCH_BAD_INDEX, STAUNCH_NO_ROW. The
 * getters never block; one thread at a time per row set.
 */
staunch_status staunch_rows_get_i64(const struct staunch_rows *rows,
                                    size_t idx,
                                    int64_t *out,
                                    struct staunch_error **err);

/**
 * Reads an unsigned integer column of the current row into `*out`: UINT
 * columns, and INT ones when the value is not negative (else
 * STAUNCH_OUT_OF_RANGE). Other errors as for `staunch_rows_get_i64`.
 */
staunch_status staunch_rows_get_u64(const struct staunch_rows *rows,
                                    size_t idx,
                                    uint64_t *out,
                                    struct staunch_error **err);

/**
 * Reads a DOUBLE (or FLOAT, widened exactly) column of the current row into
 * `*out`. Integers and DECIMAL are not converted (STAUNCH_WRONG_TYPE): read
 * DECIMAL as text. Other errors as for `staunch_rows_get_i64`.
 */
staunch_status staunch_rows_get_double(const struct staunch_rows *rows,
                                       size_t idx,
                                       double *out,
                                       struct staunch_error **err);

/**
 * Reads a TEXT or DECIMAL column of the current row: `*ptr` receives UTF-8
 * text, NUL-terminated (but it may contain NULs: use `*len`), owned by
 * `rows` and valid until the next `staunch_rows_next` or `staunch_rows_free`;
 * `*len` (may be NULL) its length in bytes without the NUL. BYTES columns
 * fail with STAUNCH_WRONG_TYPE (use `staunch_rows_get_bytes`); text that is
 * not UTF-8 with STAUNCH_INVALID_UTF8. Other errors as for
 * `staunch_rows_get_i64`.
 */
staunch_status staunch_rows_get_text(const struct staunch_rows *rows,
                                     size_t idx,
                                     const char **ptr,
                                     size_t *len,
                                     struct staunch_error **err);

/**
 * Reads the bytes of a string-valued column of the current row (BYTES, but
 * also TEXT and DECIMAL, as their UTF-8 bytes): `*ptr` receives the data
 * (followed by a NUL not counted in the length; never NULL, even for empty
 * data), owned by `rows`, valid until the next `staunch_rows_next` or
 * `staunch_rows_free`; `*len` (may be NULL) its length. Other errors as for
 * `staunch_rows_get_i64`.
 */
staunch_status staunch_rows_get_bytes(const struct staunch_rows *rows,
                                      size_t idx,
                                      const uint8_t **ptr,
                                      size_t *len,
                                      struct staunch_error **err);

/**
 * Reads a DATE, DATETIME or TIMESTAMP column of the current row into `*out`
 * (DATE: time fields 0). Other errors as for `staunch_rows_get_i64`.
 */
staunch_status staunch_rows_get_datetime(const struct staunch_rows *rows,
                                         size_t idx,
                                         struct staunch_datetime *out,
                                         struct staunch_error **err);

/**
 * Reads a TIME column of the current row into `*out`. Other errors as for
 * `staunch_rows_get_i64`.
 */
staunch_status staunch_rows_get_time(const struct staunch_rows *rows,
                                     size_t idx,
                                     struct staunch_time *out,
                                     struct staunch_error **err);

/**
 * The number of rows the current result set's statement affected, as the
 * server reported it (0 for a plain SELECT, or a NULL `rows`; for a
 * streaming set, known once its rows are read). Never blocks; one thread at
 * a time per row set.
 */
uint64_t staunch_rows_affected_rows(const struct staunch_rows *rows);

/**
 * The AUTO_INCREMENT id the current result set's statement generated, or 0
 * (also for a NULL `rows`). Never blocks; one thread at a time per row set.
 */
uint64_t staunch_rows_last_insert_id(const struct staunch_rows *rows);

/**
 * The number of warnings the current result set's statement raised (read
 * them with `SHOW WARNINGS`), or 0 (also for a NULL `rows`; for a streaming
 * set, known once its rows are read). Never blocks; one thread at a time per
 * row set.
 */
uint32_t staunch_rows_warnings(const struct staunch_rows *rows);

/**
 * The server's info string for the current result set's statement (e.g.
 * "Rows matched: 1  Changed: 1  Warnings: 0"), NUL-terminated UTF-8, owned
 * by `rows` and valid until the next `staunch_rows_next_result` or
 * `staunch_rows_free`; "" when there is none (or `rows` is NULL). Never
 * blocks; one thread at a time per row set.
 */
const char *staunch_rows_info(const struct staunch_rows *rows);

/**
 * Frees a row set. NULL is a no-op. Pointers obtained from it become
 * invalid. A streaming row set first reads off the rest of the answer and
 * gives its connection back (blocking as a statement does, bounded as it
 * is). Must be the last call on the row set.
 */
void staunch_rows_free(struct staunch_rows *rows);

/**
 * Delivers the trace events this thread raised for deferred tracers
 * (`STAUNCH_TRACE_DEFERRED`) and has not delivered yet, in the order they
 * happened, each to its tracer's callback on this thread, with `held_us`
 * saying how long ago it happened; returns how many (0 when there were
 * none: cheap enough to call after every call into the library).
 *
 * A host calls it after each call that may raise one (a borrow, a
 * statement, a fetch, a commit or rollback, a return), where it can run
 * its callbacks. A thread keeps at most 1,024 events (or 1 MiB of their
 * text); past that they are delivered during the call that raises the
 * next one. Events a thread never flushes are dropped when it ends.
 * Never blocks (besides the callbacks); any thread, but only its own
 * events.
 */
size_t staunch_trace_flush(void);

/**
 * Sets the tracer of the pools opened from these options (replacing any
 * previous one): `callback` hears the start and the end of every borrow
 * (`staunch_pool_get` and its variants, `staunch_pool_query`) and of every
 * statement on a borrowed connection, in order, **on the thread that
 * borrows or runs it**, during that call: a start and its end come in
 * pairs, so a host can open a span at the start and close it at the end
 * (OpenTelemetry's database conventions: the pool's name, `server`, the
 * statement's text behind the user's opt-in, the error). Without a tracer
 * nothing is called or measured.
 *
 * It must be quick and must not call staunch functions on the pool or the
 * connection concerned (it runs between the library's steps, never under
 * its lock). Several threads may call it at once.
 *
 * On success, ownership of `user_data` passes to staunch: `finalizer` (may
 * be NULL) is called exactly once with it when nothing can call `callback`
 * again: after staunch_options_free, and staunch_pool_free of every pool
 * opened from these options, and `staunch_conn_free` of every connection
 * borrowed from them. A NULL `callback` removes the tracer; `finalizer` is
 * then called at once. On failure (NULL `opts`) the finalizer is not
 * called. Never blocks; one thread at a time per options object.
 */
staunch_status staunch_options_set_tracer(struct staunch_options *opts,
                                          staunch_trace_callback callback,
                                          void *user_data,
                                          staunch_finalizer finalizer,
                                          struct staunch_error **err);

/**
 * `staunch_options_set_tracer` with `flags` (since 1.12.0): 0, or
 * `STAUNCH_TRACE_DEFERRED`: the events are not delivered during the call
 * that raises them but kept on its thread until it calls
 * `staunch_trace_flush` (their `held_us` says how long they waited). An
 * unknown flag is refused (STAUNCH_INVALID_ARGUMENT; the finalizer is not
 * called). Never blocks; one thread at a time per options object.
 */
staunch_status staunch_options_set_tracer_ex(struct staunch_options *opts,
                                             staunch_trace_callback callback,
                                             void *user_data,
                                             staunch_finalizer finalizer,
                                             uint32_t flags,
                                             struct staunch_error **err);

/**
 * `sizeof` the struct named `name` ("staunch_param", "staunch_stats", ...)
 * in this library, 0 for a name it does not define (or NULL). For
 * bindings that declare the structs themselves, to check them at load.
 * Never blocks; any thread.
 */
size_t staunch_struct_size(const char *name);

/**
 * `offsetof` the field `field` of the struct `name` in this library
 * (`staunch_field_offset("staunch_param", "len")`), or SIZE_MAX for a
 * struct or field it does not define (or NULL). Never blocks; any thread.
 */
size_t staunch_field_offset(const char *name, const char *field);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* STAUNCH_H */
