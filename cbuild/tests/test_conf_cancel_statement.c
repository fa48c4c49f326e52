/* conf_cancel_statement: staunch_conn_cancel from another thread ends a
 * running statement with STAUNCH_CANCELLED (KILL QUERY); the connection stays
 * usable; with nothing running it sends nothing and affects no later
 * statement. */
#include "util.h"

#include <pthread.h>

typedef struct {
    staunch_conn *conn;
    unsigned delay_ms;
    staunch_status st;
    bool cancelled;
    char msg[512];
} canceller;

static void *do_cancel(void *arg) {
    canceller *k = arg;
    sleep_ms(k->delay_ms);
    staunch_error *err = NULL;
    k->st = staunch_conn_cancel(k->conn, &k->cancelled, &err);
    snprintf(k->msg, sizeof k->msg, "%s", err != NULL ? staunch_error_message(err) : "");
    staunch_error_free(err);
    return NULL;
}

int main(void) {
    staunch_pool *pool = open_pool("max_size=2");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_conn *other = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &other);

    /* Nothing running: OK, cancelled == false, the next statement unaffected. */
    bool cancelled = true;
    OK(staunch_conn_cancel, c, &cancelled);
    CHECK(!cancelled);
    OK(staunch_conn_cancel, c, NULL);
    CHECK(query_i64(c, "SELECT 1") == 1);
    exec_sql(c, "DO SLEEP(0.3)");
    CHECK(query_i64(c, "SELECT 2") == 2);

    canceller k = {.conn = c, .delay_ms = 500, .st = STAUNCH_INTERNAL};
    pthread_t t;
    uint64_t t0 = now_ms();
    CHECK(pthread_create(&t, NULL, do_cancel, &k) == 0);
    FAILS(STAUNCH_CANCELLED, NULL, staunch_conn_execute, c, "SELECT SLEEP(10)", NULL, 0, NULL,
          NULL);
    uint64_t took = now_ms() - t0;
    CHECK(pthread_join(t, NULL) == 0);
    CHECKF(k.st == STAUNCH_OK, "staunch_conn_cancel: %s: %s", staunch_status_name(k.st), k.msg);
    CHECK(k.cancelled);
    CHECKF(took <= 1500 + slack_ms(), "cancelled statement took %llu ms",
           (unsigned long long)took);

    CHECK(query_i64(other,
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                    "WHERE INFO LIKE 'SELECT SLEEP(10)%'") == 0);
    CHECK(!staunch_conn_is_broken(c));
    CHECK(query_i64(c, "SELECT 1") == 1);

    /* Nothing running again: no effect on the next statement. */
    cancelled = true;
    OK(staunch_conn_cancel, c, &cancelled);
    CHECK(!cancelled);
    exec_sql(c, "DO SLEEP(0.3)");
    CHECK(query_i64(c, "SELECT 3") == 3);

    staunch_conn_free(other);
    staunch_conn_free(c);
    staunch_pool_free(pool);
    printf("conf_cancel_statement: ok\n");
    return 0;
}
