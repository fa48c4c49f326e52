/* conf_least_privilege (issue 49): the C ABI's pool over a primary + replica
 * (`replication`) and over a 3-node Galera cluster (`galera`), as the test
 * kit's `least` user (ALL ON staunch_test.* and nothing global: no SLAVE
 * MONITOR), no monitor_user:
 *
 *   - writes (staunch_pool_get) and reads (staunch_pool_get_read) flow;
 *   - exactly one event names the missing privilege (SHOW SLAVE STATUS,
 *     SLAVE MONITOR, monitor_user), as STAUNCH_EVENT_OTHER, and it stays
 *     one after the fault; no event carries the password;
 *   - a writer kill is followed: replication: `kill 0`, `promote 1` 1.5 s
 *     later (as tests/topology.rs), first write on the promoted replica
 *     within 1 s + 1.5 s (FOLLOW_BOUND + SLACK there); Galera: the node the
 *     writer path answers from killed, first write on a survivor within
 *     the end of Galera's own stall + one probe (1 s) + 1.5 s, as
 *     tests/galera.rs: the stall (evs.suspect_timeout, 5 s, and the view
 *     change) is measured by a single-host pool writing straight to a
 *     survivor, its longest write across the kill.
 *
 * Servers from the test kit's command line ($STAUNCH_TESTKIT). Prints one
 * TIMELINE line with the figures. Usage: test_conf_least_privilege
 * replication|galera */
#include "util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define SLACK_MS 1500u
#define FOLLOW_BOUND_MS 1000u /* replication: after the promotion */
#define DETECT_MS 1000u
#define MAX_ATTEMPTS 20000

/* --- events ------------------------------------------------------------- */

typedef struct {
    pthread_mutex_t mu;
    int told;       /* events naming SLAVE MONITOR */
    int told_other; /* ... of kind STAUNCH_EVENT_OTHER */
    int secret;     /* events carrying the password */
    int total;
    char text[2048];
} recorder;

static void on_event(const staunch_event *ev, void *user_data) {
    recorder *r = user_data;
    pthread_mutex_lock(&r->mu);
    r->total++;
    if (strstr(ev->message, "least-secret") != NULL) r->secret++;
    if (strstr(ev->message, "SLAVE MONITOR") != NULL) {
        r->told++;
        if (ev->kind == STAUNCH_EVENT_OTHER) r->told_other++;
        snprintf(r->text, sizeof r->text, "%s", ev->message);
    }
    pthread_mutex_unlock(&r->mu);
}

static int told(recorder *r) {
    pthread_mutex_lock(&r->mu);
    int n = r->told;
    pthread_mutex_unlock(&r->mu);
    return n;
}

/* --- a writer thread through the pool's writer path ---------------------- */

typedef struct {
    uint64_t start, end;
    int port; /* the node that took the write; 0: the write failed */
} attempt;

typedef struct {
    staunch_pool *pool;
    atomic_int stop;
    pthread_mutex_t mu;
    attempt log[MAX_ATTEMPTS];
    size_t n;
    uint64_t seq;
} writer;

/* One write and the port that took it (0 when any step failed). */
static int write_once(staunch_pool *pool, uint64_t seq) {
    staunch_conn *c = NULL;
    staunch_error *err = NULL;
    int port = 0;
    if (staunch_pool_get(pool, 1000, &c, &err) != STAUNCH_OK) {
        staunch_error_free(err);
        return 0;
    }
    char sql[128];
    snprintf(sql, sizeof sql, "INSERT INTO lp (v) VALUES (%llu)", (unsigned long long)seq);
    staunch_rows *rows = NULL;
    bool has = false;
    int64_t p = 0;
    if (staunch_conn_execute(c, sql, NULL, 0, NULL, NULL, &err) == STAUNCH_OK &&
        staunch_conn_query(c, "SELECT @@port", NULL, 0, &rows, &err) == STAUNCH_OK &&
        staunch_rows_next(rows, &has, &err) == STAUNCH_OK && has &&
        staunch_rows_get_i64(rows, 0, &p, &err) == STAUNCH_OK)
        port = (int)p;
    staunch_error_free(err);
    staunch_rows_free(rows);
    staunch_conn_free(c);
    return port;
}

static void *write_loop(void *arg) {
    writer *w = arg;
    while (!atomic_load(&w->stop)) {
        uint64_t t = now_ms();
        int port = write_once(w->pool, ++w->seq);
        pthread_mutex_lock(&w->mu);
        if (w->n < MAX_ATTEMPTS) w->log[w->n++] = (attempt){t, now_ms(), port};
        pthread_mutex_unlock(&w->mu);
        sleep_ms(10);
    }
    return NULL;
}

/* The end of the first write started at or after `since` and taken by a
 * node other than `not_port` (0 if none yet); failed writes since in
 * *failed. */
static uint64_t first_write_elsewhere(writer *w, uint64_t since, int not_port, int *failed) {
    uint64_t first = 0;
    int f = 0;
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->n; i++) {
        if (w->log[i].end < since) continue;
        if (w->log[i].port == 0) f++;
        if (w->log[i].start >= since && w->log[i].port != 0 && w->log[i].port != not_port &&
            (first == 0 || w->log[i].end < first))
            first = w->log[i].end;
    }
    pthread_mutex_unlock(&w->mu);
    if (failed != NULL) *failed = f;
    return first;
}

/* --- helpers -------------------------------------------------------------- */

/* `url` with the user and password swapped for the ready line's least. */
static void least_url(const char *ready, const char *url, char *out, size_t n) {
    const char *users = strstr(ready, "\"least\":{");
    CHECK(users != NULL);
    char user[64], pass[64];
    CHECK(json_str(users, "password", pass, sizeof pass) != NULL);
    CHECK(json_str(users, "user", user, sizeof user) != NULL);
    CHECK(strncmp(url, "mysql://", 8) == 0);
    const char *at = strchr(url + 8, '@');
    CHECK(at != NULL);
    CHECKF((size_t)snprintf(out, n, "mysql://%s:%s%s", user, pass, at) < n, "URL too long");
}

/* The port of server `index` in the ready line. */
static int server_port(const char *ready, long index) {
    char key[32];
    snprintf(key, sizeof key, "\"index\":%ld,", index);
    const char *s = strstr(ready, key);
    CHECKF(s != NULL, "no server %ld in the ready line", index);
    long port = 0;
    CHECK(json_int(s, "port", &port) != NULL);
    return (int)port;
}

static int conn_port(staunch_conn *c) { return (int)query_i64(c, "SELECT @@port"); }

static staunch_pool *open_least(const char *url, recorder *rec) {
    staunch_options *opts = NULL;
    OK(staunch_options_new, &opts);
    OK(staunch_options_set_url, opts, url);
    OK(staunch_options_set_event_callback, opts, on_event, rec, NULL);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open_options, opts, &pool);
    staunch_options_free(opts);
    return pool;
}

/* Writes flow through the writer path, and the row written is read back
 * through the read path within 10 s (from port want_read_port unless 0);
 * returns the port the read came from. */
static int writes_and_reads_flow(staunch_pool *pool, int want_read_port) {
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, 10000, &c);
    exec_sql(c, "CREATE TABLE IF NOT EXISTS lp (id BIGINT AUTO_INCREMENT PRIMARY KEY, v BIGINT)");
    exec_sql(c, "INSERT INTO lp (v) VALUES (-1)");
    staunch_conn_free(c);
    uint64_t deadline = now_ms() + 10000 + slack_ms();
    for (;;) {
        staunch_conn *r = NULL;
        OK(staunch_pool_get_read, pool, 5000, &r);
        int port = conn_port(r);
        int64_t seen = query_i64(r, "SELECT COUNT(*) FROM lp WHERE v = -1");
        staunch_conn_free(r);
        if (seen == 1 && (want_read_port == 0 || port == want_read_port)) return port;
        CHECKF(now_ms() < deadline, "read path: row seen %lld times on port %d (want port %d)",
               (long long)seen, port, want_read_port);
        sleep_ms(50);
    }
}

static void wait_told(recorder *rec) {
    uint64_t deadline = now_ms() + 10000 + slack_ms();
    while (told(rec) == 0) {
        CHECKF(now_ms() < deadline, "no event named the missing privilege within 10 s");
        sleep_ms(50);
    }
}

static void check_told_once(recorder *rec) {
    pthread_mutex_lock(&rec->mu);
    fprintf(stderr, "EVENT %s\n", rec->text);
    CHECKF(rec->told == 1, "%d events name SLAVE MONITOR, want 1", rec->told);
    CHECKF(rec->told_other == 1, "the privilege event is not STAUNCH_EVENT_OTHER");
    const char *words[] = {"user 'least'@'", "SHOW SLAVE STATUS", "SLAVE MONITOR",
                           "GRANT SLAVE MONITOR ON *.* TO 'least'@'", "monitor_user="};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        CHECKF(strstr(rec->text, words[i]) != NULL, "%s not in the event", words[i]);
    CHECKF(rec->secret == 0, "%d events carry the password", rec->secret);
    pthread_mutex_unlock(&rec->mu);
}

/* Starts `w` writing through `pool` and waits for its first write (10 s). */
static pthread_t start_writer(writer *w, staunch_pool *pool) {
    pthread_t th;
    w->pool = pool;
    CHECK(pthread_create(&th, NULL, write_loop, w) == 0);
    uint64_t deadline = now_ms() + 10000;
    while (first_write_elsewhere(w, 0, -1, NULL) == 0) {
        CHECKF(now_ms() < deadline, "no write within 10 s");
        sleep_ms(20);
    }
    return th;
}

static void stop_writer(writer *w, pthread_t th) {
    atomic_store(&w->stop, 1);
    CHECK(pthread_join(th, NULL) == 0);
}

/* --- the two cases --------------------------------------------------------- */

/* Galera's own stall after `since`: the longest write of `w` (a pool on one
 * survivor) ending after it and starting within 20 s; its end in *end. */
static uint64_t stall_of(writer *w, uint64_t since, uint64_t *end) {
    uint64_t longest = 0;
    *end = 0;
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->n; i++) {
        const attempt *a = &w->log[i];
        if (a->end >= since && a->start <= since + 20000 && a->end - a->start >= longest) {
            longest = a->end - a->start;
            *end = a->end;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return longest;
}

static writer wr, direct;
static recorder rec;

static void replication(void) {
    static const char *const args[] = {"topology", "--replicas", "1", NULL};
    const char *ready = tk_start_args(args);
    char base[512], url[600];
    CHECK(json_str(ready, "topology_url", base, sizeof base) != NULL);
    least_url(ready, base, url, sizeof url);
    int primary = server_port(ready, 0), replica = server_port(ready, 1);

    staunch_pool *pool = open_least(url, &rec);
    /* Reads flow; without SLAVE MONITOR replication lag is unknown, so under
     * the default max_replication_lag they come from the writer
     * (read_fallback=writer), as the event says. */
    int read_port = writes_and_reads_flow(pool, 0);
    CHECK(read_port == primary || read_port == replica);
    wait_told(&rec);

    pthread_t th = start_writer(&wr, pool);
    uint64_t faulted = now_ms();
    tk_cmd("kill 0");
    uint64_t since = now_ms() - faulted;
    if (since < 1500) sleep_ms((unsigned)(1500 - since));
    tk_cmd("promote 1");
    uint64_t promoted = now_ms();
    uint64_t bound = FOLLOW_BOUND_MS + SLACK_MS + slack_ms();
    uint64_t first = 0;
    while ((first = first_write_elsewhere(&wr, promoted, primary, NULL)) == 0 &&
           now_ms() < promoted + 15000)
        sleep_ms(20);
    sleep_ms(500); /* still told once, however many probes ran since */
    stop_writer(&wr, th);
    int failed = 0;
    first_write_elsewhere(&wr, faulted, primary, &failed);
    CHECKF(first != 0, "no write on the promoted replica within 15 s of the promotion");

    /* After the failover, the read path still answers (the new primary). */
    staunch_conn *r = NULL;
    OK(staunch_pool_get_read, pool, 5000, &r);
    CHECK(query_i64(r, "SELECT COUNT(*) FROM lp WHERE v = -1") == 1);
    staunch_conn_free(r);
    OK(staunch_pool_close, pool);
    staunch_pool_free(pool);

    fprintf(stderr,
            "TIMELINE C least privilege, replication: reads from port %d; kill 0 at 0, "
            "promote 1 at %llu ms; first write on the promoted replica %llu ms after the "
            "promotion (bound %llu ms); failed writes from the kill on: %d\n",
            read_port, (unsigned long long)(promoted - faulted),
            (unsigned long long)(first - promoted), (unsigned long long)bound, failed);
    check_told_once(&rec);
    CHECKF(first - promoted <= bound, "first write %llu ms after the promotion",
           (unsigned long long)(first - promoted));
    /* Every write the pool acknowledged went to the promoted replica. */
    pthread_mutex_lock(&wr.mu);
    for (size_t i = 0; i < wr.n; i++)
        CHECKF(wr.log[i].start < faulted || wr.log[i].port != primary,
               "a write acknowledged by the killed primary");
    pthread_mutex_unlock(&wr.mu);
    tk_quit();
}

static void galera(void) {
    static const char *const args[] = {"galera", NULL};
    uint64_t t0 = now_ms();
    const char *ready = tk_start_args(args);
    uint64_t up = now_ms() - t0;
    char base[512], url[600];
    /* The top-level "url" (the multi-host one), after the servers' own. */
    const char *top = strstr(ready, "\"topology_url\":");
    CHECK(top != NULL && json_str(top, "url", base, sizeof base) != NULL);
    CHECKF(strchr(base, ',') != NULL, "the Galera URL is not multi-host");
    least_url(ready, base, url, sizeof url);
    int ports[3];
    for (long i = 0; i < 3; i++) ports[i] = server_port(ready, i);

    staunch_pool *pool = open_least(url, &rec);
    writes_and_reads_flow(pool, 0);
    wait_told(&rec);

    pthread_t th = start_writer(&wr, pool);
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, 5000, &c);
    int writer_port = conn_port(c);
    staunch_conn_free(c);
    int w = -1;
    for (int i = 0; i < 3; i++)
        if (ports[i] == writer_port) w = i;
    CHECKF(w >= 0, "the writer path answers from port %d, no node", writer_port);
    char cmd[32];
    /* The direct client: a single-host pool on a survivor. */
    int survivor = (w + 1) % 3;
    char one_url[512], direct_url[600], key[32];
    snprintf(key, sizeof key, "\"index\":%d,", survivor);
    CHECK(json_str(strstr(ready, key), "url", one_url, sizeof one_url) != NULL);
    least_url(ready, one_url, direct_url, sizeof direct_url);
    staunch_pool *direct_pool = NULL;
    OK(staunch_pool_open, direct_url, &direct_pool);
    pthread_t dth = start_writer(&direct, direct_pool);
    snprintf(cmd, sizeof cmd, "kill %d", w);
    uint64_t killed = now_ms();
    tk_cmd(cmd);
    uint64_t first = 0;
    while ((first = first_write_elsewhere(&wr, killed, writer_port, NULL)) == 0 &&
           now_ms() < killed + 30000)
        sleep_ms(20);
    sleep_ms(500);
    stop_writer(&wr, th);
    stop_writer(&direct, dth);
    staunch_pool_free(direct.pool);
    uint64_t stall_end = 0;
    uint64_t stall = stall_of(&direct, killed, &stall_end);
    CHECK(stall_end != 0);
    uint64_t bound = stall_end - killed + DETECT_MS + SLACK_MS + slack_ms();
    int failed = 0;
    first_write_elsewhere(&wr, killed, writer_port, &failed);
    CHECKF(first != 0, "no write on a survivor within 30 s of the kill");

    /* The survivors answer both paths. */
    OK(staunch_pool_get, pool, 5000, &c);
    CHECK(conn_port(c) != writer_port);
    staunch_conn_free(c);
    staunch_conn *r = NULL;
    OK(staunch_pool_get_read, pool, 5000, &r);
    CHECK(conn_port(r) != writer_port);
    CHECK(query_i64(r, "SELECT COUNT(*) FROM lp WHERE v = -1") == 1);
    staunch_conn_free(r);
    OK(staunch_pool_close, pool);
    staunch_pool_free(pool);

    fprintf(stderr,
            "TIMELINE C least privilege, Galera (up in %llu ms): writer node %d (port %d) "
            "killed at 0; Galera's stall %llu ms ending at %llu ms; first write on a survivor "
            "at %llu ms (%lld ms after the stall; bound %llu ms); failed writes from the kill "
            "on: %d\n",
            (unsigned long long)up, w, writer_port, (unsigned long long)stall,
            (unsigned long long)(stall_end - killed), (unsigned long long)(first - killed),
            (long long)first - (long long)stall_end, (unsigned long long)bound, failed);
    check_told_once(&rec);
    CHECKF(first - killed <= bound, "first write on a survivor %llu ms after the kill",
           (unsigned long long)(first - killed));
    tk_quit();
}

int main(int argc, char **argv) {
    CHECKF(argc == 2, "usage: %s replication|galera", argv[0]);
    pthread_mutex_init(&rec.mu, NULL);
    pthread_mutex_init(&wr.mu, NULL);
    atomic_init(&wr.stop, 0);
    pthread_mutex_init(&direct.mu, NULL);
    atomic_init(&direct.stop, 0);
    if (strcmp(argv[1], "replication") == 0)
        replication();
    else if (strcmp(argv[1], "galera") == 0)
        galera();
    else
        die_at(__FILE__, __LINE__, "unknown case %s", argv[1]);
    return 0;
}
