package staunch_test

// The test servers come from the staunch-testkit command line through
// internal/testkit: one MariaDB with a chaos proxy in front, started by
// TestMain and always stopped.

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
)

var (
	kit       *testkit.Kit
	directURL string // the server itself
	proxyURL  string // through the chaos proxy
	proxyAddr string // host:port of the proxy
)

func TestMain(m *testing.M) {
	if u := os.Getenv("STAUNCH_TEST_CHILD_URL"); u != "" {
		// A child process of a test (streaming_test.go): the parent's server.
		directURL = u
		os.Exit(m.Run())
	}
	var err error
	kit, err = testkit.Start("server", "--proxy")
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		os.Exit(1)
	}
	directURL = kit.Ready.Servers[0].URL
	proxyURL = kit.Ready.URL
	proxyAddr = fmt.Sprintf("%s:%d", kit.Ready.Proxy.Host, kit.Ready.Proxy.Port)
	code := m.Run()
	kit.Stop()
	os.Exit(code)
}

func withKnobs(url, knobs string) string { return testkit.WithKnobs(url, knobs) }

func slack() time.Duration { return testkit.Slack() }
