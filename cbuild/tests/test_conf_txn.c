/* conf_txn: begin, write, rollback; begin, write, commit; a connection
 * returned mid-transaction is rolled back before anyone else gets it. */
#include "util.h"

static int64_t has_id(staunch_conn *c, int64_t id) {
    staunch_param p = staunch_param_i64(id);
    staunch_rows *rows = NULL;
    OK(staunch_conn_query, c, "SELECT COUNT(*) FROM c_txn WHERE id = ?", &p, 1, &rows);
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    int64_t n = -1;
    OK(staunch_rows_get_i64, rows, 0, &n);
    staunch_rows_free(rows);
    return n;
}

static void insert(staunch_conn *c, int64_t id) {
    staunch_param p = staunch_param_i64(id);
    OK(staunch_conn_execute, c, "INSERT INTO c_txn (id) VALUES (?)", &p, 1, NULL, NULL);
}

int main(void) {
    /* One connection, so the next borrower gets the very same session. */
    staunch_pool *pool = open_pool("max_size=1");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    exec_sql(c, "DROP TABLE IF EXISTS c_txn");
    exec_sql(c, "CREATE TABLE c_txn (id INT PRIMARY KEY) ENGINE=InnoDB");

    OK(staunch_conn_begin, c);
    insert(c, 1);
    CHECK(has_id(c, 1) == 1);
    OK(staunch_conn_rollback, c);
    CHECK(has_id(c, 1) == 0);

    OK(staunch_conn_begin, c);
    insert(c, 2);
    OK(staunch_conn_commit, c);
    CHECK(has_id(c, 2) == 1);

    uint64_t session = 0;
    OK(staunch_conn_server_id, c, &session);
    OK(staunch_conn_begin, c);
    insert(c, 3);
    CHECK(query_i64(c, "SELECT @@in_transaction") == 1);
    staunch_conn_free(c); /* returned inside the transaction */

    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    uint64_t again = 0;
    OK(staunch_conn_server_id, c, &again);
    CHECK(again == session); /* the same session... */
    CHECK(query_i64(c, "SELECT @@in_transaction") == 0); /* ...rolled back */
    CHECK(has_id(c, 3) == 0);
    CHECK(has_id(c, 2) == 1);

    /* Released with staunch_conn_release: the same rule. */
    OK(staunch_conn_begin, c);
    insert(c, 4);
    OK(staunch_conn_release, c);
    staunch_conn_free(c);
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(has_id(c, 4) == 0);

    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    CHECKF(s.rollbacks_on_return == 2, "rollbacks_on_return = %llu",
           (unsigned long long)s.rollbacks_on_return);

    exec_sql(c, "DROP TABLE c_txn");
    staunch_conn_free(c);
    staunch_pool_free(pool);
    printf("conf_txn: ok\n");
    return 0;
}
