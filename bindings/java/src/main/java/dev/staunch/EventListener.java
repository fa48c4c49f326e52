package dev.staunch;

/**
 * Receives a pool's events. Called on the thread that observed the event:
 * pool threads (staunch-adder-N, staunch-housekeeper, staunch-watchdog) for
 * connects, keepalive, retirement and leaks; the calling thread for
 * validation failures on borrow, get timeouts, connections closed on release
 * and close. Several threads may call it at once. Keep it quick and do not
 * block or call into the pool from it. An exception it throws is caught and
 * logged (never crosses into C).
 */
@FunctionalInterface
public interface EventListener {
    void onEvent(Event event);
}
