/* tls_connect: from C, against the TLS test server (scripts/c-mariadb.sh):
 * tls_mode=verify_identity with the test CA connects, and the server sees an
 * encrypted session (Ssl_version TLSv1.x); verify_ca with a CA that signed
 * nothing is STAUNCH_CONNECT_REJECTED at once, naming the verification
 * failure and the tls_ca file; required without a CA encrypts without
 * verifying. Skipped when STAUNCH_TEST_TLS_URL is not set. */
#include "util.h"

static const char *env_or_skip(const char *name) {
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0') {
        fprintf(stderr, "%s is not set: skipped\n", name);
        exit(TEST_SKIP);
    }
    return v;
}

/* Opens a pool on `base` with `params` appended, gets a connection and
 * returns its session's TLS version in `out`. */
static void connect_and_check(const char *base, const char *params, char *out, size_t n) {
    char url[1024];
    url_with(url, sizeof url, base, params);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, url, &pool);
    staunch_conn *conn = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &conn);
    /* The TLS version of the session, as the server reports it ("" when
     * plaintext). */
    query_text(conn, "SHOW SESSION STATUS LIKE 'Ssl_version'", 1, out, n);
    CHECK(query_i64(conn, "SELECT 6 * 7") == 42);
    staunch_conn_free(conn);
    staunch_pool_free(pool);
}

int main(void) {
    const char *tls_url = env_or_skip("STAUNCH_TEST_TLS_URL");
    const char *ca = env_or_skip("STAUNCH_TEST_TLS_CA");
    const char *other_ca = env_or_skip("STAUNCH_TEST_OTHER_CA");
    (void)test_url(); /* the common test set-up (and its skip rule) */
    char params[600], version[64];

    /* Verified: the CA signed the server's certificate, which names
     * 127.0.0.1. */
    snprintf(params, sizeof params, "tls_mode=verify_identity&tls_ca=%s", ca);
    connect_and_check(tls_url, params, version, sizeof version);
    CHECKF(strncmp(version, "TLSv1.", 6) == 0, "verify_identity: Ssl_version is \"%s\"",
           version);
    printf("tls_connect: verify_identity: %s\n", version);

    /* Encrypted, not verified. */
    connect_and_check(tls_url, "tls_mode=required", version, sizeof version);
    CHECKF(strncmp(version, "TLSv1.", 6) == 0, "required: Ssl_version is \"%s\"", version);

    /* The control: the same server in plaintext. */
    connect_and_check(tls_url, "tls_mode=disabled", version, sizeof version);
    CHECKF(version[0] == '\0', "disabled: Ssl_version is \"%s\"", version);

    /* A CA that did not sign the server's certificate: rejected at once. */
    char url[1024];
    snprintf(params, sizeof params, "tls_mode=verify_ca&tls_ca=%s&connection_timeout=10s",
             other_ca);
    url_with(url, sizeof url, tls_url, params);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, url, &pool);
    staunch_conn *conn = NULL;
    uint64_t t0 = now_ms();
    FAILS(STAUNCH_CONNECT_REJECTED, "certificate verification failed", staunch_pool_get, pool,
          STAUNCH_TIMEOUT_DEFAULT, &conn);
    char needle[600];
    snprintf(needle, sizeof needle, "tls_ca=%s", other_ca);
    FAILS(STAUNCH_CONNECT_REJECTED, needle, staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT,
          &conn);
    uint64_t took = now_ms() - t0;
    CHECKF(took < 3000 + slack_ms(), "rejection took %llu ms, not at once",
           (unsigned long long)took);
    CHECK(conn == NULL);
    staunch_pool_free(pool);
    printf("tls_connect: ok\n");
    return 0;
}
