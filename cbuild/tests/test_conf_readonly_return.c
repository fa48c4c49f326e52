/* conf_readonly_return: 200 checkouts each running one read, in the C
 * face's block (get, query as text, free; where the pool's autocommit is
 * off, commit when the library says a transaction is open), send no COMMIT
 * and no ROLLBACK; only a read that opens a transaction (an InnoDB table's
 * under autocommit=0) costs its COMMIT. Counted from the server's global
 * status, by a connection of another pool. */
#include "util.h"

/* The server's Com_commit and Com_rollback (every session's). */
static void commits_and_rollbacks(staunch_conn *admin, int64_t out[2]) {
    staunch_rows *rows = NULL;
    OK(staunch_conn_query_ex, admin,
       "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')", NULL, 0,
       STAUNCH_QUERY_TEXT, &rows);
    out[0] = out[1] = -1;
    bool has = false;
    for (;;) {
        OK(staunch_rows_next, rows, &has);
        if (!has) break;
        const char *name = NULL, *value = NULL;
        OK(staunch_rows_get_text, rows, 0, &name, NULL);
        OK(staunch_rows_get_text, rows, 1, &value, NULL);
        out[strcmp(name, "Com_commit") == 0 ? 0 : 1] = strtoll(value, NULL, 10);
    }
    staunch_rows_free(rows);
    CHECK(out[0] >= 0 && out[1] >= 0);
}

/* One checkout: the read, then a commit only where the library says a
 * transaction is open (no round trip to ask). */
static void block(staunch_pool *pool, const char *sql) {
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_rows *rows = NULL;
    OK(staunch_conn_query_ex, c, sql, NULL, 0, STAUNCH_QUERY_TEXT, &rows);
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    int64_t v = 0;
    OK(staunch_rows_get_i64, rows, 0, &v);
    CHECKF(has && v == 1, "%s: %lld", sql, (long long)v);
    staunch_rows_free(rows);
    staunch_result r = {.size = sizeof r};
    OK(staunch_conn_last_result, c, &r);
    if (r.in_transaction) OK(staunch_conn_commit, c);
    staunch_conn_free(c);
}

int main(void) {
    staunch_pool *admin_pool = open_pool("max_size=1");
    staunch_conn *admin = NULL;
    OK(staunch_pool_get, admin_pool, STAUNCH_TIMEOUT_DEFAULT, &admin);
    exec_sql(admin, "DROP TABLE IF EXISTS c_readonly");
    exec_sql(admin, "CREATE TABLE c_readonly (v INT) ENGINE=InnoDB");
    exec_sql(admin, "INSERT INTO c_readonly VALUES (1)");

    const char *params[] = {"max_size=2", "max_size=2&autocommit=false"};
    for (size_t p = 0; p < 2; p++) {
        staunch_pool *pool = open_pool(params[p]);
        const char *reads[] = {"SELECT 1", "SELECT v FROM c_readonly"};
        for (size_t q = 0; q < 2; q++) {
            int64_t before[2], after[2];
            commits_and_rollbacks(admin, before);
            for (int i = 0; i < 200; i++) block(pool, reads[q]);
            commits_and_rollbacks(admin, after);
            /* Only an InnoDB read under autocommit=0 opens a transaction. */
            int64_t want = p == 1 && q == 1 ? 200 : 0;
            CHECKF(after[0] - before[0] == want, "%s, %s: %lld COMMIT, want %lld", params[p],
                   reads[q], (long long)(after[0] - before[0]), (long long)want);
            CHECKF(after[1] == before[1], "%s, %s: %lld ROLLBACK", params[p], reads[q],
                   (long long)(after[1] - before[1]));
        }
        staunch_pool_free(pool);
    }

    exec_sql(admin, "DROP TABLE c_readonly");
    staunch_conn_free(admin);
    staunch_pool_free(admin_pool);
    printf("conf_readonly_return: ok\n");
    return 0;
}
