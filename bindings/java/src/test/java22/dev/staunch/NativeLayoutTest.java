package dev.staunch;

import dev.staunch.internal.Abi;
import dev.staunch.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hand-written layouts against the library (staunch_struct_size /
 * staunch_field_offset) and against include/staunch.h (every field, in
 * order), and the handful of constants the binding hard-codes.
 */
class NativeLayoutTest {
    static {
        Env.url(); // sets staunch.library when the build did not
    }

    /**
     * A field of the FFM Native (META-INF/versions/22 of the jar the tests run against), by
     * reflection: this test compiles against the base classes (the JNI path's Native).
     */
    static Object ffm(String field) throws ReflectiveOperationException {
        return Native.class.getField(field).get(null);
    }

    @SuppressWarnings("unchecked")
    static List<StructLayout> structs() throws ReflectiveOperationException {
        return (List<StructLayout>) ffm("STRUCTS");
    }

    static long size(String name) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            return (long) ((java.lang.invoke.MethodHandle) ffm("struct_size")).invokeExact(a.allocateFrom(name).address());
        }
    }

    static long offset(String name, String field) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            return (long) ((java.lang.invoke.MethodHandle) ffm("field_offset")).invokeExact(a.allocateFrom(name).address(),
                    a.allocateFrom(field).address());
        }
    }

    static List<String> fields(StructLayout s) {
        List<String> r = new ArrayList<>();
        for (MemoryLayout m : s.memberLayouts()) {
            if (!(m instanceof PaddingLayout)) {
                r.add(m.name().orElseThrow());
            }
        }
        return r;
    }

    /** struct name -> field names in order, from the header. */
    static Map<String, List<String>> headerStructs() throws Exception {
        String h = Files.readString(Testkit.repo().resolve("include/staunch.h"));
        h = h.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\\n]*", "");
        Map<String, List<String>> out = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?s)typedef struct (staunch_\\w+) \\{(.*?)\\} \\1;").matcher(h);
        while (m.find()) {
            List<String> fs = new ArrayList<>();
            for (String line : m.group(2).split(";")) {
                Matcher f = Pattern.compile("(\\w+)\\s*(\\[\\d+\\])?\\s*$").matcher(line.trim());
                if (f.find()) {
                    fs.add(f.group(1));
                }
            }
            out.put(m.group(1), fs);
        }
        return out;
    }

    @Test
    void layouts_match_the_library_and_the_header() throws Throwable {
        Native.check();
        Map<String, List<String>> header = headerStructs();
        assertTrue(header.size() >= 9, "header structs: " + header.keySet());
        for (StructLayout s : structs()) {
            String name = s.name().orElseThrow();
            assertEquals(size(name), s.byteSize(), "sizeof " + name);
            List<String> mine = fields(s);
            assertEquals(header.get(name), mine, "fields of " + name + " in include/staunch.h");
            for (String f : mine) {
                long lib = offset(name, f);
                long j = (long) Native.class.getMethod("offset", StructLayout.class, String.class).invoke(null, s, f);
                assertEquals(lib, j, "offsetof(" + name + ", " + f + ")");
            }
        }
        // Every struct of the header is declared here.
        for (String name : header.keySet()) {
            assertTrue(structs().stream().anyMatch(s -> s.name().orElseThrow().equals(name)), name + " is not declared in Native");
        }
        assertEquals(96, ((StructLayout) ffm("PARAM")).byteSize());
        // The numbers the binding's logic uses on both paths (Abi), through FFM (NativePathTest: through JNI).
        for (var e : Abi.LAYOUT.entrySet()) {
            String k = e.getKey();
            int dot = k.indexOf('.');
            long lib = dot < 0 ? size(k) : offset(k.substring(0, dot), k.substring(dot + 1));
            assertEquals(lib, (long) e.getValue(), "Abi: " + k);
        }
        assertEquals(96, ((StructLayout) ffm("VALUE")).byteSize());
    }

    @Test
    void constants_match_the_header() throws Exception {
        String h = Files.readString(Testkit.repo().resolve("include/staunch.h"));
        Map<String, Integer> want = new LinkedHashMap<>();
        for (var f : Status.class.getFields()) {
            if (f.getType() == int.class) {
                want.put("STAUNCH_" + f.getName(), f.getInt(null));
            }
        }
        for (var f : dev.staunch.Category.class.getFields()) {
            want.put("STAUNCH_CATEGORY_" + f.getName(), f.getInt(null));
        }
        want.put("STAUNCH_QUERY_STREAM", Abi.QUERY_STREAM);
        want.put("STAUNCH_QUERY_TEXT", Abi.QUERY_TEXT);
        want.put("STAUNCH_PARAM_TIME", dev.staunch.internal.Params.TIME);
        want.put("STAUNCH_PARAM_BYTES", dev.staunch.internal.Params.BYTES);
        want.put("STAUNCH_COLUMN_TIME", Rows.TIME);
        want.put("STAUNCH_COLUMN_DECIMAL", Rows.DECIMAL);
        want.put("STAUNCH_EVENT_UNREPLICATED_WRITES", Event.Kind.UNREPLICATED_WRITES.ordinal());
        want.put("STAUNCH_EVENT_RECOVERED", Event.Kind.RECOVERED.ordinal());
        want.put("STAUNCH_ISOLATION_SERIALIZABLE", Conn.Isolation.SERIALIZABLE.ordinal());
        want.put("STAUNCH_VERSION_MAJOR", Abi.ABI_MAJOR);
        for (var e : want.entrySet()) {
            Matcher m = Pattern.compile("#define " + e.getKey() + " (\\d+)").matcher(h);
            assertTrue(m.find(), e.getKey() + " not in the header");
            assertEquals(Integer.parseInt(m.group(1)), e.getValue(), e.getKey());
            if (e.getKey().startsWith("STAUNCH_") && Status.class.getFields().length > 0 && e.getValue() >= 100 && e.getValue() < 1000) {
                assertEquals(e.getKey(), Status.name(e.getValue()), "status name");
            }
        }
        assertEquals(Abi.ABI_MAJOR, Staunch.versionNumber() / 10000);
        assertTrue(Staunch.version().startsWith(Abi.ABI_MAJOR + "."), Staunch.version());
        MemorySegment unused = MemorySegment.NULL;
        assertEquals(0, unused.address());
    }

    @Test
    void every_declared_function_is_in_the_library() throws Exception {
        Native.check();
        int n = 0;
        for (var f : Native.class.getFields()) {
            if (f.getType() == java.lang.invoke.MethodHandle.class) {
                assertTrue(f.get(null) != null, "staunch_" + f.getName() + " is missing from the library");
                n++;
            }
        }
        // As many as the JNI shim wraps (tools/gen_jni.py writes both from the same declarations).
        String list = java.nio.file.Files.readString(java.nio.file.Path.of("src/main/c/staunch_jni_list.h"));
        assertEquals(Pattern.compile("\\bX\\(staunch_").matcher(list).results().count(), n, "handles declared");
    }
}
