/* staunch_rows_fetch_ready never waits: on a buffered row set it reads
 * every row (never "waits"); on a streamed text answer (read by the
 * protocol layer) it reads the rows that have arrived and says when the next
 * has not, and it keeps returning at once while the server is frozen
 * (SIGSTOP), where staunch_rows_fetch would wait. staunch_rows_wait_fd
 * gives the socket to wait on then (not readable while the server is
 * frozen, readable when it sends again), and a reader that waits only on
 * that socket reads every row; -1 where a socket would not do. Alternating
 * the ways reads every row once, in order. And staunch_rows_fetch's wait on
 * a frozen server is bounded, on a streamed text answer and a prepared one
 * (which the mysql crate reads). The server comes from the test kit's
 * command line (util.c's tk_*). */
#include <poll.h>

#include "util.h"

/* Whether fd becomes readable within ms. */
static bool readable(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, ms);
    CHECKF(n >= 0, "poll: %d", n);
    return n == 1;
}

enum { CAP = 4096 };

int main(void) {
    char url[512], full[700];
    tk_start(url, sizeof url);
    url_with(full, sizeof full, url, "max_size=1");
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, full, &pool);
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    static staunch_value vals[CAP];
    size_t got = 0;
    bool waits = true;

    /* Buffered: all of it, then the end; never "waits". */
    staunch_rows *rows = NULL;
    OK(staunch_conn_query_ex, c, "SELECT seq FROM seq_1_to_10", NULL, 0, STAUNCH_QUERY_TEXT, &rows);
    OK(staunch_rows_fetch_ready, rows, vals, CAP, &got, &waits);
    CHECKF(got == 10 && !waits, "buffered: got %zu, waits %d", got, waits);
    CHECK(vals[0].u64 == 1 && vals[9].u64 == 10);
    OK(staunch_rows_fetch_ready, rows, vals, CAP, &got, &waits);
    CHECK(got == 0 && !waits);
    int fd = 0;
    uint64_t id = 1;
    OK(staunch_rows_wait_fd, rows, &fd, &id);
    CHECKF(fd == -1 && id == 0, "buffered: wait fd %d, connection %llu", fd, (unsigned long long)id);
    staunch_rows_free(rows);

    /* Bad input: named, nothing written. */
    {
        staunch_error *err = NULL;
        CHECK(staunch_rows_wait_fd(NULL, &fd, &id, &err) == STAUNCH_NULL_ARGUMENT);
        CHECKF(strstr(staunch_error_message(err), "rows") != NULL, "%s", staunch_error_message(err));
        staunch_error_free(err);
    }

    /* Streamed, larger than what one read brings; the server pauses at row
     * 2000 (SLEEP), so the rows cannot all have arrived when the reader
     * first runs out of them. */
    OK(staunch_conn_set_timeout, c, 3000);
    OK(staunch_conn_query_ex, c, "SELECT seq FROM seq_1_to_300000 WHERE IF(seq = 2000, SLEEP(1), 0) = 0", NULL, 0,
       STAUNCH_QUERY_TEXT | STAUNCH_QUERY_STREAM, &rows);
    int64_t want = 1;
    size_t ready = 0;
    /* What arrived with the answer's start. */
    for (;;) {
        OK(staunch_rows_fetch_ready, rows, vals, CAP, &got, &waits);
        for (size_t i = 0; i < got; i++, want++)
            CHECKF(vals[i].u64 == (uint64_t)want, "row %lld has %llu", (long long)want, (unsigned long long)vals[i].u64);
        ready += got;
        if (got == 0) break;
    }
    CHECKF(waits, "stopped without waiting after %zu rows", ready);
    CHECKF(ready < 300000, "all %zu rows were there", ready);

    /* Frozen: the server sends nothing more; a ready fetch still returns at
     * once (a waiting one would wait until the statement was cut, 4 s). */
    tk_cmd("freeze");
    uint64_t t0 = now_ms();
    for (int k = 0; k < 100; k++) {
        OK(staunch_rows_fetch_ready, rows, vals, CAP, &got, &waits);
        CHECKF(got == 0 && waits, "frozen: got %zu, waits %d", got, waits);
    }
    uint64_t took = now_ms() - t0;
    CHECKF(took < 1000 + slack_ms(), "100 ready fetches on a frozen server took %llu ms",
           (unsigned long long)took);
    /* The socket to wait on: this connection's, quiet while the server is
     * frozen, readable once it sends again. */
    OK(staunch_rows_wait_fd, rows, &fd, &id);
    CHECKF(fd >= 0 && id == staunch_conn_id(c), "streamed: wait fd %d, connection %llu (is %llu)", fd,
           (unsigned long long)id, (unsigned long long)staunch_conn_id(c));
    CHECK(!readable(fd, 200));
    tk_cmd("thaw");
    CHECK(readable(fd, 5000 + (int)slack_ms()));

    /* Half the rest waiting only on that socket (never in a staunch call),
     * then the rest waiting in staunch_rows_fetch where needed. */
    int polls = 0;
    while (want < 150000) {
        OK(staunch_rows_fetch_ready, rows, vals, CAP, &got, &waits);
        for (size_t i = 0; i < got; i++, want++)
            CHECKF(vals[i].u64 == (uint64_t)want, "row %lld has %llu", (long long)want, (unsigned long long)vals[i].u64);
        if (got == 0) {
            CHECKF(waits, "ended after %lld rows", (long long)(want - 1));
            OK(staunch_rows_wait_fd, rows, &fd, &id);
            CHECKF(fd >= 0, "no socket to wait on after %lld rows", (long long)(want - 1));
            CHECKF(readable(fd, 5000 + (int)slack_ms()), "the socket stayed quiet after %lld rows",
                   (long long)(want - 1));
            polls++;
        }
    }
    for (;;) {
        OK(staunch_rows_fetch_ready, rows, vals, CAP, &got, &waits);
        if (got == 0 && waits) OK(staunch_rows_fetch, rows, vals, CAP, &got);
        if (got == 0) break;
        for (size_t i = 0; i < got; i++, want++)
            CHECKF(vals[i].u64 == (uint64_t)want, "row %lld has %llu", (long long)want, (unsigned long long)vals[i].u64);
    }
    CHECKF(want == 300001, "read %lld rows", (long long)(want - 1));
    printf("fetch_ready: 150,000 rows read waiting only on the socket (%d waits)\n", polls);
    OK(staunch_rows_wait_fd, rows, &fd, &id);
    CHECKF(fd == -1 && id == 0, "read to the end: wait fd %d", fd);
    CHECK(!staunch_conn_is_broken(c));
    CHECK(query_i64(c, "SELECT 5") == 5);
    staunch_rows_free(rows);

    /* No socket to wait on: a prepared statement's stream (the crate reads
     * it), and the rest of a multi-result answer once its first set ended
     * (that is read whole, by a fetch that waits). */
    OK(staunch_conn_query_ex, c, "SELECT seq FROM seq_1_to_10", NULL, 0, STAUNCH_QUERY_PREPARE | STAUNCH_QUERY_STREAM,
       &rows);
    OK(staunch_rows_wait_fd, rows, &fd, &id);
    CHECKF(fd == -1, "prepared: wait fd %d", fd);
    staunch_rows_free(rows);
    OK(staunch_conn_query_ex, c, "SELECT 1; SELECT SLEEP(0.3), 2", NULL, 0, STAUNCH_QUERY_TEXT | STAUNCH_QUERY_STREAM,
       &rows);
    for (;;) {
        OK(staunch_rows_fetch_ready, rows, vals, CAP, &got, &waits);
        if (got == 0) break;
    }
    CHECK(waits);
    OK(staunch_rows_wait_fd, rows, &fd, &id);
    CHECKF(fd == -1, "the first set ended: wait fd %d", fd);
    OK(staunch_rows_fetch, rows, vals, CAP, &got);
    CHECK(got == 0);
    bool more = false;
    OK(staunch_rows_next_result, rows, &more);
    CHECK(more);
    OK(staunch_rows_fetch, rows, vals, CAP, &got);
    CHECK(got == 1 && vals[1].i64 == 2);
    staunch_rows_free(rows);
    CHECK(query_i64(c, "SELECT 8") == 8);

    /* A streamed answer's clock runs while a read waits for the server, not
     * while the reader takes its time (tests/wire.rs); a wait on a frozen
     * server is still bounded by the limit + 1 s of grace, then the
     * connection is cut off (broken), and the pool's next one works. The
     * same for a text answer (the protocol layer reads it) and a prepared
     * one (the mysql crate does). */
    static const struct {
        const char *name;
        uint32_t flags;
    } ways[] = {
        {"text", STAUNCH_QUERY_TEXT | STAUNCH_QUERY_STREAM},
        {"prepared", STAUNCH_QUERY_PREPARE | STAUNCH_QUERY_STREAM},
    };
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        if (w > 0) OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
        OK(staunch_conn_set_timeout, c, 500);
        CHECK(query_i64(c, "SELECT 6") == 6);
        OK(staunch_conn_query_ex, c, "SELECT seq FROM seq_1_to_3000000", NULL, 0, ways[w].flags, &rows);
        OK(staunch_rows_fetch, rows, vals, CAP, &got);
        CHECK(got > 0);
        tk_cmd("freeze");
        /* The rows already in the socket's buffers still read; the bound is
         * on the fetch that waits (timed alone: under memcheck, reading the
         * buffered rows through the crate took seconds once). */
        uint64_t frozen = now_ms();
        staunch_status st;
        staunch_error *err = NULL;
        do {
            t0 = now_ms();
            st = staunch_rows_fetch(rows, vals, CAP, &got, &err);
        } while (st == STAUNCH_OK && got > 0 && now_ms() - frozen < 30000);
        took = now_ms() - t0;
        CHECKF(st == STAUNCH_STATEMENT_TIMEOUT || st == STAUNCH_SERVER_UNRESPONSIVE,
               "%s: a wait on a frozen server: status %d (%s) after %llu ms", ways[w].name, (int)st,
               err != NULL ? staunch_error_message(err) : "no error", (unsigned long long)took);
        /* The statement's watchdog: 1.5 s from the wait's start. In the
         * plain pass (300 ms of slack) the bound, 2.4 s, also tells it from
         * the socket's own per-read bound (2.5 s); under ASan and memcheck
         * the slack is theirs. */
        CHECKF(took < 1500 + 600 + slack_ms(), "%s: cut after %llu ms", ways[w].name, (unsigned long long)took);
        printf("fetch_ready: %s: a wait on a frozen server cut after %llu ms\n", ways[w].name,
               (unsigned long long)took);
        staunch_error_free(err);
        staunch_rows_free(rows);
        CHECK(staunch_conn_is_broken(c));
        staunch_conn_free(c);
        tk_cmd("thaw");
    }
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(query_i64(c, "SELECT 7") == 7);
    staunch_conn_free(c);
    staunch_pool_free(pool);
    tk_quit();
    printf("fetch_ready: ok\n");
    return 0;
}
