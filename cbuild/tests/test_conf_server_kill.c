/* conf_server_kill: the server kills every pooled connection (KILL from a
 * second, root connection) while they are idle; after more than the
 * alive_bypass_window (500 ms), the next checkouts succeed and no error
 * reaches the caller. */
#include "util.h"

#define N 4

int main(void) {
    staunch_pool *pool = open_pool("max_size=4");
    staunch_conn *c[N];
    uint64_t ids[N];
    for (int i = 0; i < N; i++) {
        OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c[i]);
        OK(staunch_conn_server_id, c[i], &ids[i]);
    }
    for (int i = 0; i < N; i++) staunch_conn_free(c[i]);

    staunch_pool *admin_pool = NULL;
    OK(staunch_pool_open, test_root_url(), &admin_pool);
    staunch_conn *admin = NULL;
    OK(staunch_pool_get, admin_pool, STAUNCH_TIMEOUT_DEFAULT, &admin);
    for (int i = 0; i < N; i++) {
        char sql[64];
        snprintf(sql, sizeof sql, "KILL CONNECTION %llu", (unsigned long long)ids[i]);
        exec_sql(admin, sql);
    }
    staunch_conn_free(admin);
    staunch_pool_free(admin_pool);

    sleep_ms(600);

    for (int i = 0; i < N; i++) {
        OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c[i]);
        CHECK(query_i64(c[i], "SELECT 1") == 1);
        uint64_t id = 0;
        OK(staunch_conn_server_id, c[i], &id);
        for (int k = 0; k < N; k++) CHECKF(id != ids[k], "got killed session %llu back",
                                           (unsigned long long)id);
    }
    for (int i = 0; i < N; i++) staunch_conn_free(c[i]);

    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    CHECKF(s.validation_failures >= N && s.closed_broken >= N,
           "validation_failures=%llu closed_broken=%llu", (unsigned long long)s.validation_failures,
           (unsigned long long)s.closed_broken);
    printf("conf_server_kill: %d killed sessions replaced (validation_failures=%llu)\n", N,
           (unsigned long long)s.validation_failures);
    staunch_pool_free(pool);
    return 0;
}
