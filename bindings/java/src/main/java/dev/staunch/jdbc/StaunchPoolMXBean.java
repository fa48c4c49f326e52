package dev.staunch.jdbc;

/**
 * The pool's management view, with HikariCP's names (HikariPoolMXBean), so
 * that dashboards and scripts written for HikariCP read it unchanged.
 */
public interface StaunchPoolMXBean {
    int getIdleConnections();

    int getActiveConnections();

    int getTotalConnections();

    int getThreadsAwaitingConnection();

    void softEvictConnections();

    /** New getConnection calls wait (bounded by connectionTimeout) until {@link #resumePool()}. */
    void suspendPool();

    void resumePool();
}
