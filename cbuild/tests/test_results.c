/* results: row counts, streaming (order, busy connection, early free, handle
 * freed first), multi-result CALL (buffered and streaming), the text
 * protocol, bytes parameters, staunch_conn_last_result, warnings/info, and
 * the bulk getter staunch_rows_fetch, staunch_pool_query (borrow, run,
 * give back in one call) and staunch_conn_query_batch (run and read the
 * first of the answer in one call). */
#include "util.h"

static staunch_rows *query(staunch_conn *c, const char *sql, uint32_t flags) {
    staunch_rows *rows = NULL;
    staunch_error *err = NULL;
    staunch_status st = staunch_conn_query_ex(c, sql, NULL, 0, flags, &rows, &err);
    CHECKF(st == STAUNCH_OK, "%s: %s", sql, staunch_error_message(err));
    CHECK(rows != NULL);
    return rows;
}

static bool next(staunch_rows *rows) {
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    return has;
}

static int64_t get_i64(staunch_rows *rows, size_t idx) {
    int64_t v = -1;
    OK(staunch_rows_get_i64, rows, idx, &v);
    return v;
}

static void row_count(void) {
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_rows *rows = query(c, "SELECT seq FROM seq_1_to_1000", 0);
    uint64_t n = 0;
    OK(staunch_rows_row_count, rows, &n);
    CHECKF(n == 1000, "row_count = %llu", (unsigned long long)n);
    for (int k = 1; k <= 10; k++) {
        CHECK(next(rows));
        CHECK(get_i64(rows, 0) == k);
    }
    n = 0;
    OK(staunch_rows_row_count, rows, &n);
    CHECK(n == 1000);
    staunch_rows_free(rows);
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

/* flags: STAUNCH_QUERY_STREAM, with STAUNCH_QUERY_TEXT or not (a text
 * statement's answer is read by the protocol layer, a prepared one's by the
 * mysql crate). */
static void streaming_with(uint32_t flags) {
    staunch_pool *pool = open_pool("max_size=1");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);

    /* Whole stream, in order; the connection is busy until its end. */
    staunch_rows *rows = query(c, "SELECT seq FROM seq_1_to_100000", flags);
    uint64_t n = 0;
    FAILS(STAUNCH_INVALID_ARGUMENT, NULL, staunch_rows_row_count, rows, &n);
    FAILS(STAUNCH_CONN_BUSY, NULL, staunch_conn_execute, c, "DO 1", NULL, 0, NULL, NULL);
    for (int64_t k = 1; k <= 100000; k++) {
        CHECKF(next(rows), "stream ended before row %lld", (long long)k);
        int64_t v = get_i64(rows, 0);
        CHECKF(v == k, "row %lld has %lld", (long long)k, (long long)v);
        if (k == 50000)
            FAILS(STAUNCH_CONN_BUSY, NULL, staunch_conn_execute, c, "DO 1", NULL, 0, NULL,
                  NULL);
    }
    CHECK(!next(rows));
    /* Read to its end: the connection answers again, row set not freed yet. */
    CHECK(query_i64(c, "SELECT 1") == 1);
    staunch_rows_free(rows);

    /* Freed half read: the connection comes back. */
    rows = query(c, "SELECT seq FROM seq_1_to_100000", flags);
    for (int64_t k = 1; k <= 500; k++) {
        CHECK(next(rows));
        CHECK(get_i64(rows, 0) == k);
    }
    staunch_rows_free(rows);
    CHECK(query_i64(c, "SELECT 1") == 1);

    /* The handle freed while the stream is open. */
    rows = query(c, "SELECT seq FROM seq_1_to_100000", flags);
    CHECK(next(rows));
    CHECK(get_i64(rows, 0) == 1);
    staunch_conn_free(c);
    int64_t k = 1;
    while (next(rows)) {
        k++;
        CHECK(get_i64(rows, 0) == k);
    }
    CHECKF(k == 100000, "read %lld rows after freeing the handle", (long long)k);
    staunch_rows_free(rows);
    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    CHECKF(s.active == 0, "active = %llu", (unsigned long long)s.active);
    /* And the connection is usable by the next borrower. */
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(query_i64(c, "SELECT 1") == 1);
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

static void streaming(void) {
    streaming_with(STAUNCH_QUERY_STREAM);
    streaming_with(STAUNCH_QUERY_STREAM | STAUNCH_QUERY_TEXT);
}

static void multi_result_with(staunch_conn *c, uint32_t flags) {
    staunch_rows *rows = query(c, "CALL c_two()", flags);
    CHECK(staunch_rows_column_count(rows) == 1);
    CHECK(next(rows));
    CHECK(get_i64(rows, 0) == 1);
    CHECK(!next(rows));
    bool has = false;
    OK(staunch_rows_next_result, rows, &has);
    CHECK(has);
    CHECK(staunch_rows_column_count(rows) == 2);
    CHECK(next(rows));
    const char *t = NULL;
    size_t len = 0;
    OK(staunch_rows_get_text, rows, 0, &t, &len);
    CHECK(len == 1 && strcmp(t, "x") == 0);
    CHECK(get_i64(rows, 1) == 2);
    CHECK(!next(rows));
    int extra = 0;
    for (;;) {
        OK(staunch_rows_next_result, rows, &has);
        if (!has) break;
        CHECKF(++extra < 5, "too many result sets");
    }
    staunch_rows_free(rows);
    CHECK(query_i64(c, "SELECT 1") == 1);
}

static void multi_result(void) {
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    exec_sql(c, "DROP PROCEDURE IF EXISTS c_two");
    exec_sql(c, "CREATE PROCEDURE c_two() BEGIN SELECT 1 AS a; SELECT 'x' AS b, 2 AS c; END");
    multi_result_with(c, 0);
    multi_result_with(c, STAUNCH_QUERY_STREAM);
    multi_result_with(c, STAUNCH_QUERY_STREAM | STAUNCH_QUERY_TEXT);
    exec_sql(c, "DROP PROCEDURE c_two");
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

static void text_protocol(void) {
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_rows *rows = query(c, "SELECT 1, 'a', NULL, 2.5e0", STAUNCH_QUERY_TEXT);
    CHECK(next(rows));
    CHECK(get_i64(rows, 0) == 1);
    const char *t = NULL;
    OK(staunch_rows_get_text, rows, 1, &t, NULL);
    CHECK(strcmp(t, "a") == 0);
    bool null = false;
    OK(staunch_rows_is_null, rows, 2, &null);
    CHECK(null);
    double d = 0;
    OK(staunch_rows_get_double, rows, 3, &d);
    CHECK(d == 2.5);
    CHECK(!next(rows));
    staunch_rows_free(rows);

    staunch_param p = staunch_param_i64(1);
    rows = NULL;
    FAILS(STAUNCH_INVALID_ARGUMENT, NULL, staunch_conn_query_ex, c, "SELECT ?", &p, 1,
          STAUNCH_QUERY_TEXT, &rows);
    CHECK(rows == NULL);
    FAILS(STAUNCH_INVALID_ARGUMENT, NULL, staunch_conn_query_ex, c, "SELECT 1", NULL, 0, 0x80,
          &rows);
    CHECK(rows == NULL);

    /* A statement the prepared protocol refuses (1295) runs as text: asked
     * for (STAUNCH_QUERY_TEXT), or by the library's own fallback. */
    const char *refused = "PREPARE c_s FROM 'SELECT 7'";
    rows = query(c, refused, 0);
    CHECK(staunch_rows_column_count(rows) == 0);
    CHECK(!next(rows));
    staunch_rows_free(rows);
    rows = query(c, refused, STAUNCH_QUERY_TEXT);
    CHECK(staunch_rows_column_count(rows) == 0);
    CHECK(!next(rows));
    staunch_rows_free(rows);
    for (int k = 0; k < 2; k++) { /* refused when prepared too */
        rows = query(c, "EXECUTE c_s", k == 0 ? STAUNCH_QUERY_TEXT : STAUNCH_QUERY_PREPARE);
        CHECK(next(rows));
        CHECK(get_i64(rows, 0) == 7);
        CHECK(!next(rows));
        staunch_rows_free(rows);
    }
    exec_sql(c, "DEALLOCATE PREPARE c_s");
    CHECK(query_i64(c, "SELECT 1") == 1);
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

static void bytes_params(void) {
    static const uint8_t data[4] = {0xff, 0x00, 0xfe, 'a'};
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_param p[2] = {staunch_param_bytes(data, 4), staunch_param_bytes(data, 4)};
    staunch_rows *rows = NULL;
    OK(staunch_conn_query, c, "SELECT ?, HEX(?)", p, 2, &rows);
    CHECK(next(rows));
    const uint8_t *b = NULL;
    size_t len = 0;
    OK(staunch_rows_get_bytes, rows, 0, &b, &len);
    CHECKF(len == 4 && memcmp(b, data, 4) == 0, "bytes came back as %zu bytes", len);
    const char *t = NULL;
    OK(staunch_rows_get_text, rows, 1, &t, &len);
    CHECKF(strcmp(t, "FF00FE61") == 0, "HEX(?) = %s", t);
    staunch_rows_free(rows);

    exec_sql(c, "DROP TABLE IF EXISTS c_bin");
    exec_sql(c, "CREATE TABLE c_bin (b VARBINARY(16))");
    uint64_t affected = 0;
    OK(staunch_conn_execute, c, "INSERT INTO c_bin VALUES (?)", p, 1, &affected, NULL);
    CHECK(affected == 1);
    rows = query(c, "SELECT b FROM c_bin", 0);
    CHECK(next(rows));
    OK(staunch_rows_get_bytes, rows, 0, &b, &len);
    CHECKF(len == 4 && memcmp(b, data, 4) == 0, "stored bytes came back as %zu bytes", len);
    CHECK(!next(rows));
    staunch_rows_free(rows);
    exec_sql(c, "DROP TABLE c_bin");
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

static staunch_result last(staunch_conn *c) {
    staunch_result r = {.size = sizeof(staunch_result)};
    OK(staunch_conn_last_result, c, &r);
    CHECK(r.info != NULL);
    return r;
}

static void last_result(void) {
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    exec_sql(c, "DROP TABLE IF EXISTS c_res");
    exec_sql(c, "CREATE TABLE c_res (id INT PRIMARY KEY, n INT) ENGINE=InnoDB");
    exec_sql(c, "INSERT INTO c_res VALUES (1, 0), (2, 0), (3, 0)");
    staunch_result r = last(c);
    CHECKF(strstr(r.info, "Records: 3") != NULL, "info = \"%s\"", r.info);
    CHECK(r.affected_rows == 3);
    CHECK(!r.in_transaction);
    CHECK(r.autocommit);

    exec_sql(c, "UPDATE c_res SET n = 1 WHERE id <= 2");
    r = last(c);
    CHECKF(r.affected_rows == 2, "affected_rows = %llu", (unsigned long long)r.affected_rows);
    CHECKF(strstr(r.info, "Rows matched: 2") != NULL, "info = \"%s\"", r.info);
    /* The same figures on a row set, for a statement without rows. */
    staunch_rows *upd = NULL;
    OK(staunch_conn_query, c, "UPDATE c_res SET n = 2 WHERE id <= 2", NULL, 0, &upd);
    CHECK(staunch_rows_column_count(upd) == 0);
    CHECKF(staunch_rows_affected_rows(upd) == 2, "rows affected = %llu",
           (unsigned long long)staunch_rows_affected_rows(upd));
    CHECKF(strstr(staunch_rows_info(upd), "Rows matched: 2") != NULL, "rows info = \"%s\"",
           staunch_rows_info(upd));
    staunch_rows_free(upd);

    OK(staunch_conn_begin, c);
    exec_sql(c, "INSERT INTO c_res VALUES (4, 0)");
    r = last(c);
    CHECK(r.in_transaction);
    OK(staunch_conn_commit, c);
    r = last(c);
    CHECK(!r.in_transaction);

    exec_sql(c, "SET autocommit = 0");
    r = last(c);
    CHECK(!r.autocommit);
    exec_sql(c, "SET autocommit = 1");
    r = last(c);
    CHECK(r.autocommit);

    staunch_result bad = {.size = 0};
    FAILS(STAUNCH_INVALID_ARGUMENT, NULL, staunch_conn_last_result, c, &bad);

    exec_sql(c, "DROP TABLE c_res");
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

static void warnings(void) {
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_rows *rows = NULL;
    OK(staunch_conn_query, c, "SELECT CAST('12abc' AS SIGNED)", NULL, 0, &rows);
    CHECK(next(rows));
    CHECK(get_i64(rows, 0) == 12);
    CHECK(!next(rows));
    CHECKF(staunch_rows_warnings(rows) >= 1, "warnings = %u", staunch_rows_warnings(rows));
    CHECK(staunch_rows_info(rows) != NULL);
    staunch_rows_free(rows);
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

#define FETCH_COLS 6
#define FETCH_ROWS 64

static void bulk_fetch(void) {
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_rows *rows = query(c,
                               "SELECT seq, CONCAT('n', seq), NULL, seq / 2e0, "
                               "CAST(seq AS UNSIGNED), DATE('2024-02-29') FROM seq_1_to_1000",
                               0);
    CHECK(staunch_rows_column_count(rows) == FETCH_COLS);
    staunch_column_type seq_type = 0;
    OK(staunch_rows_column_type, rows, 0, &seq_type);
    /* Every column's type in one call, as column_type gives each; at most cap written. */
    staunch_column_type types[FETCH_COLS + 1];
    for (size_t i = 0; i <= FETCH_COLS; i++) types[i] = 999;
    CHECK(staunch_rows_column_types(rows, types, FETCH_COLS + 1) == FETCH_COLS);
    for (size_t i = 0; i < FETCH_COLS; i++) {
        staunch_column_type one = 0;
        OK(staunch_rows_column_type, rows, i, &one);
        CHECKF(types[i] == one, "column %zu: %u in the bulk call, %u alone", i, types[i], one);
    }
    CHECK(types[FETCH_COLS] == 999);
    CHECK(types[2] == STAUNCH_COLUMN_NULL && types[4] == STAUNCH_COLUMN_UINT);
    for (size_t i = 0; i <= FETCH_COLS; i++) types[i] = 999;
    CHECK(staunch_rows_column_types(rows, types, 2) == FETCH_COLS);
    CHECK(types[0] == seq_type && types[1] != 999 && types[2] == 999);
    CHECK(staunch_rows_column_types(rows, NULL, 5) == FETCH_COLS);
    CHECK(staunch_rows_column_types(NULL, types, 5) == 0);
    staunch_value *v = calloc(FETCH_COLS * FETCH_ROWS, sizeof *v);
    CHECK(v != NULL);
    size_t n = 99;
    FAILS(STAUNCH_INVALID_ARGUMENT, NULL, staunch_rows_fetch, rows, v, 5, &n);
    FAILS(STAUNCH_NULL_ARGUMENT, NULL, staunch_rows_fetch, rows, NULL, FETCH_COLS * FETCH_ROWS,
          &n);
    uint64_t seq = 0;
    int calls = 0;
    for (;;) {
        n = 99;
        OK(staunch_rows_fetch, rows, v, FETCH_COLS * FETCH_ROWS, &n);
        if (n == 0) break;
        calls++;
        CHECKF(n <= FETCH_ROWS, "n_rows = %zu", n);
        if (calls == 1) {
            int64_t x = 0;
            FAILS(STAUNCH_NO_ROW, NULL, staunch_rows_get_i64, rows, 0, &x);
        }
        for (size_t r = 0; r < n; r++) {
            const staunch_value *row = v + r * FETCH_COLS;
            seq++;
            /* seq of seq_1_to_N is BIGINT UNSIGNED: tagged by its column. */
            CHECKF(row[0].type == STAUNCH_COLUMN_UINT && row[0].u64 == seq, "seq tag %u",
                   row[0].type);
            char want[32];
            snprintf(want, sizeof want, "n%llu", (unsigned long long)seq);
            CHECKF(row[1].type == STAUNCH_COLUMN_TEXT, "CONCAT tag %u", row[1].type);
            CHECK(row[1].ptr != NULL && row[1].len == strlen(want) &&
                  memcmp(row[1].ptr, want, row[1].len) == 0);
            CHECKF(row[2].type == STAUNCH_COLUMN_NULL, "NULL tag %u", row[2].type);
            CHECKF(row[3].type == STAUNCH_COLUMN_DOUBLE, "double tag %u", row[3].type);
            CHECK(row[3].f64 == (double)seq / 2.0);
            CHECKF(row[4].type == STAUNCH_COLUMN_UINT && row[4].u64 == seq, "unsigned tag %u",
                   row[4].type);
            CHECKF(row[5].type == STAUNCH_COLUMN_DATE, "date tag %u", row[5].type);
            CHECK(row[5].datetime.year == 2024 && row[5].datetime.month == 2 &&
                  row[5].datetime.day == 29 && row[5].datetime.hour == 0 &&
                  row[5].datetime.minute == 0 && row[5].datetime.second == 0 &&
                  row[5].datetime.microsecond == 0);
        }
    }
    CHECKF(seq == 1000, "fetched %llu rows", (unsigned long long)seq);
    n = 99;
    OK(staunch_rows_fetch, rows, v, FETCH_COLS * FETCH_ROWS, &n);
    CHECK(n == 0);
    printf("bulk fetch: seq column type %u, %d calls\n", seq_type, calls);
    free(v);
    staunch_rows_free(rows);
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

/* staunch_conn_query_batch: the types, figures and first rows in the call
 * that runs the statement; the row set reads on after them; `recycle` is
 * freed (ASan and memcheck see a leak or a double free); a wrong batch is
 * refused before anything is freed. */
static void query_batch(void) {
    staunch_pool *pool = open_pool("");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    OK(staunch_conn_execute, c, "CREATE TEMPORARY TABLE qb (id INT AUTO_INCREMENT PRIMARY KEY, s TEXT)",
       NULL, 0, NULL, NULL);
    staunch_column_type types[2] = {999, 999};
    staunch_value v[5];
    staunch_batch b = {.size = sizeof b, .types = types, .types_cap = 2, .values = v, .values_cap = 5};
    staunch_rows *rows = NULL;

    /* Three rows of two columns; room for two rows: two come, one is read on. */
    staunch_param p[1] = {staunch_param_text("x")};
    OK(staunch_conn_query_batch, c, "SELECT seq, CONCAT(?, seq) FROM seq_1_to_3", p, 1, 0, &b, &rows);
    CHECK(rows != NULL);
    CHECKF(b.n_columns == 2 && b.n_rows == 2, "n_columns %zu, n_rows %zu", b.n_columns, b.n_rows);
    CHECK(types[0] == STAUNCH_COLUMN_UINT && types[1] == STAUNCH_COLUMN_TEXT);
    CHECK(v[0].type == STAUNCH_COLUMN_UINT && v[0].u64 == 1 && v[2].u64 == 2);
    CHECK(v[3].type == STAUNCH_COLUMN_TEXT && v[3].len == 2 && memcmp(v[3].ptr, "x2", 2) == 0);
    size_t n = 0;
    OK(staunch_rows_fetch, rows, v, 5, &n);
    CHECK(n == 1 && v[0].u64 == 3);
    OK(staunch_rows_fetch, rows, v, 5, &n);
    CHECK(n == 0);

    /* The previous answer recycled; a statement with no rows: its figures. */
    b.recycle = rows;
    rows = NULL;
    OK(staunch_conn_query_batch, c, "INSERT INTO qb (s) VALUES ('a'), ('b')", NULL, 0, 0, &b, &rows);
    CHECK(b.recycle == NULL);
    CHECKF(b.n_columns == 0 && b.n_rows == 0 && b.affected_rows == 2 && b.last_insert_id == 1,
           "n_columns %zu, n_rows %zu, affected %llu, id %llu", b.n_columns, b.n_rows,
           (unsigned long long)b.affected_rows, (unsigned long long)b.last_insert_id);

    /* Fewer rows than fit: all of them; a failed statement still frees recycle. */
    b.recycle = rows;
    OK(staunch_conn_query_batch, c, "SELECT id, s FROM qb ORDER BY id", NULL, 0, STAUNCH_QUERY_TEXT,
       &b, &rows);
    CHECK(b.n_rows == 2 && v[2].type == STAUNCH_COLUMN_INT && v[2].i64 == 2);
    b.recycle = rows;
    rows = NULL;
    FAILS(STAUNCH_SERVER_ERROR, "qb_nope", staunch_conn_query_batch, c, "SELECT * FROM qb_nope", NULL, 0,
          0, &b, &rows);
    CHECK(b.recycle == NULL && rows == NULL);

    /* No room for a whole row, or a streamed answer: types, no rows. */
    b.values_cap = 1;
    OK(staunch_conn_query_batch, c, "SELECT id, s FROM qb", NULL, 0, 0, &b, &rows);
    CHECK(b.n_columns == 2 && b.n_rows == 0);
    OK(staunch_rows_fetch, rows, v, 5, &n);
    CHECK(n == 2);
    b.recycle = rows;
    b.values_cap = 5;
    OK(staunch_conn_query_batch, c, "SELECT id FROM qb", NULL, 0, STAUNCH_QUERY_STREAM, &b, &rows);
    CHECK(b.n_columns == 1 && b.n_rows == 0);
    OK(staunch_rows_fetch, rows, v, 5, &n);
    CHECK(n == 2);

    /* A wrong batch: refused, recycle left to the caller. */
    staunch_batch small = {.size = sizeof small - 8, .recycle = rows};
    staunch_rows *other = NULL;
    FAILS(STAUNCH_INVALID_ARGUMENT, "size", staunch_conn_query_batch, c, "DO 1", NULL, 0, 0, &small,
          &other);
    CHECK(small.recycle == rows && other == NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "batch", staunch_conn_query_batch, c, "DO 1", NULL, 0, 0, NULL, &other);
    staunch_rows_free(rows);
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

/* staunch_pool_query: one call borrows, runs and gives back; the answer
 * outlives the borrow; a failed statement gives the connection back too;
 * a streamed answer holds the connection until it ends or is freed. */
static void pool_query(void) {
    staunch_pool *pool = open_pool("max_size=1");
    staunch_rows *rows = NULL;
    staunch_param p[2] = {staunch_param_i64(40), staunch_param_text("two")};
    OK(staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT, "SELECT ? + 2, CONCAT(?, '!')", p, 2,
       0, &rows);
    /* max_size=1: the connection is back in the pool already. */
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, 0, &c);
    CHECK(c != NULL);
    CHECK(query_i64(c, "SELECT 5") == 5);
    staunch_conn_free(c);
    CHECK(next(rows));
    CHECK(get_i64(rows, 0) == 42);
    const char *t = NULL;
    size_t len = 0;
    OK(staunch_rows_get_text, rows, 1, &t, &len);
    CHECK(len == 4 && memcmp(t, "two!", 4) == 0);
    CHECK(!next(rows));
    staunch_rows_free(rows);

    /* Without rows: the figures on the row set. Text with several
     * statements (STAUNCH_QUERY_TEXT), then with parameters. */
    OK(staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT,
       "CREATE TEMPORARY TABLE pq (id INT AUTO_INCREMENT PRIMARY KEY, v INT); DO 1", NULL, 0,
       STAUNCH_QUERY_TEXT, &rows);
    CHECK(staunch_rows_column_count(rows) == 0);
    staunch_rows_free(rows);
    OK(staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT,
       "CREATE TABLE IF NOT EXISTS pool_query_t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)", NULL,
       0, STAUNCH_QUERY_TEXT, &rows);
    staunch_rows_free(rows);
    staunch_param v[1] = {staunch_param_i64(7)};
    OK(staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT,
       "INSERT INTO pool_query_t (v) VALUES (?), (?)", (staunch_param[]){v[0], v[0]}, 2, 0,
       &rows);
    CHECK(staunch_rows_column_count(rows) == 0);
    CHECKF(staunch_rows_affected_rows(rows) == 2, "affected %llu",
           (unsigned long long)staunch_rows_affected_rows(rows));
    CHECK(staunch_rows_last_insert_id(rows) >= 1);
    staunch_rows_free(rows);

    /* A server error: reported, and the connection is back (max_size=1). */
    rows = NULL;
    FAILS(STAUNCH_SERVER_ERROR, "1064", staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT,
          "SELEC 1", NULL, 0, STAUNCH_QUERY_TEXT, &rows);
    CHECK(rows == NULL);
    FAILS(STAUNCH_INVALID_ARGUMENT, NULL, staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT,
          "SELECT ?", v, 1, STAUNCH_QUERY_TEXT, &rows);
    FAILS(STAUNCH_NULL_ARGUMENT, NULL, staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT, NULL,
          NULL, 0, 0, &rows);
    OK(staunch_pool_get, pool, 0, &c);
    CHECK(c != NULL);
    CHECK(query_i64(c, "SELECT COUNT(*) FROM pool_query_t") >= 2);
    staunch_conn_free(c);
    OK(staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT, "DROP TABLE pool_query_t", NULL, 0,
       STAUNCH_QUERY_TEXT, &rows);
    staunch_rows_free(rows);

    /* Streamed (since 1.3.0): the row set holds the connection until its
     * first set is read to the end, or until it is freed (the rest read
     * off). As text (the protocol layer) and prepared (the mysql crate). */
    static const uint32_t ways[] = {STAUNCH_QUERY_TEXT, STAUNCH_QUERY_PREPARE};
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        uint32_t f = STAUNCH_QUERY_STREAM | ways[w];
        OK(staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT, "SELECT seq FROM seq_1_to_1000", NULL,
           0, f, &rows);
        OK(staunch_pool_try_get, pool, &c);
        CHECKF(c == NULL, "flags %#x: the connection is free while its rows stream", (unsigned)f);
        for (int64_t i = 1; i <= 1000; i++) {
            CHECK(next(rows));
            CHECKF(get_i64(rows, 0) == i, "flags %#x: row %lld", (unsigned)f, (long long)i);
        }
        CHECK(!next(rows));
        OK(staunch_pool_try_get, pool, &c);
        CHECKF(c != NULL, "flags %#x: the connection is not back after the last row", (unsigned)f);
        CHECK(query_i64(c, "SELECT 5") == 5);
        staunch_conn_free(c);
        staunch_rows_free(rows);
        OK(staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT, "SELECT seq FROM seq_1_to_100000", NULL,
           0, f, &rows);
        for (int i = 0; i < 3; i++) CHECK(next(rows));
        staunch_rows_free(rows);
        OK(staunch_pool_try_get, pool, &c);
        CHECKF(c != NULL, "flags %#x: the connection is not back after the rows were freed", (unsigned)f);
        CHECK(query_i64(c, "SELECT 6") == 6);
        staunch_conn_free(c);
    }

    /* A closed pool. A streamed row set may outlive its pool's close and
     * free, as a connection handle may: its rows still read, and freeing
     * it afterwards closes the connection (ASan and memcheck see the rest). */
    OK(staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT, "SELECT seq FROM seq_1_to_1000", NULL, 0,
       STAUNCH_QUERY_STREAM | STAUNCH_QUERY_TEXT, &rows);
    CHECK(next(rows) && get_i64(rows, 0) == 1);
    staunch_pool_close(pool, NULL);
    staunch_rows *other = NULL;
    FAILS(STAUNCH_CLOSED, NULL, staunch_pool_query, pool, STAUNCH_TIMEOUT_DEFAULT, "SELECT 1",
          NULL, 0, 0, &other);
    CHECK(other == NULL);
    staunch_pool_free(pool);
    CHECK(next(rows) && get_i64(rows, 0) == 2);
    staunch_rows_free(rows);
}

int main(void) {
    (void)test_url();
    row_count();
    streaming();
    multi_result();
    text_protocol();
    bytes_params();
    last_result();
    warnings();
    bulk_fetch();
    pool_query();
    query_batch();
    printf("results: ok\n");
    return 0;
}
