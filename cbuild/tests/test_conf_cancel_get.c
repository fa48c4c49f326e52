/* conf_cancel_get: a get waiting on a full pool ends with STAUNCH_CANCELLED
 * promptly when its token is cancelled from another thread; the pool is left
 * as if it had never waited. */
#include "util.h"

#include <pthread.h>

typedef struct {
    staunch_pool *pool;
    staunch_cancel_token *token;
    staunch_status st;
    staunch_status err_st;
    staunch_conn *conn;
    uint64_t done_ms;
} waiter;

static void *wait_get(void *arg) {
    waiter *w = arg;
    staunch_error *err = NULL;
    w->st = staunch_pool_get_cancellable(w->pool, 10000, w->token, &w->conn, &err);
    w->done_ms = now_ms();
    w->err_st = err != NULL ? staunch_error_status(err) : STAUNCH_OK;
    staunch_error_free(err);
    return NULL;
}

int main(void) {
    staunch_pool *pool = open_pool("max_size=1");
    staunch_conn *held = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &held);

    staunch_cancel_token *token = NULL;
    OK(staunch_cancel_token_new, &token);
    CHECK(token != NULL);
    CHECK(!staunch_cancel_token_is_cancelled(token));
    CHECK(!staunch_cancel_token_is_cancelled(NULL));

    waiter w = {.pool = pool, .token = token, .st = STAUNCH_OK};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, wait_get, &w) == 0);
    sleep_ms(200);
    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    CHECKF(s.waiting == 1, "waiting = %llu before the cancel", (unsigned long long)s.waiting);
    uint64_t cancel_at = now_ms();
    OK(staunch_cancel_token_cancel, token);
    CHECK(staunch_cancel_token_is_cancelled(token));
    CHECK(pthread_join(t, NULL) == 0);
    CHECKF(w.st == STAUNCH_CANCELLED, "waiter got %s", staunch_status_name(w.st));
    CHECK(w.err_st == STAUNCH_CANCELLED);
    CHECK(w.conn == NULL);
    uint64_t took = w.done_ms - cancel_at;
    CHECKF(took <= 100 + slack_ms(), "cancel took %llu ms", (unsigned long long)took);
    OK(staunch_cancel_token_cancel, token); /* idempotent */

    staunch_stats s2 = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s2);
    CHECKF(s2.waiting == 0, "waiting = %llu", (unsigned long long)s2.waiting);
    CHECKF(s2.acquires_cancelled == 1, "acquires_cancelled = %llu",
           (unsigned long long)s2.acquires_cancelled);
    CHECK(query_i64(held, "SELECT 1") == 1);

    /* An already-cancelled token fails at once, even with a connection idle. */
    staunch_conn_free(held);
    held = NULL;
    staunch_conn *c = NULL;
    uint64_t t0 = now_ms();
    FAILS(STAUNCH_CANCELLED, NULL, staunch_pool_get_cancellable, pool, 10000, token, &c);
    CHECK(now_ms() - t0 <= 100 + slack_ms());
    CHECK(c == NULL);
    staunch_cancel_token_free(token);

    /* A NULL token: a plain get. */
    OK(staunch_pool_get_cancellable, pool, STAUNCH_TIMEOUT_DEFAULT, NULL, &c);
    CHECK(c != NULL);
    CHECK(query_i64(c, "SELECT 1") == 1);
    /* ...which times out as staunch_pool_get does when the pool is full. */
    staunch_conn *c2 = NULL;
    FAILS(STAUNCH_POOL_EXHAUSTED, NULL, staunch_pool_get_cancellable, pool, 100, NULL, &c2);
    CHECK(c2 == NULL);
    staunch_conn_free(c);

    staunch_cancel_token_free(NULL); /* no-op */

    staunch_stats s3 = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s3);
    CHECK(s3.waiting == 0);

    staunch_pool_free(pool);
    printf("conf_cancel_get: ok\n");
    return 0;
}
