package testkit

// Package testkit runs the staunch-testkit command line (testkit/README.md
// of the repository) for the Go tests and benchmarks: throwaway MariaDB
// servers and the chaos proxy, driven over stdin with one JSON answer per
// command. Stop always stops them: it closes the testkit's stdin, and the
// testkit quits and removes everything on EOF (and on SIGTERM if this
// process is killed).
import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is one server of the ready line.
type Server struct {
	Index   int    `json:"index"`
	Port    int    `json:"port"`
	URL     string `json:"url"`
	RootURL string `json:"root_url"`
}

// Ready is the ready line.
type Ready struct {
	Ready   bool     `json:"ready"`
	Error   string   `json:"error"`
	URL     string   `json:"url"`
	Servers []Server `json:"servers"`
	Proxy   *struct {
		Host string `json:"host"`
		Port int    `json:"port"`
		URL  string `json:"url"`
	} `json:"proxy"`
	// TopologyURL is the multi-host URL of `topology` and `galera` (as
	// `app`), empty otherwise.
	TopologyURL string `json:"topology_url"`
	// Users are the accounts every server has, by role: app, least,
	// root, monitor, repl.
	Users map[string]User `json:"users"`
	// TLS is the test certificates' files with `--tls` or
	// `--tls-self-signed`, nil otherwise.
	TLS *TLS `json:"tls"`
}

// TLS is the ready line's `tls`: the test CA, a client certificate it
// signed, and an unrelated CA that signed nothing the server presents.
type TLS struct {
	CA         string `json:"ca"`
	ClientCert string `json:"client_cert"`
	ClientKey  string `json:"client_key"`
	OtherCA    string `json:"other_ca"`
}

// User is one account of the ready line's users.
type User struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// Kit is a running staunch-testkit.
type Kit struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	out      *bufio.Reader
	mu       sync.Mutex // one command at a time
	stopOnce sync.Once
	Ready    Ready
}

// Path is the staunch-testkit binary: $STAUNCH_TESTKIT, else
// <repo>/target/debug/staunch-testkit (mind CARGO_TARGET_DIR).
func Path() (string, error) {
	if p := os.Getenv("STAUNCH_TESTKIT"); p != "" {
		return p, nil
	}
	target := os.Getenv("CARGO_TARGET_DIR")
	if target == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		target = filepath.Join(root, "target")
	}
	p := filepath.Join(target, "debug", "staunch-testkit")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no staunch-testkit at %s (build it with `cargo build -p staunch-testkit`, or set STAUNCH_TESTKIT): %v", p, err)
	}
	return p, nil
}

// Start runs staunch-testkit with args and waits for its ready line.
func Start(args ...string) (*Kit, error) {
	path, err := Path()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stderr = os.Stderr
	if os.Getenv("STAUNCH_TEST_VERBOSE") == "" {
		cmd.Stderr = nil
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	k := &Kit{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	type result struct {
		line []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := k.out.ReadBytes('\n')
		ch <- result{line, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			k.Stop()
			return nil, fmt.Errorf("staunch-testkit %v: no ready line: %v", args, r.err)
		}
		if err := json.Unmarshal(r.line, &k.Ready); err != nil || !k.Ready.Ready {
			k.Stop()
			return nil, fmt.Errorf("staunch-testkit %v did not start: %s", args, r.line)
		}
	case <-time.After(120 * time.Second):
		k.Stop()
		return nil, fmt.Errorf("staunch-testkit %v: no ready line within 120 s", args)
	}
	return k, nil
}

// Do sends one command and returns its answer; an {"ok":false} answer is an
// error.
func (k *Kit) Do(command string) (map[string]any, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, err := io.WriteString(k.stdin, command+"\n"); err != nil {
		return nil, err
	}
	line, err := k.out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("testkit %q: %v", command, err)
	}
	var ans map[string]any
	if err := json.Unmarshal(line, &ans); err != nil {
		return nil, fmt.Errorf("testkit %q: bad answer %s", command, line)
	}
	if ok, _ := ans["ok"].(bool); !ok {
		return ans, fmt.Errorf("testkit %q: %v", command, ans["error"])
	}
	return ans, nil
}

// Must is Do that fails the test on an error.
func (k *Kit) Must(t testing.TB, command string) map[string]any {
	t.Helper()
	ans, err := k.Do(command)
	if err != nil {
		t.Fatal(err)
	}
	return ans
}

// QueryInt runs a root query on server 0 and returns its first value.
func (k *Kit) QueryInt(t testing.TB, sql string) int64 {
	t.Helper()
	ans := k.Must(t, "query 0 "+sql)
	rows, _ := ans["rows"].([]any)
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", sql)
	}
	first, _ := rows[0].([]any)
	s, _ := first[0].(string)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// Stop stops the testkit and everything it started. Idempotent.
func (k *Kit) Stop() {
	if k == nil {
		return
	}
	k.stopOnce.Do(k.stopNow)
}

func (k *Kit) stopNow() {
	k.stdin.Close() // EOF: the testkit stops its servers and exits
	done := make(chan struct{})
	go func() { k.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		k.cmd.Process.Signal(os.Interrupt)
		<-done
	}
}

// AsUser is url (mysql://user:pass@hosts/db?...) with its user-info
// replaced by u's.
func AsUser(url string, u User) string {
	i := strings.Index(url, "://")
	if i < 0 {
		return url
	}
	rest := url[i+3:]
	end := strings.IndexByte(rest, '/')
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return url
	}
	return url[:i+3] + neturl.UserPassword(u.User, u.Password).String() + rest[at:]
}

// WithKnobs appends URL parameters.
func WithKnobs(url, knobs string) string {
	if knobs == "" {
		return url
	}
	if strings.Contains(url, "?") {
		return url + "&" + knobs
	}
	return url + "?" + knobs
}

// Slack is extra time allowed for timing bounds: the race detector and two
// other builds share two cores here (STAUNCH_TEST_SLACK_MS overrides).
func Slack() time.Duration {
	if s := os.Getenv("STAUNCH_TEST_SLACK_MS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return time.Duration(n) * time.Millisecond
		}
	}
	return 500 * time.Millisecond
}

// repoRoot finds the repository from this source file's place
// (bindings/go/internal/testkit).
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the repository")
	}
	return filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "..", ".."))
}
