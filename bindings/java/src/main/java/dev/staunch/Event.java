package dev.staunch;

import java.time.Duration;

/**
 * One pool event (a copy: safe to keep). {@code kind} names it; the numbers
 * mean what include/staunch.h says for that kind.
 *
 * @param kind         what happened
 * @param rawKind      the ABI's number for it (for kinds newer than this binding)
 * @param status       for failures, the status code the error maps to; else 0
 * @param connectionId the pool-wide number of the connection concerned, 0 if none
 * @param count        consecutive failed connects (connect_failed, recovered), else 0
 * @param duration     the connect time, the outage, or how long a connection is borrowed
 * @param message      a human-readable description
 * @param poolId       the pool's number ({@link Pool#id()})
 */
public record Event(Kind kind, int rawKind, int status, long connectionId, long count, Duration duration,
                    String message, long poolId) {

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
