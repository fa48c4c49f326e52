/* Quick start: open a pool, borrow a connection, write and read with bound
 * parameters, give the connection back, close the pool.
 *
 *   example_quickstart [URL]
 *
 * URL defaults to $STAUNCH_URL, then $STAUNCH_TEST_URL, e.g.
 * mysql://app:app-secret@127.0.0.1:3306/staunch_test. Exits 77 (nothing done)
 * without one. */
#include <staunch.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints and frees the error *err, if the call failed; says whether it did.
 * (It takes &err, not err: C evaluates arguments in no fixed order, so `err`
 * could be read before the call in the same argument list had set it.) */
static int failed(staunch_status st, staunch_error **err, const char *what) {
    if (st == STAUNCH_OK) return 0;
    fprintf(stderr, "%s: %s: %s (server error %u, SQLSTATE '%s')\n", what,
            staunch_status_name(st), staunch_error_message(*err), staunch_error_server_code(*err),
            staunch_error_sqlstate(*err));
    staunch_error_free(*err);
    *err = NULL;
    return 1;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : getenv("STAUNCH_URL");
    if (url == NULL) url = getenv("STAUNCH_TEST_URL");
    if (url == NULL) {
        fprintf(stderr, "usage: %s mysql://user:pass@host:port/db\n", argv[0]);
        return 77;
    }

    staunch_error *err = NULL;
    staunch_pool *pool = NULL;
    if (failed(staunch_pool_open(url, &pool, &err), &err, "open")) return 1;

    /* Borrow a connection: waits at most the pool's connection_timeout (10 s
     * unless the URL says otherwise), whatever the network does. */
    staunch_conn *conn = NULL;
    if (failed(staunch_pool_get(pool, STAUNCH_TIMEOUT_DEFAULT, &conn, &err), &err, "get")) {
        staunch_pool_free(pool);
        return 1;
    }

    int rc = 1;
    staunch_rows *rows = NULL;
    if (failed(staunch_conn_execute(conn,
                                    "CREATE TABLE IF NOT EXISTS quickstart "
                                    "(id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50), "
                                    "price DECIMAL(10,2))",
                                    NULL, 0, NULL, NULL, &err),
               &err, "create"))
        goto out;

    /* Values are bound to the ? placeholders, never pasted into the SQL. */
    staunch_param ins[2] = {staunch_param_text("caf\xc3\xa9 cr\xc3\xa8me"),
                            staunch_param_text("3.50")};
    uint64_t id = 0;
    if (failed(staunch_conn_execute(conn, "INSERT INTO quickstart (name, price) VALUES (?, ?)",
                                    ins, 2, NULL, &id, &err),
               &err, "insert"))
        goto out;

    staunch_param by_id = staunch_param_u64(id);
    if (failed(staunch_conn_query(conn, "SELECT id, name, price FROM quickstart WHERE id = ?",
                                  &by_id, 1, &rows, &err),
               &err, "select"))
        goto out;
    bool has_row = false;
    while (staunch_rows_next(rows, &has_row, NULL) == STAUNCH_OK && has_row) {
        int64_t row_id = 0;
        const char *name = NULL, *price = NULL;
        if (failed(staunch_rows_get_i64(rows, 0, &row_id, &err), &err, "id") ||
            failed(staunch_rows_get_text(rows, 1, &name, NULL, &err), &err, "name") ||
            failed(staunch_rows_get_text(rows, 2, &price, NULL, &err), &err, "price"))
            goto out;
        printf("row %" PRId64 ": %s costs %s\n", row_id, name, price);
    }
    rc = 0;

out:
    staunch_rows_free(rows);
    staunch_conn_free(conn); /* back to the pool */
    staunch_pool_free(pool); /* closes it */
    return rc;
}
