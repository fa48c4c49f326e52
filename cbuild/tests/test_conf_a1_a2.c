/* Incident A through the C API.
 *
 * conf_a1: the endpoint accepts TCP and never greets (a listener this test
 * makes and never accepts on). A get with a timeout fails in bounded time with
 * STAUNCH_UNREACHABLE, naming host:port and the missing greeting; no pool
 * thread stays stuck in a connect.
 * conf_a2: then the endpoint starts forwarding to the real server; the next
 * gets succeed within about one connect timeout.
 *
 * Usage: test_conf_a1_a2 a1|a2 */
#include "util.h"

#include <unistd.h>

#define CONNECT_TIMEOUT_MS 500
/* Three connect timeouts; under valgrind (slack) the watchdog that cuts a
 * connect off at its deadline runs late, so give it the slack too. */
#define GET_TIMEOUT_MS ((uint32_t)(1500 + slack_ms()))

int main(int argc, char **argv) {
    int recover = argc > 1 && strcmp(argv[1], "a2") == 0;
    test_endpoint real = parse_url(test_url());
    int port = 0;
    int bh = black_hole_listen(&port);

    char url[512];
    snprintf(url, sizeof url,
             "mysql://%s:%s@127.0.0.1:%d/%s?connect_timeout=%dms&max_size=2", real.user,
             real.pass, port, real.db, CONNECT_TIMEOUT_MS);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, url, &pool);

    /* conf_a1 */
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "127.0.0.1:%d", port);
    staunch_conn *conn = NULL;
    staunch_error *err = NULL;
    uint64_t t0 = now_ms();
    staunch_status st = staunch_pool_get(pool, GET_TIMEOUT_MS, &conn, &err);
    uint64_t took = now_ms() - t0;
    CHECKF(st == STAUNCH_UNREACHABLE, "got %s: %s", staunch_status_name(st),
           staunch_error_message(err));
    CHECK(conn == NULL);
    const char *msg = staunch_error_message(err);
    CHECKF(strstr(msg, endpoint) != NULL, "message does not name %s: %s", endpoint, msg);
    CHECKF(strstr(msg, "greeting") != NULL, "message does not say why: %s", msg);
    CHECKF(took >= GET_TIMEOUT_MS - 10 && took <= GET_TIMEOUT_MS + slack_ms(), "took %llu ms", (unsigned long long)took);
    printf("conf_a1: UNREACHABLE after %llu ms: %s\n", (unsigned long long)took, msg);
    staunch_error_free(err);

    /* Nobody waits now: every connect in flight ends by its deadline. */
    staunch_stats s = {.size = sizeof(staunch_stats)};
    uint64_t deadline = now_ms() + CONNECT_TIMEOUT_MS + slack_ms() + 200;
    do {
        OK(staunch_pool_stats, pool, &s);
        if (s.connecting == 0) break;
        sleep_ms(20);
    } while (now_ms() < deadline);
    CHECKF(s.connecting == 0, "%llu connects still stuck", (unsigned long long)s.connecting);
    CHECK(s.connect_failures >= 1 && s.total == 0);

    if (recover) {
        /* conf_a2: the endpoint now forwards to the real server. */
        forwarder *fwd = forwarder_start(bh, real.host, real.port);
        t0 = now_ms();
        OK(staunch_pool_get, pool, 3 * CONNECT_TIMEOUT_MS + 2000, &conn);
        took = now_ms() - t0;
        CHECK(query_i64(conn, "SELECT 1") == 1);
        /* Within about one connect timeout (plus at most one retry backoff). */
        CHECKF(took <= CONNECT_TIMEOUT_MS + 1000 + slack_ms(), "recovery took %llu ms",
               (unsigned long long)took);
        printf("conf_a2: recovered in %llu ms\n", (unsigned long long)took);
        staunch_conn *second = NULL;
        OK(staunch_pool_get, pool, 2000, &second);
        CHECK(query_i64(second, "SELECT 2") == 2);
        staunch_conn_free(second);
        staunch_conn_free(conn);
        staunch_pool_free(pool);
        forwarder_stop(fwd);
    } else {
        staunch_pool_free(pool);
    }
    close(bh);
    return 0;
}
