module github.com/staunch-db/staunch/bindings/go

go 1.22
