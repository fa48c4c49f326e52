/* Nanoseconds per staunch_pool_get + staunch_conn_free cycle on an idle,
 * warm pool (one thread, one connection always idle: the pool's fast path
 * plus the C ABI's handle allocation). Prints one line:
 *
 *   c_abi_get_release_ns=<n>
 *
 *   bench_get_release [URL] [ITERATIONS]    (URL as for the examples) */
#define _POSIX_C_SOURCE 200809L
#include <staunch.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cycle(staunch_pool *pool) {
    staunch_conn *c = NULL;
    staunch_error *err = NULL;
    if (staunch_pool_get(pool, 1000, &c, &err) != STAUNCH_OK) {
        fprintf(stderr, "get: %s\n", staunch_error_message(err));
        staunch_error_free(err);
        return 1;
    }
    staunch_conn_free(c);
    return 0;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : getenv("STAUNCH_URL");
    if (url == NULL) url = getenv("STAUNCH_TEST_URL");
    if (url == NULL) {
        fprintf(stderr, "usage: %s URL [ITERATIONS]\n", argv[0]);
        return 77;
    }
    long iters = argc > 2 ? atol(argv[2]) : 1000000;
    if (iters <= 0) iters = 1000000;
    char full[1024];
    /* A long bypass window: no validation round trip inside the loop. */
    snprintf(full, sizeof full, "%s%calive_bypass_window=1h&max_size=2", url,
             strchr(url, '?') ? '&' : '?');
    staunch_pool *pool = NULL;
    staunch_error *err = NULL;
    if (staunch_pool_open(full, &pool, &err) != STAUNCH_OK) {
        fprintf(stderr, "open: %s\n", staunch_error_message(err));
        staunch_error_free(err);
        return 1;
    }
    for (long i = 0; i < 10000; i++) /* warm: connect, caches, branch predictors */
        if (cycle(pool)) return 1;
    uint64_t best = UINT64_MAX;
    for (int round = 0; round < 5; round++) { /* best of 5 */
        uint64_t t0 = now_ns();
        for (long i = 0; i < iters / 5; i++)
            if (cycle(pool)) return 1;
        uint64_t per = (now_ns() - t0) / (uint64_t)(iters / 5);
        if (per < best) best = per;
    }
    printf("c_abi_get_release_ns=%llu\n", (unsigned long long)best);
    staunch_pool_free(pool);
    return 0;
}
