/* conf_no_crossed_answer: a statement the server does not end in time is cut
 * off by the client (300 ms + 1 s grace); the connection is then broken and
 * never hands a later statement the late answer; the pool replaces it. */
#include "util.h"

int main(void) {
    staunch_pool *pool = open_pool("query_timeout=300ms&max_size=1");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);

    staunch_rows *rows = NULL;
    uint64_t t0 = now_ms();
    FAILS(STAUNCH_STATEMENT_TIMEOUT, NULL, staunch_conn_query, c,
          "SET STATEMENT max_statement_time=0 FOR SELECT 111 + SLEEP(3)", NULL, 0, &rows);
    uint64_t took = now_ms() - t0;
    CHECK(rows == NULL);
    CHECKF(took >= 1200 && took <= 2500 + slack_ms(), "cut off after %llu ms",
           (unsigned long long)took);
    CHECK(staunch_conn_is_broken(c));

    sleep_ms(2000); /* the late answer (111) has arrived by now */
    FAILS(STAUNCH_BROKEN, NULL, staunch_conn_query, c, "SELECT 222", NULL, 0, &rows);
    CHECK(rows == NULL);
    FAILS(STAUNCH_BROKEN, NULL, staunch_conn_execute, c, "SELECT 222", NULL, 0, NULL, NULL);
    FAILS(STAUNCH_BROKEN, NULL, staunch_conn_ping, c);
    FAILS(STAUNCH_BROKEN, NULL, staunch_conn_begin, c);
    CHECK(staunch_conn_is_broken(c));
    staunch_conn_free(c);

    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(!staunch_conn_is_broken(c));
    CHECK(query_i64(c, "SELECT 222") == 222);
    staunch_conn_free(c);

    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    CHECKF(s.closed_broken == 1, "closed_broken = %llu", (unsigned long long)s.closed_broken);
    CHECKF(s.statements_cut == 1, "statements_cut = %llu",
           (unsigned long long)s.statements_cut);

    staunch_pool_free(pool);
    printf("conf_no_crossed_answer: ok\n");
    return 0;
}
