/* conf_frozen_statement: at the defaults (no statement limit), the server
 * frozen (SIGSTOP) 1 s into SELECT SLEEP(3) fails within the liveness bound
 * (liveness_threshold 5 s + connect_timeout 3 s + validation_timeout 1 s)
 * with STAUNCH_SERVER_UNRESPONSIVE and a message that says the server
 * stopped answering; the handle is then broken, and the pool serves after
 * the thaw. Meanwhile SELECT SLEEP(25) on a healthy server (the run's
 * shared one) returns its answer. The frozen server is the test's own
 * (util.c's tk_*). */
#include "util.h"

#include <pthread.h>

static void *long_statement(void *arg) {
    int64_t *out = arg;
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    *out = query_i64(c, "SELECT 25 + SLEEP(25)");
    staunch_conn_free(c);
    staunch_pool_free(pool);
    return NULL;
}

static uint64_t frozen_at;

static void *freezer(void *arg) {
    (void)arg;
    sleep_ms(1000);
    tk_cmd("freeze");
    frozen_at = now_ms();
    return NULL;
}

int main(void) {
    char url[512];
    tk_start(url, sizeof url);
    int64_t long_answer = 0;
    pthread_t healthy, f;
    CHECK(pthread_create(&healthy, NULL, long_statement, &long_answer) == 0);

    staunch_pool *pool = NULL;
    OK(staunch_pool_open, url, &pool);
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(pthread_create(&f, NULL, freezer, NULL) == 0);
    staunch_error *err = NULL;
    staunch_status st = staunch_conn_execute(c, "SELECT SLEEP(3)", NULL, 0, NULL, NULL, &err);
    uint64_t returned = now_ms();
    CHECK(pthread_join(f, NULL) == 0);
    tk_cmd("thaw");
    CHECKF(st == STAUNCH_SERVER_UNRESPONSIVE, "status %s: %s", staunch_status_name(st),
           err ? staunch_error_message(err) : "");
    CHECKF(strstr(staunch_error_message(err), "the server stopped answering during this statement") !=
               NULL,
           "message: %s", staunch_error_message(err));
    staunch_error_free(err);
    CHECKF(returned - frozen_at <= 9000 + slack_ms() + 500, "returned %llu ms after the freeze",
           (unsigned long long)(returned - frozen_at));
    CHECK(staunch_conn_is_broken(c));
    FAILS(STAUNCH_BROKEN, NULL, staunch_conn_execute, c, "SELECT 1", NULL, 0, NULL, NULL);
    staunch_conn_free(c);

    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(query_i64(c, "SELECT 1") == 1);
    staunch_conn_free(c);
    staunch_pool_free(pool);

    CHECK(pthread_join(healthy, NULL) == 0);
    CHECKF(long_answer == 25, "SELECT SLEEP(25) answered %lld", (long long)long_answer);
    tk_quit();
    printf("conf_frozen_statement: ok\n");
    return 0;
}
