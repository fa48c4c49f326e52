package dev.staunch;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A staunch-testkit process (servers, proxies) driven over its stdin/stdout
 * protocol. Closing it closes the stdin pipe, and the testkit stops
 * everything; a JVM that dies closes the pipe too.
 */
public final class Testkit implements AutoCloseable {
    private final Process proc;
    private final Writer in;
    private final BlockingQueue<String> lines = new ArrayBlockingQueue<>(1000);
    public final Map<String, Object> ready;

    static Path repo() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("testkit/README.md"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("cannot find the repository root above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    static Path binary() {
        String prop = System.getProperty("staunch.testkit");
        if (prop != null && !prop.isBlank()) {
            return Path.of(prop);
        }
        String env = System.getenv("STAUNCH_TESTKIT");
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        String target = System.getenv("CARGO_TARGET_DIR");
        return (target != null && !target.isBlank() ? Path.of(target) : repo().resolve("target")).resolve("debug/staunch-testkit");
    }

    public static Testkit start(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary().toString());
        cmd.addAll(List.of(args));
        try {
            return new Testkit(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start());
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + cmd + " (build it: cargo build -p staunch-testkit)", e);
        }
    }

    private Testkit(Process proc) {
        this.proc = proc;
        this.in = new OutputStreamWriter(proc.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.put(l);
                }
            } catch (IOException | InterruptedException e) {
                // process gone
            }
        }, "testkit-stdout");
        reader.setDaemon(true);
        reader.start();
        String first = next(120);
        Map<String, Object> m = Json.object(first);
        if (!Boolean.TRUE.equals(m.get("ready"))) {
            close();
            throw new IllegalStateException("staunch-testkit did not start: " + first);
        }
        this.ready = m;
    }

    private String next(int seconds) {
        try {
            String l = lines.poll(seconds, TimeUnit.SECONDS);
            if (l == null) {
                throw new IllegalStateException("staunch-testkit said nothing for " + seconds + " s");
            }
            return l;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Sends one command; returns its answer, failing the test if it is not ok. */
    public synchronized Map<String, Object> cmd(String command) {
        try {
            in.write(command + "\n");
            in.flush();
        } catch (IOException e) {
            throw new IllegalStateException("staunch-testkit is gone", e);
        }
        Map<String, Object> a = Json.object(next(60));
        if (!Boolean.TRUE.equals(a.get("ok"))) {
            throw new IllegalStateException("testkit command " + command + " failed: " + a.get("error"));
        }
        return a;
    }

    /** The pool URL of the ready line (through the proxy if there is one). */
    public String url() {
        return (String) ready.get("url");
    }

    @SuppressWarnings("unchecked")
    public Map<String, Object> server(int n) {
        return ((List<Map<String, Object>>) ready.get("servers")).get(n);
    }

    @SuppressWarnings("unchecked")
    public Map<String, Object> proxy() {
        return (Map<String, Object>) ready.get("proxy");
    }

    /**
     * The ready line's {@code tls} (with {@code --tls} or {@code --tls-self-signed}): the files {@code ca},
     * {@code client_cert}, {@code client_key} and {@code other_ca} (a CA that signed nothing the server presents);
     * null otherwise.
     */
    @SuppressWarnings("unchecked")
    public Map<String, Object> tls() {
        return (Map<String, Object>) ready.get("tls");
    }

    /** The multi-host URL of {@code topology} and {@code galera} (as {@code app}), null otherwise. */
    public String topologyUrl() {
        return (String) ready.get("topology_url");
    }

    /** The password of one of the ready line's users (app, least, root, monitor, repl). */
    @SuppressWarnings("unchecked")
    public String password(String user) {
        Map<String, Object> u = (Map<String, Object>) ((Map<String, Object>) ready.get("users")).get(user);
        if (u == null) {
            throw new IllegalStateException("no user " + user + " in the testkit's ready line");
        }
        return (String) u.get("password");
    }

    /** {@code url} (mysql://user:pass@hosts/db?...) as one of the ready line's users. */
    public String urlAs(String url, String user) {
        int i = url.indexOf("://") + 3;
        int end = url.indexOf('/', i);
        int at = url.lastIndexOf('@', end < 0 ? url.length() : end);
        if (i < 3 || at < i) {
            throw new IllegalArgumentException("no user-info in the testkit's URL");
        }
        return url.substring(0, i) + pct(user) + ":" + pct(password(user)) + url.substring(at);
    }

    private static String pct(String s) {
        return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Rows of a root query, as text. */
    @SuppressWarnings("unchecked")
    public List<List<String>> query(String sql) {
        return (List<List<String>>) cmd("query 0 " + sql).get("rows");
    }

    public String queryOne(String sql) {
        return query(sql).get(0).get(0);
    }

    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException e) {
            // already gone
        }
        try {
            if (!proc.waitFor(30, TimeUnit.SECONDS)) {
                proc.destroy();
                proc.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            proc.destroy();
            Thread.currentThread().interrupt();
        }
    }
}
