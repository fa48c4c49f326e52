// Stands in for go-sql-driver/mysql when an outside suite (sqlx's own tests)
// runs against staunch: scripts/go-suites.sh points the suite's module at
// this directory with a replace directive, so its `import _
// "github.com/go-sql-driver/mysql"` and sql.Open("mysql", dsn) reach
// staunch's driver, the suite's code unchanged.
module github.com/go-sql-driver/mysql

go 1.22

require github.com/staunch-db/staunch/bindings/go v0.0.0

replace github.com/staunch-db/staunch/bindings/go => ../..
