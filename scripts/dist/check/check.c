#define _POSIX_C_SOURCE 200809L
/* What scripts/dist-check.sh builds against an installed staunch (.deb or
 * tarball), with only pkg-config or find_package(staunch): open a pool on
 * the URL in argv[1], borrow, query with a parameter, cancel a running
 * statement from another thread (STAUNCH_CANCELLED, the connection goes on),
 * return the connection, close the pool. Exit 0 and one line on success. */
#include <staunch.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int fail(const char *what, staunch_status st, staunch_error *err) {
    fprintf(stderr, "%s: %s: %s\n", what, staunch_status_name(st),
            err != NULL ? staunch_error_message(err) : "");
    staunch_error_free(err);
    return 1;
}

typedef struct {
    staunch_conn *conn;
    staunch_status st;
    bool found;
} canceller;

static void *cancel_soon(void *arg) {
    canceller *k = arg;
    struct timespec ts = {0, 300 * 1000000L};
    nanosleep(&ts, NULL);
    k->st = staunch_conn_cancel(k->conn, &k->found, NULL);
    return NULL;
}

static long long query_i64(staunch_conn *c, const char *sql, int64_t arg, staunch_status *st,
                           staunch_error **err) {
    staunch_param p = staunch_param_i64(arg);
    staunch_rows *rows = NULL;
    int64_t v = -1;
    bool has = false;
    if ((*st = staunch_conn_query(c, sql, &p, 1, &rows, err)) == STAUNCH_OK &&
        (*st = staunch_rows_next(rows, &has, err)) == STAUNCH_OK && has)
        *st = staunch_rows_get_i64(rows, 0, &v, err);
    staunch_rows_free(rows);
    return (long long)v;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s URL\n", argv[0]);
        return 2;
    }
    if (staunch_version() / 10000 != STAUNCH_VERSION_MAJOR || staunch_version() < STAUNCH_VERSION) {
        fprintf(stderr, "library %s is older than the header (%d)\n", staunch_version_string(),
                STAUNCH_VERSION);
        return 1;
    }
    staunch_error *err = NULL;
    staunch_pool *pool = NULL;
    staunch_status st = staunch_pool_open(argv[1], &pool, &err);
    if (st != STAUNCH_OK) return fail("staunch_pool_open", st, err);
    staunch_conn *conn = NULL;
    if ((st = staunch_pool_get(pool, 5000, &conn, &err)) != STAUNCH_OK)
        return fail("staunch_pool_get", st, err);

    long long v = query_i64(conn, "SELECT ? + 1", 41, &st, &err);
    if (st != STAUNCH_OK) return fail("SELECT ? + 1", st, err);
    if (v != 42) {
        fprintf(stderr, "SELECT 41 + 1 gave %lld\n", v);
        return 1;
    }

    canceller k = {conn, STAUNCH_INTERNAL, false};
    pthread_t t;
    if (pthread_create(&t, NULL, cancel_soon, &k) != 0) return 1;
    query_i64(conn, "SELECT SLEEP(?)", 30, &st, &err);
    pthread_join(t, NULL);
    if (st != STAUNCH_CANCELLED || k.st != STAUNCH_OK || !k.found) {
        fprintf(stderr, "cancel: statement %s, cancel %s, found %d\n", staunch_status_name(st),
                staunch_status_name(k.st), (int)k.found);
        staunch_error_free(err);
        return 1;
    }
    staunch_error_free(err);
    err = NULL;
    v = query_i64(conn, "SELECT ? * 2", 21, &st, &err);
    if (st != STAUNCH_OK || v != 42) return fail("after the cancel", st, err);

    staunch_conn_free(conn); /* back to the pool */
    staunch_pool_free(pool);
    printf("staunch %s (C): borrowed, queried, cancelled a statement, closed\n",
           staunch_version_string());
    return 0;
}
