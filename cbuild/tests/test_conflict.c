/* conflict: a deadlock (two connections taking the same two row locks in
 * opposite orders) fails the loser with STAUNCH_CONFLICT, server code 1213
 * and SQLSTATE 40001 in the error object, as a Galera certification failure
 * does; the loser's connection stays usable. */
#include "util.h"

#include <pthread.h>

typedef struct {
    staunch_conn *conn;
    staunch_status st;
    staunch_error *err;
} waiter;

static void *wait_for_row_1(void *arg) {
    waiter *w = arg;
    w->st = staunch_conn_execute(w->conn, "UPDATE c_dl SET v = 2 WHERE id = 1", NULL, 0, NULL,
                                 NULL, &w->err);
    return NULL;
}

int main(void) {
    staunch_pool *pool = open_pool("max_size=2");
    staunch_conn *a = NULL, *b = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &a);
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &b);
    exec_sql(a, "DROP TABLE IF EXISTS c_dl");
    exec_sql(a, "CREATE TABLE c_dl (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
    exec_sql(a, "INSERT INTO c_dl VALUES (1, 0), (2, 0)");

    OK(staunch_conn_begin, a);
    exec_sql(a, "UPDATE c_dl SET v = 1 WHERE id = 1");
    OK(staunch_conn_begin, b);
    exec_sql(b, "UPDATE c_dl SET v = 2 WHERE id = 2");
    /* b waits for a's row 1; a then asks for b's row 2: InnoDB rolls one
     * of them back. */
    waiter w = {.conn = b};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, wait_for_row_1, &w) == 0);
    sleep_ms(300);
    staunch_error *ea = NULL;
    staunch_status sa =
        staunch_conn_execute(a, "UPDATE c_dl SET v = 1 WHERE id = 2", NULL, 0, NULL, NULL, &ea);
    if (sa == STAUNCH_OK) OK(staunch_conn_commit, a); /* b lost: frees row 1 */
    CHECK(pthread_join(t, NULL) == 0);
    CHECKF((sa == STAUNCH_OK) != (w.st == STAUNCH_OK), "one victim: a=%s b=%s",
           staunch_status_name(sa), staunch_status_name(w.st));
    staunch_error *lost = sa == STAUNCH_OK ? w.err : ea;
    staunch_status st = sa == STAUNCH_OK ? w.st : sa;
    CHECKF(st == STAUNCH_CONFLICT, "%s: %s", staunch_status_name(st),
           staunch_error_message(lost));
    CHECK(strcmp(staunch_status_name(st), "STAUNCH_CONFLICT") == 0);
    CHECK(staunch_error_status(lost) == STAUNCH_CONFLICT);
    CHECK(staunch_error_server_code(lost) == 1213);
    CHECK(strcmp(staunch_error_sqlstate(lost), "40001") == 0);
    staunch_error_free(lost);
    if (w.st == STAUNCH_OK) OK(staunch_conn_commit, b);

    /* Both connections stay in step. */
    CHECK(query_i64(a, "SELECT 7") == 7);
    CHECK(query_i64(b, "SELECT 8") == 8);
    exec_sql(a, "DROP TABLE c_dl");
    staunch_conn_free(a);
    staunch_conn_free(b);
    staunch_pool_free(pool);
    printf("conflict: ok\n");
    return 0;
}
