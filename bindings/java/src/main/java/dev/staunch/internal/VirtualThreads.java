package dev.staunch.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/** Whether the current thread is a virtual thread (JDK 21+), for a binding compiled for JDK 11. */
public final class VirtualThreads {
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

    private VirtualThreads() {}

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null; // before JDK 21: no virtual threads
        }
    }

    /** The current thread is a virtual thread. */
    public static boolean current() {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable t) {
            return false;
        }
    }
}
