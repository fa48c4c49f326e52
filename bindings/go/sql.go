package staunch

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
)

// OpenDB returns a *sql.DB whose connections come from pool. database/sql's
// own pool is set to keep no idle connection (SetMaxIdleConns(0)), so every
// connection database/sql is done with goes straight back to staunch, which
// does the pooling (bounds, timeouts, validation, session reset): a
// database/sql "close" is a staunch release, and a "connect" a staunch
// acquire. Closing the *sql.DB does not close pool.
//
// Statements run exactly as through the native API, contexts included: a
// context that ends during a statement cancels it on the server.
// driver.ErrBadConn (database/sql then retries on another connection) is
// returned only when the statement cannot have run: the connection was
// found broken before it was sent.
func OpenDB(pool *Pool) *sql.DB {
	db := sql.OpenDB(&Connector{pool: pool})
	db.SetMaxIdleConns(0)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db
}

// Connector is the driver.Connector of OpenDB.
type Connector struct{ pool *Pool }

// NewConnector returns a driver.Connector over pool (for sql.OpenDB).
func NewConnector(pool *Pool) *Connector { return &Connector{pool: pool} }

// Connect acquires a connection from the pool, honouring ctx.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if c == nil || c.pool == nil {
		return nil, invalid("connect", "nil *Pool")
	}
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &sqlConn{c: conn}, nil
}

// Driver returns the Driver; its Open opens a pool of its own per call and
// is there for sql.Register-style use only: prefer OpenDB.
func (c *Connector) Driver() driver.Driver { return Driver{} }

// Driver is the database/sql driver ("staunch"); Open takes a staunch URL.
// Each Open makes a pool of its own: use OpenDB(pool) instead, which shares
// one.
type Driver struct{}

// Open is not the way: it fails, naming OpenDB. (A pool per connection would
// defeat staunch.)
func (Driver) Open(name string) (driver.Conn, error) {
	return nil, invalid("open", "use staunch.OpenDB(pool) (a *sql.DB over a staunch pool), not sql.Open")
}

func init() { sql.Register("staunch", Driver{}) }

type sqlConn struct{ c *Conn }

var (
	_ driver.Conn               = (*sqlConn)(nil)
	_ driver.ConnBeginTx        = (*sqlConn)(nil)
	_ driver.ConnPrepareContext = (*sqlConn)(nil)
	_ driver.ExecerContext      = (*sqlConn)(nil)
	_ driver.QueryerContext     = (*sqlConn)(nil)
	_ driver.Pinger             = (*sqlConn)(nil)
	_ driver.Validator          = (*sqlConn)(nil)
	_ driver.SessionResetter    = (*sqlConn)(nil)
	_ driver.NamedValueChecker  = (*sqlConn)(nil)
)

func (sc *sqlConn) Prepare(query string) (driver.Stmt, error) {
	return sc.PrepareContext(context.Background(), query)
}

// PrepareContext returns a statement that staunch prepares (through its
// per-connection statement cache) when it runs.
func (sc *sqlConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if sc.c.c == nil {
		return nil, driver.ErrBadConn
	}
	return &sqlStmt{sc: sc, query: query}, nil
}

// Close releases the connection back to staunch.
func (sc *sqlConn) Close() error {
	sc.c.Release()
	return nil
}

func (sc *sqlConn) Begin() (driver.Tx, error) {
	return sc.BeginTx(context.Background(), driver.TxOptions{})
}

func (sc *sqlConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	var o TxOptions
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadUncommitted:
		o.Isolation = IsolationReadUncommitted
	case sql.LevelReadCommitted:
		o.Isolation = IsolationReadCommitted
	case sql.LevelRepeatableRead:
		o.Isolation = IsolationRepeatableRead
	case sql.LevelSerializable:
		o.Isolation = IsolationSerializable
	default:
		return nil, invalid("begin", "isolation level %v is not supported by MySQL", sql.IsolationLevel(opts.Isolation))
	}
	o.ReadOnly = opts.ReadOnly
	tx, err := sc.c.BeginTx(ctx, o)
	if err != nil {
		return nil, err
	}
	return &sqlTx{tx: tx}, nil
}

func (sc *sqlConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	a, err := plainArgs(args)
	if err != nil {
		return nil, err
	}
	r, err := sc.c.Exec(ctx, query, a...)
	if err != nil {
		return nil, err
	}
	return sqlResult{r}, nil
}

func (sc *sqlConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	a, err := plainArgs(args)
	if err != nil {
		return nil, err
	}
	rows, err := sc.c.Query(ctx, query, a...)
	if err != nil {
		return nil, err
	}
	return &sqlRows{rs: rows}, nil
}

func (sc *sqlConn) Ping(ctx context.Context) error { return sc.c.Ping(ctx) }

// IsValid: database/sql keeps no idle connections (OpenDB), so this matters
// only between the statements of one sql.Conn or sql.Tx: a broken or
// released connection is not reused.
func (sc *sqlConn) IsValid() bool { return sc.c.c != nil && !sc.c.IsBroken() }

// ResetSession: staunch resets sessions itself on release; here only a
// broken connection is refused, so database/sql takes another.
func (sc *sqlConn) ResetSession(ctx context.Context) error {
	if !sc.IsValid() {
		return driver.ErrBadConn
	}
	return nil
}

// CheckNamedValue passes every value through as it is, so Exec and Query
// take the types they take natively (uint64, time.Duration, ... which
// database/sql's default converter would refuse or change); bindParams
// converts each value once, when the statement runs, and refuses a type it
// cannot bind. Named parameters are refused (MySQL has only ?).
func (sc *sqlConn) CheckNamedValue(nv *driver.NamedValue) error { return checkName(nv) }

func checkName(nv *driver.NamedValue) error {
	if nv.Name != "" {
		return invalid("bind", "named parameter %q: MySQL statements take ? placeholders only", nv.Name)
	}
	return nil
}

func plainArgs(args []driver.NamedValue) ([]any, error) {
	if len(args) == 0 {
		return nil, nil
	}
	a := make([]any, len(args))
	for i := range args {
		if err := checkName(&args[i]); err != nil {
			return nil, err
		}
		a[i] = args[i].Value
	}
	return a, nil
}

type sqlResult struct{ r Result }

func (r sqlResult) LastInsertId() (int64, error) { return int64(r.r.LastInsertID), nil }
func (r sqlResult) RowsAffected() (int64, error) { return int64(r.r.RowsAffected), nil }

type sqlTx struct{ tx *Tx }

// database/sql has no context for Commit and Rollback: they are bounded by
// the connection's statement limit.
func (t *sqlTx) Commit() error { return sqlTxErr(t.tx.Commit(context.Background())) }

func (t *sqlTx) Rollback() error { return sqlTxErr(t.tx.Rollback(context.Background())) }

// sqlTxErr gives database/sql's ErrTxDone for staunch's.
func sqlTxErr(err error) error {
	if errors.Is(err, ErrTxDone) {
		return sql.ErrTxDone
	}
	return err
}

type sqlStmt struct {
	sc    *sqlConn
	query string
}

func (s *sqlStmt) Close() error { return nil }

// NumInput -1: staunch checks the count against the placeholders.
func (s *sqlStmt) NumInput() int { return -1 }

func (s *sqlStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *sqlStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *sqlStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.sc.ExecContext(ctx, s.query, args)
}

func (s *sqlStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.sc.QueryContext(ctx, s.query, args)
}

func (s *sqlStmt) CheckNamedValue(nv *driver.NamedValue) error { return s.sc.CheckNamedValue(nv) }

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}

type sqlRows struct{ rs *Rows }

var (
	_ driver.RowsNextResultSet              = (*sqlRows)(nil)
	_ driver.RowsColumnTypeScanType         = (*sqlRows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*sqlRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*sqlRows)(nil)
	_ driver.RowsColumnTypeLength           = (*sqlRows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*sqlRows)(nil)
)

func (r *sqlRows) Columns() []string {
	cols := r.rs.Columns()
	if cols == nil {
		return []string{}
	}
	return cols
}

func (r *sqlRows) Close() error { r.rs.Close(); return nil }

func (r *sqlRows) Next(dest []driver.Value) error {
	if !r.rs.Next() {
		return r.rs.endErr(io.EOF)
	}
	row, err := r.rs.row()
	if err != nil {
		return err
	}
	for i := range dest {
		dest[i] = sqlValue(&row[i])
	}
	return nil
}

// sqlValue is the driver.Value of one value: text, DECIMAL and binary data
// as []byte pointing into the row set's fetch buffer (as go-sql-driver's
// point into its read buffer): valid until the next Next, which is all
// database/sql needs (it copies them into the caller's destination, except
// into an sql.RawBytes, which the database/sql docs say is valid only until
// the next Next). uint64 above MaxInt64 stays uint64 (database/sql converts
// it), TIME comes as its text ("-12:30:00").
func sqlValue(v *cValue) driver.Value {
	if b, ok := aliasBytes(v); ok {
		return b
	}
	return driverValue(v)
}

func (r *sqlRows) HasNextResultSet() bool { return r.rs.r != nil }

func (r *sqlRows) NextResultSet() error {
	if !r.rs.NextResultSet() {
		return r.rs.endErr(io.EOF)
	}
	return nil
}

func (r *sqlRows) ct(i int) ColumnType {
	if t := r.rs.ColumnTypes(); i < len(t) {
		return t[i]
	}
	return ColumnType{}
}

func (r *sqlRows) ColumnTypeScanType(i int) reflect.Type {
	ct := r.ct(i)
	if ct.Kind == KindTime {
		return reflect.TypeFor[string]()
	}
	if ct.Nullable() {
		switch ct.Kind {
		case KindInt:
			return reflect.TypeFor[sql.NullInt64]()
		case KindDouble:
			return reflect.TypeFor[sql.NullFloat64]()
		case KindText, KindDecimal:
			return reflect.TypeFor[sql.NullString]()
		case KindDate, KindDateTime:
			return reflect.TypeFor[sql.NullTime]()
		}
	}
	return ct.ScanType()
}

func (r *sqlRows) ColumnTypeDatabaseTypeName(i int) string { return r.ct(i).DatabaseTypeName() }

func (r *sqlRows) ColumnTypeNullable(i int) (nullable, ok bool) { return r.ct(i).Nullable(), true }

func (r *sqlRows) ColumnTypeLength(i int) (int64, bool) {
	ct := r.ct(i)
	switch ct.Kind {
	case KindText, KindBytes:
		return int64(ct.Length), true
	}
	return 0, false
}

func (r *sqlRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	ct := r.ct(i)
	if ct.Kind == KindDecimal {
		p := int64(ct.Length)
		if ct.Decimals > 0 {
			p--
		}
		if !ct.Unsigned() {
			p--
		}
		return p, int64(ct.Decimals), true
	}
	return 0, 0, false
}
