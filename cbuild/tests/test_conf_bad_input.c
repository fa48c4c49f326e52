/* conf_bad_input: NULL where an object is expected, invalid UTF-8, bad column
 * indexes, wrong getters, out-of-range values, an invalid URL, an unknown
 * knob, a negative timeout, use after release, use after pool close: each
 * gives a status and a message, never a crash or a hang. Out-parameters are
 * not written on failure. */
#include "util.h"

#include <pthread.h>

static void null_arguments(void) {
    staunch_pool *pool = (staunch_pool *)&pool; /* sentinel */
    FAILS(STAUNCH_NULL_ARGUMENT, "url", staunch_pool_open, NULL, &pool);
    CHECK(pool == (staunch_pool *)&pool);
    FAILS(STAUNCH_NULL_ARGUMENT, "out", staunch_pool_open, test_url(), NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "opts", staunch_pool_open_options, NULL, &pool);
    staunch_conn *conn = NULL;
    FAILS(STAUNCH_NULL_ARGUMENT, "pool", staunch_pool_get, NULL, 100, &conn);
    FAILS(STAUNCH_NULL_ARGUMENT, "pool", staunch_pool_try_get, NULL, &conn);
    staunch_stats s = {.size = sizeof(staunch_stats)};
    FAILS(STAUNCH_NULL_ARGUMENT, "pool", staunch_pool_stats, NULL, &s);
    FAILS(STAUNCH_NULL_ARGUMENT, "pool", staunch_pool_close, NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "pool", staunch_pool_soft_evict, NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "conn", staunch_conn_execute, NULL, "SELECT 1", NULL, 0, NULL,
          NULL);
    staunch_rows *rows = NULL;
    FAILS(STAUNCH_NULL_ARGUMENT, "conn", staunch_conn_query, NULL, "SELECT 1", NULL, 0, &rows);
    FAILS(STAUNCH_NULL_ARGUMENT, "conn", staunch_conn_begin, NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "conn", staunch_conn_commit, NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "conn", staunch_conn_rollback, NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "conn", staunch_conn_ping, NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "conn", staunch_conn_release, NULL);
    uint64_t id;
    FAILS(STAUNCH_NULL_ARGUMENT, "conn", staunch_conn_server_id, NULL, &id);
    bool b;
    FAILS(STAUNCH_NULL_ARGUMENT, "rows", staunch_rows_next, NULL, &b);
    int64_t i;
    FAILS(STAUNCH_NULL_ARGUMENT, "rows", staunch_rows_get_i64, NULL, 0, &i);
    const char *name;
    FAILS(STAUNCH_NULL_ARGUMENT, "rows", staunch_rows_column_name, NULL, 0, &name, NULL);
    staunch_options *opts = NULL;
    FAILS(STAUNCH_NULL_ARGUMENT, "out", staunch_options_new, NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "opts", staunch_options_set, NULL, "max_size", "1");
    FAILS(STAUNCH_NULL_ARGUMENT, "opts", staunch_options_set_url, NULL, test_url());
    FAILS(STAUNCH_NULL_ARGUMENT, "opts", staunch_options_set_event_callback, NULL, NULL, NULL,
          NULL);
    OK(staunch_options_new, &opts);
    FAILS(STAUNCH_NULL_ARGUMENT, "knob", staunch_options_set, opts, NULL, "1");
    FAILS(STAUNCH_NULL_ARGUMENT, "value", staunch_options_set, opts, "max_size", NULL);
    staunch_options_free(opts);

    /* err may be NULL: the status still comes back. */
    CHECK(staunch_pool_get(NULL, 100, &conn, NULL) == STAUNCH_NULL_ARGUMENT);
    /* Every _free accepts NULL; the accessors too. */
    staunch_pool_free(NULL);
    staunch_conn_free(NULL);
    staunch_rows_free(NULL);
    staunch_options_free(NULL);
    staunch_error_free(NULL);
    CHECK(strcmp(staunch_error_message(NULL), "") == 0);
    CHECK(strcmp(staunch_error_sqlstate(NULL), "") == 0);
    CHECK(staunch_error_server_code(NULL) == 0);
    CHECK(staunch_error_status(NULL) == STAUNCH_NULL_ARGUMENT);
    CHECK(staunch_rows_column_count(NULL) == 0);
    CHECK(staunch_rows_affected_rows(NULL) == 0);
}

static void bad_config(void) {
    staunch_pool *pool = NULL;
    FAILS(STAUNCH_INVALID_CONFIG, "mysql://", staunch_pool_open, "postgres://u@h/db", &pool);
    FAILS(STAUNCH_INVALID_CONFIG, "unknown knob \"max_sise\"", staunch_pool_open,
          "mysql://u@127.0.0.1/db?max_sise=3", &pool);
    /* A negative timeout (the C timeout_ms is unsigned: (uint32_t)-1 is
     * STAUNCH_TIMEOUT_DEFAULT; negative durations come through knobs). */
    FAILS(STAUNCH_INVALID_CONFIG, "connection_timeout must not be negative", staunch_pool_open,
          "mysql://u@127.0.0.1/db?connection_timeout=-5s", &pool);
    FAILS(STAUNCH_INVALID_CONFIG, "max_size", staunch_pool_open,
          "mysql://u@127.0.0.1/db?max_size=0", &pool);
    FAILS(STAUNCH_INVALID_UTF8, "url", staunch_pool_open, "mysql://u@127.0.0.1/\xff", &pool);
    CHECK(pool == NULL);

    staunch_options *opts = NULL;
    OK(staunch_options_new, &opts);
    FAILS(STAUNCH_INVALID_CONFIG, "unknown knob \"bogus\"", staunch_options_set, opts, "bogus",
          "1");
    FAILS(STAUNCH_INVALID_UTF8, "value", staunch_options_set, opts, "user", "\xc3(");
    OK(staunch_options_set_url, opts, test_url());
    OK(staunch_options_set, opts, "connect_timeout", "-1s");
    FAILS(STAUNCH_INVALID_CONFIG, "connect_timeout must not be negative",
          staunch_pool_open_options, opts, &pool);
    CHECK(pool == NULL);
    staunch_options_free(opts);
}

typedef struct {
    staunch_conn *conn;
    staunch_status st;
} sleeper_arg;

static void *sleeper(void *p) {
    sleeper_arg *a = p;
    a->st = staunch_conn_execute(a->conn, "DO SLEEP(0.6)", NULL, 0, NULL, NULL, NULL);
    return NULL;
}

static void statements_and_rows(staunch_pool *pool) {
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);

    /* Invalid UTF-8 in SQL and in a text parameter; NULL data with a length. */
    FAILS(STAUNCH_INVALID_UTF8, "sql", staunch_conn_execute, c, "SELECT '\xff'", NULL, 0, NULL,
          NULL);
    staunch_param p = staunch_param_text_len("a\xff", 2);
    staunch_rows *rows = NULL;
    FAILS(STAUNCH_INVALID_UTF8, "params[0]", staunch_conn_query, c, "SELECT ?", &p, 1, &rows);
    p = staunch_param_bytes(NULL, 3);
    FAILS(STAUNCH_NULL_ARGUMENT, "params[0].ptr", staunch_conn_query, c, "SELECT ?", &p, 1, &rows);
    FAILS(STAUNCH_NULL_ARGUMENT, "params", staunch_conn_query, c, "SELECT ?", NULL, 1, &rows);
    /* Out-of-range parameter values. */
    staunch_datetime dt;
    memset(&dt, 0, sizeof dt);
    dt.year = 2024;
    dt.month = 13;
    dt.day = 1;
    p = staunch_param_datetime(dt);
    FAILS(STAUNCH_OUT_OF_RANGE, "month 13", staunch_conn_query, c, "SELECT ?", &p, 1, &rows);
    p = staunch_param_date(2024, 1, 1);
    p.datetime.hour = 3;
    FAILS(STAUNCH_OUT_OF_RANGE, "no time of day", staunch_conn_query, c, "SELECT ?", &p, 1, &rows);
    CHECK(rows == NULL);
    /* A server error keeps the connection usable. */
    staunch_error *err = NULL;
    CHECK(staunch_conn_execute(c, "SELECT * FROM no_such_table", NULL, 0, NULL, NULL, &err) ==
          STAUNCH_SERVER_ERROR);
    CHECK(staunch_error_server_code(err) == 1146);
    CHECK(strcmp(staunch_error_sqlstate(err), "42S02") == 0);
    staunch_error_free(err);
    OK(staunch_conn_ping, c);

    /* Rows: no current row, bad index, wrong getter, NULL, out of range. */
    OK(staunch_conn_query, c,
       "SELECT CAST(18446744073709551615 AS UNSIGNED) AS big, -1 AS neg, 'txt' AS t, "
       "NULL AS n, x'00ff' AS bin, 1.5e0 AS dbl",
       NULL, 0, &rows);
    int64_t i = 12345;
    FAILS(STAUNCH_NO_ROW, "staunch_rows_next first", staunch_rows_get_i64, rows, 0, &i);
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    CHECK(has);
    FAILS(STAUNCH_BAD_INDEX, "index 6 is out of range: the result has 6 column(s)",
          staunch_rows_get_i64, rows, 6, &i);
    FAILS(STAUNCH_BAD_INDEX, "out of range", staunch_rows_is_null, rows, (size_t)-1, &has);
    const char *name = NULL;
    FAILS(STAUNCH_BAD_INDEX, "out of range", staunch_rows_column_name, rows, 99, &name, NULL);
    staunch_column_type ty;
    FAILS(STAUNCH_BAD_INDEX, "out of range", staunch_rows_column_type, rows, 99, &ty);
    FAILS(STAUNCH_OUT_OF_RANGE, "INT64_MAX", staunch_rows_get_i64, rows, 0, &i);
    uint64_t u = 0;
    OK(staunch_rows_get_u64, rows, 0, &u);
    CHECK(u == UINT64_MAX);
    FAILS(STAUNCH_OUT_OF_RANGE, "negative", staunch_rows_get_u64, rows, 1, &u);
    FAILS(STAUNCH_WRONG_TYPE, "staunch_rows_get_text", staunch_rows_get_i64, rows, 2, &i);
    double d = 0;
    FAILS(STAUNCH_WRONG_TYPE, "staunch_rows_get_i64", staunch_rows_get_double, rows, 1, &d);
    OK(staunch_rows_get_double, rows, 5, &d);
    CHECK(d == 1.5);
    FAILS(STAUNCH_NULL_VALUE, "is NULL", staunch_rows_get_i64, rows, 3, &i);
    const char *t = NULL;
    FAILS(STAUNCH_WRONG_TYPE, "staunch_rows_get_bytes", staunch_rows_get_text, rows, 4, &t, NULL);
    staunch_datetime when;
    FAILS(STAUNCH_WRONG_TYPE, NULL, staunch_rows_get_datetime, rows, 2, &when);
    staunch_time tm;
    FAILS(STAUNCH_WRONG_TYPE, NULL, staunch_rows_get_time, rows, 2, &tm);
    CHECK(i == 12345 && t == NULL && name == NULL); /* untouched */
    OK(staunch_rows_next, rows, &has);
    CHECK(!has);
    FAILS(STAUNCH_NO_ROW, NULL, staunch_rows_get_u64, rows, 0, &u);
    staunch_rows_free(rows);

    /* A second thread on a connection that is busy: STAUNCH_CONN_BUSY. */
    sleeper_arg a = {c, 999};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, sleeper, &a) == 0);
    sleep_ms(200);
    FAILS(STAUNCH_CONN_BUSY, "another thread", staunch_conn_ping, c);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(a.st == STAUNCH_OK);

    /* Use after release: a status, for every call; release is idempotent. */
    OK(staunch_conn_release, c);
    OK(staunch_conn_release, c);
    FAILS(STAUNCH_USE_AFTER_RELEASE, "released", staunch_conn_execute, c, "SELECT 1", NULL, 0,
          NULL, NULL);
    FAILS(STAUNCH_USE_AFTER_RELEASE, "released", staunch_conn_query, c, "SELECT 1", NULL, 0,
          &rows);
    FAILS(STAUNCH_USE_AFTER_RELEASE, "released", staunch_conn_begin, c);
    FAILS(STAUNCH_USE_AFTER_RELEASE, "released", staunch_conn_ping, c);
    uint64_t id = 0;
    FAILS(STAUNCH_USE_AFTER_RELEASE, "released", staunch_conn_server_id, c, &id);
    staunch_conn_free(c);
}

static void use_after_close(void) {
    staunch_pool *pool = open_pool("max_size=2");
    staunch_conn *c = NULL, *d = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &d);
    OK(staunch_pool_close, pool);
    FAILS(STAUNCH_CLOSED, "closed", staunch_conn_execute, c, "SELECT 1", NULL, 0, NULL, NULL);
    FAILS(STAUNCH_CLOSED, "closed", staunch_pool_get, pool, 100, &c);
    FAILS(STAUNCH_CLOSED, "closed", staunch_pool_try_get, pool, &c);
    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s); /* the handle stays valid */
    CHECK(s.active == 2);
    OK(staunch_conn_release, c);
    staunch_conn_free(c);
    /* The pool freed while a connection is out: it reports CLOSED, and is
     * still freed normally. */
    staunch_pool_free(pool);
    FAILS(STAUNCH_CLOSED, "closed", staunch_conn_ping, d);
    staunch_conn_free(d);
}

int main(void) {
    null_arguments();
    bad_config();
    staunch_pool *pool = open_pool("max_size=2");
    statements_and_rows(pool);
    staunch_pool_free(pool);
    use_after_close();
    printf("conf_bad_input: ok\n");
    return 0;
}
