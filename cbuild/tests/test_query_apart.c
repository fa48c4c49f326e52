/* query_apart: staunch_conn_query_send sends a text statement (and
 * staunch_conn_query_send_ex one with parameters, prepared) and gives a
 * socket to wait on; staunch_conn_query_recv reads its answer. The socket
 * becomes readable when the answer arrives, and also when the statement ends
 * otherwise: a cancel, the statement time limit, the server frozen (the
 * liveness check cuts it), so a wait on it is bounded as a blocking
 * statement is. Meanwhile other calls on the connection are refused; a
 * release reads the answer off; a streamed answer and a failed statement
 * come through recv. The frozen server is the test's own (util.c's tk_*). */
#include "util.h"

#include <errno.h>
#include <poll.h>

/* Waits for fd to be readable, at most ms; returns how long it took, or
 * UINT64_MAX when it did not become readable. */
static uint64_t wait_readable(int fd, unsigned ms) {
    uint64_t t0 = now_ms();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, (int)ms);
    CHECKF(n >= 0, "poll: %s", strerror(errno));
    return n == 1 ? now_ms() - t0 : UINT64_MAX;
}

static void basics(staunch_pool *pool) {
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_rows *rows = NULL;

    /* Nothing sent: recv refuses. */
    FAILS(STAUNCH_INVALID_ARGUMENT, "no statement was sent", staunch_conn_query_recv, c, 0, &rows);
    FAILS(STAUNCH_INVALID_ARGUMENT, "flags", staunch_conn_query_send, c, "SELECT 1",
          STAUNCH_QUERY_STREAM, &(int){0});

    /* Sent: the fd becomes readable, recv gives the rows; meanwhile other
     * calls are refused, naming what to call. */
    int fd = -2;
    OK(staunch_conn_query_send, c, "SELECT 41 + 1, SLEEP(0.2)", 0, &fd);
    CHECKF(fd >= 0, "wait_fd %d", fd);
    FAILS(STAUNCH_CONN_BUSY, "staunch_conn_query_recv", staunch_conn_execute, c, "SELECT 1", NULL, 0,
          NULL, NULL);
    FAILS(STAUNCH_CONN_BUSY, "staunch_conn_query_recv", staunch_conn_query_send, c, "SELECT 1", 0, &fd);
    uint64_t took = wait_readable(fd, 5000);
    CHECKF(took != UINT64_MAX && took >= 150, "readable after %llu ms", (unsigned long long)took);
    OK(staunch_conn_query_recv, c, 0, &rows);
    staunch_value v[2];
    size_t n = 0;
    OK(staunch_rows_fetch, rows, v, 2, &n);
    CHECK(n == 1 && v[0].type == STAUNCH_COLUMN_INT && v[0].i64 == 42);
    staunch_rows_free(rows);
    rows = NULL;
    CHECK(query_i64(c, "SELECT 2") == 2);

    /* A failed statement fails at recv; the connection stays usable. */
    OK(staunch_conn_query_send, c, "SELECT * FROM no_such_table_qa", 0, &fd);
    FAILS(STAUNCH_SERVER_ERROR, "no_such_table_qa", staunch_conn_query_recv, c, 0, &rows);
    CHECK(rows == NULL && !staunch_conn_is_broken(c));
    CHECK(query_i64(c, "SELECT 3") == 3);

    /* A streamed answer: every row comes, then the connection is free. */
    OK(staunch_conn_query_send, c, "SELECT seq FROM seq_1_to_5000", STAUNCH_QUERY_TEXT, &fd);
    OK(staunch_conn_query_recv, c, STAUNCH_QUERY_STREAM, &rows);
    uint64_t sum = 0, count = 0;
    for (;;) {
        OK(staunch_rows_fetch, rows, v, 1, &n);
        if (n == 0) {
            break;
        }
        sum += v[0].u64;
        count++;
    }
    CHECKF(count == 5000 && sum == 5000ull * 5001 / 2, "%llu rows, sum %llu",
           (unsigned long long)count, (unsigned long long)sum);
    staunch_rows_free(rows);
    rows = NULL;

    /* A cancel while the answer is awaited: the fd becomes readable at once,
     * recv says cancelled, the connection stays usable. */
    OK(staunch_conn_query_send, c, "SELECT SLEEP(10)", 0, &fd);
    CHECK(fd >= 0);
    sleep_ms(200);
    bool cancelled = false;
    OK(staunch_conn_cancel, c, &cancelled);
    CHECK(cancelled);
    took = wait_readable(fd, 3000);
    CHECKF(took != UINT64_MAX, "not readable 3 s after the cancel");
    FAILS(STAUNCH_CANCELLED, NULL, staunch_conn_query_recv, c, 0, &rows);
    CHECK(query_i64(c, "SELECT 4") == 4);

    /* The statement time limit: readable when the server ends it. */
    OK(staunch_conn_set_timeout, c, 300);
    OK(staunch_conn_query_send, c, "SELECT SLEEP(5)", 0, &fd);
    took = wait_readable(fd, 2000 + (unsigned)slack_ms());
    CHECKF(took != UINT64_MAX, "not readable past the 300 ms limit");
    FAILS(STAUNCH_STATEMENT_TIMEOUT, NULL, staunch_conn_query_recv, c, 0, &rows);
    OK(staunch_conn_set_timeout, c, STAUNCH_TIMEOUT_DEFAULT);

    /* Sent and never received: the release reads the answer off; the next
     * borrower's session is in step. */
    uint64_t id = staunch_conn_id(c);
    OK(staunch_conn_query_send, c, "SELECT 'left', SLEEP(0.1)", 0, &fd);
    staunch_conn_free(c);
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(staunch_conn_id(c) == id);
    CHECK(query_i64(c, "SELECT 5") == 5);
    staunch_conn_free(c);
}

/* With parameters (staunch_conn_query_send_ex): prepared, the prepare
 * waited for in the send, the execute's answer announced by the fd; the
 * second run uses the cached statement (no round trip before the fd);
 * interpolated on request; streamed; failures at recv. */
static void with_params(staunch_pool *pool) {
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_rows *rows = NULL;
    staunch_value v[3];
    size_t n = 0;
    int fd = -2;
    FAILS(STAUNCH_INVALID_ARGUMENT, "STAUNCH_QUERY_STREAM", staunch_conn_query_send_ex, c,
          "SELECT ?", NULL, 0, STAUNCH_QUERY_STREAM, &fd);
    staunch_param p[2] = {staunch_param_i64(40), staunch_param_text("two")};
    for (int run = 0; run < 3; run++) {
        OK(staunch_conn_query_send_ex, c, "SELECT ? + 2, CONCAT('x', ?), SLEEP(0.1)", p, 2, 0, &fd);
        CHECKF(fd >= 0, "wait_fd %d", fd);
        FAILS(STAUNCH_CONN_BUSY, "staunch_conn_query_recv", staunch_conn_execute, c, "SELECT 1",
              NULL, 0, NULL, NULL);
        uint64_t took = wait_readable(fd, 5000);
        CHECKF(took != UINT64_MAX && took >= 50, "run %d: readable after %llu ms", run,
               (unsigned long long)took);
        OK(staunch_conn_query_recv, c, 0, &rows);
        OK(staunch_rows_fetch, rows, v, 3, &n);
        /* Prepared: the binary protocol's integer, not text. */
        CHECKF(n == 1 && v[0].type == STAUNCH_COLUMN_INT && v[0].i64 == 42, "run %d: %zu cells",
               run, n);
        CHECK(v[1].len == 4 && memcmp(v[1].ptr, "xtwo", 4) == 0);
        staunch_rows_free(rows);
        rows = NULL;
    }
    /* Interpolated on request: text. */
    OK(staunch_conn_query_send_ex, c, "SELECT ? + 2", p, 1, STAUNCH_QUERY_INTERPOLATE, &fd);
    OK(staunch_conn_query_recv, c, 0, &rows);
    OK(staunch_rows_fetch, rows, v, 1, &n);
    CHECK(n == 1 && v[0].i64 == 42);
    staunch_rows_free(rows);
    rows = NULL;
    /* Streamed: every row, then the connection is free. */
    staunch_param top = staunch_param_i64(3000);
    OK(staunch_conn_query_send_ex, c, "SELECT seq FROM seq_1_to_5000 WHERE seq <= ?", &top, 1, 0,
       &fd);
    OK(staunch_conn_query_recv, c, STAUNCH_QUERY_STREAM, &rows);
    uint64_t count = 0;
    for (;;) {
        OK(staunch_rows_fetch, rows, v, 1, &n);
        if (n == 0) {
            break;
        }
        count++;
    }
    CHECKF(count == 3000, "%llu rows", (unsigned long long)count);
    staunch_rows_free(rows);
    rows = NULL;
    /* A statement the server refuses to prepare fails in the send; one that
     * fails when run fails at recv; the connection stays usable. */
    FAILS(STAUNCH_SERVER_ERROR, "no_such_table_qa", staunch_conn_query_send_ex, c,
          "SELECT * FROM no_such_table_qa WHERE a = ?", p, 1, 0, &fd);
    OK(staunch_conn_query_send_ex, c, "SELECT ? + (SELECT 1 UNION SELECT 2)", p, 1, 0, &fd);
    FAILS(STAUNCH_SERVER_ERROR, "more than 1 row", staunch_conn_query_recv, c, 0, &rows);
    CHECK(rows == NULL && !staunch_conn_is_broken(c));
    CHECK(query_i64(c, "SELECT 6") == 6);
    /* Sent and never received: the release reads the answer off. */
    uint64_t id = staunch_conn_id(c);
    OK(staunch_conn_query_send_ex, c, "SELECT ?, SLEEP(0.1)", p, 1, 0, &fd);
    staunch_conn_free(c);
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(staunch_conn_id(c) == id);
    CHECK(query_i64(c, "SELECT 7") == 7);
    staunch_conn_free(c);
}

/* The server frozen while the answer is awaited: the liveness check cuts
 * the socket (readable) within its bound, recv says the server stopped
 * answering. */
static void frozen(void) {
    char url[512];
    tk_start(url, sizeof url);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, url, &pool);
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    int fd = -1;
    OK(staunch_conn_query_send, c, "SELECT SLEEP(3)", 0, &fd);
    CHECK(fd >= 0);
    sleep_ms(1000);
    tk_cmd("freeze");
    uint64_t took = wait_readable(fd, 12000 + (unsigned)slack_ms());
    tk_cmd("thaw");
    CHECKF(took != UINT64_MAX, "not readable 12 s after the freeze");
    CHECKF(took <= 9000 + slack_ms() + 500, "readable %llu ms after the freeze",
           (unsigned long long)took);
    staunch_rows *rows = NULL;
    FAILS(STAUNCH_SERVER_UNRESPONSIVE, "stopped answering", staunch_conn_query_recv, c, 0, &rows);
    CHECK(staunch_conn_is_broken(c));
    staunch_conn_free(c);
    staunch_pool_free(pool);
    tk_quit();
}

int main(void) {
    staunch_pool *pool = open_pool("max_size=2");
    basics(pool);
    with_params(pool);
    staunch_pool_free(pool);
    frozen();
    printf("query_apart: ok\n");
    return 0;
}
