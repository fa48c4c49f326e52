/* See util.h. */
#include "util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void die_at(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}

void check_ok_at(const char *file, int line, const char *call, staunch_status st,
                 staunch_error *err) {
    if (st == STAUNCH_OK) {
        if (err != NULL) die_at(file, line, "%s returned STAUNCH_OK but set *err", call);
        return;
    }
    die_at(file, line, "%s failed: %s (%u): %s", call, staunch_status_name(st), st,
           staunch_error_message(err));
}

void check_fails_at(const char *file, int line, const char *call, staunch_status want,
                    const char *needle, staunch_status st, staunch_error *err) {
    if (st != want) {
        const char *msg = staunch_error_message(err);
        die_at(file, line, "%s: want %s, got %s (%u): %s", call, staunch_status_name(want),
               staunch_status_name(st), st, msg);
    }
    if (err == NULL) die_at(file, line, "%s failed with %s but made no error object", call,
                            staunch_status_name(st));
    if (staunch_error_status(err) != want)
        die_at(file, line, "%s: error object says %s", call,
               staunch_status_name(staunch_error_status(err)));
    const char *msg = staunch_error_message(err);
    if (msg == NULL || msg[0] == '\0') die_at(file, line, "%s: empty error message", call);
    if (needle != NULL && strstr(msg, needle) == NULL)
        die_at(file, line, "%s: message lacks \"%s\": %s", call, needle, msg);
    staunch_error_free(err);
}

const char *test_url(void) {
    const char *u = getenv("STAUNCH_TEST_URL");
    if (u == NULL || u[0] == '\0') {
        fprintf(stderr, "STAUNCH_TEST_URL is not set: skipped\n");
        exit(TEST_SKIP);
    }
    return u;
}

const char *test_root_url(void) {
    const char *u = getenv("STAUNCH_TEST_ROOT_URL");
    return (u != NULL && u[0] != '\0') ? u : test_url();
}

void url_with(char *buf, size_t n, const char *base, const char *params) {
    int w;
    if (params == NULL || params[0] == '\0')
        w = snprintf(buf, n, "%s", base);
    else
        w = snprintf(buf, n, "%s%c%s", base, strchr(base, '?') ? '&' : '?', params);
    CHECK(w > 0 && (size_t)w < n);
}

static void copy_part(char *dst, size_t n, const char *from, const char *to) {
    size_t len = (size_t)(to - from);
    CHECK(len < n);
    memcpy(dst, from, len);
    dst[len] = '\0';
}

test_endpoint parse_url(const char *url) {
    test_endpoint e;
    memset(&e, 0, sizeof e);
    e.port = 3306;
    const char *p = strstr(url, "://");
    CHECKF(p != NULL, "bad test URL %s", url);
    p += 3;
    const char *end = p + strcspn(p, "/?");
    const char *at = NULL;
    for (const char *q = p; q < end; q++)
        if (*q == '@') at = q;
    if (at != NULL) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (colon != NULL) {
            copy_part(e.user, sizeof e.user, p, colon);
            copy_part(e.pass, sizeof e.pass, colon + 1, at);
        } else {
            copy_part(e.user, sizeof e.user, p, at);
        }
        p = at + 1;
    }
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (colon != NULL) {
        copy_part(e.host, sizeof e.host, p, colon);
        e.port = atoi(colon + 1);
    } else {
        copy_part(e.host, sizeof e.host, p, end);
    }
    if (*end == '/') {
        const char *dbend = end + 1 + strcspn(end + 1, "?");
        copy_part(e.db, sizeof e.db, end + 1, dbend);
    }
    return e;
}

staunch_pool *open_pool(const char *params) {
    char url[1024];
    url_with(url, sizeof url, test_url(), params);
    staunch_pool *pool = NULL;
    OK(staunch_pool_open, url, &pool);
    CHECK(pool != NULL);
    return pool;
}

void exec_sql(staunch_conn *c, const char *sql) {
    staunch_error *err = NULL;
    staunch_status st = staunch_conn_execute(c, sql, NULL, 0, NULL, NULL, &err);
    CHECKF(st == STAUNCH_OK, "%s: %s", sql, staunch_error_message(err));
}

/* The rows of `sql`, positioned on the first row (there must be one). */
static staunch_rows *first_row(staunch_conn *c, const char *sql) {
    staunch_rows *rows = NULL;
    staunch_error *err = NULL;
    staunch_status st = staunch_conn_query(c, sql, NULL, 0, &rows, &err);
    CHECKF(st == STAUNCH_OK, "%s: %s", sql, staunch_error_message(err));
    bool has = false;
    OK(staunch_rows_next, rows, &has);
    CHECKF(has, "%s: no row", sql);
    return rows;
}

int64_t query_i64(staunch_conn *c, const char *sql) {
    staunch_rows *rows = first_row(c, sql);
    int64_t v = 0;
    OK(staunch_rows_get_i64, rows, 0, &v);
    staunch_rows_free(rows);
    return v;
}

void query_text(staunch_conn *c, const char *sql, size_t col, char *buf, size_t n) {
    staunch_rows *rows = first_row(c, sql);
    const char *v = NULL;
    OK(staunch_rows_get_text, rows, col, &v, NULL);
    CHECKF(strlen(v) < n, "%s: %zu bytes do not fit in %zu", sql, strlen(v), n);
    snprintf(buf, n, "%s", v);
    staunch_rows_free(rows);
}

uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void sleep_ms(unsigned ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

uint64_t slack_ms(void) {
    const char *s = getenv("STAUNCH_TEST_SLACK_MS");
    return (s != NULL && s[0] != '\0') ? (uint64_t)strtoull(s, NULL, 10) : 300u;
}

const char *thread_name(void) {
    static _Thread_local char name[32];
    if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) name[0] = '\0';
    return name;
}

int count_staunch_threads(void) {
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[64], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%.20s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue; /* exited meanwhile */
        if (fgets(comm, sizeof comm, f) != NULL && strncmp(comm, "staunch-", 8) == 0) n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

int black_hole_listen(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(fd, 64) == 0);
    socklen_t len = sizeof a;
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* ---- forwarder: one thread, poll() over the listener and every pair ---- */

#define MAX_PAIRS 128

struct forwarder {
    int listen_fd;
    char host[64];
    int port;
    atomic_int stop;
    pthread_t thread;
    int client[MAX_PAIRS];
    int upstream[MAX_PAIRS];
    int n;
};

static int connect_to(const char *host, int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static void drop_pair(forwarder *f, int i) {
    close(f->client[i]);
    close(f->upstream[i]);
    f->n--;
    f->client[i] = f->client[f->n];
    f->upstream[i] = f->upstream[f->n];
}

static void *forward_loop(void *arg) {
    forwarder *f = arg;
    pthread_setname_np(pthread_self(), "test-forwarder");
    struct pollfd pfd[1 + 2 * MAX_PAIRS];
    char buf[16384];
    while (!atomic_load(&f->stop)) {
        pfd[0].fd = f->listen_fd;
        pfd[0].events = POLLIN;
        for (int i = 0; i < f->n; i++) {
            pfd[1 + 2 * i].fd = f->client[i];
            pfd[1 + 2 * i].events = POLLIN;
            pfd[2 + 2 * i].fd = f->upstream[i];
            pfd[2 + 2 * i].events = POLLIN;
        }
        int n = f->n;
        int r = poll(pfd, (nfds_t)(1 + 2 * n), 20);
        if (r <= 0) continue;
        /* Pairs first, from the last (drop_pair moves the last one down). */
        for (int i = n - 1; i >= 0; i--) {
            int dead = 0;
            for (int side = 0; side < 2 && !dead; side++) {
                short ev = pfd[1 + 2 * i + side].revents;
                if (ev == 0) continue;
                int from = side == 0 ? f->client[i] : f->upstream[i];
                int to = side == 0 ? f->upstream[i] : f->client[i];
                ssize_t got = recv(from, buf, sizeof buf, 0);
                if (got <= 0 || write_all(to, buf, (size_t)got) != 0) dead = 1;
            }
            if (dead) drop_pair(f, i);
        }
        if (pfd[0].revents & POLLIN) {
            int c = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (c < 0) continue;
            int u = f->n < MAX_PAIRS ? connect_to(f->host, f->port) : -1;
            if (u < 0) {
                close(c);
                continue;
            }
            f->client[f->n] = c;
            f->upstream[f->n] = u;
            f->n++;
        }
    }
    while (f->n > 0) drop_pair(f, f->n - 1);
    return NULL;
}

forwarder *forwarder_start(int listen_fd, const char *host, int port) {
    forwarder *f = calloc(1, sizeof *f);
    CHECK(f != NULL);
    f->listen_fd = listen_fd;
    snprintf(f->host, sizeof f->host, "%s", host);
    f->port = port;
    atomic_init(&f->stop, 0);
    CHECK(pthread_create(&f->thread, NULL, forward_loop, f) == 0);
    return f;
}

void forwarder_stop(forwarder *f) {
    if (f == NULL) return;
    atomic_store(&f->stop, 1);
    CHECK(pthread_join(f->thread, NULL) == 0);
    free(f);
}

/* The test kit's command line ($STAUNCH_TESTKIT), driven over its
 * stdin/stdout as the bindings' tests do: one per process. */
static FILE *tk_in, *tk_out;
static pid_t tk_pid;

const char *tk_start_args(const char *const args[]) {
    const char *bin = getenv("STAUNCH_TESTKIT");
    if (bin == NULL || access(bin, X_OK) != 0) {
        fprintf(stderr, "STAUNCH_TESTKIT is not set to the staunch-testkit binary: skipped\n");
        exit(TEST_SKIP);
    }
    const char *argv[16] = {bin};
    size_t argc = 1;
    for (; args[argc - 1] != NULL; argc++) CHECK(argc < 15);
    memcpy(argv + 1, args, (argc - 1) * sizeof *argv);
    argv[argc] = NULL;
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
        execv(bin, (char *const *)argv);
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
    return line;
}

void tk_start(char *url, size_t n) {
    static const char *const args[] = {"server", NULL};
    const char *line = tk_start_args(args);
    CHECK(json_str(line, "url", url, n) != NULL);
}

const char *json_str(const char *from, const char *key, char *out, size_t n) {
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *v = strstr(from, pat);
    if (v == NULL) return NULL;
    v += strlen(pat);
    const char *end = strchr(v, '"');
    CHECKF(end != NULL && (size_t)(end - v) < n, "JSON string %s does not fit in %zu bytes", key,
           n);
    memcpy(out, v, (size_t)(end - v));
    out[end - v] = '\0';
    return end + 1;
}

const char *json_int(const char *from, const char *key, long *out) {
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *v = strstr(from, pat);
    if (v == NULL) return NULL;
    char *end = NULL;
    *out = strtol(v + strlen(pat), &end, 10);
    CHECKF(end != v + strlen(pat), "JSON %s is not a number", key);
    return end;
}

void tk_cmd(const char *cmd) {
    char line[4096];
    fprintf(tk_in, "%s\n", cmd);
    fflush(tk_in);
    CHECKF(fgets(line, sizeof line, tk_out) != NULL, "%s: no answer", cmd);
    CHECKF(strstr(line, "\"ok\":true") != NULL, "%s: %s", cmd, line);
}

void tk_quit(void) {
    tk_cmd("quit");
    fclose(tk_in);
    fclose(tk_out);
    int status = 0;
    CHECK(waitpid(tk_pid, &status, 0) == tk_pid);
}
