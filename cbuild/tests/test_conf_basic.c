/* conf_basic: open a pool from a URL, get, SELECT 1, release, close (twice). */
#include "util.h"

int main(void) {
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, test_url(), &pool);

    staunch_conn *conn = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &conn);
    CHECK(conn != NULL);

    staunch_rows *rows = NULL;
    OK(staunch_conn_query, conn, "SELECT 1", NULL, 0, &rows);
    CHECK(staunch_rows_column_count(rows) == 1);
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    CHECK(has);
    int64_t one = 0;
    OK(staunch_rows_get_i64, rows, 0, &one);
    CHECK(one == 1);
    OK(staunch_rows_next, rows, &has);
    CHECK(!has);
    staunch_rows_free(rows);

    OK(staunch_conn_release, conn);
    staunch_conn_free(conn);

    staunch_stats st = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &st);
    CHECK(st.active == 0 && st.idle == 1 && st.total == 1 && st.acquired == 1);

    OK(staunch_pool_close, pool);
    OK(staunch_pool_close, pool); /* idempotent */
    FAILS(STAUNCH_CLOSED, "closed", staunch_pool_get, pool, 100, &conn);
    staunch_pool_free(pool);
    /* Free joined the pool's threads: none is left (the kernel may list a
     * joined thread for a moment longer; hence the short wait). */
    uint64_t deadline = now_ms() + 100 + slack_ms();
    while (count_staunch_threads() > 0 && now_ms() < deadline) sleep_ms(1);
    CHECKF(count_staunch_threads() == 0, "%d staunch threads left", count_staunch_threads());
    printf("conf_basic: ok\n");
    return 0;
}
