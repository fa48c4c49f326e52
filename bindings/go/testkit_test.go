package staunch_test

// The test servers come from the staunch-testkit command line (testkit/
// README.md): one MariaDB with a chaos proxy in front, started by TestMain
// and always stopped (its stdin is closed: the testkit quits and removes
// everything on EOF, and on SIGTERM if this process is killed).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type kitServer struct {
	Index   int    `json:"index"`
	Port    int    `json:"port"`
	URL     string `json:"url"`
	RootURL string `json:"root_url"`
}

type kitReady struct {
	Ready   bool        `json:"ready"`
	Error   string      `json:"error"`
	URL     string      `json:"url"`
	Servers []kitServer `json:"servers"`
	Proxy   *struct {
		Host string `json:"host"`
		Port int    `json:"port"`
		URL  string `json:"url"`
	} `json:"proxy"`
}

type testkit struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	mu    sync.Mutex // one command at a time
	ready kitReady
}

func testkitPath() (string, error) {
	if p := os.Getenv("STAUNCH_TESTKIT"); p != "" {
		return p, nil
	}
	target := os.Getenv("CARGO_TARGET_DIR")
	if target == "" {
		root, err := filepath.Abs("../..")
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

func startTestkit(args ...string) (*testkit, error) {
	path, err := testkitPath()
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
	k := &testkit{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
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
			k.stop()
			return nil, fmt.Errorf("staunch-testkit %v: no ready line: %v", args, r.err)
		}
		if err := json.Unmarshal(r.line, &k.ready); err != nil || !k.ready.Ready {
			k.stop()
			return nil, fmt.Errorf("staunch-testkit %v did not start: %s", args, r.line)
		}
	case <-time.After(120 * time.Second):
		k.stop()
		return nil, fmt.Errorf("staunch-testkit %v: no ready line within 120 s", args)
	}
	return k, nil
}

// do sends one command and returns its answer; an {"ok":false} answer is an
// error.
func (k *testkit) do(command string) (map[string]any, error) {
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

func (k *testkit) must(t testing.TB, command string) map[string]any {
	t.Helper()
	ans, err := k.do(command)
	if err != nil {
		t.Fatal(err)
	}
	return ans
}

// queryInt runs a root query on server 0 and returns its first value.
func (k *testkit) queryInt(t testing.TB, sql string) int64 {
	t.Helper()
	ans := k.must(t, "query 0 "+sql)
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

func (k *testkit) stop() {
	if k == nil {
		return
	}
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

var (
	kit       *testkit
	directURL string // the server itself
	proxyURL  string // through the chaos proxy
	proxyAddr string // host:port of the proxy
)

func TestMain(m *testing.M) {
	var err error
	kit, err = startTestkit("server", "--proxy")
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		os.Exit(1)
	}
	directURL = kit.ready.Servers[0].URL
	proxyURL = kit.ready.URL
	proxyAddr = fmt.Sprintf("%s:%d", kit.ready.Proxy.Host, kit.ready.Proxy.Port)
	code := m.Run()
	kit.stop()
	os.Exit(code)
}

// withKnobs appends URL parameters.
func withKnobs(url, knobs string) string {
	if knobs == "" {
		return url
	}
	if strings.Contains(url, "?") {
		return url + "&" + knobs
	}
	return url + "?" + knobs
}

// slack is extra time allowed for timing bounds: the race detector and two
// other builds share two cores here (STAUNCH_TEST_SLACK_MS overrides).
func slack() time.Duration {
	if s := os.Getenv("STAUNCH_TEST_SLACK_MS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return time.Duration(n) * time.Millisecond
		}
	}
	return 500 * time.Millisecond
}
