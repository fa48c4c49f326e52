/* Exact values and the two ways to send a statement (issue #20), one
 * scenario per run (argv[1]):
 *   conf_decimal_exact  UPDATE bal = bal + 0.01 on DECIMAL(30,2) stays exact;
 *                       SELECT ? of 15.7563 is a DECIMAL column; a bad
 *                       decimal is refused naming its parameter.
 *   conf_unpreparable   a window frame with bound values (1064 at prepare:
 *                       interpolated instead) and WITH ... VALUES (?, ?)
 *                       interpolated.
 *   conf_sql_modes      under NO_BACKSLASH_ESCAPES, then ANSI_QUOTES:
 *                       SELECT 'C:\', ?, 'why?' with bytes ff 00 41, and a
 *                       text value holding ' \ " and ?.
 * Each runs prepared (STAUNCH_QUERY_PREPARE) and interpolated
 * (STAUNCH_QUERY_INTERPOLATE), and through the interpolate_params knob. */
#include "util.h"

static const uint32_t WAYS[2] = {STAUNCH_QUERY_PREPARE, STAUNCH_QUERY_INTERPOLATE};

static const char *way_name(uint32_t w) {
    return w == STAUNCH_QUERY_PREPARE ? "prepared" : "interpolated";
}

/* Runs sql with params one way and positions on the first row. */
static staunch_rows *first(staunch_conn *c, const char *sql, const staunch_param *p, size_t n,
                           uint32_t way) {
    staunch_rows *rows = NULL;
    staunch_error *err = NULL;
    staunch_status st = staunch_conn_query_ex(c, sql, p, n, way, &rows, &err);
    CHECKF(st == STAUNCH_OK, "%s (%s): %s", sql, way_name(way), staunch_error_message(err));
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    CHECKF(has, "%s: no row", sql);
    return rows;
}

static void check_text(staunch_rows *rows, size_t col, const char *want, const char *what) {
    const uint8_t *ptr = NULL;
    size_t len = 0;
    OK(staunch_rows_get_bytes, rows, col, &ptr, &len);
    CHECKF(len == strlen(want) && memcmp(ptr, want, len) == 0, "%s: got %.*s, want %s", what,
           (int)len, (const char *)ptr, want);
}

static staunch_param dec(const char *s) {
    return staunch_param_decimal(s, strlen(s));
}

static void decimal_exact(void) {
    staunch_pool *pool = open_pool("max_size=2");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    exec_sql(c, "DROP TABLE IF EXISTS c_acct");
    exec_sql(c, "CREATE TABLE c_acct (id INT PRIMARY KEY, bal DECIMAL(30,2))");
    exec_sql(c, "INSERT INTO c_acct VALUES (1, 1234567890123456789.01)");
    const char *want[2] = {"1234567890123456789.02", "1234567890123456789.03"};
    for (int w = 0; w < 2; w++) {
        staunch_param p[2] = {dec("0.01"), staunch_param_i64(1)};
        staunch_rows *rows = NULL;
        OK(staunch_conn_query_ex, c, "UPDATE c_acct SET bal = bal + ? WHERE id = ?", p, 2,
           WAYS[w], &rows);
        staunch_rows_free(rows);
        char got[64];
        query_text(c, "SELECT CAST(bal AS CHAR) FROM c_acct WHERE id = 1", 0, got, sizeof got);
        CHECKF(strcmp(got, want[w]) == 0, "%s: bal %s, want %s", way_name(WAYS[w]), got, want[w]);

        staunch_param q = dec("15.7563");
        rows = first(c, "SELECT ?", &q, 1, WAYS[w]);
        staunch_column_type t = 0;
        OK(staunch_rows_column_type, rows, 0, &t);
        CHECKF(t == STAUNCH_COLUMN_DECIMAL, "%s: SELECT ? of a decimal is column type %u",
               way_name(WAYS[w]), (unsigned)t);
        check_text(rows, 0, "15.7563", "SELECT ?");
        staunch_rows_free(rows);
    }
    /* The knob's way, through staunch_conn_execute. */
    staunch_pool *ipool = open_pool("max_size=1&interpolate_params=true");
    staunch_conn *ic = NULL;
    OK(staunch_pool_get, ipool, STAUNCH_TIMEOUT_DEFAULT, &ic);
    staunch_param p[2] = {dec("-.03"), staunch_param_i64(1)};
    uint64_t affected = 0;
    OK(staunch_conn_execute, ic, "UPDATE c_acct SET bal = bal + ? WHERE id = ?", p, 2, &affected,
       NULL);
    CHECK(affected == 1);
    char got[64];
    query_text(ic, "SELECT CAST(bal AS CHAR) FROM c_acct WHERE id = 1", 0, got, sizeof got);
    CHECKF(strcmp(got, "1234567890123456789.00") == 0, "knob: bal %s", got);

    /* Not decimals: refused before anything is sent, naming the parameter. */
    const char *bad[] = {"1e5", "", "12a", " 1", "1.2.3", "0x10", "NaN"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        staunch_param b[2] = {staunch_param_i64(1), dec(bad[i])};
        for (int w = 0; w < 2; w++) {
            staunch_rows *rows = NULL;
            FAILS(STAUNCH_INVALID_ARGUMENT, "params[1] (STAUNCH_PARAM_DECIMAL)",
                  staunch_conn_query_ex, c, "SELECT ?, ?", b, 2, WAYS[w], &rows);
            CHECK(rows == NULL);
        }
    }
    staunch_param nul = staunch_param_decimal(NULL, 3);
    FAILS(STAUNCH_NULL_ARGUMENT, "params[0].ptr", staunch_conn_execute, c, "SELECT ?", &nul, 1,
          NULL, NULL);
    /* Both ways at once is a mistake. */
    staunch_rows *rows = NULL;
    FAILS(STAUNCH_INVALID_ARGUMENT, "STAUNCH_QUERY_PREPARE", staunch_conn_query_ex, c,
          "SELECT 1", NULL, 0, STAUNCH_QUERY_INTERPOLATE | STAUNCH_QUERY_PREPARE, &rows);
    exec_sql(c, "DROP TABLE c_acct");
    staunch_conn_free(ic);
    staunch_pool_free(ipool);
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

static void unpreparable(void) {
    staunch_pool *pool = open_pool("max_size=1");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    exec_sql(c, "DROP TABLE IF EXISTS c_win");
    exec_sql(c, "CREATE TABLE c_win (x INT)");
    exec_sql(c, "INSERT INTO c_win VALUES (1), (2), (3)");
    for (int w = 0; w < 2; w++) {
        staunch_param p[2] = {staunch_param_i64(1), staunch_param_i64(1)};
        staunch_rows *rows = NULL;
        OK(staunch_conn_query_ex, c,
           "SELECT SUM(x) OVER (ORDER BY x ROWS BETWEEN ? PRECEDING AND ? FOLLOWING) "
           "FROM c_win ORDER BY x",
           p, 2, WAYS[w], &rows);
        const char *sums[3] = {"3", "6", "5"};
        for (int i = 0; i < 3; i++) {
            bool has = false;
            OK(staunch_rows_next, rows, &has);
            CHECK(has);
            check_text(rows, 0, sums[i], way_name(WAYS[w]));
        }
        bool has = true;
        OK(staunch_rows_next, rows, &has);
        CHECK(!has);
        staunch_rows_free(rows);
    }
    /* Prepared, the server answers this one with empty cells: interpolated
     * it is right, by the flag and by the knob. */
    const char *sql = "WITH c(a,b) AS (VALUES (?, ?), (?, ?)) SELECT a, b FROM c";
    staunch_param v[4] = {staunch_param_text("a"), staunch_param_i64(2), staunch_param_text("b"),
                          staunch_param_i64(3)};
    staunch_pool *ipool = open_pool("max_size=1&interpolate_params=true");
    staunch_conn *ic = NULL;
    OK(staunch_pool_get, ipool, STAUNCH_TIMEOUT_DEFAULT, &ic);
    staunch_conn *conns[2] = {c, ic};
    uint32_t flags[2] = {STAUNCH_QUERY_INTERPOLATE, 0};
    for (int k = 0; k < 2; k++) {
        staunch_rows *rows = first(conns[k], sql, v, 4, flags[k]);
        check_text(rows, 0, "a", "VALUES a");
        int64_t b = 0;
        OK(staunch_rows_get_i64, rows, 1, &b);
        CHECK(b == 2);
        bool has = false;
        OK(staunch_rows_next, rows, &has);
        CHECK(has);
        check_text(rows, 0, "b", "VALUES b");
        OK(staunch_rows_get_i64, rows, 1, &b);
        CHECK(b == 3);
        staunch_rows_free(rows);
    }
    /* A real syntax error is still the server's error, both ways. */
    for (int w = 0; w < 2; w++) {
        staunch_param one = staunch_param_i64(1);
        staunch_rows *rows = NULL;
        FAILS(STAUNCH_SERVER_ERROR, "syntax", staunch_conn_query_ex, c, "SELEC ?", &one, 1,
              WAYS[w], &rows);
    }
    exec_sql(c, "DROP TABLE c_win");
    staunch_conn_free(ic);
    staunch_pool_free(ipool);
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

static void sql_modes(void) {
    staunch_pool *pool = open_pool("max_size=1");
    const char *tricky = "it's a \\ back\\slash, a \"quote\" and a ? mark\\";
    const uint8_t bytes[3] = {0xff, 0x00, 0x41};
    const char *modes[2] = {"NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"};
    for (int m = 0; m < 2; m++) {
        staunch_conn *c = NULL;
        OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
        char set[96];
        snprintf(set, sizeof set, "SET SESSION sql_mode = '%s'", modes[m]);
        exec_sql(c, set);
        /* Under NO_BACKSLASH_ESCAPES, `'C:\'` is a whole string; under
         * ANSI_QUOTES the same text is written with the backslash doubled. */
        const char *sql = m == 0 ? "SELECT 'C:\\', ?, 'why?'" : "SELECT 'C:\\\\', ?, 'why?'";
        size_t n = 0;
        OK(staunch_conn_count_params, c, sql, &n);
        CHECKF(n == 1, "%s: %zu placeholders", modes[m], n);
        const char *q2 = m == 1 ? "SELECT ? AS \"a?\", 'x\"?' AS \"b\"\"?\""
                                : "SELECT ? AS `a?`, 'x\"?' AS `b``?`";
        OK(staunch_conn_count_params, c, q2, &n);
        CHECKF(n == 1, "%s: %zu placeholders in %s", modes[m], n, q2);
        for (int w = 0; w < 2; w++) {
            staunch_param p = staunch_param_bytes(bytes, sizeof bytes);
            staunch_rows *rows = first(c, sql, &p, 1, WAYS[w]);
            check_text(rows, 0, "C:\\", "first literal");
            const uint8_t *ptr = NULL;
            size_t len = 0;
            OK(staunch_rows_get_bytes, rows, 1, &ptr, &len);
            CHECKF(len == 3 && memcmp(ptr, bytes, 3) == 0, "%s %s: bytes came back as %zu bytes",
                   modes[m], way_name(WAYS[w]), len);
            check_text(rows, 2, "why?", "last literal");
            staunch_rows_free(rows);

            staunch_param t = staunch_param_text(tricky);
            rows = first(c, q2, &t, 1, WAYS[w]);
            check_text(rows, 0, tricky, "text value");
            check_text(rows, 1, "x\"?", "literal");
            staunch_rows_free(rows);
        }
        staunch_conn_free(c);
    }
    staunch_pool_free(pool);
}

int main(int argc, char **argv) {
    const char *which = argc > 1 ? argv[1] : "";
    if (strcmp(which, "conf_decimal_exact") == 0) {
        decimal_exact();
    } else if (strcmp(which, "conf_unpreparable") == 0) {
        unpreparable();
    } else if (strcmp(which, "conf_sql_modes") == 0) {
        sql_modes();
    } else {
        fprintf(stderr, "usage: %s conf_decimal_exact|conf_unpreparable|conf_sql_modes\n", argv[0]);
        return 2;
    }
    printf("%s: ok\n", which);
    return 0;
}
