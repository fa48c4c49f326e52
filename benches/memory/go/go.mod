module staunch.dev/memchild

go 1.24.0

require (
	github.com/go-sql-driver/mysql v1.10.1
	github.com/staunch-db/staunch/bindings/go v0.0.0
)

require filippo.io/edwards25519 v1.2.0 // indirect

replace github.com/staunch-db/staunch/bindings/go => ../../../bindings/go
