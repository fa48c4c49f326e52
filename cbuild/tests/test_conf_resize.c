/* conf_resize: the pool's size changed while it runs, and suspend/resume.
 * - bad sizes fail with STAUNCH_INVALID_CONFIG naming the knob;
 * - shrinking while every connection is borrowed breaks none of them, and
 *   the total comes down as they are released;
 * - growing while callers wait gives them connections;
 * - a suspended pool makes a borrow wait (within its timeout) until resume. */
#include "util.h"

#include <pthread.h>

typedef struct {
    staunch_pool *pool;
    uint32_t timeout_ms;
    staunch_status st;
    staunch_conn *conn;
    uint64_t done_ms;
} waiter;

static void *wait_get(void *arg) {
    waiter *w = arg;
    staunch_error *err = NULL;
    w->st = staunch_pool_get(w->pool, w->timeout_ms, &w->conn, &err);
    w->done_ms = now_ms();
    staunch_error_free(err);
    return NULL;
}

static staunch_stats stats(staunch_pool *pool) {
    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    return s;
}

/* Waits (at most 5 s + slack) until the pool's stats satisfy `cond`. */
#define EVENTUALLY(pool, cond)                                                 \
    do {                                                                       \
        uint64_t until_ = now_ms() + 5000 + slack_ms();                        \
        staunch_stats s;                                                       \
        while (s = stats(pool), !(cond)) {                                     \
            CHECKF(now_ms() < until_, "timed out waiting for %s (total=%llu)", \
                   #cond, (unsigned long long)s.total);                        \
            sleep_ms(5);                                                       \
        }                                                                      \
    } while (0)

int main(void) {
    staunch_pool *pool = open_pool("max_size=4&max_size_cap=8&min_idle=0");

    /* Bad values: refused, naming the knob, nothing changed. */
    FAILS(STAUNCH_INVALID_CONFIG, "max_size must be between 1 and max_size_cap (8), got 0",
          staunch_pool_set_max_size, pool, 0);
    FAILS(STAUNCH_INVALID_CONFIG, "got 9", staunch_pool_set_max_size, pool, 9);
    FAILS(STAUNCH_INVALID_CONFIG, "min_idle (5) must not exceed max_size (4)",
          staunch_pool_set_min_idle, pool, 5);
    FAILS(STAUNCH_NULL_ARGUMENT, "pool", staunch_pool_set_max_size, NULL, 2);
    FAILS(STAUNCH_NULL_ARGUMENT, "pool", staunch_pool_suspend, NULL);
    CHECK(stats(pool).max_size == 4);

    /* Shrink while all four are borrowed. */
    staunch_conn *held[4];
    for (int i = 0; i < 4; i++) OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &held[i]);
    OK(staunch_pool_set_max_size, pool, 2);
    staunch_stats s = stats(pool);
    CHECKF(s.max_size == 2 && s.total == 4 && s.active == 4, "max_size=%llu total=%llu",
           (unsigned long long)s.max_size, (unsigned long long)s.total);
    for (int i = 0; i < 4; i++) CHECK(query_i64(held[i], "SELECT 1") == 1);
    staunch_conn_free(held[3]);
    staunch_conn_free(held[2]);
    s = stats(pool);
    CHECKF(s.total == 2 && s.closed_evicted == 2, "total=%llu evicted=%llu",
           (unsigned long long)s.total, (unsigned long long)s.closed_evicted);
    staunch_conn_free(held[1]);
    staunch_conn_free(held[0]);
    CHECK(stats(pool).total == 2);

    /* Grow while two callers wait behind one borrowed connection. */
    OK(staunch_pool_set_max_size, pool, 1);
    EVENTUALLY(pool, s.total == 1);
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &held[0]);
    waiter w[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        w[i] = (waiter){.pool = pool, .timeout_ms = 10000};
        CHECK(pthread_create(&t[i], NULL, wait_get, &w[i]) == 0);
    }
    EVENTUALLY(pool, s.waiting == 2);
    uint64_t grown_at = now_ms();
    OK(staunch_pool_set_max_size, pool, 3);
    for (int i = 0; i < 2; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        CHECKF(w[i].st == STAUNCH_OK, "waiter %d got %s", i, staunch_status_name(w[i].st));
        CHECKF(w[i].done_ms - grown_at < 3000 + slack_ms(), "waiter %d served after %llu ms", i,
               (unsigned long long)(w[i].done_ms - grown_at));
        CHECK(query_i64(w[i].conn, "SELECT 2") == 2);
        staunch_conn_free(w[i].conn);
    }
    staunch_conn_free(held[0]);
    CHECK(stats(pool).total == 3);

    /* Suspend: a borrow waits, bounded by its timeout, until resume. */
    OK(staunch_pool_suspend, pool);
    OK(staunch_pool_suspend, pool); /* idempotent */
    staunch_conn *none = NULL;
    uint64_t t0 = now_ms();
    FAILS(STAUNCH_POOL_EXHAUSTED, NULL, staunch_pool_get, pool, 100, &none);
    uint64_t took = now_ms() - t0;
    CHECKF(took >= 90 && took <= 100 + slack_ms(), "suspended get took %llu ms",
           (unsigned long long)took);
    CHECK(none == NULL);
    OK(staunch_pool_try_get, pool, &none);
    CHECK(none == NULL);
    w[0] = (waiter){.pool = pool, .timeout_ms = 10000};
    CHECK(pthread_create(&t[0], NULL, wait_get, &w[0]) == 0);
    sleep_ms(150);
    CHECK(w[0].done_ms == 0); /* still waiting */
    uint64_t resumed_at = now_ms();
    OK(staunch_pool_resume, pool);
    CHECK(pthread_join(t[0], NULL) == 0);
    CHECKF(w[0].st == STAUNCH_OK, "got %s", staunch_status_name(w[0].st));
    CHECKF(w[0].done_ms - resumed_at <= 100 + slack_ms(), "served %llu ms after resume",
           (unsigned long long)(w[0].done_ms - resumed_at));
    staunch_conn_free(w[0].conn);
    OK(staunch_pool_resume, pool); /* idempotent */

    printf("conf_resize: shrink, grow, suspend/resume ok\n");
    staunch_pool_free(pool);
    return 0;
}
