package dev.staunch.jdbc;

import dev.staunch.Rows;
import dev.staunch.StaunchException;
import java.sql.SQLException;
import java.util.List;

/** What a StaunchResultSet reads: a staunch row set, or rows made here (generated keys, metadata). */
interface RowSource {
    boolean next() throws SQLException;

    /** The natural Java value of column {@code i} (from 0) of the current row. */
    Object get(int i) throws SQLException;

    int columnCount();

    List<Rows.Column> columns() throws SQLException;

    /** The column index (from 0) named {@code label} (case-insensitive, the first if several), -1 if none. */
    default int find(String label) throws SQLException {
        List<Rows.Column> cs = columns();
        for (int i = 0; i < cs.size(); i++) {
            if (cs.get(i).name().equalsIgnoreCase(label)) {
                return i;
            }
        }
        return -1;
    }

    void close();

    final class Native implements RowSource {
        final Rows rows;

        Native(Rows rows) {
            this.rows = rows;
        }

        @Override
        public boolean next() throws SQLException {
            try {
                return rows.next();
            } catch (StaunchException e) {
                throw SqlErrors.of(e);
            }
        }

        @Override
        public Object get(int i) throws SQLException {
            try {
                return rows.getObject(i);
            } catch (StaunchException e) {
                throw SqlErrors.of(e);
            }
        }

        @Override
        public int columnCount() {
            return rows.columnCount();
        }

        @Override
        public List<Rows.Column> columns() throws SQLException {
            try {
                return rows.columns();
            } catch (StaunchException e) {
                throw SqlErrors.of(e);
            }
        }

        @Override
        public void close() {
            // the statement owns the Rows (several result sets)
        }
    }

    final class Listed implements RowSource {
        private final List<Rows.Column> columns;
        private final List<Object[]> data;
        private int at = -1;

        Listed(List<Rows.Column> columns, List<Object[]> data) {
            this.columns = columns;
            this.data = data;
        }

        @Override
        public boolean next() {
            if (at < data.size()) {
                at++;
            }
            return at < data.size();
        }

        @Override
        public Object get(int i) throws SQLException {
            if (at < 0 || at >= data.size()) {
                throw new SQLException("no current row: call next() first", "24000");
            }
            return data.get(at)[i];
        }

        @Override
        public int columnCount() {
            return columns.size();
        }

        @Override
        public List<Rows.Column> columns() {
            return columns;
        }

        @Override
        public void close() {}
    }

    /** A BIGINT UNSIGNED column as the server describes one. */
    static Rows.Column column(String name, int columnType, int typeCode) {
        return new Rows.Column(name, columnType, typeCode, 0, 63, 20, 0, name, "", "", "");
    }

    static RowSource keys(List<Object[]> rows) {
        return new Listed(List.of(column("GENERATED_KEY", Rows.INT, 8)), rows);
    }
}
