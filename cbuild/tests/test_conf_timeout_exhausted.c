/* conf_timeout_exhausted: a pool of 1, the connection held, a get with a
 * 200 ms timeout fails within about 200 ms, saying the pool is exhausted. */
#include "util.h"

int main(void) {
    staunch_pool *pool = open_pool("max_size=1");
    staunch_conn *held = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &held);

    staunch_conn *other = (staunch_conn *)&held; /* sentinel: must stay untouched */
    uint64_t t0 = now_ms();
    staunch_error *err = NULL;
    staunch_status st = staunch_pool_get(pool, 200, &other, &err);
    uint64_t took = now_ms() - t0;
    CHECKF(st == STAUNCH_POOL_EXHAUSTED, "got %s: %s", staunch_status_name(st),
           staunch_error_message(err));
    CHECK(other == (staunch_conn *)&held);
    const char *msg = staunch_error_message(err);
    CHECKF(strstr(msg, "exhausted") != NULL, "message: %s", msg);
    CHECKF(strstr(msg, "max_size=1") != NULL, "message: %s", msg);
    CHECKF(took >= 190 && took <= 200 + slack_ms(), "took %llu ms", (unsigned long long)took);
    printf("conf_timeout_exhausted: %llu ms: %s\n", (unsigned long long)took, msg);
    staunch_error_free(err);

    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    CHECK(s.acquire_timeouts == 1 && s.active == 1);

    /* Released: the next get succeeds at once. */
    staunch_conn_free(held);
    OK(staunch_pool_get, pool, 200, &other);
    staunch_conn_free(other);
    staunch_pool_free(pool);
    return 0;
}
