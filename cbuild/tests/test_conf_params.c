/* conf_params: bound parameters. The right count works; a wrong count and a
 * wrong type fail with a clear error; a value that would break naive quoting
 * is stored verbatim and the table still exists. */
#include "util.h"

static int64_t count_rows(staunch_conn *c) {
    return query_i64(c, "SELECT COUNT(*) FROM c_params");
}

int main(void) {
    staunch_pool *pool = open_pool("max_size=2");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    exec_sql(c, "DROP TABLE IF EXISTS c_params");
    exec_sql(c, "CREATE TABLE c_params (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL)");

    /* Right count; the value would end a naively quoted string literal. */
    const char *evil = "'); DROP TABLE c_params; --";
    staunch_param p[3] = {staunch_param_i64(1), staunch_param_text(evil), staunch_param_i64(0)};
    uint64_t affected = 0, last_id = 42;
    OK(staunch_conn_execute, c, "INSERT INTO c_params (id, name) VALUES (?, ?)", p, 2, &affected,
       &last_id);
    CHECK(affected == 1 && last_id == 0);

    staunch_rows *rows = NULL;
    OK(staunch_conn_query, c, "SELECT name FROM c_params WHERE id = ?", p, 1, &rows);
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    CHECK(has);
    const char *name = NULL;
    size_t len = 0;
    OK(staunch_rows_get_text, rows, 0, &name, &len);
    CHECKF(len == strlen(evil) && memcmp(name, evil, len) == 0, "stored: %s", name);
    staunch_rows_free(rows);

    /* Wrong counts: too few, too many, none; for execute and query. */
    affected = 77;
    FAILS(STAUNCH_PARAM_COUNT, "2 placeholder(s) but 1 parameter(s)", staunch_conn_execute, c,
          "INSERT INTO c_params (id, name) VALUES (?, ?)", p, 1, &affected, NULL);
    CHECK(affected == 77); /* out-parameters untouched on failure */
    FAILS(STAUNCH_PARAM_COUNT, "2 placeholder(s) but 3 parameter(s)", staunch_conn_execute, c,
          "INSERT INTO c_params (id, name) VALUES (?, ?)", p, 3, NULL, NULL);
    rows = NULL;
    FAILS(STAUNCH_PARAM_COUNT, "1 placeholder(s) but 2 parameter(s)", staunch_conn_query, c,
          "SELECT name FROM c_params WHERE id = ?", p, 2, &rows);
    CHECK(rows == NULL);
    /* No parameters for a placeholder: the prepared path reports it too. */
    FAILS(STAUNCH_PARAM_COUNT, "1 placeholder(s) but 0 parameter(s)", staunch_conn_query, c,
          "SELECT name FROM c_params WHERE id = ?", NULL, 0, &rows);

    /* Wrong types: text for an INT column (the server refuses in strict
     * mode), and a type tag staunch does not know. */
    staunch_param wrong[2] = {staunch_param_text("not a number"), staunch_param_text("x")};
    staunch_error *err = NULL;
    staunch_status st = staunch_conn_execute(c, "INSERT INTO c_params (id, name) VALUES (?, ?)",
                                             wrong, 2, NULL, NULL, &err);
    CHECKF(st == STAUNCH_SERVER_ERROR, "got %s: %s", staunch_status_name(st),
           staunch_error_message(err));
    CHECKF(staunch_error_server_code(err) == 1366, "server code %u: %s",
           staunch_error_server_code(err), staunch_error_message(err));
    CHECK(strlen(staunch_error_sqlstate(err)) == 5);
    CHECK(strstr(staunch_error_message(err), "Incorrect integer value") != NULL);
    staunch_error_free(err);

    staunch_param bad_tag = staunch_param_i64(2);
    bad_tag.type = 99;
    FAILS(STAUNCH_BAD_PARAM_TYPE, "params[0] has unknown type 99", staunch_conn_execute, c,
          "INSERT INTO c_params (id, name) VALUES (?, 'x')", &bad_tag, 1, NULL, NULL);

    /* The table survived everything above, with its one row. */
    CHECK(count_rows(c) == 1);
    CHECK(query_i64(c, "SELECT COUNT(*) FROM information_schema.tables "
                       "WHERE table_schema = DATABASE() AND table_name = 'c_params'") == 1);

    exec_sql(c, "DROP TABLE c_params");
    staunch_conn_free(c);
    staunch_pool_free(pool);
    printf("conf_params: ok\n");
    return 0;
}
