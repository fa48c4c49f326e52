// Command mysql8 runs the server side of Vitess's go/mysql package as a
// throwaway test server that greets like MySQL 8 and speaks
// caching_sha2_password, which the test kit's MariaDB does not.
//
// It knows a handful of statements (SELECT of 1, @@variables,
// CURRENT_USER(), CONNECTION_ID(); SET; USE; BEGIN, COMMIT, ROLLBACK;
// FLUSH PRIVILEGES) and answers
// anything else with MySQL's error 1235 (ER_NOT_SUPPORTED_YET). It listens on a TCP address and/or
// a unix socket, prints one JSON line on stdout once it listens, and exits
// when its standard input reaches end of file, so a test process that dies
// (even by SIGKILL) takes its server with it.
//
// caching_sha2_password is served as MySQL 8 serves it: the first login of a
// user after start (or after FLUSH PRIVILEGES) takes the full
// authentication (0x04: the client sends the clear password, which Vitess
// accepts only over TLS or the unix socket); later logins take the fast path
// (0x03) from the cache of verified passwords. -sha2-cache=warm fills the
// cache at start, so that the first login takes the fast path too.
package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/config"
	"vitess.io/vitess/go/mysql/replication"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
	querypb "vitess.io/vitess/go/vt/proto/query"
	"vitess.io/vitess/go/vt/vtenv"
)

// user is one account of the users file.
type user struct {
	Name     string `json:"user"`
	Password string `json:"password"`
	// Auth is mysql_native_password or caching_sha2_password.
	Auth string `json:"auth"`
}

func main() {
	tcp := flag.String("tcp", "", "TCP address to listen on, e.g. 127.0.0.1:3306 (empty: none)")
	socket := flag.String("socket", "", "unix socket path to listen on (empty: none)")
	usersFile := flag.String("users", "", `JSON file: [{"user":..,"password":..,"auth":"caching_sha2_password"|"mysql_native_password"}]`)
	tlsCert := flag.String("tls-cert", "", "PEM certificate: offer TLS (with -tls-key)")
	tlsKey := flag.String("tls-key", "", "PEM key of -tls-cert")
	version := flag.String("server-version", config.DefaultMySQLVersion+"-Vitess", "version string of the greeting")
	defaultAuth := flag.String("default-auth", string(mysql.CachingSha2Password), "auth plugin named in the greeting")
	sha2Cache := flag.String("sha2-cache", "empty", "caching_sha2_password cache at start: empty (first login takes full auth) or warm")
	requireTLS := flag.Bool("require-tls", false, "refuse connections that do not switch to TLS (the unix socket too)")
	watchStdin := flag.Bool("exit-on-stdin-eof", true, "exit when standard input reaches end of file")
	flag.Parse()
	if err := run(*tcp, *socket, *usersFile, *tlsCert, *tlsKey, *version, *defaultAuth, *sha2Cache, *requireTLS, *watchStdin); err != nil {
		fmt.Fprintln(os.Stderr, "mysql8:", err)
		os.Exit(1)
	}
}

func run(tcp, socket, usersFile, tlsCert, tlsKey, version, defaultAuth, sha2Cache string, requireTLS, watchStdin bool) error {
	if tcp == "" && socket == "" {
		return fmt.Errorf("nothing to listen on: give -tcp and/or -socket")
	}
	users, err := readUsers(usersFile)
	if err != nil {
		return err
	}
	auth, err := newAuthServer(users, mysql.AuthMethodDescription(defaultAuth))
	if err != nil {
		return err
	}
	switch sha2Cache {
	case "empty":
	case "warm":
		auth.warm()
	default:
		return fmt.Errorf("-sha2-cache %q: want empty or warm", sha2Cache)
	}
	var tlsConfig *tls.Config
	if tlsCert != "" || tlsKey != "" {
		pair, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
		if err != nil {
			return fmt.Errorf("TLS certificate %s / key %s: %w", tlsCert, tlsKey, err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	env, err := vtenv.New(vtenv.Options{MySQLServerVersion: version})
	if err != nil {
		return fmt.Errorf("server version %q: %w", version, err)
	}
	h := &handler{env: env, auth: auth, version: version, socket: socket}

	var listeners []*mysql.Listener
	listen := func(network, address string) (*mysql.Listener, error) {
		l, err := mysql.NewListenerWithConfig(mysql.ListenerConfig{
			Protocol:   network,
			Address:    address,
			AuthServer: auth,
			Handler:    h,
			// The read buffer size Vitess's own servers use.
			ConnReadBufferSize: 16 * 1024,
			FlushDelay:         mysql.DefaultFlushDelay,
		})
		if err != nil {
			return nil, fmt.Errorf("listen on %s %s: %w", network, address, err)
		}
		l.ServerVersion = version
		l.RequireSecureTransport = requireTLS
		if tlsConfig != nil {
			l.TLSConfig.Store(tlsConfig)
		}
		listeners = append(listeners, l)
		return l, nil
	}
	ready := map[string]any{"ready": true, "pid": os.Getpid(), "server_version": version, "tls": tlsConfig != nil}
	if tcp != "" {
		l, err := listen("tcp", tcp)
		if err != nil {
			return err
		}
		addr := l.Addr().(*net.TCPAddr)
		ready["tcp"] = addr.String()
		ready["port"] = addr.Port
	}
	if socket != "" {
		// A socket file left by a killed run would make the bind fail.
		if fi, err := os.Lstat(socket); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(socket)
		}
		if _, err := listen("unix", socket); err != nil {
			return err
		}
		ready["socket"] = socket
	}
	for _, l := range listeners {
		go l.Accept()
	}
	line, err := json.Marshal(ready)
	if err != nil {
		return err
	}
	fmt.Println(string(line))

	done := make(chan string, 2)
	if watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			done <- "standard input closed"
		}()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { done <- (<-sigs).String() }()
	why := <-done
	for _, l := range listeners {
		l.Close() // also removes the socket file
	}
	fmt.Fprintln(os.Stderr, "mysql8: exiting:", why)
	return nil
}

func readUsers(path string) ([]user, error) {
	if path == "" {
		return nil, fmt.Errorf("no -users file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var users []user
	if err := json.Unmarshal(data, &users); err != nil {
		return nil, fmt.Errorf("users file %s: %w", path, err)
	}
	for _, u := range users {
		switch mysql.AuthMethodDescription(u.Auth) {
		case mysql.MysqlNativePassword, mysql.CachingSha2Password:
		default:
			return nil, fmt.Errorf("users file %s: user %q: auth %q is neither %s nor %s",
				path, u.Name, u.Auth, mysql.MysqlNativePassword, mysql.CachingSha2Password)
		}
	}
	return users, nil
}

// authServer is a mysql.AuthServer whose accounts each have one plugin, as
// MySQL's accounts do, and whose caching_sha2_password cache starts empty,
// as MySQL's does after a start.
type authServer struct {
	users       map[string]user
	methods     []mysql.AuthMethod
	defaultAuth mysql.AuthMethodDescription

	mu sync.Mutex
	// cache holds SHA256(SHA256(password)) of the users whose full
	// authentication succeeded: what a fast-path scramble is checked against.
	cache map[string][]byte
}

func newAuthServer(users []user, defaultAuth mysql.AuthMethodDescription) (*authServer, error) {
	if defaultAuth != mysql.MysqlNativePassword && defaultAuth != mysql.CachingSha2Password {
		return nil, fmt.Errorf("-default-auth %q: want %s or %s", defaultAuth, mysql.MysqlNativePassword, mysql.CachingSha2Password)
	}
	a := &authServer{users: map[string]user{}, defaultAuth: defaultAuth, cache: map[string][]byte{}}
	for _, u := range users {
		a.users[u.Name] = u
	}
	// The order matters when the client asks for a plugin the account does
	// not use: Vitess switches to the first method that takes the user.
	a.methods = []mysql.AuthMethod{
		mysql.NewSha2CachingAuthMethod(a, a, pluginOf{a, mysql.CachingSha2Password}),
		mysql.NewMysqlNativeAuthMethod(a, pluginOf{a, mysql.MysqlNativePassword}),
	}
	return a, nil
}

func (a *authServer) AuthMethods() []mysql.AuthMethod { return a.methods }

func (a *authServer) DefaultAuthMethodDescription() mysql.AuthMethodDescription {
	return a.defaultAuth
}

func (a *authServer) warm() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name, u := range a.users {
		if mysql.AuthMethodDescription(u.Auth) == mysql.CachingSha2Password {
			a.cache[name] = doubleSha256(u.Password)
		}
	}
}

func (a *authServer) flush() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cache = map[string][]byte{}
}

func doubleSha256(password string) []byte {
	h1 := sha256.Sum256([]byte(password))
	h2 := sha256.Sum256(h1[:])
	return h2[:]
}

func denied(user string, conn *mysql.Conn) error {
	return sqlerror.NewSQLErrorf(sqlerror.ERAccessDeniedError, sqlerror.SSAccessDeniedError,
		"Access denied for user '%s'@'%s' (using password: YES)", user, clientHost(conn))
}

func clientHost(conn *mysql.Conn) string {
	if conn.IsUnixSocket() {
		return "localhost"
	}
	if host, _, err := net.SplitHostPort(conn.RemoteAddr().String()); err == nil {
		return host
	}
	return "%"
}

// UserEntryWithHash checks a mysql_native_password scramble.
func (a *authServer) UserEntryWithHash(conn *mysql.Conn, salt []byte, name string, authResponse []byte, _ net.Addr) (mysql.Getter, error) {
	u, ok := a.users[name]
	if !ok || mysql.AuthMethodDescription(u.Auth) != mysql.MysqlNativePassword {
		return nil, denied(name, conn)
	}
	want := mysql.ScrambleMysqlNativePassword(salt, []byte(u.Password))
	if subtle.ConstantTimeCompare(want, authResponse) != 1 {
		return nil, denied(name, conn)
	}
	return &mysql.StaticUserData{Username: name}, nil
}

// UserEntryWithCacheHash is caching_sha2_password's first step: a user in
// the cache is checked on its scramble (fast path); any other known user is
// asked for full authentication.
func (a *authServer) UserEntryWithCacheHash(conn *mysql.Conn, salt []byte, name string, authResponse []byte, _ net.Addr) (mysql.Getter, mysql.CacheState, error) {
	u, ok := a.users[name]
	if !ok || mysql.AuthMethodDescription(u.Auth) != mysql.CachingSha2Password {
		return nil, mysql.AuthRejected, denied(name, conn)
	}
	a.mu.Lock()
	hash, cached := a.cache[name]
	a.mu.Unlock()
	if !cached {
		return nil, mysql.AuthNeedMoreData, nil
	}
	if !mysql.VerifyHashedCachingSha2Password(authResponse, salt, hash) {
		return nil, mysql.AuthRejected, denied(name, conn)
	}
	return &mysql.StaticUserData{Username: name}, mysql.AuthAccepted, nil
}

// UserEntryWithPassword is caching_sha2_password's full authentication: the
// clear password, which then goes into the cache.
func (a *authServer) UserEntryWithPassword(conn *mysql.Conn, name string, password string, _ net.Addr) (mysql.Getter, error) {
	u, ok := a.users[name]
	if !ok || mysql.AuthMethodDescription(u.Auth) != mysql.CachingSha2Password ||
		subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) != 1 {
		return nil, denied(name, conn)
	}
	a.mu.Lock()
	a.cache[name] = doubleSha256(password)
	a.mu.Unlock()
	return &mysql.StaticUserData{Username: name}, nil
}

// pluginOf lets an auth method take only the accounts that use it.
type pluginOf struct {
	a      *authServer
	plugin mysql.AuthMethodDescription
}

func (p pluginOf) HandleUser(name string) bool {
	u, ok := p.a.users[name]
	return ok && mysql.AuthMethodDescription(u.Auth) == p.plugin
}

// handler answers the few statements the kit's tests need.
type handler struct {
	mysql.UnimplementedHandler
	env     *vtenv.Environment
	auth    *authServer
	version string
	// socket is @@socket, which the mysql crate reads to move a loopback
	// TCP connection to the unix socket (prefer_socket).
	socket string
}

func (h *handler) Env() *vtenv.Environment { return h.env }

// NewConnection sets the autocommit bit of the status flags, which the
// greeting and every OK packet carry, as MySQL's do (Vitess leaves them 0).
func (h *handler) NewConnection(c *mysql.Conn) {
	c.StatusFlags |= mysql.ServerStatusAutocommit
}

func (h *handler) WarningCount(*mysql.Conn) uint16 { return 0 }

func (h *handler) ComQuery(c *mysql.Conn, query string, callback func(*sqltypes.Result) error) error {
	r, err := h.answer(c, query)
	if err != nil {
		return err
	}
	return callback(r)
}

func (h *handler) ComQueryMulti(c *mysql.Conn, sql string, callback func(qr sqltypes.QueryResponse, more bool, firstPacket bool) error) error {
	r, err := h.answer(c, sql)
	if err != nil {
		return err
	}
	return callback(sqltypes.QueryResponse{QueryResult: r}, false, true)
}

func unsupported(what string) error {
	return sqlerror.NewSQLErrorf(sqlerror.ERNotSupportedYet, sqlerror.SSClientError,
		"This version of MySQL doesn't yet support '%s' (the test kit's mysql8 server knows only SELECT 1, @@variables, CURRENT_USER(), CONNECTION_ID(), SET, USE, a transaction's BEGIN, COMMIT and ROLLBACK, and FLUSH PRIVILEGES)", what)
}

func (h *handler) ComPrepare(*mysql.Conn, string) ([]*querypb.Field, uint16, error) {
	return nil, 0, unsupported("prepared statements")
}

func (h *handler) ComStmtExecute(*mysql.Conn, *mysql.PrepareData, func(*sqltypes.Result) error) error {
	return unsupported("prepared statements")
}

func (h *handler) ComRegisterReplica(*mysql.Conn, string, uint16, string, string) error {
	return unsupported("replication")
}

func (h *handler) ComBinlogDump(*mysql.Conn, string, uint32) error {
	return unsupported("replication")
}

func (h *handler) ComBinlogDumpGTID(*mysql.Conn, string, uint64, replication.GTIDSet, uint16) error {
	return unsupported("replication")
}

// answer runs one statement: SET, USE (any database) and FLUSH PRIVILEGES
// give OK, and a SELECT
// whose every item is 1, an @@variable, CURRENT_USER() or CONNECTION_ID()
// gives one row.
func (h *handler) answer(c *mysql.Conn, query string) (*sqltypes.Result, error) {
	q := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(query), ";"))
	norm := strings.ToLower(strings.Join(strings.Fields(q), " "))
	switch {
	case strings.HasPrefix(norm, "set "), strings.HasPrefix(norm, "use "),
		// A transaction's ends, as a PEP 249 or JDBC client sends them
		// around every borrow (there is no data to keep or undo).
		norm == "commit", norm == "rollback", norm == "begin",
		strings.HasPrefix(norm, "start transaction"):
		return &sqltypes.Result{}, nil
	case norm == "flush privileges":
		h.auth.flush()
		return &sqltypes.Result{}, nil
	case strings.HasPrefix(norm, "select "):
	default:
		return nil, unsupported(q)
	}
	r := &sqltypes.Result{}
	var row sqltypes.Row
	for _, item := range strings.Split(strings.TrimSpace(q[len("select "):]), ",") {
		item = strings.TrimSpace(item)
		name := item
		if i := strings.LastIndex(strings.ToLower(item), " as "); i >= 0 {
			name = strings.Trim(strings.TrimSpace(item[i+4:]), "`")
			item = strings.TrimSpace(item[:i])
		}
		v, err := h.value(c, strings.ToLower(strings.ReplaceAll(item, " ", "")))
		if err != nil {
			return nil, err
		}
		r.Fields = append(r.Fields, &querypb.Field{Name: name, Type: v.Type(), Charset: 255})
		row = append(row, v)
	}
	r.Rows = []sqltypes.Row{row}
	return r, nil
}

func (h *handler) value(c *mysql.Conn, item string) (sqltypes.Value, error) {
	switch item {
	case "1":
		return sqltypes.NewInt64(1), nil
	case "current_user()", "current_user":
		return sqltypes.NewVarChar(c.User + "@%"), nil
	case "connection_id()":
		return sqltypes.NewUint64(uint64(c.ConnectionID)), nil
	}
	if v, ok := strings.CutPrefix(item, "@@"); ok {
		v = strings.TrimPrefix(strings.TrimPrefix(v, "session."), "global.")
		switch v {
		case "version":
			return sqltypes.NewVarChar(h.version), nil
		case "version_comment":
			return sqltypes.NewVarChar("Vitess go/mysql server (staunch test kit)"), nil
		case "max_allowed_packet":
			return sqltypes.NewInt64(64 << 20), nil
		case "wait_timeout":
			return sqltypes.NewInt64(28800), nil
		case "socket":
			return sqltypes.NewVarChar(h.socket), nil
		case "autocommit":
			return sqltypes.NewInt64(1), nil
		// What a client asks of a new session (staunch asks these three when
		// the server reports no session variables, as this one does not).
		case "sql_mode":
			return sqltypes.NewVarChar("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"), nil
		case "character_set_client", "character_set_connection", "character_set_results":
			return sqltypes.NewVarChar("utf8mb4"), nil
		case "collation_connection":
			return sqltypes.NewVarChar("utf8mb4_0900_ai_ci"), nil
		case "transaction_isolation", "tx_isolation":
			return sqltypes.NewVarChar("REPEATABLE-READ"), nil
		case "time_zone":
			return sqltypes.NewVarChar("SYSTEM"), nil
		case "max_execution_time", "lower_case_table_names":
			return sqltypes.NewInt64(0), nil
		case "default_authentication_plugin":
			return sqltypes.NewVarChar(string(h.auth.defaultAuth)), nil
		}
		return sqltypes.Value{}, sqlerror.NewSQLErrorf(sqlerror.ERUnknownSystemVariable, sqlerror.SSUnknownSQLState,
			"Unknown system variable '%s'", v)
	}
	return sqltypes.Value{}, unsupported("SELECT " + item)
}
