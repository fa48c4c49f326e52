/* conf_session_reset: a session changed by one borrower (user variable, time
 * zone) is reset before the next borrower gets it. */
#include "util.h"

int main(void) {
    staunch_pool *pool = open_pool("max_size=1");
    staunch_conn *c = NULL;
    char tz_default[128], tz[128];

    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    query_text(c, "SELECT @@time_zone", 0, tz_default, sizeof tz_default);
    staunch_conn_free(c);

    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    uint64_t session = 0;
    OK(staunch_conn_server_id, c, &session);
    exec_sql(c, "SET @x = 42");
    exec_sql(c, "SET time_zone = '+05:17'");
    CHECK(query_i64(c, "SELECT @x") == 42);
    query_text(c, "SELECT @@time_zone", 0, tz, sizeof tz);
    CHECKF(strcmp(tz, "+05:17") == 0, "time_zone = %s", tz);
    staunch_conn_free(c);

    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    uint64_t again = 0;
    OK(staunch_conn_server_id, c, &again);
    CHECKF(again == session, "session %llu, then %llu", (unsigned long long)session,
           (unsigned long long)again);
    CHECK(query_i64(c, "SELECT @x IS NULL") == 1);
    query_text(c, "SELECT @@time_zone", 0, tz, sizeof tz);
    CHECKF(strcmp(tz, tz_default) == 0, "time_zone = %s, default %s", tz, tz_default);
    /* What the server's tracker does not report is undone too: a user-level
     * lock, a variable set inside a SELECT. */
    CHECK(query_i64(c, "SELECT GET_LOCK('conf', 0) + (@y := 7)") == 8);
    staunch_conn_free(c);

    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(query_i64(c, "SELECT IS_USED_LOCK('conf') IS NULL") == 1);
    CHECK(query_i64(c, "SELECT @y IS NULL") == 1);
    staunch_conn_free(c);

    staunch_pool_free(pool);
    printf("conf_session_reset: ok\n");
    return 0;
}
