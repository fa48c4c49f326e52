package staunch

/*
#include "staunch.h"
*/
import "C"

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status is a staunch status code (include/staunch.h): 1xx the caller passed
// something unusable, 2xx the pool could not hand out a connection, 3xx the
// database failed the statement, 9xx a bug in staunch.
type Status uint32

// The status codes of the C ABI.
const (
	StatusOK              Status = C.STAUNCH_OK
	StatusNullArgument    Status = C.STAUNCH_NULL_ARGUMENT
	StatusInvalidUTF8     Status = C.STAUNCH_INVALID_UTF8
	StatusBadIndex        Status = C.STAUNCH_BAD_INDEX
	StatusWrongType       Status = C.STAUNCH_WRONG_TYPE
	StatusOutOfRange      Status = C.STAUNCH_OUT_OF_RANGE
	StatusUseAfterRelease Status = C.STAUNCH_USE_AFTER_RELEASE
	StatusInvalidConfig   Status = C.STAUNCH_INVALID_CONFIG
	StatusNullValue       Status = C.STAUNCH_NULL_VALUE
	StatusNoRow           Status = C.STAUNCH_NO_ROW
	StatusParamCount      Status = C.STAUNCH_PARAM_COUNT
	StatusBadParamType    Status = C.STAUNCH_BAD_PARAM_TYPE
	StatusConnBusy        Status = C.STAUNCH_CONN_BUSY
	StatusInvalidArgument Status = C.STAUNCH_INVALID_ARGUMENT
	StatusPoolExhausted   Status = C.STAUNCH_POOL_EXHAUSTED
	StatusUnreachable     Status = C.STAUNCH_UNREACHABLE
	StatusConnectRejected Status = C.STAUNCH_CONNECT_REJECTED
	StatusConnectFailed   Status = C.STAUNCH_CONNECT_FAILED
	StatusClosed          Status = C.STAUNCH_CLOSED
	StatusNoWriter        Status = C.STAUNCH_NO_WRITER
	StatusServerError     Status = C.STAUNCH_SERVER_ERROR
	StatusIOError         Status = C.STAUNCH_IO_ERROR
	StatusBroken          Status = C.STAUNCH_BROKEN
	StatusTimeout         Status = C.STAUNCH_STATEMENT_TIMEOUT
	StatusCancelled       Status = C.STAUNCH_CANCELLED
	StatusUnresponsive    Status = C.STAUNCH_SERVER_UNRESPONSIVE
	StatusConflict        Status = C.STAUNCH_CONFLICT
	StatusInternal        Status = C.STAUNCH_INTERNAL
	StatusPanic           Status = C.STAUNCH_PANIC
)

// String gives the C name, e.g. "STAUNCH_POOL_EXHAUSTED".
func (s Status) String() string { return C.GoString(C.staunch_status_name(C.staunch_status(s))) }

// Sentinel errors: test with errors.Is. Every error this package returns for a
// failed call is an *Error (or a *MySQLError for an error the server sent),
// and errors.Is matches it against the sentinel of its status.
var (
	// ErrPoolExhausted: Acquire timed out while every connection was in use.
	ErrPoolExhausted = errors.New("staunch: pool exhausted")
	// ErrUnreachable: Acquire timed out and no connection could be made (the
	// message says why, e.g. which host:port sent no greeting).
	ErrUnreachable = errors.New("staunch: database unreachable")
	// ErrConnectRejected: the server refused the credentials or database.
	ErrConnectRejected = errors.New("staunch: connect rejected")
	// ErrClosed: the pool is closed (also reported by its connections).
	ErrClosed = errors.New("staunch: pool closed")
	// ErrBroken: the connection broke during an earlier statement; release it
	// and acquire another. Also matched by I/O errors and by
	// ErrServerUnresponsive (the connection is then broken too).
	ErrBroken = errors.New("staunch: broken connection")
	// ErrStatementTimeout: a statement ran past its time limit (query_timeout
	// or Conn.SetStatementTimeout).
	ErrStatementTimeout = errors.New("staunch: statement timed out")
	// ErrCancelled: an Acquire or a statement was cancelled. Errors caused by
	// a context also match the context's error (context.Canceled or
	// context.DeadlineExceeded).
	ErrCancelled = errors.New("staunch: cancelled")
	// ErrServerUnresponsive: the server stopped answering during the
	// statement (the liveness check found it not answering, restarted or
	// replaced, or no longer running the connection). Also matches ErrBroken.
	ErrServerUnresponsive = errors.New("staunch: the server stopped answering")
	// ErrConflict: the server rolled the whole transaction back because it
	// lost a conflict: a deadlock or, in a Galera cluster, a certification
	// failure (error 1213, SQLSTATE 40001). The error is a *MySQLError with
	// that number, as go-sql-driver returns; the connection stays usable and
	// running the transaction again from its start may succeed.
	ErrConflict = errors.New("staunch: transaction lost a conflict (deadlock or certification failure)")
	// ErrReleased: the connection was released; acquire another.
	ErrReleased = errors.New("staunch: use of a released connection")
	// ErrInvalid: the caller passed something unusable (bad URL, unknown
	// knob, wrong parameter count or type, bad Scan destination, ...).
	ErrInvalid = errors.New("staunch: invalid argument")
	// ErrNoWriter: a topology pool has no writable primary right now.
	ErrNoWriter = errors.New("staunch: no writer")
	// ErrTxDone: Commit or Rollback on a transaction already ended.
	ErrTxDone = errors.New("staunch: transaction already committed or rolled back")

	// The kinds of server error (a *MySQLError) most callers branch on, from
	// its Category: errors.Is(err, ErrIntegrity) for a duplicate key.

	// ErrIntegrity: a constraint refused the change (duplicate key, foreign
	// key, NOT NULL, CHECK; SQLSTATE class 23).
	ErrIntegrity = errors.New("staunch: integrity constraint violated")
	// ErrProgramming: the statement is wrong (syntax, unknown table or column;
	// class 42).
	ErrProgramming = errors.New("staunch: bad statement")
	// ErrData: a value does not fit its column (too long, out of range; class 22).
	ErrData = errors.New("staunch: bad value")
	// ErrNotSupported: the server does not support what was asked (class 0A).
	ErrNotSupported = errors.New("staunch: not supported by the server")
)

// Category is what kind of failure a server error is (include/staunch.h,
// STAUNCH_CATEGORY_*): the library keeps one table, keyed by the error number
// with the SQLSTATE's class for numbers it does not name, so that every
// binding reports the same kind for the same error. A value without a
// constant here (a newer one) is operational.
type Category uint32

// The categories of the C ABI.
const (
	CategoryNone         Category = C.STAUNCH_CATEGORY_NONE
	CategoryIntegrity    Category = C.STAUNCH_CATEGORY_INTEGRITY
	CategoryProgramming  Category = C.STAUNCH_CATEGORY_PROGRAMMING
	CategoryData         Category = C.STAUNCH_CATEGORY_DATA
	CategoryNotSupported Category = C.STAUNCH_CATEGORY_NOT_SUPPORTED
	CategoryOperational  Category = C.STAUNCH_CATEGORY_OPERATIONAL
	CategoryInternal     Category = C.STAUNCH_CATEGORY_INTERNAL
	CategoryAccess       Category = C.STAUNCH_CATEGORY_ACCESS
	CategoryConnection   Category = C.STAUNCH_CATEGORY_CONNECTION
	CategoryRollback     Category = C.STAUNCH_CATEGORY_ROLLBACK
	CategoryTimeout      Category = C.STAUNCH_CATEGORY_TIMEOUT
	CategoryTransient    Category = C.STAUNCH_CATEGORY_TRANSIENT
)

var categoryNames = [...]string{"none", "integrity", "programming", "data", "not_supported",
	"operational", "internal", "access", "connection", "rollback", "timeout", "transient"}

// String gives the category's lowercase name, e.g. "integrity".
func (c Category) String() string {
	if int(c) < len(categoryNames) {
		return categoryNames[c]
	}
	return "operational"
}

// Error is a failed staunch call.
type Error struct {
	Status  Status // the C status code
	Op      string // what was being done: "acquire", "exec", "query", "scan", ...
	Message string // staunch's message (for a timeout: the pool state and the last connect error)
	ctx     error  // context.Canceled / DeadlineExceeded when the context caused it
	bad     bool   // the statement cannot have run: database/sql may retry (driver.ErrBadConn)
}

func (e *Error) Error() string {
	msg := "staunch: " + e.Op + ": " + e.Message
	if strings.HasPrefix(e.Message, e.Op+": ") {
		msg = "staunch: " + e.Message
	}
	if e.ctx != nil {
		msg += " (" + e.ctx.Error() + ")"
	}
	return msg
}

// Unwrap gives the context's error when a context ended the call.
func (e *Error) Unwrap() error { return e.ctx }

// Is matches the sentinel of the error's status.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrPoolExhausted:
		return e.Status == StatusPoolExhausted
	case ErrUnreachable:
		return e.Status == StatusUnreachable
	case ErrConnectRejected:
		return e.Status == StatusConnectRejected
	case ErrClosed:
		return e.Status == StatusClosed
	case ErrBroken:
		return e.Status == StatusBroken || e.Status == StatusIOError || e.Status == StatusUnresponsive
	case ErrServerUnresponsive:
		return e.Status == StatusUnresponsive
	case ErrConflict:
		return e.Status == StatusConflict
	case ErrStatementTimeout:
		return e.Status == StatusTimeout
	case ErrCancelled:
		return e.Status == StatusCancelled
	case ErrReleased:
		return e.Status == StatusUseAfterRelease
	case ErrNoWriter:
		return e.Status == StatusNoWriter
	case ErrInvalid:
		return e.Status >= 100 && e.Status < 200 && e.Status != StatusUseAfterRelease && e.Status != StatusConnBusy
	case driver.ErrBadConn:
		return e.bad
	}
	return false
}

// MySQLError is an error the server sent for a statement (a syntax error, a
// duplicate key, ...). The connection stays usable.
type MySQLError struct {
	Number   uint16   // the MySQL/MariaDB error number, e.g. 1146
	SQLState string   // the five-character SQLSTATE, e.g. "42S02"
	Category Category // what kind of failure it is, from the library's table
	Message  string
}

func (e *MySQLError) Error() string {
	return fmt.Sprintf("Error %d (%s): %s", e.Number, e.SQLState, e.Message)
}

// erLockDeadlock is a deadlock or a Galera certification failure.
const erLockDeadlock = 1213

// Is matches ErrConflict for a deadlock or certification failure (1213), and
// ErrIntegrity, ErrProgramming, ErrData and ErrNotSupported by the error's
// Category.
func (e *MySQLError) Is(target error) bool {
	switch target {
	case ErrConflict:
		return e.Number == erLockDeadlock
	case ErrIntegrity:
		return e.Category == CategoryIntegrity
	case ErrProgramming:
		return e.Category == CategoryProgramming
	case ErrData:
		return e.Category == CategoryData
	case ErrNotSupported:
		return e.Category == CategoryNotSupported
	}
	return false
}

// takeError turns a failed status and its error object into a Go error and
// frees the object.
func takeError(op string, st C.staunch_status, cerr *C.staunch_error) error {
	defer C.staunch_error_free(cerr)
	msg := C.GoString(C.staunch_error_message(cerr))
	if Status(st) == StatusServerError || Status(st) == StatusConflict {
		e := &MySQLError{
			Number:   uint16(C.staunch_error_server_code(cerr)),
			SQLState: C.GoString(C.staunch_error_sqlstate(cerr)),
			Category: Category(C.staunch_error_category(cerr)),
		}
		// The library's message is "<op>: server error N (STATE): text";
		// Error() says the number and state itself, so only the server's
		// text is kept (as go-sql-driver's MySQLError.Message).
		prefix := fmt.Sprintf("server error %d (%s): ", e.Number, e.SQLState)
		if i := strings.Index(msg, prefix); i >= 0 {
			msg = msg[i+len(prefix):]
		}
		e.Message = msg
		return e
	}
	if msg == "" {
		msg = Status(st).String()
	}
	return &Error{Status: Status(st), Op: op, Message: msg}
}

func invalid(op, format string, args ...any) error {
	return &Error{Status: StatusInvalidArgument, Op: op, Message: fmt.Sprintf(format, args...)}
}

// withContext marks err as caused by ctx when ctx is done (so errors.Is(err,
// context.Canceled) works) and the failure is one a context causes.
func withContext(err error, ctx context.Context) error {
	var e *Error
	if ctx == nil || !errors.As(err, &e) {
		return err
	}
	cerr := ctx.Err()
	if cerr == nil {
		// The C call's bound was the deadline: it may return a moment
		// before the context's own timer fires.
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl.Add(-time.Millisecond)) {
			cerr = context.DeadlineExceeded
		}
	}
	if cerr == nil {
		return err
	}
	switch e.Status {
	case StatusCancelled, StatusPoolExhausted, StatusUnreachable, StatusTimeout:
		e.ctx = cerr
	}
	return err
}

func ctxError(op string, ctx context.Context) error {
	return &Error{Status: StatusCancelled, Op: op, Message: "the context was done before the call", ctx: ctx.Err(), bad: true}
}
