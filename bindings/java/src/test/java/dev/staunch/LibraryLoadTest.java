package dev.staunch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The library lookup order, each case in a fresh JVM (the library loads once per JVM). */
class LibraryLoadTest {
    static String lib() {
        Env.url();
        return System.getProperty("staunch.library");
    }

    static String probe(String classpathExtra, Map<String, String> env, String... props) throws IOException, InterruptedException {
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        String cp = System.getProperty("java.class.path");
        List<String> cmd = new ArrayList<>(List.of(javaBin));
        if (Runtime.version().feature() >= 17) {
            cmd.add("--enable-native-access=ALL-UNNAMED"); // the FFM path's; JDK 11 does not know the flag
        }
        String shim = System.getProperty("staunch.jni.library");
        if (shim != null && !shim.isBlank()) {
            cmd.add("-Dstaunch.jni.library=" + shim); // the JNI path's shim (JDK < 22): this test is about libstaunch
        }
        cmd.addAll(List.of(props));
        cmd.addAll(List.of("-cp", classpathExtra == null ? cp : classpathExtra + java.io.File.pathSeparator + cp, "dev.staunch.LoadProbe"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("STAUNCH_LIBRARY");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return out;
    }

    @Test
    void system_property_then_environment_then_bundled_copy(@TempDir Path tmp) throws Exception {
        String lib = lib();
        String byProp = probe(null, Map.of("STAUNCH_LIBRARY", "/nonexistent/env.so"), "-Dstaunch.library=" + lib);
        assertTrue(byProp.contains("loaded 1.") && byProp.contains("system property staunch.library"), byProp);

        String missing = probe(null, Map.of(), "-Dstaunch.library=/nonexistent/libstaunch.so");
        assertTrue(missing.contains("error") && missing.contains("/nonexistent/libstaunch.so")
                && missing.contains("staunch.library"), missing);

        String byEnv = probe(null, Map.of("STAUNCH_LIBRARY", lib));
        assertTrue(byEnv.contains("loaded 1.") && byEnv.contains("environment variable STAUNCH_LIBRARY"), byEnv);

        Path res = tmp.resolve("dev/staunch/native");
        Files.createDirectories(res);
        Files.copy(Path.of(lib), res.resolve("libstaunch.so"));
        String bundled = probe(tmp.toString(), Map.of());
        assertTrue(bundled.contains("loaded 1.") && bundled.contains("bundled in the jar"), bundled);

        String none = probe(null, Map.of(), "-Djava.library.path=" + tmp.resolve("empty"));
        assertTrue(none.contains("error") && none.contains("STAUNCH_LIBRARY") && none.contains("java.library.path"), none);
    }
}
