/* A statement deadline on a frozen server (SIGSTOP): a statement and a ping
 * each fail with STAUNCH_STATEMENT_TIMEOUT within the limit + 1 s of grace
 * (the pool cuts the socket: the server cannot end them), the handles are
 * then broken, and once the server is thawed the pool hands out working
 * connections again. The server comes from the test kit's command line
 * (`staunch-testkit server`, $STAUNCH_TESTKIT), which the test drives over
 * its stdin/stdout as the bindings' tests do (util.c's tk_*). */
#include "util.h"

int main(void) {
    char url[512], full[700];
    tk_start(url, sizeof url);
    url_with(full, sizeof full, url, "max_size=3&connect_timeout=1s&connection_timeout=2s");
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, full, &pool);
    staunch_conn *a = NULL, *b = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &a);
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &b);
    /* The limits are set, and in force on the server, before the freeze
     * (changing one costs a SET on the next statement). */
    OK(staunch_conn_set_timeout, a, 300);
    OK(staunch_conn_set_timeout, b, 300);
    CHECK(query_i64(a, "SELECT 1") == 1);
    CHECK(query_i64(b, "SELECT 2") == 2);

    tk_cmd("freeze");
    uint64_t t0 = now_ms();
    FAILS(STAUNCH_STATEMENT_TIMEOUT, NULL, staunch_conn_execute, a, "SELECT 3", NULL, 0, NULL,
          NULL);
    uint64_t took = now_ms() - t0;
    CHECKF(took >= 1200 && took < 2500 + slack_ms(), "statement cut after %llu ms",
           (unsigned long long)took);
    CHECK(staunch_conn_is_broken(a));
    FAILS(STAUNCH_BROKEN, NULL, staunch_conn_execute, a, "SELECT 4", NULL, 0, NULL, NULL);

    t0 = now_ms();
    FAILS(STAUNCH_STATEMENT_TIMEOUT, NULL, staunch_conn_ping, b);
    took = now_ms() - t0;
    CHECKF(took >= 1200 && took < 2500 + slack_ms(), "ping cut after %llu ms",
           (unsigned long long)took);
    CHECK(staunch_conn_is_broken(b));
    staunch_conn_free(a);
    staunch_conn_free(b);

    tk_cmd("thaw");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(query_i64(c, "SELECT 5") == 5);
    staunch_conn_free(c);
    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    CHECKF(s.statements_cut == 2, "statements_cut = %llu", (unsigned long long)s.statements_cut);
    CHECKF(s.closed_broken == 2, "closed_broken = %llu", (unsigned long long)s.closed_broken);
    staunch_pool_free(pool);
    tk_quit();
    printf("statement_deadline_frozen: ok\n");
    return 0;
}
