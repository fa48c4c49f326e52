/* conf_events: a C callback receives a connect failure and a recovery, on the
 * threads the header documents (connects: staunch-adder-N pool threads; get
 * timeouts and pool close: the calling thread, or the pool thread holding the
 * connection as the pool closes); its finalizer runs exactly
 * once, after the last user of the callback is freed, and no callback runs
 * after staunch_pool_free returns. */
#include "util.h"

#include <pthread.h>
#include <unistd.h>

#define KINDS 9

typedef struct {
    pthread_mutex_t mu;
    pthread_t main_thread;
    int count[KINDS];
    int on_adder[KINDS];  /* seen on a staunch-adder-N thread */
    int on_main[KINDS];   /* seen on the test's main thread */
    int after_final;      /* callbacks after the finalizer: must stay 0 */
    int finalized;
    char failed_msg[512];
    char recovered_msg[512];
    uint64_t recovered_count;
    staunch_status failed_status;
} recorder;

static void on_event(const staunch_event *ev, void *user_data) {
    recorder *r = user_data;
    pthread_mutex_lock(&r->mu);
    if (r->finalized) r->after_final++;
    if (ev->kind < KINDS) {
        r->count[ev->kind]++;
        if (strncmp(thread_name(), "staunch-adder-", 14) == 0) r->on_adder[ev->kind]++;
        if (pthread_equal(pthread_self(), r->main_thread)) r->on_main[ev->kind]++;
    }
    if (ev->kind == STAUNCH_EVENT_CONNECT_FAILED && r->failed_msg[0] == '\0') {
        snprintf(r->failed_msg, sizeof r->failed_msg, "%s", ev->message);
        r->failed_status = ev->status;
    }
    if (ev->kind == STAUNCH_EVENT_RECOVERED) {
        snprintf(r->recovered_msg, sizeof r->recovered_msg, "%s", ev->message);
        r->recovered_count = ev->count;
    }
    pthread_mutex_unlock(&r->mu);
}

static void finalize(void *user_data) {
    recorder *r = user_data;
    pthread_mutex_lock(&r->mu);
    r->finalized++;
    pthread_mutex_unlock(&r->mu);
}

static int snapshot(recorder *r, int kind) {
    pthread_mutex_lock(&r->mu);
    int n = r->count[kind];
    pthread_mutex_unlock(&r->mu);
    return n;
}

static void never_called(const staunch_event *ev, void *user_data) {
    (void)ev;
    (void)user_data;
    die_at(__FILE__, __LINE__, "a replaced callback was called");
}

static void count_final(void *user_data) { (*(int *)user_data)++; }

int main(void) {
    test_endpoint real = parse_url(test_url());
    int port = 0;
    int bh = black_hole_listen(&port);

    static recorder rec;
    memset(&rec, 0, sizeof rec);
    pthread_mutex_init(&rec.mu, NULL);
    rec.main_thread = pthread_self();

    staunch_options *opts = NULL;
    OK(staunch_options_new, &opts);
    char url[512];
    snprintf(url, sizeof url, "mysql://%s:%s@127.0.0.1:%d/%s", real.user, real.pass, port,
             real.db);
    OK(staunch_options_set_url, opts, url);
    OK(staunch_options_set, opts, "connect_timeout", "300ms");
    OK(staunch_options_set, opts, "max_size", "1");

    /* Replacing a callback nobody uses runs its finalizer at once. */
    int replaced_final = 0;
    OK(staunch_options_set_event_callback, opts, never_called, &replaced_final, count_final);
    CHECK(replaced_final == 0);
    OK(staunch_options_set_event_callback, opts, on_event, &rec, finalize);
    CHECK(replaced_final == 1);

    staunch_pool *pool = NULL;
    OK(staunch_pool_open_options, opts, &pool);
    staunch_options_free(opts); /* the pool still uses the callback */
    CHECK(rec.finalized == 0);

    /* A connect failure: the black hole never greets. */
    staunch_conn *conn = NULL;
    FAILS(STAUNCH_UNREACHABLE, NULL, staunch_pool_get, pool, 800, &conn);
    CHECK(snapshot(&rec, STAUNCH_EVENT_CONNECT_FAILED) >= 1);
    CHECK(snapshot(&rec, STAUNCH_EVENT_ACQUIRE_TIMEOUT) == 1);

    /* A recovery: the endpoint starts forwarding to the real server. */
    forwarder *fwd = forwarder_start(bh, real.host, real.port);
    OK(staunch_pool_get, pool, 3000, &conn);
    uint64_t deadline = now_ms() + 1000;
    while (snapshot(&rec, STAUNCH_EVENT_RECOVERED) == 0 && now_ms() < deadline) sleep_ms(10);
    staunch_conn_free(conn);
    staunch_pool_free(pool); /* closes: pool_closed and closed events */

    pthread_mutex_lock(&rec.mu);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "127.0.0.1:%d", port);
    CHECKF(rec.finalized == 1, "finalized %d times", rec.finalized);
    CHECK(rec.count[STAUNCH_EVENT_CONNECT_FAILED] >= 1);
    CHECK(rec.on_adder[STAUNCH_EVENT_CONNECT_FAILED] == rec.count[STAUNCH_EVENT_CONNECT_FAILED]);
    CHECK(rec.failed_status == STAUNCH_CONNECT_FAILED);
    CHECKF(strstr(rec.failed_msg, endpoint) != NULL, "connect_failed: %s", rec.failed_msg);
    CHECK(rec.count[STAUNCH_EVENT_ACQUIRE_TIMEOUT] == 1);
    CHECK(rec.on_main[STAUNCH_EVENT_ACQUIRE_TIMEOUT] == 1);
    CHECK(rec.count[STAUNCH_EVENT_RECOVERED] == 1);
    CHECK(rec.on_adder[STAUNCH_EVENT_RECOVERED] == 1);
    CHECK(rec.recovered_count >= 1);
    CHECKF(strstr(rec.recovered_msg, endpoint) != NULL, "recovered: %s", rec.recovered_msg);
    CHECK(rec.count[STAUNCH_EVENT_CONNECTED] == 1);
    CHECK(rec.on_adder[STAUNCH_EVENT_CONNECTED] == 1);
    CHECK(rec.count[STAUNCH_EVENT_POOL_CLOSED] == 1);
    CHECK(rec.on_main[STAUNCH_EVENT_POOL_CLOSED] == 1);
    /* Closed by the close in staunch_pool_free, on this thread; or, when the
     * adder that made the connection was still letting go of it (it was
     * handed straight to our get), on that adder, which close waits for. */
    CHECKF(rec.count[STAUNCH_EVENT_CLOSED] == 1 &&
               rec.on_main[STAUNCH_EVENT_CLOSED] + rec.on_adder[STAUNCH_EVENT_CLOSED] == 1,
           "closed x%d, %d on the main thread, %d on adders; connected x%d",
           rec.count[STAUNCH_EVENT_CLOSED], rec.on_main[STAUNCH_EVENT_CLOSED],
           rec.on_adder[STAUNCH_EVENT_CLOSED], rec.count[STAUNCH_EVENT_CONNECTED]);
    printf("conf_events: connect_failed x%d (%s); recovered: %s\n",
           rec.count[STAUNCH_EVENT_CONNECT_FAILED], rec.failed_msg, rec.recovered_msg);
    pthread_mutex_unlock(&rec.mu);

    /* Nothing after free, even from pool threads winding down. */
    sleep_ms(300);
    pthread_mutex_lock(&rec.mu);
    CHECK(rec.after_final == 0 && rec.finalized == 1);
    pthread_mutex_unlock(&rec.mu);

    forwarder_stop(fwd);
    close(bh);
    pthread_mutex_destroy(&rec.mu);
    return 0;
}
