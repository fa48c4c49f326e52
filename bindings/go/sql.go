package staunch

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
	"sync"
	"time"
)

// OpenDB returns a *sql.DB whose connections come from pool. database/sql's
// own pool keeps none of them: every connection database/sql is done with
// goes straight back to staunch (see sqlConn.IsValid), which does the
// pooling (bounds, timeouts, validation, session reset): a database/sql
// "close" is a staunch release, and a "connect" a staunch acquire. Closing
// the *sql.DB does not close pool. Times come as time.Time in UTC.
//
// Statements run exactly as through the native API, contexts included: a
// context that ends during a statement cancels it on the server.
// driver.ErrBadConn (database/sql then retries on another connection) is
// returned only when the statement cannot have run: the connection was
// found broken before it was sent.
func OpenDB(pool *Pool) *sql.DB {
	db := sql.OpenDB(&Connector{pool: pool, opts: defaultSQLOptions})
	db.SetMaxIdleConns(0)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db
}

// Connector is the driver.Connector of OpenDB and of sql.Open("staunch", dsn).
type Connector struct {
	pool   *Pool
	opts   sqlOptions
	shared *sharedPool // the DSN's pool (sql.Open), nil for OpenDB's
	once   sync.Once
}

// NewConnector returns a driver.Connector over pool (for sql.OpenDB).
func NewConnector(pool *Pool) *Connector { return &Connector{pool: pool, opts: defaultSQLOptions} }

// Connect acquires a connection from the pool, honouring ctx.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if c == nil || c.pool == nil {
		return nil, invalid("connect", "nil *Pool")
	}
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &sqlConn{c: conn, opts: &c.opts}, nil
}

// Driver returns the Driver.
func (c *Connector) Driver() driver.Driver { return Driver{} }

// Close is called by (*sql.DB).Close: a connector of sql.Open lets go of
// its DSN's pool, which closes when no *sql.DB uses it any more. A
// connector over a pool of the caller's (OpenDB, NewConnector) leaves it
// open.
func (c *Connector) Close() error {
	if c != nil && c.shared != nil {
		c.once.Do(c.shared.unref)
	}
	return nil
}

// Driver is the database/sql driver "staunch": sql.Open("staunch", dsn)
// with a staunch URL (mysql://user:pass@host:port/db?knob=value) or a
// go-sql-driver/mysql DSN (user:pass@tcp(host:port)/db?parseTime=true);
// dsn.go says which options are honoured. Every *sql.DB opened with the
// same DSN shares one staunch pool, closed with the last of them.
type Driver struct{}

var _ driver.DriverContext = Driver{}

// OpenConnector parses dsn and gives a connector over its pool (opened on
// the first use of that DSN).
func (Driver) OpenConnector(dsn string) (driver.Connector, error) {
	sp, opts, err := sharedFor(dsn)
	if err != nil {
		return nil, err
	}
	return &Connector{pool: sp.pool, opts: opts, shared: sp}, nil
}

// Open connects through the DSN's shared pool. database/sql never calls it
// (it uses OpenConnector); a pool opened through Open alone stays open
// for the life of the process.
func (d Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

func init() { sql.Register("staunch", Driver{}) }

// sharedPool is the one staunch pool of a DSN, counted by its connectors.
type sharedPool struct {
	dsn  string
	pool *Pool
	refs int
}

var shared struct {
	sync.Mutex
	m map[string]*sharedPool
}

func sharedFor(dsn string) (*sharedPool, sqlOptions, error) {
	cfg, opts, err := parseDSN(dsn)
	if err != nil {
		return nil, opts, err
	}
	shared.Lock()
	defer shared.Unlock()
	if sp := shared.m[dsn]; sp != nil {
		sp.refs++
		return sp, opts, nil
	}
	pool, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, opts, err
	}
	if shared.m == nil {
		shared.m = map[string]*sharedPool{}
	}
	sp := &sharedPool{dsn: dsn, pool: pool, refs: 1}
	shared.m[dsn] = sp
	return sp, opts, nil
}

func (sp *sharedPool) unref() {
	shared.Lock()
	sp.refs--
	last := sp.refs == 0
	if last {
		delete(shared.m, sp.dsn)
	}
	shared.Unlock()
	if last {
		sp.pool.Close()
	}
}

type sqlConn struct {
	c    *Conn
	opts *sqlOptions
}

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

// PrepareContext prepares the statement on the server now (into the
// connection's statement cache, which its runs then use), so a bad
// statement fails here, as with go-sql-driver; NumInput is then its count of
// placeholders. A statement the server cannot prepare (1295) is still
// accepted (the library's STAUNCH_PREPARE_TEXT_OK): it runs as text, its
// arguments interpolated, and NumInput is the library's count.
func (sc *sqlConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if sc.c.c == nil {
		return nil, driver.ErrBadConn
	}
	n, err := sc.c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return &sqlStmt{sc: sc, query: query, n: n}, nil
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
	st := &sqlTx{tx: tx, ctx: context.Background()}
	if sc.c.tracer() != nil {
		// The tracer sees Commit and Rollback under BeginTx's context (its
		// values: the span the transaction began in), never its end.
		st.ctx = context.WithoutCancel(ctx)
	}
	return st, nil
}

func (sc *sqlConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	a, err := sc.args(args)
	if err != nil {
		return nil, err
	}
	r, err := sc.c.Exec(ctx, query, a...)
	if err != nil {
		return nil, sc.failed(err)
	}
	return sqlResult{r}, nil
}

func (sc *sqlConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	a, err := sc.args(args)
	if err != nil {
		return nil, err
	}
	rows, err := sc.c.QueryStream(ctx, query, a...)
	if err != nil {
		return nil, sc.failed(err)
	}
	return &sqlRows{rs: rows, opts: sc.opts}, nil
}

// failed: with rejectReadOnly, a write refused because the server is read
// only (1290, 1792) discards the connection and gives driver.ErrBadConn,
// so database/sql retries on a new one (go-sql-driver's behaviour, for a
// primary that became a replica).
func (sc *sqlConn) failed(err error) error {
	var me *MySQLError
	if sc.opts.rejectReadOnly && errors.As(err, &me) && (me.Number == 1290 || me.Number == 1792) {
		sc.c.Discard()
		return driver.ErrBadConn
	}
	return err
}

// args gives the statement's arguments, times as go-sql-driver binds them:
// the wall clock of the time in loc (truncated to timeTruncate), and the
// zero time.Time as the zero date '0000-00-00'. A Decimal stays one (its
// Value would make it a string): bindParams binds it as a DECIMAL.
func (sc *sqlConn) args(args []driver.NamedValue) ([]any, error) {
	a, err := plainArgs(args)
	if err != nil {
		return nil, err
	}
	for i, v := range a {
		switch v.(type) {
		case Decimal, *Decimal:
			continue
		}
		if vr, ok := v.(driver.Valuer); ok {
			if rv := reflect.ValueOf(vr); rv.Kind() == reflect.Pointer && rv.IsNil() {
				a[i] = nil
				continue
			}
			dv, err := vr.Value()
			if err != nil {
				return nil, invalid("bind", "argument %d: %T.Value: %v", i+1, v, err)
			}
			v, a[i] = dv, dv
		}
		if t, ok := v.(time.Time); ok {
			a[i] = sc.opts.bindTime(t)
		}
	}
	return a, nil
}

// bindTime is a time as it is written: in loc's wall clock, given as UTC
// (which the binding writes as it is); the zero time as '0000-00-00'.
func (o *sqlOptions) bindTime(t time.Time) any {
	if t.IsZero() {
		return "0000-00-00"
	}
	if o.timeTruncate > 0 {
		t = t.Truncate(o.timeTruncate)
	}
	w := t.In(o.loc)
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
}

func (sc *sqlConn) Ping(ctx context.Context) error { return sc.c.Ping(ctx) }

// IsValid is false, always: database/sql asks it only when it is done with
// a connection (putConn), before keeping it idle in its own pool; false
// makes it close the connection instead, which gives it back to staunch.
// So database/sql never stacks a second pool on staunch's, whatever
// SetMaxIdleConns says (sql.Open's *sql.DB keeps the default of 2).
func (sc *sqlConn) IsValid() bool { return false }

// ResetSession: staunch resets sessions itself on release; here only a
// broken or released connection is refused, so database/sql takes another.
func (sc *sqlConn) ResetSession(ctx context.Context) error {
	if sc.c.c == nil || sc.c.IsBroken() {
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

type sqlTx struct {
	tx  *Tx
	ctx context.Context // Background, or BeginTx's values without its end (with a Tracer)
}

// database/sql has no context for Commit and Rollback: they are bounded by
// the connection's statement limit.
func (t *sqlTx) Commit() error { return sqlTxErr(t.tx.Commit(t.ctx)) }

func (t *sqlTx) Rollback() error { return sqlTxErr(t.tx.Rollback(t.ctx)) }

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
	n     int // placeholders, -1 if unknown
}

func (s *sqlStmt) Close() error { return nil }

// NumInput is the count of placeholders the server reported (database/sql
// checks the arguments against it), -1 if unknown.
func (s *sqlStmt) NumInput() int { return s.n }

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

type sqlRows struct {
	rs    *Rows
	opts  *sqlOptions
	names []string
}

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
	if !r.opts.columnsWithAlias {
		return cols
	}
	if r.names == nil {
		types := r.rs.ColumnTypes()
		r.names = make([]string, len(cols))
		for i, c := range cols {
			if i < len(types) && types[i].Table != "" {
				c = types[i].Table + "." + c
			}
			r.names[i] = c
		}
	}
	return r.names
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
		dest[i] = r.value(i, &row[i])
	}
	return nil
}

// value is one column's driver.Value: dates and times as go-sql-driver
// gives them (time.Time in loc with parseTime, the zero date as
// time.Time{}; else their text), the rest as sqlValue says.
func (r *sqlRows) value(i int, v *cValue) driver.Value {
	if isDateValue(v) {
		if r.opts.parseTime {
			return vtimeIn(v, r.opts.loc)
		}
		return dateText(v, r.ct(i).Decimals)
	}
	return sqlValue(v)
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
	r.names = nil
	return nil
}

func (r *sqlRows) ct(i int) ColumnType {
	if t := r.rs.ColumnTypes(); i < len(t) {
		return t[i]
	}
	return ColumnType{}
}

// ColumnTypeScanType is go-sql-driver's scan type for the column (its
// fields.go): sized integers when NOT NULL, sql.NullInt64 / NullFloat64 /
// NullString when nullable, sql.NullTime for every date type, []byte for
// binary strings.
func (r *sqlRows) ColumnTypeScanType(i int) reflect.Type {
	ct := r.ct(i)
	notNull, unsigned := !ct.Nullable(), ct.Unsigned()
	sized := func(s, u reflect.Type) reflect.Type {
		switch {
		case !notNull:
			return reflect.TypeFor[sql.NullInt64]()
		case unsigned:
			return u
		}
		return s
	}
	switch ct.TypeCode {
	case 1: // TINY
		return sized(reflect.TypeFor[int8](), reflect.TypeFor[uint8]())
	case 2, 13: // SHORT, YEAR
		return sized(reflect.TypeFor[int16](), reflect.TypeFor[uint16]())
	case 9, 3: // INT24, LONG
		return sized(reflect.TypeFor[int32](), reflect.TypeFor[uint32]())
	case 8: // LONGLONG
		return sized(reflect.TypeFor[int64](), reflect.TypeFor[uint64]())
	case 4: // FLOAT
		if notNull {
			return reflect.TypeFor[float32]()
		}
		return reflect.TypeFor[sql.NullFloat64]()
	case 5: // DOUBLE
		if notNull {
			return reflect.TypeFor[float64]()
		}
		return reflect.TypeFor[sql.NullFloat64]()
	case 16, 249, 250, 251, 252, 253, 254, 255: // BIT, BLOBs, VAR_STRING, STRING, GEOMETRY
		if ct.Charset == 63 {
			return reflect.TypeFor[[]byte]()
		}
		fallthrough
	case 0, 246, 15, 247, 248, 245, 11: // DECIMAL, NEWDECIMAL, VARCHAR, ENUM, SET, JSON, TIME
		if notNull {
			return reflect.TypeFor[string]()
		}
		return reflect.TypeFor[sql.NullString]()
	case 10, 14, 7, 12: // DATE, NEWDATE, TIMESTAMP, DATETIME
		return reflect.TypeFor[sql.NullTime]()
	}
	return reflect.TypeFor[*any]()
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
