/* conf_tls_exact: the test kit's server presents a self-signed CA:TRUE
 * certificate (`staunch-testkit server --tls-self-signed`), and its URL pins
 * it: tls_mode=verify_ca&tls_ca=<that certificate>. That pool connects,
 * answers, and the server sees an encrypted session (Ssl_cipher set). The
 * same URL with tls_ca naming an unrelated CA is STAUNCH_CONNECT_REJECTED
 * at once (well within its 5 s connection_timeout), with a message naming
 * tls_ca and never the password: under verify_ca only the given CA is
 * trusted, never a public root nor the server's own say-so. */
#include "util.h"

/* `url` with its tls_ca value replaced by `ca` (tls_ca is the URL's last
 * parameter in the test kit's line), then `extra` appended. */
static void with_ca(char *out, size_t n, const char *url, const char *ca, const char *extra) {
    const char *at = strstr(url, "tls_ca=");
    CHECKF(at != NULL, "no tls_ca in %s", url);
    CHECKF(strchr(at, '&') == NULL, "tls_ca is not the last parameter of %s", url);
    int w = snprintf(out, n, "%.*stls_ca=%s&%s", (int)(at - url), url, ca, extra);
    CHECK(w > 0 && (size_t)w < n);
}

int main(void) {
    static const char *const args[] = {"server", "--tls-self-signed", NULL};
    const char *ready = tk_start_args(args);
    char url[1024], other_ca[512];
    CHECK(json_str(ready, "url", url, sizeof url) != NULL);
    CHECKF(strstr(url, "tls_mode=verify_ca") != NULL, "url: %s", url);
    const char *tls = strstr(ready, "\"tls\":");
    CHECKF(tls != NULL, "no tls in %s", ready);
    CHECK(json_str(tls, "other_ca", other_ca, sizeof other_ca) != NULL);

    /* The pinned certificate: connects, answers, encrypted. */
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, url, &pool);
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(query_i64(c, "SELECT 1") == 1);
    char cipher[128];
    query_text(c, "SHOW SESSION STATUS LIKE 'Ssl_cipher'", 1, cipher, sizeof cipher);
    CHECKF(cipher[0] != '\0', "Ssl_cipher is empty: the session is not encrypted");
    printf("conf_tls_exact: verify_ca with the server's own certificate: %s\n", cipher);
    staunch_conn_free(c);
    staunch_pool_free(pool);

    /* An unrelated CA: refused at once, naming tls_ca. */
    char bad[1600];
    with_ca(bad, sizeof bad, url, other_ca, "connection_timeout=5s&min_idle=0");
    pool = NULL;
    OK(staunch_pool_open, bad, &pool);
    c = NULL;
    staunch_error *err = NULL;
    uint64_t t0 = now_ms();
    staunch_status st = staunch_pool_get(pool, STAUNCH_TIMEOUT_DEFAULT, &c, &err);
    uint64_t took = now_ms() - t0;
    const char *msg = staunch_error_message(err);
    CHECKF(st == STAUNCH_CONNECT_REJECTED, "status %s: %s", staunch_status_name(st), msg);
    CHECK(err != NULL && staunch_error_status(err) == STAUNCH_CONNECT_REJECTED);
    CHECKF(strstr(msg, "tls_ca") != NULL, "message lacks tls_ca: %s", msg);
    CHECKF(strstr(msg, "app-secret") == NULL, "message shows the password: %s", msg);
    CHECKF(took < 3000 + slack_ms(), "the refusal took %llu ms: %s", (unsigned long long)took,
           msg);
    CHECK(c == NULL);
    printf("conf_tls_exact: unrelated CA refused in %llu ms: %s\n", (unsigned long long)took,
           msg);
    staunch_error_free(err);
    staunch_pool_free(pool);
    tk_quit();
    printf("conf_tls_exact: ok\n");
    return 0;
}
