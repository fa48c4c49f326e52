/* conf_statement_timeout: staunch_conn_set_timeout makes the server end a
 * long statement (STAUNCH_STATEMENT_TIMEOUT, connection still usable); the
 * default and 0 lift the limit again. */
#include "util.h"

int main(void) {
    staunch_pool *pool = open_pool("max_size=1");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);

    OK(staunch_conn_set_timeout, c, 300);
    uint64_t t0 = now_ms();
    FAILS(STAUNCH_STATEMENT_TIMEOUT, NULL, staunch_conn_execute, c, "SELECT SLEEP(5)", NULL, 0,
          NULL, NULL);
    uint64_t took = now_ms() - t0;
    CHECKF(took <= 1000 + slack_ms(), "timed-out statement took %llu ms",
           (unsigned long long)took);
    CHECK(!staunch_conn_is_broken(c));
    CHECK(query_i64(c, "SELECT 1") == 1);
    CHECK(!staunch_conn_is_broken(c));

    OK(staunch_conn_set_timeout, c, STAUNCH_TIMEOUT_DEFAULT);
    OK(staunch_conn_set_timeout, c, 0);
    t0 = now_ms();
    exec_sql(c, "SELECT SLEEP(1)");
    CHECK(now_ms() - t0 >= 900);
    CHECK(query_i64(c, "SELECT 1") == 1);

    staunch_conn_free(c);
    staunch_pool_free(pool);
    printf("conf_statement_timeout: ok\n");
    return 0;
}
