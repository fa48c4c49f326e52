/* conf_threads: 8 threads x 500 checkouts on a pool of 4, each query tagged
 * with its own value: every answer carries its own tag, no error, and the
 * stats end with active = 0. (STAUNCH_TEST_THREAD_ROUNDS lowers the 500 for
 * the valgrind pass, which runs threads one at a time.) */
#include "util.h"

#include <pthread.h>
#include <stdatomic.h>

#define THREADS 8

static staunch_pool *pool;
static atomic_int errors;
static int64_t rounds = 500;

static void *worker(void *arg) {
    int64_t me = (int64_t)(intptr_t)arg;
    for (int64_t i = 0; i < rounds; i++) {
        int64_t tag = me * 1000000 + i;
        staunch_conn *c = NULL;
        staunch_error *err = NULL;
        if (staunch_pool_get(pool, STAUNCH_TIMEOUT_DEFAULT, &c, &err) != STAUNCH_OK) {
            fprintf(stderr, "thread %d: get: %s\n", (int)me, staunch_error_message(err));
            staunch_error_free(err);
            atomic_fetch_add(&errors, 1);
            continue;
        }
        staunch_param p = staunch_param_i64(tag);
        staunch_rows *rows = NULL;
        int64_t got = -1;
        bool has = false;
        if (staunch_conn_query(c, "SELECT ?", &p, 1, &rows, &err) != STAUNCH_OK ||
            staunch_rows_next(rows, &has, &err) != STAUNCH_OK || !has ||
            staunch_rows_get_i64(rows, 0, &got, &err) != STAUNCH_OK || got != tag) {
            fprintf(stderr, "thread %d: round %d: tag %lld, got %lld: %s\n", (int)me, (int)i,
                    (long long)tag, (long long)got, staunch_error_message(err));
            staunch_error_free(err);
            atomic_fetch_add(&errors, 1);
        }
        staunch_rows_free(rows);
        staunch_conn_free(c);
    }
    return NULL;
}

int main(void) {
    const char *r = getenv("STAUNCH_TEST_THREAD_ROUNDS");
    if (r != NULL && atoi(r) > 0) rounds = atoi(r);
    pool = open_pool("max_size=4");
    atomic_init(&errors, 0);
    pthread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(i + 1)) == 0);
    for (int i = 0; i < THREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);
    CHECKF(atomic_load(&errors) == 0, "%d errors", atomic_load(&errors));

    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    CHECKF(s.active == 0, "active = %llu", (unsigned long long)s.active);
    CHECK(s.total <= 4 && s.waiting == 0);
    CHECKF(s.acquired == (uint64_t)(THREADS * rounds), "acquired = %llu", (unsigned long long)s.acquired);
    CHECK(s.acquire_timeouts == 0 && s.violations == 0);
    printf("conf_threads: %d checkouts, %llu connections, acquire p99 %llu us\n",
           (int)(THREADS * rounds), (unsigned long long)s.created,
           (unsigned long long)s.acquire_p99_us);
    staunch_pool_free(pool);
    return 0;
}
