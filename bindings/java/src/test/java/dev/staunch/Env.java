package dev.staunch;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Shared test setup: the library path (when the build did not pass one) and
 * one throwaway server for the whole run (stopped when the JVM exits: the
 * testkit's stdin closes).
 */
public final class Env {
    private Env() {}

    private static Testkit server;

    static {
        String prop = System.getProperty("staunch.library");
        if ((prop == null || prop.isBlank()) && System.getenv("STAUNCH_LIBRARY") == null) {
            Path repo = Testkit.repo();
            for (String p : new String[] {"target/release/libstaunch.so", "target/debug/libstaunch.so"}) {
                if (Files.exists(repo.resolve(p))) {
                    System.setProperty("staunch.library", repo.resolve(p).toString());
                    break;
                }
            }
        }
    }

    /** The shared server (started at first use). */
    public static synchronized Testkit server() {
        if (server == null) {
            server = Testkit.start("server");
            Testkit s = server;
            Runtime.getRuntime().addShutdownHook(new Thread(s::close));
        }
        return server;
    }

    public static String url() {
        return server().url();
    }

    /** The shared server's URL with knobs appended. */
    public static String url(String knobs) {
        String u = url();
        return knobs.isEmpty() ? u : u + (u.contains("?") ? "&" : "?") + knobs;
    }

    /** Wall time in ms, and slack for a busy 2-core machine. */
    public static long now() {
        return System.nanoTime() / 1_000_000;
    }

    public static long slack() {
        String s = System.getenv("STAUNCH_TEST_SLACK_MS");
        return s == null ? 1000 : Long.parseLong(s);
    }
}
