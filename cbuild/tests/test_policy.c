/* policy: what each binding used to decide for itself, answered once by the
 * library. A server error's category (staunch_error_category) comes from one
 * table: a duplicate key is INTEGRITY, a syntax error PROGRAMMING, a value
 * too long under strict mode DATA, and a number the table does not name
 * takes its SQLSTATE's class. Every placeholder's offset comes in one call
 * (staunch_conn_param_offsets), by the scanner that sends the statement. A
 * binding hands its user's whole URL over and keeps its own parameters
 * (staunch_options_claim_param, staunch_url_query); the user-info ends where
 * the library's parser says (staunch_url_userinfo_end). A statement the
 * server cannot prepare is accepted at prepare (STAUNCH_PREPARE_TEXT_OK). */
#include "util.h"

#include <stdint.h>

static void categories(staunch_conn *c) {
    exec_sql(c, "SET SESSION sql_mode = 'STRICT_ALL_TABLES'");
    exec_sql(c, "CREATE TEMPORARY TABLE cat (id INT PRIMARY KEY, s VARCHAR(3))");
    exec_sql(c, "INSERT INTO cat VALUES (1, 'a')");
    const struct {
        const char *sql;
        uint32_t code;
        staunch_category want;
    } cases[] = {
        {"INSERT INTO cat VALUES (1, 'b')", 1062, STAUNCH_CATEGORY_INTEGRITY},
        {"SELEKT 1", 1064, STAUNCH_CATEGORY_PROGRAMMING},
        {"INSERT INTO cat VALUES (2, 'abcd')", 1406, STAUNCH_CATEGORY_DATA},
        {"SIGNAL SQLSTATE '23001' SET MYSQL_ERRNO = 30001", 30001, STAUNCH_CATEGORY_INTEGRITY},
        {"SIGNAL SQLSTATE '0A001' SET MYSQL_ERRNO = 30002", 30002,
         STAUNCH_CATEGORY_NOT_SUPPORTED},
        {"SIGNAL SQLSTATE '45000'", 1644, STAUNCH_CATEGORY_OPERATIONAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        staunch_error *err = NULL;
        staunch_status st = staunch_conn_execute(c, cases[i].sql, NULL, 0, NULL, NULL, &err);
        CHECKF(st == STAUNCH_SERVER_ERROR, "%s: %s", cases[i].sql, staunch_status_name(st));
        uint32_t code = staunch_error_server_code(err);
        staunch_category got = staunch_error_category(err);
        staunch_error_free(err);
        CHECKF(code == cases[i].code && got == cases[i].want, "%s: code %u category %u",
               cases[i].sql, code, got);
    }
    /* No server error, no category. */
    CHECK(staunch_error_category(NULL) == STAUNCH_CATEGORY_NONE);
    staunch_error *err = NULL;
    CHECK(staunch_conn_execute(c, NULL, NULL, 0, NULL, NULL, &err) == STAUNCH_NULL_ARGUMENT);
    CHECK(staunch_error_category(err) == STAUNCH_CATEGORY_NONE);
    staunch_error_free(err);
}

static void param_offsets(staunch_conn *c) {
    const char *sql = "SELECT ?, '?', `a?`, /* ? */ ? # ?\n";
    size_t n = 0;
    OK(staunch_conn_param_offsets, c, sql, NULL, 0, &n);
    CHECK(n == 2);
    size_t at[2] = {0, 0};
    OK(staunch_conn_param_offsets, c, sql, at, 2, &n);
    CHECKF(n == 2 && at[0] == 7 && at[1] == 29, "%zu: %zu %zu", n, at[0], at[1]);
    size_t one = 0;
    OK(staunch_conn_param_offsets, c, sql, &one, 1, &n);
    CHECK(n == 2 && one == 7);
    FAILS(STAUNCH_NULL_ARGUMENT, "offsets", staunch_conn_param_offsets, c, sql, NULL, 1, &n);
    /* A backslash escapes the quote, so the first string runs on past the ?. */
    const char *backslash = "SELECT 'C:\\', ?, 'why?'";
    exec_sql(c, "SET SESSION sql_mode = ''");
    OK(staunch_conn_param_offsets, c, backslash, at, 2, &n);
    CHECKF(n == 1 && at[0] == 21, "%zu: %zu", n, at[0]);
    exec_sql(c, "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'");
    OK(staunch_conn_param_offsets, c, backslash, at, 2, &n);
    CHECKF(n == 1 && at[0] == 14, "%zu: %zu", n, at[0]);
    exec_sql(c, "SET SESSION sql_mode = 'ANSI_QUOTES'");
    OK(staunch_conn_param_offsets, c, "SELECT \"a?\", ?", at, 2, &n);
    CHECKF(n == 1 && at[0] == 13, "%zu: %zu", n, at[0]);
}

/* A statement the server cannot prepare (1295): an error for
 * staunch_conn_prepare, which a driver's Prepare used to forgive itself (Go);
 * with STAUNCH_PREPARE_TEXT_OK a success with the scanner's count of its
 * placeholders, and then it runs, as text, with its value. */
static void prepare_text_ok(staunch_conn *c) {
    const char *sql = "PREPARE c_ps FROM CONCAT('SELECT 40 + ', ?)";
    uint32_t n = 99;
    staunch_error *err = NULL;
    CHECK(staunch_conn_prepare(c, sql, &n, &err) == STAUNCH_SERVER_ERROR);
    CHECKF(staunch_error_server_code(err) == 1295, "code %u", staunch_error_server_code(err));
    staunch_error_free(err);
    CHECK(n == 99);
    OK(staunch_conn_prepare_ex, c, sql, STAUNCH_PREPARE_TEXT_OK, &n);
    CHECKF(n == 1, "%u placeholders", n);
    /* One the server prepares: its count, as without the flag. */
    OK(staunch_conn_prepare_ex, c, "SELECT ?, '?', ?", STAUNCH_PREPARE_TEXT_OK, &n);
    CHECKF(n == 2, "%u placeholders", n);
    /* Any other refusal is still an error. */
    err = NULL;
    CHECK(staunch_conn_prepare_ex(c, "SELEKT ?", STAUNCH_PREPARE_TEXT_OK, &n, &err) == STAUNCH_SERVER_ERROR);
    CHECKF(staunch_error_server_code(err) == 1064, "code %u", staunch_error_server_code(err));
    staunch_error_free(err);
    FAILS(STAUNCH_INVALID_ARGUMENT, "unknown flags 0x4", staunch_conn_prepare_ex, c, sql, 4u, &n);
    staunch_param p = staunch_param_i64(2);
    OK(staunch_conn_execute, c, sql, &p, 1, NULL, NULL);
    CHECKF(query_i64(c, "EXECUTE c_ps") == 42, "EXECUTE gave another value");
    exec_sql(c, "DEALLOCATE PREPARE c_ps");
}

static void urls(void) {
    const char *url = "mysql://u:p?w@d@127.0.0.1:1/db?parseTime=true&max_size=3";
    char q[64];
    size_t len = 0;
    OK(staunch_url_query, url, q, sizeof q, &len);
    CHECKF(strcmp(q, "parseTime=true&max_size=3") == 0 && len == strlen(q), "%s", q);
    OK(staunch_url_query, "mysql://h/db", q, sizeof q, &len);
    CHECK(len == 0 && q[0] == '\0');
    size_t at = 0;
    OK(staunch_url_userinfo_end, url, &at);
    CHECKF(at == strlen("mysql://u:p?w@d"), "%zu", at);
    OK(staunch_url_userinfo_end, "mysql://h/db?max_size=2", &at);
    CHECK(at == SIZE_MAX);

    staunch_options *opts = NULL;
    staunch_pool *pool = NULL;
    OK(staunch_options_new, &opts);
    OK(staunch_options_set_url, opts, url);
    FAILS(STAUNCH_INVALID_CONFIG, "unknown knob \"parseTime\"", staunch_pool_open_options, opts,
          &pool);
    staunch_options_free(opts);
    OK(staunch_options_new, &opts);
    OK(staunch_options_claim_param, opts, "parseTime");
    FAILS(STAUNCH_INVALID_CONFIG, "one of staunch's knobs", staunch_options_claim_param, opts,
          "max_size");
    OK(staunch_options_set_url, opts, url);
    OK(staunch_pool_open_options, opts, &pool);
    staunch_pool_free(pool);
    staunch_options_free(opts);
}

int main(void) {
    urls();
    staunch_pool *pool = open_pool("max_size=1");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    categories(c);
    param_offsets(c);
    prepare_text_ok(c);
    staunch_conn_free(c);
    staunch_pool_free(pool);
    return 0;
}
