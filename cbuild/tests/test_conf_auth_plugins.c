/* conf_auth_plugins. Without argument, the MariaDB part: users IDENTIFIED VIA
 * mysql_native_password and ed25519 each connect and answer; a user of a
 * plugin staunch does not speak (PAM, which asks for "dialog") gets
 * STAUNCH_CONNECT_REJECTED with a message naming the plugin at once (well before the
 * 20 s acquire timeout), never a crash or "unreachable". The server is the
 * test's own (util.c's tk_*): root creates the users. With "sha2": the
 * test kit's second server (Vitess's go/mysql, a MySQL 8 greeting) over
 * TLS, whose caching_sha2_password user connects and answers. */
#include "util.h"

static void connects(int port, const char *user, const char *pass) {
    char url[512];
    snprintf(url, sizeof url, "mysql://%s:%s@127.0.0.1:%d/staunch_test?min_idle=0", user, pass,
             port);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, url, &pool);
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    char who[128], want[128];
    query_text(c, "SELECT CURRENT_USER()", 0, who, sizeof who);
    snprintf(want, sizeof want, "%s@%%", user);
    CHECKF(strcmp(who, want) == 0, "%s: CURRENT_USER() is %s", user, who);
    staunch_conn_free(c);
    staunch_pool_free(pool);
}

static int sha2(void) {
    static const char *const args[] = {"mysql8", "--tls", NULL};
    const char *ready = tk_start_args(args);
    char url[1024];
    CHECK(json_str(ready, "url", url, sizeof url) != NULL);
    /* That server runs no prepared statement: the text protocol. */
    strncat(url, "&interpolate_params=true", sizeof url - strlen(url) - 1);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, url, &pool);
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    char who[128];
    query_text(c, "SELECT CURRENT_USER()", 0, who, sizeof who);
    CHECKF(strcmp(who, "sha2@%") == 0, "CURRENT_USER() is %s", who);
    staunch_conn_free(c);
    staunch_pool_free(pool);
    tk_quit();
    printf("conf_auth_plugins sha2: ok\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "sha2") == 0) return sha2();
    char url[512];
    tk_start(url, sizeof url);
    tk_cmd("sql 0 INSTALL PLUGIN IF NOT EXISTS ed25519 SONAME 'auth_ed25519'");
    tk_cmd("sql 0 INSTALL PLUGIN IF NOT EXISTS pam SONAME 'auth_pam'");
    tk_cmd("sql 0 CREATE USER native@'%' IDENTIFIED VIA mysql_native_password USING "
           "PASSWORD('n-secret')");
    tk_cmd("sql 0 CREATE USER ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('e-secret')");
    tk_cmd("sql 0 CREATE USER pamuser@'%' IDENTIFIED VIA pam");
    tk_cmd("sql 0 GRANT ALL ON staunch_test.* TO native@'%', ed@'%', pamuser@'%'");
    int port = parse_url(url).port;

    connects(port, "native", "n-secret");
    connects(port, "ed", "e-secret");

    char pam[512];
    snprintf(pam, sizeof pam,
             "mysql://pamuser:p-secret@127.0.0.1:%d/staunch_test?min_idle=0&connection_timeout=20s",
             port);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, pam, &pool);
    staunch_conn *c = NULL;
    staunch_error *err = NULL;
    uint64_t t0 = now_ms();
    staunch_status st = staunch_pool_get(pool, STAUNCH_TIMEOUT_DEFAULT, &c, &err);
    uint64_t waited = now_ms() - t0;
    CHECKF(st == STAUNCH_CONNECT_REJECTED, "status %s", staunch_status_name(st));
    const char *msg = staunch_error_message(err);
    CHECKF(strstr(msg, "\"dialog\"") != NULL, "message: %s", msg);
    CHECKF(strstr(msg, "p-secret") == NULL, "message: %s", msg);
    CHECKF(waited < 5000 + slack_ms(), "the refusal took %llu ms: %s", (unsigned long long)waited, msg);
    CHECK(c == NULL);
    staunch_error_free(err);
    staunch_pool_free(pool);
    tk_quit();
    printf("conf_auth_plugins: ok\n");
    return 0;
}
