package dev.staunch.internal;

import java.lang.ref.Cleaner;

/** The binding's one Cleaner: the fallback for pools, connections, rows and tokens the application forgot to close. */
public final class Cleanup {
    private Cleanup() {}

    public static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "staunch-cleaner");
        t.setDaemon(true);
        return t;
    });
}
