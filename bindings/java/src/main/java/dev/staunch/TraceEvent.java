package dev.staunch;

import java.time.Duration;

/**
 * One start or end heard by a {@link TraceListener} (a copy: safe to keep).
 *
 * <ul>
 * <li>{@code kind}: which start or end</li>
 * <li>{@code pool}: the pool's name ({@link Pool#name()})</li>
 * <li>{@code server}: the server's {@code host:port} (or socket path); empty at
 *     {@link Kind#ACQUIRE_START} and at a failed {@link Kind#ACQUIRE_END}</li>
 * <li>{@code connectionId}: the connection's number in the pool ({@link Conn#id()}), 0 if none</li>
 * <li>{@code statement}: the statement's text at a statement's start and end, only for a listener whose
 *     {@link TraceListener#statementText()} is true, and null when it has none here (a prepared statement's
 *     execute)</li>
 * <li>{@code duration}: at an end, the time since its start; else zero</li>
 * <li>{@code error}: at an end that failed, the error's text (never a password); else null</li>
 * <li>{@code errorCode}: at an end that failed with a server error, its number (1146); else 0</li>
 * </ul>
 */
public final class TraceEvent {
    /** What a trace event reports. */
    public enum Kind {
        /** A borrow begins (before any wait). */
        ACQUIRE_START,
        /** The borrow ended: with a connection ({@code connectionId}, {@code server}), or failed ({@code error}). */
        ACQUIRE_END,
        /** A statement is about to be sent on a borrowed connection. */
        STATEMENT_START,
        /** Its answer was read to its end, or it failed ({@code error}). */
        STATEMENT_END;

        /** Whether this is a start (else an end). */
        public boolean isStart() {
            return this == ACQUIRE_START || this == STATEMENT_START;
        }

        /** Whether this is an acquire's start or end (else a statement's). */
        public boolean isAcquire() {
            return this == ACQUIRE_START || this == ACQUIRE_END;
        }

        static Kind of(int raw) {
            switch (raw) {
                case 1: return ACQUIRE_START;
                case 2: return ACQUIRE_END;
                case 3: return STATEMENT_START;
                case 4: return STATEMENT_END;
                default: return null;
            }
        }
    }

    private final Kind kind;
    private final String pool;
    private final String server;
    private final long connectionId;
    private final String statement;
    private final Duration duration;
    private final String error;
    private final int errorCode;

    public TraceEvent(Kind kind, String pool, String server, long connectionId, String statement, Duration duration,
                      String error, int errorCode) {
        this.kind = kind;
        this.pool = pool;
        this.server = server;
        this.connectionId = connectionId;
        this.statement = statement;
        this.duration = duration;
        this.error = error;
        this.errorCode = errorCode;
    }

    /** From the C struct's fields (either native path); null for a kind newer than this binding. */
    static TraceEvent of(int kind, int errorCode, String pool, String server, long connectionId, String statement,
                         long durationUs, String error) {
        Kind k = Kind.of(kind);
        if (k == null) {
            return null;
        }
        return new TraceEvent(k, pool, server, connectionId, statement,
                durationUs == 0 ? Duration.ZERO : Duration.ofNanos(durationUs * 1000L), error, errorCode);
    }

    public Kind kind() { return kind; }
    public String pool() { return pool; }
    public String server() { return server; }
    public long connectionId() { return connectionId; }
    public String statement() { return statement; }
    public Duration duration() { return duration; }
    public String error() { return error; }
    public int errorCode() { return errorCode; }

    @Override
    public String toString() {
        return "TraceEvent{" + kind + " pool=" + pool + " server=" + server + " conn=" + connectionId
                + (duration.isZero() ? "" : " duration=" + duration)
                + (error == null ? "" : " error=" + errorCode + " " + error) + "}";
    }
}
