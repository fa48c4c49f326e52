/* A statement deadline on a frozen server (SIGSTOP): a statement and a ping
 * each fail with STAUNCH_STATEMENT_TIMEOUT within the limit + 1 s of grace
 * (the pool cuts the socket: the server cannot end them), the handles are
 * then broken, and once the server is thawed the pool hands out working
 * connections again. The server comes from the test kit's command line
 * (`staunch-testkit server`, $STAUNCH_TESTKIT), which the test drives over
 * its stdin/stdout as the bindings' tests do. */
#include "util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static FILE *tk_in, *tk_out;
static pid_t tk_pid;

static void tk_start(char *url, size_t n) {
    const char *bin = getenv("STAUNCH_TESTKIT");
    if (bin == NULL || access(bin, X_OK) != 0) {
        fprintf(stderr, "STAUNCH_TESTKIT is not set to the staunch-testkit binary: skipped\n");
        exit(TEST_SKIP);
    }
    int in[2], out[2];
    CHECK(pipe(in) == 0 && pipe(out) == 0);
    tk_pid = fork();
    CHECK(tk_pid >= 0);
    if (tk_pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execl(bin, bin, "server", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    tk_in = fdopen(in[1], "w");
    tk_out = fdopen(out[0], "r");
    CHECK(tk_in != NULL && tk_out != NULL);
    static char line[16384];
    CHECKF(fgets(line, sizeof line, tk_out) != NULL, "staunch-testkit printed nothing");
    CHECKF(strstr(line, "\"ready\":true") != NULL, "staunch-testkit: %s", line);
    const char *u = strstr(line, "\"url\":\"");
    CHECK(u != NULL);
    u += strlen("\"url\":\"");
    const char *end = strchr(u, '"');
    CHECK(end != NULL && (size_t)(end - u) < n);
    memcpy(url, u, (size_t)(end - u));
    url[end - u] = '\0';
}

static void tk_cmd(const char *cmd) {
    char line[4096];
    fprintf(tk_in, "%s\n", cmd);
    fflush(tk_in);
    CHECKF(fgets(line, sizeof line, tk_out) != NULL, "%s: no answer", cmd);
    CHECKF(strstr(line, "\"ok\":true") != NULL, "%s: %s", cmd, line);
}

static void tk_quit(void) {
    tk_cmd("quit");
    fclose(tk_in);
    fclose(tk_out);
    int status = 0;
    CHECK(waitpid(tk_pid, &status, 0) == tk_pid);
}

int main(void) {
    char url[512], full[700];
    tk_start(url, sizeof url);
    url_with(full, sizeof full, url, "max_size=3&connect_timeout=1s&connection_timeout=2s");
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, full, &pool);
    staunch_conn *a = NULL, *b = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &a);
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &b);
    /* The limits are set, and in force on the server, before the freeze
     * (changing one costs a SET on the next statement). */
    OK(staunch_conn_set_timeout, a, 300);
    OK(staunch_conn_set_timeout, b, 300);
    CHECK(query_i64(a, "SELECT 1") == 1);
    CHECK(query_i64(b, "SELECT 2") == 2);

    tk_cmd("freeze");
    uint64_t t0 = now_ms();
    FAILS(STAUNCH_STATEMENT_TIMEOUT, NULL, staunch_conn_execute, a, "SELECT 3", NULL, 0, NULL,
          NULL);
    uint64_t took = now_ms() - t0;
    CHECKF(took >= 1200 && took < 2500 + slack_ms(), "statement cut after %llu ms",
           (unsigned long long)took);
    CHECK(staunch_conn_is_broken(a));
    FAILS(STAUNCH_BROKEN, NULL, staunch_conn_execute, a, "SELECT 4", NULL, 0, NULL, NULL);

    t0 = now_ms();
    FAILS(STAUNCH_STATEMENT_TIMEOUT, NULL, staunch_conn_ping, b);
    took = now_ms() - t0;
    CHECKF(took >= 1200 && took < 2500 + slack_ms(), "ping cut after %llu ms",
           (unsigned long long)took);
    CHECK(staunch_conn_is_broken(b));
    staunch_conn_free(a);
    staunch_conn_free(b);

    tk_cmd("thaw");
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    CHECK(query_i64(c, "SELECT 5") == 5);
    staunch_conn_free(c);
    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    CHECKF(s.statements_cut == 2, "statements_cut = %llu", (unsigned long long)s.statements_cut);
    CHECKF(s.closed_broken == 2, "closed_broken = %llu", (unsigned long long)s.closed_broken);
    staunch_pool_free(pool);
    tk_quit();
    printf("statement_deadline_frozen: ok\n");
    return 0;
}
