package staunch

/*
#include <stdlib.h>
#include "staunch.h"
*/
import "C"

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// The data source names sql.Open("staunch", dsn) takes
//
// Two forms:
//
//   - staunch's URL, mysql://user:pass@host:port/db?knob=value&... (every
//     knob of docs/knobs.md), plus the database/sql options below;
//   - go-sql-driver/mysql's DSN, [user[:pass]@][tcp(host:port)|unix(path)]/db?opt=value&...,
//     with go-sql-driver's options as the table below says, any knob of
//     staunch by its name (max_size=20), and any other name as a session
//     variable set on every connection (go-sql-driver's "SET name=value").
//
// go-sql-driver's options, each honoured or refused by name:
//
//	parseTime          honoured (database/sql side): DATE/DATETIME/TIMESTAMP as time.Time, else as text []byte
//	loc                honoured: times read are in loc, times bound are written as loc's wall clock
//	timeTruncate       honoured: times bound are truncated to it
//	timeout            honoured: the knob connect_timeout
//	readTimeout        honoured: the knob query_timeout (each statement's limit, ended by the server)
//	writeTimeout       honoured: folded into query_timeout too (the larger of the two): staunch bounds
//	                   every write by the statement's limit, it has no separate write bound
//	interpolateParams  honoured: the knob interpolate_params (true: arguments written into the SQL
//	                   by the library, escaped for the session; false, the default: prepared)
//	tls                false/true/skip-verify/preferred: tls_mode disabled/verify_identity/required/
//	                   preferred; a name registered with go-sql-driver's RegisterTLSConfig is refused
//	                   (staunch has no registry of *tls.Config: use the knobs tls_ca, tls_cert, tls_key)
//	charset            utf8mb4 honoured (staunch always speaks utf8mb4); any other refused: Go strings
//	                   are UTF-8 and staunch writes literals for utf8mb4 only
//	collation          utf8mb4_* honoured (SET NAMES utf8mb4 COLLATE ... on every connection); others refused
//	clientFoundRows    honoured: the knob found_rows
//	columnsWithAlias   honoured (database/sql side): column names as "table.column"
//	multiStatements    true honoured (text statements may hold several); false (the default) refused
//	                   explicitly, since staunch's connections always accept several statements in one
//	                   text query and cannot enforce it (left unset, it is not refused)
//	maxAllowedPacket   0 honoured (the server's max_allowed_packet is what staunch obeys); another value refused
//	rejectReadOnly     honoured (database/sql side): error 1290/1792 discards the connection and
//	                   returns driver.ErrBadConn, as go-sql-driver does
//	checkConnLiveness  true honoured (staunch validates idle connections itself); false refused
//	allowNativePasswords true honoured (the default); false refused
//	connectionAttributes honoured: the knob connect_attrs (name:value,name:value, percent-decoded;
//	                   staunch adds program_name and staunch_version), a bad entry is an error
//	allowCleartextPasswords, allowOldPasswords, allowAllFiles, allowFallbackToPlaintext,
//	serverPubKey, compress: refused unless false/empty (staunch does none of them)
//
// Neither form's password ever appears in an error.

// sqlOptions is what the database/sql face does itself.
type sqlOptions struct {
	parseTime        bool
	loc              *time.Location
	columnsWithAlias bool
	rejectReadOnly   bool
	timeTruncate     time.Duration
}

// defaultSQLOptions: OpenDB's (times as time.Time in UTC).
var defaultSQLOptions = sqlOptions{parseTime: true, loc: time.UTC}

// staunchKnobs are the knob names a go-sql-driver DSN may use as they are:
// the library's (staunch_knob_name), read once.
var staunchKnobs = sync.OnceValue(func() map[string]bool {
	n := int(C.staunch_knob_count())
	m := make(map[string]bool, n)
	for i := 0; i < n; i++ {
		m[C.GoString(C.staunch_knob_name(C.size_t(i)))] = true
	}
	return m
})

func dsnError(format string, args ...any) error {
	return &Error{Status: StatusInvalidConfig, Op: "parse DSN", Message: fmt.Sprintf(format, args...)}
}

// parseDSN reads either form into a pool Config and the database/sql options.
func parseDSN(dsn string) (*Config, sqlOptions, error) {
	if strings.IndexByte(dsn, 0) >= 0 {
		return nil, sqlOptions{}, dsnError("the DSN contains a NUL byte")
	}
	if strings.HasPrefix(dsn, "mysql://") {
		return parseURLDSN(dsn)
	}
	return parseDriverDSN(dsn)
}

// goSideNames are the options the database/sql face handles (goSideOption):
// in a staunch URL they are its own parameters, claimed from the library.
var goSideNames = []string{"parseTime", "columnsWithAlias", "rejectReadOnly", "loc", "timeTruncate"}

// goSideOption applies one of the options the database/sql face handles;
// false if name is not one.
func goSideOption(o *sqlOptions, name, value string) (bool, error) {
	switch name {
	case "parseTime", "columnsWithAlias", "rejectReadOnly":
		b, err := dsnBool(name, value)
		if err != nil {
			return true, err
		}
		switch name {
		case "parseTime":
			o.parseTime = b
		case "columnsWithAlias":
			o.columnsWithAlias = b
		default:
			o.rejectReadOnly = b
		}
	case "loc":
		v, err := url.QueryUnescape(value)
		if err != nil {
			return true, dsnError("loc: %v", err)
		}
		loc, err := time.LoadLocation(v)
		if err != nil {
			return true, dsnError("loc: %v", err)
		}
		o.loc = loc
	case "timeTruncate":
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return true, dsnError("timeTruncate: %q is not a duration", value)
		}
		o.timeTruncate = d
	default:
		return false, nil
	}
	return true, nil
}

// dsnBool reads a boolean as go-sql-driver does (1/true/TRUE/True, 0/false/...).
func dsnBool(name, v string) (bool, error) {
	switch v {
	case "1", "true", "TRUE", "True":
		return true, nil
	case "0", "false", "FALSE", "False":
		return false, nil
	}
	return false, dsnError("%s: %q is not a boolean (true or false)", name, v)
}

// parseURLDSN hands the whole URL to the library, which skips the
// database/sql options (claimed), and reads those from the query where the
// library's parser finds it (staunch_url_query): one split of the URL, so a
// password holding '?' or '@' is never cut.
func parseURLDSN(dsn string) (*Config, sqlOptions, error) {
	o := defaultSQLOptions
	cfg, err := ParseConfig(dsn)
	if err != nil {
		return nil, o, err
	}
	query, err := urlQuery(dsn)
	if err != nil {
		return nil, o, err
	}
	if query != "" {
		for _, kv := range strings.Split(query, "&") {
			name, value, _ := strings.Cut(kv, "=")
			if _, err := goSideOption(&o, name, value); err != nil {
				return nil, o, err
			}
		}
	}
	cfg.claimed = goSideNames
	return cfg, o, nil
}

// urlQuery is the knob=value&... part of url as the library finds it.
func urlQuery(url string) (string, error) {
	curl := C.CString(url)
	defer C.free(unsafe.Pointer(curl))
	q, _, err := cText("parse DSN", len(url)+1, func(buf *C.char, cap C.size_t, n *C.size_t, cerr **C.staunch_error) C.staunch_status {
		return C.staunch_url_query(curl, buf, cap, n, cerr)
	})
	return q, err
}

func parseDriverDSN(dsn string) (*Config, sqlOptions, error) {
	o := sqlOptions{loc: time.UTC}
	knobs := map[string]string{}
	// [user[:password]@][net[(addr)]]/dbname[?params], cut as go-sql-driver
	// does: the last '/' ends the address (a password may hold '/').
	slash := strings.LastIndexByte(dsn, '/')
	if slash < 0 {
		return nil, o, dsnError("not a staunch URL (mysql://...) nor a go-sql-driver DSN (user:pass@tcp(host:port)/db): no '/' before the database name")
	}
	left, right := dsn[:slash], dsn[slash+1:]
	netAddr := left
	if at := strings.LastIndexByte(left, '@'); at >= 0 {
		cred := left[:at]
		netAddr = left[at+1:]
		user, pass, hasPass := strings.Cut(cred, ":")
		if user != "" {
			knobs["user"] = user
		}
		if hasPass {
			knobs["password"] = pass
		}
	}
	network, addr := netAddr, ""
	if i := strings.IndexByte(netAddr, '('); i >= 0 {
		if !strings.HasSuffix(netAddr, ")") {
			return nil, o, dsnError("the address after %q must end with ')'", netAddr[:i])
		}
		network, addr = netAddr[:i], netAddr[i+1:len(netAddr)-1]
	}
	host, port := "127.0.0.1", "3306"
	switch network {
	case "", "tcp", "tcp4", "tcp6":
		if addr != "" {
			h, p, err := splitHostPort(addr)
			if err != nil {
				return nil, o, err
			}
			host, port = h, p
		}
	case "unix":
		if addr == "" {
			addr = "/tmp/mysql.sock"
		}
		knobs["socket"] = addr
		host, port = "localhost", "3306"
	default:
		return nil, o, dsnError("network %q: staunch connects over tcp or unix only", network)
	}
	dbname, query, _ := strings.Cut(right, "?")
	db, err := url.PathUnescape(dbname)
	if err != nil {
		return nil, o, dsnError("database name: %v", err)
	}
	if db != "" {
		knobs["database"] = db
	}
	var sets []string
	var readTO, writeTO time.Duration
	var charset, collation string
	if query != "" {
		for _, kv := range strings.Split(query, "&") {
			name, value, found := strings.Cut(kv, "=")
			if !found {
				continue // as go-sql-driver
			}
			if ok, err := goSideOption(&o, name, value); ok {
				if err != nil {
					return nil, o, err
				}
				continue
			}
			if err := driverOption(knobs, name, value, &readTO, &writeTO, &charset, &collation, &sets); err != nil {
				return nil, o, err
			}
		}
	}
	if to := max(readTO, writeTO); to > 0 {
		if _, set := knobs["query_timeout"]; !set {
			v, err := durationKnob("readTimeout", to)
			if err != nil {
				return nil, o, err
			}
			knobs["query_timeout"] = v
		}
	}
	if charset != "" {
		first, _, _ := strings.Cut(charset, ",")
		if first != "utf8mb4" {
			return nil, o, dsnError("charset %q: refused: staunch speaks utf8mb4 only (Go strings are UTF-8)", first)
		}
	}
	if collation != "" {
		if !strings.HasPrefix(collation, "utf8mb4_") || !isIdent(collation) {
			return nil, o, dsnError("collation %q: refused: staunch speaks utf8mb4 only (use a utf8mb4_* collation)", collation)
		}
		sets = append([]string{"NAMES utf8mb4 COLLATE " + collation}, sets...)
	}
	if len(sets) > 0 {
		if _, set := knobs["init_sql"]; set {
			return nil, o, dsnError("init_sql and session variables (%s) together: put the SETs in init_sql", strings.Join(sets, ", "))
		}
		knobs["init_sql"] = "SET " + strings.Join(sets, ", ")
	}
	cfg := &Config{URL: "mysql://" + hostForURL(host) + ":" + port + "/", Knobs: knobs}
	if _, err := ParseConfig(cfg.URL); err != nil {
		return nil, o, err
	}
	return cfg, o, nil
}

func splitHostPort(addr string) (string, string, error) {
	host, port := addr, "3306"
	if strings.HasPrefix(addr, "[") {
		end := strings.IndexByte(addr, ']')
		if end < 0 {
			return "", "", dsnError("address %q: missing ']'", addr)
		}
		host = addr[1:end]
		if rest := addr[end+1:]; rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", "", dsnError("address %q: expected ':port' after ']'", addr)
			}
			port = rest[1:]
		}
	} else if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		host, port = addr[:i], addr[i+1:]
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", dsnError("address %q: port %q is not a number from 1 to 65535", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return host, port, nil
}

func hostForURL(h string) string {
	if strings.IndexByte(h, ':') >= 0 {
		return "[" + h + "]"
	}
	return h
}

func isIdent(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return s != ""
}

// driverOption applies one go-sql-driver option (other than the database/sql
// side ones), a staunch knob, or a session variable.
func driverOption(knobs map[string]string, name, value string, readTO, writeTO *time.Duration,
	charset, collation *string, sets *[]string) error {
	refuse := func(why string) error { return dsnError("%s=%s: refused: %s", name, value, why) }
	falseOnly := func(why string) error {
		b, err := dsnBool(name, value)
		if err != nil {
			return err
		}
		if b {
			return refuse(why)
		}
		return nil
	}
	switch name {
	case "timeout", "readTimeout", "writeTimeout":
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return dsnError("%s: %q is not a duration", name, value)
		}
		switch name {
		case "timeout":
			if d > 0 {
				v, err := durationKnob(name, d)
				if err != nil {
					return err
				}
				knobs["connect_timeout"] = v
			}
		case "readTimeout":
			*readTO = d
		default:
			*writeTO = d
		}
	case "interpolateParams":
		b, err := dsnBool(name, value)
		if err != nil {
			return err
		}
		knobs["interpolate_params"] = strconv.FormatBool(b)
	case "tls":
		switch strings.ToLower(value) {
		case "false", "0":
			knobs["tls_mode"] = "disabled"
		case "true", "1":
			knobs["tls_mode"] = "verify_identity"
		case "skip-verify":
			knobs["tls_mode"] = "required"
		case "preferred":
			knobs["tls_mode"] = "preferred"
		default:
			return refuse("a *tls.Config registered with go-sql-driver's RegisterTLSConfig cannot reach staunch: use tls_mode, tls_ca, tls_cert and tls_key")
		}
	case "charset":
		*charset = value
	case "collation":
		*collation = value
	case "clientFoundRows":
		b, err := dsnBool(name, value)
		if err != nil {
			return err
		}
		knobs["found_rows"] = strconv.FormatBool(b)
	case "multiStatements":
		b, err := dsnBool(name, value)
		if err != nil {
			return err
		}
		if !b {
			return refuse("staunch's connections always accept several statements in one text query; it cannot refuse them")
		}
	case "maxAllowedPacket":
		n, err := strconv.Atoi(value)
		if err != nil {
			return dsnError("maxAllowedPacket: %q is not a number", value)
		}
		if n != 0 {
			return refuse("staunch obeys the server's max_allowed_packet; a client-side limit cannot be set (use 0)")
		}
	case "checkConnLiveness", "allowNativePasswords":
		b, err := dsnBool(name, value)
		if err != nil {
			return err
		}
		if !b {
			return refuse("staunch always does this")
		}
	case "allowCleartextPasswords", "allowOldPasswords", "allowAllFiles", "allowFallbackToPlaintext":
		return falseOnly("staunch does not support it")
	case "connectionAttributes":
		v, err := url.QueryUnescape(value)
		if err != nil {
			return dsnError("%s: %v", name, err)
		}
		knobs["connect_attrs"] = v
	case "serverPubKey":
		if value != "" {
			return refuse("staunch does not support it")
		}
	case "compress":
		return falseOnly("staunch does not compress")
	case "strict":
		return refuse("removed from go-sql-driver too")
	default:
		if staunchKnobs()[name] {
			v, err := url.QueryUnescape(value)
			if err != nil {
				return dsnError("%s: %v", name, err)
			}
			knobs[name] = v
			return nil
		}
		if !isIdent(name) {
			return dsnError("%q is neither an option nor a session variable name", name)
		}
		v, err := url.QueryUnescape(value)
		if err != nil {
			return dsnError("%s: %v", name, err)
		}
		// As go-sql-driver: SET name=value on every connection, value as
		// written in the DSN (quote strings: sql_mode='ANSI').
		*sets = append(*sets, name+"="+v)
	}
	return nil
}
