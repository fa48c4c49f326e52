/* tls_knobs: the TLS knobs are reachable from C by name. A bad tls_mode,
 * tls_cert without tls_key, verify_ca without tls_ca and a CA file that does
 * not exist are STAUNCH_INVALID_CONFIG naming the problem; against the test
 * server (started without TLS) tls_mode=required is rejected at once with
 * STAUNCH_CONNECT_REJECTED, and tls_mode=preferred connects in plaintext. */
#include "util.h"

/* Opens a pool from options holding knob=value pairs (NULL-terminated), with
 * the given URL first (may be NULL). Returns the status; *err as usual. */
static staunch_status open_with(const char *url, const char *const *kv, staunch_pool **pool,
                                staunch_error **err) {
    staunch_options *opts = NULL;
    OK(staunch_options_new, &opts);
    if (url) OK(staunch_options_set_url, opts, url);
    for (; kv[0]; kv += 2) OK(staunch_options_set, opts, kv[0], kv[1]);
    staunch_status st = staunch_pool_open_options(opts, pool, err);
    staunch_options_free(opts);
    return st;
}

static void bad_config(void) {
    staunch_pool *pool = NULL;
    const char *bad_mode[] = {"tls_mode", "on", NULL};
    FAILS(STAUNCH_INVALID_CONFIG, "tls_mode must be disabled, preferred, required", open_with,
          "mysql://u@127.0.0.1/db", bad_mode, &pool);
    const char *cert_only[] = {"tls_mode", "required", "tls_cert", "/tmp/c.pem", NULL};
    FAILS(STAUNCH_INVALID_CONFIG, "tls_cert is set without tls_key", open_with,
          "mysql://u@127.0.0.1/db", cert_only, &pool);
    const char *no_ca[] = {"tls_mode", "verify_ca", NULL};
    FAILS(STAUNCH_INVALID_CONFIG, "tls_mode=verify_ca needs tls_ca", open_with,
          "mysql://u@127.0.0.1/db", no_ca, &pool);
    const char *missing_ca[] = {"tls_mode", "verify_identity", "tls_ca",
                                "/nonexistent/staunch-ca.pem", NULL};
    FAILS(STAUNCH_INVALID_CONFIG, "tls_ca: cannot read /nonexistent/staunch-ca.pem", open_with,
          "mysql://u@127.0.0.1/db", missing_ca, &pool);
    /* The same knobs as URL parameters. */
    FAILS(STAUNCH_INVALID_CONFIG, "tls_mode must be", staunch_pool_open,
          "mysql://u@127.0.0.1/db?tls_mode=yes", &pool);
    CHECK(pool == NULL);
}

static void against_a_server_without_tls(void) {
    char url[512];
    url_with(url, sizeof url, test_url(), "connection_timeout=10s");
    staunch_pool *pool = NULL;
    const char *required[] = {"tls_mode", "required", NULL};
    OK(open_with, url, required, &pool);
    staunch_conn *conn = NULL;
    uint64_t t0 = now_ms();
    FAILS(STAUNCH_CONNECT_REJECTED, "does not offer TLS", staunch_pool_get, pool,
          STAUNCH_TIMEOUT_DEFAULT, &conn);
    uint64_t took = now_ms() - t0;
    CHECKF(took < 3000 + slack_ms(), "rejection took %llu ms, not at once",
           (unsigned long long)took);
    CHECK(conn == NULL);
    staunch_pool_free(pool);

    const char *preferred[] = {"tls_mode", "preferred", NULL};
    OK(open_with, url, preferred, &pool);
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &conn);
    CHECK(query_i64(conn, "SELECT 41 + 1") == 42);
    staunch_conn_free(conn);
    staunch_pool_free(pool);
}

int main(void) {
    bad_config();
    against_a_server_without_tls();
    return 0;
}
