/* conf_types: every parameter and column type round trips: NULL, signed and
 * unsigned 64-bit edges, double, non-ASCII text, empty and binary bytes (with
 * NULs), DECIMAL (as text), DATE, DATETIME(6), TIME. */
#include "util.h"

#include <math.h>

#define NCOLS 10

typedef struct {
    int64_t i;
    uint64_t u;
    double d;
    const char *t;
    const char *b;
    size_t blen;
    const char *dec;
    staunch_datetime dt;
    staunch_datetime dtm;
    staunch_time tm;
} row_values;

static const char *const names[NCOLS] = {"id", "i", "u", "d", "t", "b", "dec", "dt", "dtm", "tm"};
static const staunch_column_type types[NCOLS] = {
    STAUNCH_COLUMN_INT,     STAUNCH_COLUMN_INT,  STAUNCH_COLUMN_UINT,    STAUNCH_COLUMN_DOUBLE,
    STAUNCH_COLUMN_TEXT,    STAUNCH_COLUMN_BYTES, STAUNCH_COLUMN_DECIMAL, STAUNCH_COLUMN_DATE,
    STAUNCH_COLUMN_DATETIME, STAUNCH_COLUMN_TIME};

static staunch_datetime dtv(uint16_t y, uint8_t mo, uint8_t d, uint8_t h, uint8_t mi, uint8_t s,
                            uint32_t us) {
    staunch_datetime v;
    memset(&v, 0, sizeof v);
    v.year = y;
    v.month = mo;
    v.day = d;
    v.hour = h;
    v.minute = mi;
    v.second = s;
    v.microsecond = us;
    return v;
}

static staunch_time tmv(bool neg, uint32_t days, uint8_t h, uint8_t mi, uint8_t s, uint32_t us) {
    staunch_time v;
    memset(&v, 0, sizeof v);
    v.negative = neg;
    v.days = days;
    v.hours = h;
    v.minutes = mi;
    v.seconds = s;
    v.microseconds = us;
    return v;
}

static void insert(staunch_conn *c, int id, const row_values *v) {
    staunch_param p[NCOLS];
    p[0] = staunch_param_i64(id);
    if (v == NULL) {
        for (int k = 1; k < NCOLS; k++) p[k] = staunch_param_null();
    } else {
        p[1] = staunch_param_i64(v->i);
        p[2] = staunch_param_u64(v->u);
        p[3] = staunch_param_double(v->d);
        p[4] = staunch_param_text(v->t);
        p[5] = staunch_param_bytes(v->b, v->blen);
        p[6] = staunch_param_text(v->dec);
        p[7] = staunch_param_date(v->dt.year, v->dt.month, v->dt.day);
        p[8] = staunch_param_datetime(v->dtm);
        p[9] = staunch_param_time(v->tm);
    }
    uint64_t affected = 0;
    OK(staunch_conn_execute, c,
       "INSERT INTO c_types (id, i, u, d, t, b, `dec`, dt, dtm, tm) "
       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
       p, NCOLS, &affected, NULL);
    CHECK(affected == 1);
}

static void check_row(staunch_rows *rows, int id, const row_values *v) {
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    CHECK(has);
    int64_t got_id = 0;
    OK(staunch_rows_get_i64, rows, 0, &got_id);
    CHECK(got_id == id);
    bool is_null = false;
    if (v == NULL) {
        for (size_t k = 1; k < NCOLS; k++) {
            OK(staunch_rows_is_null, rows, k, &is_null);
            CHECKF(is_null, "row %d column %zu should be NULL", id, k);
        }
        return;
    }
    for (size_t k = 1; k < NCOLS; k++) {
        OK(staunch_rows_is_null, rows, k, &is_null);
        CHECK(!is_null);
    }
    int64_t i = 0;
    OK(staunch_rows_get_i64, rows, 1, &i);
    CHECK(i == v->i);
    uint64_t u = 0;
    OK(staunch_rows_get_u64, rows, 2, &u);
    CHECK(u == v->u);
    double d = 0;
    OK(staunch_rows_get_double, rows, 3, &d);
    CHECK(memcmp(&d, &v->d, sizeof d) == 0); /* bit for bit */

    const char *t = NULL;
    size_t tlen = 99;
    OK(staunch_rows_get_text, rows, 4, &t, &tlen);
    CHECK(tlen == strlen(v->t) && memcmp(t, v->t, tlen) == 0 && t[tlen] == '\0');
    const uint8_t *tb = NULL;
    OK(staunch_rows_get_bytes, rows, 4, &tb, &tlen); /* text as bytes works too */
    CHECK(tlen == strlen(v->t) && memcmp(tb, v->t, tlen) == 0);

    const uint8_t *b = NULL;
    size_t blen = 99;
    OK(staunch_rows_get_bytes, rows, 5, &b, &blen);
    CHECK(b != NULL);
    CHECK(blen == v->blen && memcmp(b, v->b, blen) == 0);

    const char *dec = NULL;
    size_t declen = 0;
    OK(staunch_rows_get_text, rows, 6, &dec, &declen);
    CHECKF(strcmp(dec, v->dec) == 0 && declen == strlen(v->dec), "DECIMAL %s != %s", dec, v->dec);

    staunch_datetime dt;
    OK(staunch_rows_get_datetime, rows, 7, &dt);
    CHECK(dt.year == v->dt.year && dt.month == v->dt.month && dt.day == v->dt.day);
    CHECK(dt.hour == 0 && dt.minute == 0 && dt.second == 0 && dt.microsecond == 0);
    OK(staunch_rows_get_datetime, rows, 8, &dt);
    CHECKF(memcmp(&dt, &v->dtm, sizeof dt) == 0 ||
               (dt.year == v->dtm.year && dt.month == v->dtm.month && dt.day == v->dtm.day &&
                dt.hour == v->dtm.hour && dt.minute == v->dtm.minute &&
                dt.second == v->dtm.second && dt.microsecond == v->dtm.microsecond),
           "DATETIME %04u-%02u-%02u %02u:%02u:%02u.%06u", dt.year, dt.month, dt.day, dt.hour,
           dt.minute, dt.second, dt.microsecond);
    staunch_time tm;
    OK(staunch_rows_get_time, rows, 9, &tm);
    CHECKF(tm.negative == v->tm.negative && tm.days == v->tm.days && tm.hours == v->tm.hours &&
               tm.minutes == v->tm.minutes && tm.seconds == v->tm.seconds &&
               tm.microseconds == v->tm.microseconds,
           "TIME %s%u days %02u:%02u:%02u.%06u", tm.negative ? "-" : "", tm.days, tm.hours,
           tm.minutes, tm.seconds, tm.microseconds);
}

int main(void) {
    staunch_pool *pool = open_pool("max_size=2");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    exec_sql(c, "DROP TABLE IF EXISTS c_types");
    exec_sql(c,
             "CREATE TABLE c_types (id INT PRIMARY KEY, i BIGINT NULL, u BIGINT UNSIGNED NULL, "
             "d DOUBLE NULL, t TEXT CHARACTER SET utf8mb4 NULL, b BLOB NULL, "
             "`dec` DECIMAL(30,6) NULL, dt DATE NULL, dtm DATETIME(6) NULL, tm TIME(6) NULL)");

    static const char bin[] = {'\0', '\x01', '\xff', '\0', 'b', 'i', 'n'};
    row_values lo = {
        INT64_MIN, 0, -1.5e-300, "", "", 0, "-12345678901234.123456",
        {1000, 1, 1, 0, 0, 0, 0},
        {1000, 1, 1, 0, 0, 0, 0},
        {true, 34, 22, 59, 59, 0},
    };
    lo.dtm = dtv(1000, 1, 1, 0, 0, 0, 0);
    lo.tm = tmv(true, 34, 22, 59, 59, 0); /* -838:59:59 */
    row_values hi = {
        INT64_MAX, UINT64_MAX, 3.141592653589793,
        "h\xc3\xa9llo, \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x8e\x89 \"quoted\" 'single' \\ back",
        bin, sizeof bin, "0.000001",
        {2024, 2, 29, 0, 0, 0, 0},
        {2024, 2, 29, 23, 59, 58, 123456},
        {false, 1, 2, 3, 4, 500000},
    };
    hi.dtm = dtv(2024, 2, 29, 23, 59, 58, 123456);
    hi.tm = tmv(false, 1, 2, 3, 4, 500000); /* 26:03:04.5 */

    insert(c, 1, &lo);
    insert(c, 2, &hi);
    insert(c, 3, NULL);

    staunch_rows *rows = NULL;
    OK(staunch_conn_query, c,
       "SELECT id, i, u, d, t, b, `dec`, dt, dtm, tm FROM c_types ORDER BY id", NULL, 0, &rows);
    CHECK(staunch_rows_column_count(rows) == NCOLS);
    for (size_t k = 0; k < NCOLS; k++) {
        const char *name = NULL;
        size_t len = 0;
        OK(staunch_rows_column_name, rows, k, &name, &len);
        CHECKF(strcmp(name, names[k]) == 0 && len == strlen(names[k]), "column %zu is %s", k,
               name);
        staunch_column_type ty = 99;
        OK(staunch_rows_column_type, rows, k, &ty);
        CHECKF(ty == types[k], "column %s has type %u, want %u", name, ty, types[k]);
    }
    check_row(rows, 1, &lo);
    check_row(rows, 2, &hi);
    check_row(rows, 3, NULL);
    bool has = true;
    OK(staunch_rows_next, rows, &has);
    CHECK(!has);
    staunch_rows_free(rows);

    /* A bare NULL column, and parameters echoed without a table. */
    staunch_param echo[4] = {staunch_param_null(), staunch_param_i64(-7), staunch_param_u64(7),
                             staunch_param_text("\xc3\xa9t\xc3\xa9")};
    OK(staunch_conn_query, c, "SELECT NULL, ?, ?, ?, ?", echo, 4, &rows);
    staunch_column_type ty = 99;
    OK(staunch_rows_column_type, rows, 0, &ty);
    CHECK(ty == STAUNCH_COLUMN_NULL);
    OK(staunch_rows_next, rows, &has);
    CHECK(has);
    bool is_null = false;
    OK(staunch_rows_is_null, rows, 0, &is_null);
    CHECK(is_null);
    OK(staunch_rows_is_null, rows, 1, &is_null);
    CHECK(is_null);
    int64_t i = 0;
    OK(staunch_rows_get_i64, rows, 2, &i);
    CHECK(i == -7);
    OK(staunch_rows_get_i64, rows, 3, &i);
    CHECK(i == 7);
    const char *t = NULL;
    OK(staunch_rows_get_text, rows, 4, &t, NULL);
    CHECK(strcmp(t, "\xc3\xa9t\xc3\xa9") == 0);
    staunch_rows_free(rows);

    exec_sql(c, "DROP TABLE c_types");
    staunch_conn_free(c);
    staunch_pool_free(pool);
    printf("conf_types: ok\n");
    return 0;
}
