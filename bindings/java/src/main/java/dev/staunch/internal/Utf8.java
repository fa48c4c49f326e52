package dev.staunch.internal;

/** Byte offsets the library gives into a string's UTF-8 form, as char indexes of the Java string. */
public final class Utf8 {
    private Utf8() {}

    /**
     * The char indexes in {@code s} of byte offsets (ascending) into its UTF-8 form as
     * Mem.Scope.allocateFrom writes it on both native paths (an unpaired surrogate is one byte, '?'): -1 for an offset
     * inside a character or past the end. One pass over {@code s} for all of them.
     */
    public static int[] charIndexes(String s, long[] offsets) {
        int[] out = new int[offsets.length];
        long b = 0;
        int i = 0;
        for (int k = 0; k < offsets.length; k++) {
            while (b < offsets[k] && i < s.length()) {
                char c = s.charAt(i);
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    b += 4;
                    i += 2;
                } else {
                    b += c < 0x80 || Character.isSurrogate(c) ? 1 : c < 0x800 ? 2 : 3;
                    i++;
                }
            }
            out[k] = b == offsets[k] && i < s.length() ? i : -1;
        }
        return out;
    }
}
