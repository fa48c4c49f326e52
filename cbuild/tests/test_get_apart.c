/* get_apart: a borrow started with staunch_pool_get_start waits in the
 * pool's queue without a thread: its descriptor turns readable when a
 * connection is handed to it (in turn with a blocked staunch_pool_get), the
 * bound is reported by staunch_pending_get_finish as staunch_pool_get
 * reports it, freeing it unfinished leaves the pool as if it had never
 * waited, and the pool's close ends it. */
#include "util.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <errno.h>
#include <unistd.h>
#include <pthread.h>

/* Whether fd is readable within ms. */
static int readable(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, ms);
    CHECKF(n >= 0, "poll: %d", n);
    return n == 1 && (p.revents & POLLIN);
}

/* Whether fd is still open (the library never closes the caller's). */
static int still_open(int fd) {
    uint64_t n;
    return read(fd, &n, sizeof n) == (ssize_t)sizeof n || errno == EAGAIN;
}

static staunch_stats stats(staunch_pool *pool) {
    staunch_stats s = {.size = sizeof(staunch_stats)};
    OK(staunch_pool_stats, pool, &s);
    return s;
}

typedef struct {
    staunch_pool *pool;
    staunch_conn *conn;
    staunch_status st;
} blocked;

static void *blocked_get(void *arg) {
    blocked *b = arg;
    staunch_error *err = NULL;
    b->st = staunch_pool_get(b->pool, 10000, &b->conn, &err);
    staunch_error_free(err);
    return NULL;
}

int main(void) {
    staunch_pool *pool = open_pool("max_size=1");

    /* A connection idle: ready at once, nothing pending. */
    staunch_conn *c = NULL;
    OK(staunch_pool_get, pool, STAUNCH_TIMEOUT_DEFAULT, &c);
    staunch_conn_free(c);
    c = NULL;
    staunch_pending_get *p = (staunch_pending_get *)1;
    OK(staunch_pool_get_start, pool, STAUNCH_TIMEOUT_DEFAULT, false, -1, &c, &p);
    CHECK(c != NULL && p == NULL);
    CHECK(query_i64(c, "SELECT 1") == 1);

    /* The pool is full: the borrow waits, its descriptor not readable. */
    staunch_conn *c2 = NULL;
    OK(staunch_pool_get_start, pool, 10000, false, -1, &c2, &p);
    CHECK(c2 == NULL && p != NULL);
    int fd = staunch_pending_get_fd(p);
    CHECKF(fd >= 0, "fd %d", fd);
    uint32_t left = staunch_pending_get_remaining_ms(p);
    CHECKF(left > 9000 && left <= 10000, "remaining %u ms", left);
    CHECK(!readable(fd, 100));
    CHECKF(stats(pool).waiting == 1, "waiting = %llu", (unsigned long long)stats(pool).waiting);
    /* Nothing for it yet: OK with no connection. */
    OK(staunch_pending_get_finish, p, &c2);
    CHECK(c2 == NULL);

    /* A blocked get queues behind it: the returned connection goes to the
     * pending borrow first (FIFO), then to the blocked caller. */
    blocked b = {.pool = pool};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, blocked_get, &b) == 0);
    sleep_ms(200);
    CHECK(stats(pool).waiting == 2);
    uint64_t back = now_ms();
    staunch_conn_free(c);
    CHECK(readable(fd, 2000));
    CHECKF(now_ms() - back <= 100 + slack_ms(), "woken after %llu ms",
           (unsigned long long)(now_ms() - back));
    OK(staunch_pending_get_finish, p, &c2);
    CHECK(c2 != NULL);
    CHECK(query_i64(c2, "SELECT 2") == 2);
    /* Over: a second finish is refused. */
    staunch_conn *again = NULL;
    FAILS(STAUNCH_INVALID_ARGUMENT, "already finished", staunch_pending_get_finish, p, &again);
    CHECK(again == NULL);
    staunch_pending_get_free(p);
    staunch_conn_free(c2);
    CHECK(pthread_join(t, NULL) == 0);
    CHECKF(b.st == STAUNCH_OK && b.conn != NULL, "the blocked get: %s", staunch_status_name(b.st));

    /* The bound: no descriptor fires at it; finish after it reports the
     * timeout as staunch_pool_get does. */
    OK(staunch_pool_get_start, pool, 300, false, -1, &c2, &p);
    CHECK(c2 == NULL && p != NULL);
    uint64_t t0 = now_ms();
    CHECK(!readable(staunch_pending_get_fd(p), (int)staunch_pending_get_remaining_ms(p)));
    CHECK(staunch_pending_get_remaining_ms(p) == 0);
    FAILS(STAUNCH_POOL_EXHAUSTED, "timed out", staunch_pending_get_finish, p, &c2);
    CHECK(c2 == NULL);
    uint64_t took = now_ms() - t0;
    CHECKF(took >= 250 && took <= 300 + slack_ms(), "bound after %llu ms", (unsigned long long)took);
    staunch_pending_get_free(p);
    CHECK(stats(pool).waiting == 0);

    /* Given up unfinished (a cancelled task): out of the queue; and one
     * handed a connection before the host gave up gives it back. */
    uint64_t cancelled = stats(pool).acquires_cancelled;
    OK(staunch_pool_get_start, pool, 10000, false, -1, &c2, &p);
    CHECK(p != NULL && stats(pool).waiting == 1);
    staunch_pending_get_free(p);
    CHECK(stats(pool).waiting == 0);
    CHECK(stats(pool).acquires_cancelled == cancelled + 1);
    OK(staunch_pool_get_start, pool, 10000, false, -1, &c2, &p);
    CHECK(p != NULL);
    staunch_conn_free(b.conn);
    CHECK(readable(staunch_pending_get_fd(p), 2000));
    staunch_pending_get_free(p);
    staunch_stats s = stats(pool);
    CHECKF(s.waiting == 0 && s.idle == 1 && s.active == 0, "waiting %llu idle %llu active %llu",
           (unsigned long long)s.waiting, (unsigned long long)s.idle, (unsigned long long)s.active);
    OK(staunch_pool_get, pool, 1000, &c);
    CHECK(query_i64(c, "SELECT 3") == 3);

    /* The caller's own eventfd, reused from borrow to borrow (as a host
     * keeps one registered in its event loop): signalled, never closed. */
    int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    CHECK(efd >= 0);
    for (int round = 0; round < 2; round++) {
        OK(staunch_pool_get_start, pool, 10000, false, efd, &c2, &p);
        CHECK(c2 == NULL && p != NULL);
        CHECK(staunch_pending_get_fd(p) == efd);
        CHECK(!readable(efd, 50));
        staunch_conn_free(c);
        c = NULL;
        CHECK(readable(efd, 2000));
        OK(staunch_pending_get_finish, p, &c);
        CHECK(c != NULL && query_i64(c, "SELECT 5") == 5);
        staunch_pending_get_free(p);
    }
    CHECK(still_open(efd));
    close(efd);
    FAILS(STAUNCH_INVALID_ARGUMENT, "signal_fd", staunch_pool_get_start, pool, 10000, false, -2, &c2, &p);

    /* A read borrow routes as staunch_pool_get_read (one host: the writer). */
    OK(staunch_pool_get_start, pool, 10000, true, -1, &c2, &p);
    CHECK(p != NULL);
    staunch_conn_free(c);
    CHECK(readable(staunch_pending_get_fd(p), 2000));
    OK(staunch_pending_get_finish, p, &c2);
    CHECK(c2 != NULL && query_i64(c2, "SELECT 4") == 4);
    staunch_pending_get_free(p);

    /* The pool's close ends a waiting borrow: readable, STAUNCH_CLOSED. */
    OK(staunch_pool_get_start, pool, 10000, false, -1, &c, &p);
    CHECK(p != NULL);
    fd = staunch_pending_get_fd(p);
    OK(staunch_pool_close, pool);
    CHECK(readable(fd, 2000));
    FAILS(STAUNCH_CLOSED, NULL, staunch_pending_get_finish, p, &c);
    CHECK(c == NULL);
    staunch_pending_get_free(p);
    staunch_conn_free(c2);

    /* Bad input: named, never a crash. */
    FAILS(STAUNCH_NULL_ARGUMENT, "pool", staunch_pool_get_start, NULL, 0, false, -1, &c, &p);
    FAILS(STAUNCH_NULL_ARGUMENT, "pending", staunch_pool_get_start, pool, 0, false, -1, &c, NULL);
    FAILS(STAUNCH_NULL_ARGUMENT, "pending", staunch_pending_get_finish, NULL, &c);
    CHECK(staunch_pending_get_fd(NULL) == -1);
    CHECK(staunch_pending_get_remaining_ms(NULL) == 0);
    staunch_pending_get_free(NULL);

    staunch_pool_free(pool);
    printf("get_apart: ok\n");
    return 0;
}
