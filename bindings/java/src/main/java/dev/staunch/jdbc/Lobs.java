package dev.staunch.jdbc;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Reader;
import java.io.StringReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.NClob;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;

/**
 * The Blob and Clob/NClob of {@code Connection.createBlob/createClob/createNClob}:
 * values held in memory, to bind as parameters (MariaDB has no LOB locators,
 * so a LOB is its value; changing one changes nothing in the database).
 * Positions count from 1, as JDBC says; writing past the end grows the value.
 */
final class Lobs {
    private Lobs() {}

    private static SQLException badPosition(long pos, long length) {
        return new SQLNonTransientException("position " + pos + " is not in 1.." + (length + 1), "22003");
    }

    private static SQLException freed() {
        return new SQLNonTransientException("the LOB was freed", "HY010");
    }

    static final class Bytes implements Blob {
        private byte[] data;
        private int length;

        Bytes(byte[] initial) {
            data = initial.clone();
            length = initial.length;
        }

        private byte[] live() throws SQLException {
            if (data == null) {
                throw freed();
            }
            return data;
        }

        private void check(long pos) throws SQLException {
            live();
            if (pos < 1 || pos > length + 1L) {
                throw badPosition(pos, length);
            }
        }

        @Override public long length() throws SQLException { live(); return length; }

        @Override
        public byte[] getBytes(long pos, int len) throws SQLException {
            check(pos);
            int from = (int) pos - 1;
            int n = Math.max(0, Math.min(len, length - from));
            byte[] out = new byte[n];
            System.arraycopy(data, from, out, 0, n);
            return out;
        }

        @Override public InputStream getBinaryStream() throws SQLException { return new ByteArrayInputStream(live(), 0, length); }

        @Override
        public InputStream getBinaryStream(long pos, long len) throws SQLException {
            check(pos);
            return new ByteArrayInputStream(data, (int) pos - 1, (int) Math.min(len, length - (pos - 1)));
        }

        @Override
        public long position(byte[] pattern, long start) throws SQLException {
            check(start);
            outer:
            for (int i = (int) start - 1; i + pattern.length <= length; i++) {
                for (int j = 0; j < pattern.length; j++) {
                    if (data[i + j] != pattern[j]) {
                        continue outer;
                    }
                }
                return i + 1;
            }
            return -1;
        }

        @Override public long position(Blob pattern, long start) throws SQLException { return position(pattern.getBytes(1, (int) pattern.length()), start); }
        @Override public int setBytes(long pos, byte[] bytes) throws SQLException { return setBytes(pos, bytes, 0, bytes.length); }

        @Override
        public int setBytes(long pos, byte[] bytes, int offset, int len) throws SQLException {
            check(pos);
            int at = (int) pos - 1;
            if (at + len > data.length) {
                data = java.util.Arrays.copyOf(data, Math.max(at + len, data.length * 2));
            }
            System.arraycopy(bytes, offset, data, at, len);
            length = Math.max(length, at + len);
            return len;
        }

        @Override
        public OutputStream setBinaryStream(long pos) throws SQLException {
            check(pos);
            return new OutputStream() {
                private long at = pos;

                @Override
                public void write(int b) throws java.io.IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws java.io.IOException {
                    try {
                        at += setBytes(at, b, off, len);
                    } catch (SQLException e) {
                        throw new java.io.IOException(e.getMessage(), e);
                    }
                }
            };
        }

        @Override
        public void truncate(long len) throws SQLException {
            live();
            if (len < 0 || len > length) {
                throw badPosition(len, length);
            }
            length = (int) len;
        }

        @Override public void free() { data = null; }
    }

    static final class Text implements NClob {
        private StringBuilder data;

        Text(String initial) {
            data = new StringBuilder(initial);
        }

        private StringBuilder live() throws SQLException {
            if (data == null) {
                throw freed();
            }
            return data;
        }

        private void check(long pos) throws SQLException {
            if (pos < 1 || pos > live().length() + 1L) {
                throw badPosition(pos, data.length());
            }
        }

        @Override public long length() throws SQLException { return live().length(); }

        @Override
        public String getSubString(long pos, int len) throws SQLException {
            check(pos);
            int from = (int) pos - 1;
            return data.substring(from, Math.min(data.length(), from + Math.max(0, len)));
        }

        @Override public Reader getCharacterStream() throws SQLException { return new StringReader(live().toString()); }
        @Override public Reader getCharacterStream(long pos, long len) throws SQLException { return new StringReader(getSubString(pos, (int) Math.min(Integer.MAX_VALUE, len))); }
        @Override public InputStream getAsciiStream() throws SQLException { return new ByteArrayInputStream(live().toString().getBytes(StandardCharsets.US_ASCII)); }

        @Override
        public long position(String pattern, long start) throws SQLException {
            check(start);
            int i = data.indexOf(pattern, (int) start - 1);
            return i < 0 ? -1 : i + 1;
        }

        @Override public long position(Clob pattern, long start) throws SQLException { return position(pattern.getSubString(1, (int) pattern.length()), start); }
        @Override public int setString(long pos, String s) throws SQLException { return setString(pos, s, 0, s.length()); }

        @Override
        public int setString(long pos, String s, int offset, int len) throws SQLException {
            check(pos);
            int at = (int) pos - 1;
            int end = Math.min(data.length(), at + len);
            data.replace(at, end, s.substring(offset, offset + len));
            return len;
        }

        @Override
        public Writer setCharacterStream(long pos) throws SQLException {
            check(pos);
            return new Writer() {
                private long at = pos;

                @Override
                public void write(char[] b, int off, int len) throws java.io.IOException {
                    try {
                        at += setString(at, new String(b, off, len));
                    } catch (SQLException e) {
                        throw new java.io.IOException(e.getMessage(), e);
                    }
                }

                @Override public void flush() {}
                @Override public void close() {}
            };
        }

        @Override
        public OutputStream setAsciiStream(long pos) throws SQLException {
            check(pos);
            return new ByteArrayOutputStream() {
                @Override
                public void close() throws java.io.IOException {
                    try {
                        setString(pos, toString(StandardCharsets.US_ASCII));
                    } catch (SQLException e) {
                        throw new java.io.IOException(e.getMessage(), e);
                    }
                }
            };
        }

        @Override
        public void truncate(long len) throws SQLException {
            if (len < 0 || len > live().length()) {
                throw badPosition(len, data.length());
            }
            data.setLength((int) len);
        }

        @Override public void free() { data = null; }
    }
}
