package staunch_test

// go-sql-driver's connectionAttributes DSN parameter, read back from
// performance_schema.session_connect_attrs of a server of its own (the
// test kit's --performance-schema: MariaDB's default is OFF).

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	staunch "github.com/staunch-db/staunch/bindings/go"
	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
)

func Test_dsn_connectionAttributes_reach_performance_schema(t *testing.T) {
	k, err := testkit.Start("server", "--performance-schema")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	u, err := url.Parse(k.Ready.Servers[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)%s?connectionAttributes=service:billing%%20api,shard:7",
		u.User.Username(), pass, u.Host, u.Path)
	db := sqlOpen(t, dsn)
	rows, err := db.Query("SELECT ATTR_NAME, ATTR_VALUE FROM performance_schema.session_connect_attrs " +
		"WHERE PROCESSLIST_ID = CONNECTION_ID()")
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]string{}
	for rows.Next() {
		var n, v string
		if err := rows.Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		attrs[n] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"service":         "billing api",
		"shard":           "7",
		"program_name":    filepath.Base(os.Args[0]),
		"staunch_version": staunch.Version,
		// staunch's own engine opens the connection and names itself.
		"_client_name": "staunch",
	}
	for n, v := range want {
		if attrs[n] != v {
			t.Errorf("attribute %s = %q, want %q (all: %v)", n, attrs[n], v, attrs)
		}
	}
	if attrs["_client_version"] == "" {
		t.Errorf("no _client_version: %v", attrs)
	}
	for _, v := range attrs {
		if strings.Contains(v, pass) {
			t.Errorf("the password is among the attributes: %v", attrs)
		}
	}

	// An entry without ':' is an error naming the knob.
	bad := strings.Replace(dsn, "shard:7", "shard", 1)
	db2, err := sql.Open("staunch", bad)
	if err == nil {
		err = db2.Ping()
		db2.Close()
	}
	if !errors.Is(err, staunch.ErrInvalid) || !strings.Contains(err.Error(), "connect_attrs") {
		t.Fatalf("want an invalid-config error naming connect_attrs, got %v", err)
	}
	if strings.Contains(err.Error(), pass) {
		t.Fatalf("the error quotes the password: %v", err)
	}
}
