/*
 * Helpers shared by the C tests: checks that print where they failed, the
 * test server's URL, timing, and the incident-A tools (a black-hole listener
 * and a forwarder that later proxies it to the real server).
 *
 * Tests needing a server exit 77 (ctest: skipped) when STAUNCH_TEST_URL is not
 * set. STAUNCH_TEST_SLACK_MS widens the time bounds (scripts/c-tests.sh sets
 * it under sanitizers and valgrind).
 */
#ifndef STAUNCH_TEST_UTIL_H
#define STAUNCH_TEST_UTIL_H

#include <staunch.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77

void die_at(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) die_at(__FILE__, __LINE__, "CHECK failed: %s", #cond); \
    } while (0)

#define CHECKF(cond, ...)                                  \
    do {                                                   \
        if (!(cond)) die_at(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

void check_ok_at(const char *file, int line, const char *call, staunch_status st,
                 staunch_error *err);
void check_fails_at(const char *file, int line, const char *call, staunch_status want,
                    const char *needle, staunch_status st, staunch_error *err);

/* OK(fn, args...): calls fn(args..., &err) and dies with the error unless it
 * returns STAUNCH_OK. */
#define OK(fn, ...)                                                  \
    do {                                                             \
        staunch_error *ok_err_ = NULL;                               \
        staunch_status ok_st_ = fn(__VA_ARGS__, &ok_err_);           \
        check_ok_at(__FILE__, __LINE__, #fn, ok_st_, ok_err_);       \
    } while (0)

/* FAILS(status, needle, fn, args...): calls fn(args..., &err) and checks it
 * fails with `status`, that the error object says the same and that its
 * message contains `needle` (unless NULL). Frees the error. */
#define FAILS(want, needle, fn, ...)                                             \
    do {                                                                         \
        staunch_error *f_err_ = NULL;                                            \
        staunch_status f_st_ = fn(__VA_ARGS__, &f_err_);                         \
        check_fails_at(__FILE__, __LINE__, #fn, (want), (needle), f_st_, f_err_); \
    } while (0)

/* The server under test; exits 77 when unset. */
const char *test_url(void);
/* The root account's URL (STAUNCH_TEST_ROOT_URL), or the test URL. */
const char *test_root_url(void);
/* base + "?" or "&" + params into buf. */
void url_with(char *buf, size_t n, const char *base, const char *params);

typedef struct {
    char user[64];
    char pass[64];
    char host[64];
    int port;
    char db[64];
} test_endpoint;
/* Parses mysql://user:pass@host:port/db[?...] (good enough for tests). */
test_endpoint parse_url(const char *url);

/* Opens a pool on the test server with extra URL parameters (may be ""). */
staunch_pool *open_pool(const char *params);
void exec_sql(staunch_conn *c, const char *sql);
int64_t query_i64(staunch_conn *c, const char *sql);
/* Column `col` of the first row of `sql`, as text, copied into buf[n]. */
void query_text(staunch_conn *c, const char *sql, size_t col, char *buf, size_t n);

/* A server of its own from `staunch-testkit server` ($STAUNCH_TESTKIT;
 * exits with TEST_SKIP when unset): its URL in url (n bytes); tk_cmd sends
 * a command ("freeze", "thaw", ...) and checks it succeeded; tk_quit stops
 * it. One per process. */
void tk_start(char *url, size_t n);
/* The same with the test kit's arguments (NULL-terminated, e.g.
 * {"topology", "--replicas", "1", NULL} or {"galera", NULL}): returns its
 * ready line (JSON, static storage). */
const char *tk_start_args(const char *const args[]);
/* In a JSON line, from `from` on: the first string value of `key` into
 * out[n] (json_str) or integer value (json_int); returns where the value
 * ends, NULL when the key is not there. No escapes, no nesting: good
 * enough for the test kit's lines. */
const char *json_str(const char *from, const char *key, char *out, size_t n);
const char *json_int(const char *from, const char *key, long *out);
void tk_cmd(const char *cmd);
void tk_quit(void);
uint64_t now_ms(void);
void sleep_ms(unsigned ms);
uint64_t slack_ms(void);
const char *thread_name(void);
/* Threads of this process whose name starts with "staunch-" (pool threads). */
int count_staunch_threads(void);

/* A TCP listener on 127.0.0.1 that never accepts: connects complete (the
 * kernel's backlog), no greeting ever comes. Returns the fd; *port its port. */
int black_hole_listen(int *port);

/* Starts accepting on listen_fd (a black hole so far) and proxying every
 * connection to host:port. */
typedef struct forwarder forwarder;
forwarder *forwarder_start(int listen_fd, const char *host, int port);
/* Stops the forwarder, closes every proxied connection, joins its thread. */
void forwarder_stop(forwarder *f);

#endif
