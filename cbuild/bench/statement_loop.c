/* One statement, ITERATIONS times, each on a borrowed connection:
 * staunch_pool_get, staunch_conn_query_ex (interpolated, buffered: the
 * answer is read and decoded whole), every row stepped over, then the row
 * set and the connection freed. For counting what the library executes per
 * statement (scripts/c-bench.sh --instructions runs it under callgrind at two
 * iteration counts, so connecting and start-up cancel out); prints nothing
 * but errors.
 *
 *   bench_statement_loop URL ITERATIONS SQL */
#include <staunch.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, staunch_error *err) {
    fprintf(stderr, "%s: %s\n", what, staunch_error_message(err));
    staunch_error_free(err);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: %s URL ITERATIONS SQL\n", argv[0]);
        return 2;
    }
    long iters = atol(argv[2]);
    staunch_pool *pool = NULL;
    staunch_error *err = NULL;
    if (staunch_pool_open(argv[1], &pool, &err) != STAUNCH_OK) return fail("open", err);
    for (long i = 0; i < iters; i++) {
        staunch_conn *c = NULL;
        staunch_rows *rows = NULL;
        if (staunch_pool_get(pool, 5000, &c, &err) != STAUNCH_OK) return fail("get", err);
        if (staunch_conn_query_ex(c, argv[3], NULL, 0, STAUNCH_QUERY_INTERPOLATE, &rows, &err) !=
            STAUNCH_OK)
            return fail("query", err);
        bool more = true;
        while (more) {
            if (staunch_rows_next(rows, &more, &err) != STAUNCH_OK) return fail("next", err);
        }
        staunch_rows_free(rows);
        staunch_conn_free(c);
    }
    staunch_pool_free(pool);
    return 0;
}
