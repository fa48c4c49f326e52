// C glue for the event callback: the exported Go functions (events.go)
// become the callback and its finalizer, and the cgo.Handle travels as the
// opaque user_data (made a pointer here, in C, so Go never turns an integer
// into an unsafe.Pointer). C keeps no Go pointer.
#include <stdint.h>
#include "staunch.h"
#include "_cgo_export.h"

staunch_status go_set_event_callback(staunch_options *opts, uintptr_t handle,
                                     staunch_error **err) {
    return staunch_options_set_event_callback(
        opts, (staunch_event_callback)staunchGoEvent, (void *)handle,
        (staunch_finalizer)staunchGoFinalize, err);
}

// Sends sql apart (staunch_conn_query_send_ex: as text without params,
// else as the pool's defaults say, prepared unless interpolate_params):
// *fd receives the socket to wait on (-1: receive at once), *id the
// connection's pool-wide number (which keys its epoll instance in the Go
// poller). One cgo call.
staunch_status go_query_send(staunch_conn *conn, const char *sql,
                             const staunch_param *params, size_t n_params,
                             int *fd, uint64_t *id, staunch_error **err) {
    *fd = -1;
    *id = staunch_conn_id(conn);
    return staunch_conn_query_send_ex(conn, sql, params, n_params,
                                      n_params == 0 ? STAUNCH_QUERY_TEXT : 0,
                                      fd, err);
}

// Receives the answer to a statement go_query_send sent as Exec wants it:
// the rows read off and freed, the figures of staunch_conn_last_result.
staunch_status go_exec_recv(staunch_conn *conn, uint64_t *affected,
                            uint64_t *last_id, staunch_error **err) {
    staunch_rows *rows = NULL;
    staunch_status st = staunch_conn_query_recv(conn, 0, &rows, err);
    if (st != STAUNCH_OK) {
        return st;
    }
    staunch_rows_free(rows);
    staunch_result r = {.size = sizeof r};
    st = staunch_conn_last_result(conn, &r, err);
    *affected = r.affected_rows;
    *last_id = r.last_insert_id;
    return st;
}

// Finishes a pending borrow (staunch_pending_get_finish) and, when it is
// over (a connection in *out, or an error), frees it: one cgo call where
// the two made two.
staunch_status go_pending_finish(staunch_pending_get *pending,
                                 staunch_conn **out, staunch_error **err) {
    staunch_status st = staunch_pending_get_finish(pending, out, err);
    if (st != STAUNCH_OK || *out != NULL) {
        staunch_pending_get_free(pending);
    }
    return st;
}

// Borrows a connection of pool and sends sql on it apart, as go_query_send
// (one cgo call where Acquire and the send make two): *conn receives the
// borrowed handle (NULL when the borrow or the send failed). When no
// connection is idle, nothing is sent: *pending receives the borrow waiting
// in the pool's queue (staunch_pool_get_start), for the goroutine to wait on
// in the netpoller.
staunch_status go_pool_send(staunch_pool *pool, uint32_t timeout_ms,
                            const char *sql, int signal_fd,
                            staunch_conn **conn, staunch_pending_get **pending,
                            int *fd, uint64_t *id, staunch_error **err) {
    *fd = -1;
    *conn = NULL;
    *pending = NULL;
    staunch_status st = staunch_pool_get_start(pool, timeout_ms, false,
                                               signal_fd, conn, pending, err);
    if (st != STAUNCH_OK || *pending != NULL) {
        *conn = NULL;
        return st;
    }
    st = go_query_send(*conn, sql, NULL, 0, fd, id, err);
    if (st != STAUNCH_OK) {
        staunch_conn_free(*conn);
        *conn = NULL;
    }
    return st;
}

// Borrows a connection of pool (staunch_pool_get, or staunch_pool_get_read
// when read) and writes its server into buf as staunch_conn_server does
// (*got: it did), in one cgo call where a Tracer's borrow made two.
staunch_status go_pool_get_server(staunch_pool *pool, uint32_t timeout_ms,
                                  bool read, staunch_conn **conn, char *buf,
                                  size_t cap, size_t *n, bool *got,
                                  staunch_error **err) {
    *got = false;
    staunch_status st = read ? staunch_pool_get_read(pool, timeout_ms, conn, err)
                             : staunch_pool_get(pool, timeout_ms, conn, err);
    if (st == STAUNCH_OK) {
        *got = staunch_conn_server(*conn, buf, cap, n, NULL) == STAUNCH_OK;
    }
    return st;
}

// Receives the answer to what go_pool_send sent and gives the connection
// back (staunch_conn_free), in one cgo call.
staunch_status go_recv_free(staunch_conn *conn, staunch_rows **out,
                            staunch_error **err) {
    staunch_status st = staunch_conn_query_recv(conn, 0, out, err);
    staunch_conn_free(conn);
    return st;
}

// Reads the rows of rows that have arrived (staunch_rows_fetch_ready) and,
// when none had and the next must be waited for, gives the socket to wait
// on (staunch_rows_wait_fd; *fd -1: wait in staunch_rows_fetch instead).
// One cgo call.
staunch_status go_fetch_ready(staunch_rows *rows, staunch_value *values,
                              size_t capacity, size_t *n_rows, bool *waits,
                              int *fd, uint64_t *id, staunch_error **err) {
    *fd = -1;
    *id = 0;
    staunch_status st = staunch_rows_fetch_ready(rows, values, capacity,
                                                 n_rows, waits, err);
    if (st == STAUNCH_OK && *waits && *n_rows == 0) {
        st = staunch_rows_wait_fd(rows, fd, id, err);
    }
    return st;
}
