package dev.staunch;

import dev.staunch.internal.Abi;
import dev.staunch.internal.Jni;
import dev.staunch.internal.Mem;
import java.util.Map;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The multi-release jar picks its native path by the running JDK (FFM from
 * META-INF/versions/22 on 22+, JNI below), and the struct offsets both paths
 * use ({@code Abi}) match the library's, read through JNI (NativeLayoutTest
 * reads them through FFM on 22+).
 */
class NativePathTest {
    static {
        Env.url(); // sets staunch.library when the build did not
    }

    static boolean jni() {
        return Runtime.version().feature() < 22;
    }

    @Test
    void the_jdk_chooses_the_path() {
        assertEquals(jni() ? "JNI" : "FFM", Staunch.nativePath());
        assertEquals(Staunch.versionNumber() / 10000, 1);
    }

    @Test
    void jni_layouts_match_the_library() {
        assumeTrue(jni(), "the JNI path's layouts: JDK < 22 only");
        int checked = 0;
        for (Map.Entry<String, Long> e : Abi.LAYOUT.entrySet()) {
            String k = e.getKey();
            int dot = k.indexOf('.');
            long actual;
            try (Mem.Scope a = new Mem.Scope()) {
                actual = dot < 0 ? Jni.struct_size(a.allocateFrom(k).address())
                        : Jni.field_offset(a.allocateFrom(k.substring(0, dot)).address(),
                                a.allocateFrom(k.substring(dot + 1)).address());
            }
            assertEquals((long) e.getValue(), actual, k);
            checked++;
        }
        assertEquals(Abi.LAYOUT.size(), checked);
    }
}
