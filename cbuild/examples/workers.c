/* Worker threads sharing one pool: each borrows a connection per job, runs
 * it, and gives it back. A pool is thread-safe; a connection belongs to one
 * thread at a time.
 *
 *   example_workers [URL]     (URL as for example_quickstart; exits 77 without)
 */
#define _POSIX_C_SOURCE 200809L
#include <staunch.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 6
#define JOBS 50

static staunch_pool *pool;

static void *worker(void *arg) {
    int64_t me = (int64_t)(intptr_t)arg;
    int64_t sum = 0;
    for (int64_t job = 0; job < JOBS; job++) {
        staunch_error *err = NULL;
        staunch_conn *conn = NULL;
        if (staunch_pool_get(pool, STAUNCH_TIMEOUT_DEFAULT, &conn, &err) != STAUNCH_OK) {
            /* Exhausted or unreachable: the message says which and why. */
            fprintf(stderr, "worker %" PRId64 ": %s\n", me, staunch_error_message(err));
            staunch_error_free(err);
            continue;
        }
        staunch_param p[2] = {staunch_param_i64(me), staunch_param_i64(job)};
        staunch_rows *rows = NULL;
        bool has = false;
        int64_t v = 0;
        if (staunch_conn_query(conn, "SELECT ? * 1000 + ?", p, 2, &rows, &err) == STAUNCH_OK &&
            staunch_rows_next(rows, &has, &err) == STAUNCH_OK && has &&
            staunch_rows_get_i64(rows, 0, &v, &err) == STAUNCH_OK) {
            sum += v;
        } else {
            fprintf(stderr, "worker %" PRId64 ": %s\n", me, staunch_error_message(err));
            staunch_error_free(err);
        }
        staunch_rows_free(rows);
        staunch_conn_free(conn); /* back to the pool for the next job */
    }
    printf("worker %" PRId64 " done, sum %" PRId64 "\n", me, sum);
    return NULL;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : getenv("STAUNCH_URL");
    if (url == NULL) url = getenv("STAUNCH_TEST_URL");
    if (url == NULL) {
        fprintf(stderr, "usage: %s mysql://user:pass@host:port/db\n", argv[0]);
        return 77;
    }
    staunch_error *err = NULL;
    staunch_options *opts = NULL;
    if (staunch_options_new(&opts, &err) != STAUNCH_OK ||
        staunch_options_set_url(opts, url, &err) != STAUNCH_OK ||
        staunch_options_set(opts, "max_size", "3", &err) != STAUNCH_OK ||
        staunch_pool_open_options(opts, &pool, &err) != STAUNCH_OK) {
        fprintf(stderr, "open: %s\n", staunch_error_message(err));
        staunch_error_free(err);
        staunch_options_free(opts);
        return 1;
    }
    staunch_options_free(opts); /* the pool keeps what it needs */

    pthread_t t[WORKERS];
    for (intptr_t i = 0; i < WORKERS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < WORKERS; i++) pthread_join(t[i], NULL);

    staunch_stats s = {.size = sizeof(staunch_stats)};
    staunch_pool_stats(pool, &s, NULL);
    printf("%" PRIu64 " gets on %" PRIu64 " connections; acquire p99 %" PRIu64 " us\n", s.acquired,
           s.created, s.acquire_p99_us);
    staunch_pool_free(pool);
    return s.acquired == WORKERS * JOBS && s.active == 0 ? 0 : 1;
}
