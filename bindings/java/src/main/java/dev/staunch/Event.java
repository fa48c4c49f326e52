package dev.staunch;

import java.time.Duration;
import java.util.Objects;

/**
 * One pool event (a copy: safe to keep). {@code kind} names it; the numbers
 * mean what include/staunch.h says for that kind.
 *
 * <ul>
 * <li>{@code kind}: what happened</li>
 * <li>{@code rawKind}: the ABI's number for it (for kinds newer than this binding)</li>
 * <li>{@code status}: for failures, the status code the error maps to; else 0</li>
 * <li>{@code connectionId}: the pool-wide number of the connection concerned, 0 if none</li>
 * <li>{@code count}: consecutive failed connects (connect_failed, recovered), else 0</li>
 * <li>{@code duration}: the connect time, the outage, or how long a connection is borrowed</li>
 * <li>{@code message}: a human-readable description</li>
 * <li>{@code poolId}: the pool's number ({@link Pool#id()})</li>
 * </ul>
 */
public final class Event {
    private final Kind kind;
    private final int rawKind;
    private final int status;
    private final long connectionId;
    private final long count;
    private final Duration duration;
    private final String message;
    private final long poolId;

    public Event(Kind kind, int rawKind, int status, long connectionId, long count, Duration duration, String message, long poolId) {
        this.kind = kind;
        this.rawKind = rawKind;
        this.status = status;
        this.connectionId = connectionId;
        this.count = count;
        this.duration = duration;
        this.message = message;
        this.poolId = poolId;
    }

    public Kind kind() {
        return kind;
    }

    public int rawKind() {
        return rawKind;
    }

    public int status() {
        return status;
    }

    public long connectionId() {
        return connectionId;
    }

    public long count() {
        return count;
    }

    public Duration duration() {
        return duration;
    }

    public String message() {
        return message;
    }

    public long poolId() {
        return poolId;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof Event)) {
            return false;
        }
        Event o = (Event) other;
        return Objects.equals(kind, o.kind) && rawKind == o.rawKind && status == o.status && connectionId == o.connectionId && count == o.count && Objects.equals(duration, o.duration) && Objects.equals(message, o.message) && poolId == o.poolId;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, rawKind, status, connectionId, count, duration, message, poolId);
    }

    @Override
    public String toString() {
        return "Event[" + "kind=" + kind + ", rawKind=" + rawKind + ", status=" + status + ", connectionId=" + connectionId + ", count=" + count + ", duration=" + duration + ", message=" + message + ", poolId=" + poolId + "]";
    }

    /** The kinds of events (STAUNCH_EVENT_*). */
    public enum Kind {
        OTHER, CONNECTED, CONNECT_FAILED, RECOVERED, CLOSED, VALIDATION_FAILED, LEAK_SUSPECTED,
        ACQUIRE_TIMEOUT, POOL_CLOSED, STALE_PRIMARY_WRITABLE, UNREPLICATED_WRITES;

        static Kind of(int raw) {
            Kind[] all = values();
            return raw >= 0 && raw < all.length ? all[raw] : OTHER;
        }
    }
}
