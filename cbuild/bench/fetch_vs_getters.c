/* The bulk getter against the one-value getters, in one run on the same
 * answer: nanoseconds per cell to read a buffered result of ROWS rows x 4
 * columns (BIGINT, INT UNSIGNED, VARCHAR, DOUBLE) that is already in memory
 * (the query itself is not timed). The per-cell way is what a binding does
 * without staunch_rows_fetch: staunch_rows_next per row, then
 * staunch_rows_is_null and the typed getter per cell. Prints:
 *
 *   cells=<n> per_cell_getters_ns=<a> bulk_fetch_ns=<b> ratio=<a/b>
 *
 *   bench_fetch_vs_getters [URL] [ROWS]   (URL as for the examples;
 *   MariaDB: the rows come from the SEQUENCE engine's seq_1_to_N) */
#define _POSIX_C_SOURCE 200809L
#include <staunch.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NCOLS 4
#define BLOCK 256

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fail(const char *what, staunch_error *err) {
    fprintf(stderr, "%s: %s\n", what, staunch_error_message(err));
    staunch_error_free(err);
    return 1;
}

static staunch_rows *query(staunch_conn *c, unsigned rows) {
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT seq, CAST(seq * 2 AS UNSIGNED), CONCAT('name-', seq), seq / 7e0 "
             "FROM seq_1_to_%u",
             rows);
    staunch_rows *r = NULL;
    staunch_error *err = NULL;
    if (staunch_conn_query(c, sql, NULL, 0, &r, &err) != STAUNCH_OK) {
        fail("query", err);
        return NULL;
    }
    return r;
}

/* Sums what it reads, so that nothing is optimized away. */
static uint64_t per_cell(staunch_rows *r) {
    uint64_t sum = 0;
    bool has = false;
    while (staunch_rows_next(r, &has, NULL) == STAUNCH_OK && has) {
        bool null = false;
        int64_t i = 0;
        uint64_t u = 0;
        const char *t = NULL;
        size_t len = 0;
        double d = 0;
        staunch_rows_is_null(r, 0, &null, NULL);
        staunch_rows_get_i64(r, 0, &i, NULL);
        staunch_rows_is_null(r, 1, &null, NULL);
        staunch_rows_get_u64(r, 1, &u, NULL);
        staunch_rows_is_null(r, 2, &null, NULL);
        staunch_rows_get_text(r, 2, &t, &len, NULL);
        staunch_rows_is_null(r, 3, &null, NULL);
        staunch_rows_get_double(r, 3, &d, NULL);
        sum += (uint64_t)i + u + len + (uint64_t)d + (uint64_t)(t != NULL);
    }
    return sum;
}

static uint64_t bulk(staunch_rows *r) {
    static staunch_value v[BLOCK * NCOLS];
    uint64_t sum = 0;
    size_t n = 0;
    while (staunch_rows_fetch(r, v, BLOCK * NCOLS, &n, NULL) == STAUNCH_OK && n > 0) {
        for (size_t k = 0; k < n; k++) {
            const staunch_value *row = &v[k * NCOLS];
            /* The tag says which field holds an integer (a binding reads
             * it anyway: it is what makes the value self-describing). */
            uint64_t a = row[0].type == STAUNCH_COLUMN_UINT ? row[0].u64 : (uint64_t)row[0].i64;
            uint64_t b = row[1].type == STAUNCH_COLUMN_UINT ? row[1].u64 : (uint64_t)row[1].i64;
            sum += a + b + row[2].len + (uint64_t)row[3].f64 + (uint64_t)(row[2].ptr != NULL);
        }
    }
    return sum;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : getenv("STAUNCH_URL");
    if (url == NULL) url = getenv("STAUNCH_TEST_URL");
    if (url == NULL) {
        fprintf(stderr, "usage: %s URL [ROWS]\n", argv[0]);
        return 77;
    }
    unsigned rows = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 200000;
    staunch_pool *pool = NULL;
    staunch_error *err = NULL;
    if (staunch_pool_open(url, &pool, &err) != STAUNCH_OK) return fail("open", err);
    staunch_conn *c = NULL;
    if (staunch_pool_get(pool, 5000, &c, &err) != STAUNCH_OK) return fail("get", err);

    /* Alternate the two, five rounds each, and keep each one's best. */
    uint64_t best_cell = UINT64_MAX, best_bulk = UINT64_MAX, s1 = 0, s2 = 0;
    for (int round = 0; round < 5; round++) {
        staunch_rows *r = query(c, rows);
        if (r == NULL) return 1;
        uint64_t t0 = now_ns();
        s1 = per_cell(r);
        uint64_t t1 = now_ns();
        staunch_rows_free(r);
        if (t1 - t0 < best_cell) best_cell = t1 - t0;

        r = query(c, rows);
        if (r == NULL) return 1;
        t0 = now_ns();
        s2 = bulk(r);
        t1 = now_ns();
        staunch_rows_free(r);
        if (t1 - t0 < best_bulk) best_bulk = t1 - t0;
    }
    if (s1 != s2) {
        fprintf(stderr, "the two ways read different values (%llu, %llu)\n",
                (unsigned long long)s1, (unsigned long long)s2);
        return 1;
    }
    double cells = (double)rows * NCOLS;
    printf("cells=%.0f per_cell_getters_ns=%.1f bulk_fetch_ns=%.1f ratio=%.2f\n", cells,
           (double)best_cell / cells, (double)best_bulk / cells,
           (double)best_cell / (double)best_bulk);
    staunch_conn_free(c);
    staunch_pool_free(pool);
    return 0;
}
