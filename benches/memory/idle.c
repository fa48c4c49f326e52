/* The C face's child for benches/memory/mem_bench.py: resident memory of a
 * process holding N idle pooled connections, then after each of them has
 * carried one large answer and gone back.
 *
 *   idle URL N ROWS [WAY]   prints one JSON line per phase:
 *                           {"phase":..,"rss_kb":..,"threads":..}
 *
 * WAY is how the large answer is asked for: `default` (flags 0: a statement
 * without parameters is prepared, its answer read by the `mysql` crate) or
 * `text` (STAUNCH_QUERY_TEXT, what the bindings send: read by src/wire).
 *
 * The "after" figure is taken 12 s after the return (see mem_bench.py).
 *
 * Linked against the library under test (the shipped one or a plain build). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include "staunch.h"

/* A field of /proc/self/status in kB or as a count (VmRSS:, Threads:). */
static long status_field(const char *name) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(name);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0) v = strtol(line + n, NULL, 10);
    fclose(f);
    return v;
}

static void emit(const char *phase) {
    printf("{\"phase\":\"%s\",\"rss_kb\":%ld,\"threads\":%ld}\n", phase, status_field("VmRSS:"),
           status_field("Threads:"));
    fflush(stdout);
}

static void die(const char *what, staunch_error *err) {
    fprintf(stderr, "idle: %s: %s\n", what, err ? staunch_error_message(err) : "?");
    exit(1);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits until the pool holds n idle connections (bounded: 120 s). */
static void wait_idle(staunch_pool *pool, uint64_t n) {
    for (int i = 0; i < 12000; i++) {
        staunch_stats s;
        memset(&s, 0, sizeof s);
        s.size = sizeof s;
        staunch_error *err = NULL;
        if (staunch_pool_stats(pool, &s, &err) != STAUNCH_OK) die("stats", err);
        if (s.idle >= n && s.pending_creates == 0) return;
        sleep_ms(10);
    }
    fprintf(stderr, "idle: the pool never reached %llu idle connections\n", (unsigned long long)n);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: idle URL N ROWS [default|text]\n");
        return 2;
    }
    uint32_t flags = 0;
    if (argc == 5 && strcmp(argv[4], "text") == 0) flags = STAUNCH_QUERY_TEXT;
    else if (argc == 5 && strcmp(argv[4], "default") != 0) {
        fprintf(stderr, "idle: WAY is default or text\n");
        return 2;
    }
    const char *base_url = argv[1];
    long n = strtol(argv[2], NULL, 10), rows = strtol(argv[3], NULL, 10);
    if (n < 1 || rows < 0) {
        fprintf(stderr, "idle: N must be >= 1 and ROWS >= 0\n");
        return 2;
    }
    size_t cap = strlen(base_url) + 128;
    char *url = malloc(cap);
    char sql[160];
    staunch_error *err = NULL;
    staunch_pool *pool = NULL;

    /* The baseline: the library loaded and one connection made, used and
     * closed, so that what is counted per connection is the connection's. */
    snprintf(url, cap, "%s%cmax_size=1&min_idle=1", base_url, strchr(base_url, '?') ? '&' : '?');
    if (staunch_pool_open(url, &pool, &err) != STAUNCH_OK) die("open", err);
    wait_idle(pool, 1);
    staunch_conn *c = NULL;
    if (staunch_pool_get(pool, 10000, &c, &err) != STAUNCH_OK) die("get", err);
    if (staunch_conn_execute(c, "DO 1", NULL, 0, NULL, NULL, &err) != STAUNCH_OK) die("DO 1", err);
    staunch_conn_free(c);
    staunch_pool_free(pool);
    sleep_ms(200);
    emit("base");

    snprintf(url, cap, "%s%cmax_size=%ld&min_idle=%ld", base_url, strchr(base_url, '?') ? '&' : '?', n, n);
    if (staunch_pool_open(url, &pool, &err) != STAUNCH_OK) die("open", err);
    wait_idle(pool, (uint64_t)n);
    sleep_ms(500);
    emit("idle");

    if (rows > 0) {
        /* Every connection carries one large answer: all borrowed at once,
         * so each is a different connection; then all go back. */
        staunch_conn **held = calloc((size_t)n, sizeof *held);
        snprintf(sql, sizeof sql, "SELECT seq, REPEAT('x', 100) FROM seq_1_to_%ld", rows);
        for (long i = 0; i < n; i++) {
            if (staunch_pool_get(pool, 30000, &held[i], &err) != STAUNCH_OK) die("get", err);
            staunch_rows *r = NULL;
            if (staunch_conn_query_ex(held[i], sql, NULL, 0, flags, &r, &err) != STAUNCH_OK) die("query", err);
            staunch_rows_free(r);
        }
        for (long i = 0; i < n; i++) staunch_conn_free(held[i]);
        free(held);
        sleep_ms(12000);
        emit("after_large");
    }
    staunch_pool_free(pool);
    free(url);
    return 0;
}
