package dev.staunch.internal;

import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The borrower's stack for a leak report (leak_detection_threshold): at each
 * borrow from a pool with the threshold set, the borrowing thread's Java
 * stack, formatted as {@link Throwable#printStackTrace()} prints one
 * ({@code \tat class.method(File.java:line)} lines), without the binding's own
 * frames, goes to staunch_conn_set_borrower_stack; the library's leak event
 * then ends with it after "borrowed at:".
 *
 * <p>The binding's own frames are those of classes in its packages
 * ({@code PACKAGES}) that were loaded from where this class was (its jar, or
 * its classes directory): a caller's class in one of those packages (a test
 * in {@code dev.staunch}) stays, and so does every class of a jar the binding
 * was shaded into outside them.
 *
 * <p>Not public API.
 */
public final class BorrowerStack {
    private BorrowerStack() {}

    /** The packages of the binding's classes. */
    private static final Set<String> PACKAGES =
            Set.of("dev.staunch", "dev.staunch.internal", "dev.staunch.jdbc", "dev.staunch.micrometer");
    /** Where the binding's classes come from (null when the class loader does not say). */
    private static final URL HOME = location(BorrowerStack.class);
    /** The library keeps 64 KiB of the text: a deeper stack is not formatted past that. */
    private static final int MAX_CHARS = 64 * 1024;

    private static final ClassValue<Boolean> OWN = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> c) {
            return PACKAGES.contains(c.getPackageName()) && Objects.equals(location(c), HOME);
        }
    };

    /** {@link #own(String)} of the class names seen in the binding's packages. */
    private static final ConcurrentHashMap<String, Boolean> OWN_NAMES = new ConcurrentHashMap<>();

    private static URL location(Class<?> c) {
        ProtectionDomain d = c.getProtectionDomain();
        CodeSource s = d == null ? null : d.getCodeSource();
        return s == null ? null : s.getLocation();
    }

    /** Whether frames of {@code c} are the binding's own (left out of a borrower's stack). */
    public static boolean own(Class<?> c) {
        return OWN.get(c);
    }

    /** {@link #own(Class)} of the class a stack frame names (false for a class the binding's loader does not know). */
    static boolean own(String className) {
        if (!className.startsWith("dev.staunch.")) {
            return false;
        }
        Boolean known = OWN_NAMES.get(className);
        if (known != null) {
            return known;
        }
        boolean own;
        try {
            own = own(Class.forName(className, false, BorrowerStack.class.getClassLoader()));
        } catch (ClassNotFoundException | LinkageError e) {
            own = false;
        }
        OWN_NAMES.put(className, own);
        return own;
    }

    /**
     * The calling thread's stack without the binding's frames, one {@code \tat ...} line a frame: a
     * Throwable's, as printStackTrace prints it (reflection's frames included, the JVM's hidden ones not).
     * About 30 us for 60 frames on JDK 25 (a StackWalker formatting each frame: 45 to 65 us).
     */
    public static String capture() {
        StackTraceElement[] frames = new Throwable().getStackTrace();
        StringBuilder b = new StringBuilder(48 * frames.length);
        for (StackTraceElement f : frames) {
            if (own(f.getClassName())) {
                continue;
            }
            if (b.length() >= MAX_CHARS) {
                break;
            }
            if (b.length() > 0) {
                b.append('\n');
            }
            b.append("\tat ").append(f);
        }
        return b.toString();
    }

    /**
     * Gives the library the calling thread's stack for the leak report of the
     * borrow of {@code conn} (a connection just borrowed, not yet shared).
     */
    public static void give(long conn) {
        byte[] text = capture().getBytes(StandardCharsets.UTF_8);
        if (text.length == 0) {
            return;
        }
        try (Mem.Scope a = new Mem.Scope()) {
            // Only a NULL argument fails, and none is passed: nothing to report (err NULL).
            int ignored = Native.conn_set_borrower_stack(conn, a.allocateFrom(text).address(), text.length, 0);
        }
    }
}
