// Package mysql registers staunch's database/sql driver under the name
// "mysql" (see go.mod): a go-sql-driver DSN opens a staunch pool.
package mysql

import (
	"database/sql"

	staunch "github.com/staunch-db/staunch/bindings/go"
)

func init() { sql.Register("mysql", staunch.Driver{}) }
