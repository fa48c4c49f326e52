// What scripts/dist-check.sh builds in a fresh GOPATH/GOMODCACHE, with the
// staunch module from a file:// GOPROXY (the zip scripts/dist.sh wrote) and
// the C package installed: open a pool on os.Args[1], borrow, query with a
// parameter, cancel a running statement through its context (ErrCancelled,
// the connection goes on), release, close.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "go check:", err)
		os.Exit(1)
	}
}

func run(url string) error {
	ctx := context.Background()
	pool, err := staunch.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var n int64
	if err := conn.QueryRow(ctx, "SELECT ? + 1", 41).Scan(&n); err != nil || n != 42 {
		return fmt.Errorf("SELECT 41 + 1: %d, %v", n, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err = conn.QueryRow(cctx, "SELECT SLEEP(?)", 30).Scan(&n)
	if !errors.Is(err, staunch.ErrCancelled) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the cancelled statement: %v", err)
	}
	if time.Since(t0) > 10*time.Second {
		return fmt.Errorf("the cancel took %v", time.Since(t0))
	}
	if err := conn.QueryRow(ctx, "SELECT ? * 2", 21).Scan(&n); err != nil || n != 42 {
		return fmt.Errorf("after the cancel: %d, %v", n, err)
	}
	fmt.Printf("staunch module %s (Go): borrowed, queried, cancelled a statement, closed\n", staunch.Version)
	return nil
}
