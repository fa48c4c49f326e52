package dev.staunch;

import dev.staunch.internal.Native;

/** Run in a child JVM by LibraryLoadTest: prints where the library came from and its version, or the error. */
public final class LoadProbe {
    private LoadProbe() {}

    public static void main(String[] args) {
        try {
            System.out.println("loaded " + Staunch.version() + " from " + Native.SOURCE);
        } catch (RuntimeException e) {
            System.out.println("error " + e.getMessage());
        }
    }
}
