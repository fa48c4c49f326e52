package dev.staunch.jdbc;

/**
 * The settings that can change while the pool runs, with HikariCP's names
 * (HikariConfigMXBean's pool sizes): registered as
 * {@code dev.staunch:type=PoolConfig (poolName)} with registerMbeans, and
 * {@link StaunchDataSource#getConfigMXBean()}. Each setter maps to the C
 * ABI's {@code staunch_pool_set_max_size} / {@code staunch_pool_set_min_idle};
 * a bad value is an IllegalArgumentException naming the knob.
 */
public interface StaunchConfigMXBean {
    int getMaximumPoolSize();

    /** Up to the knob max_size_cap; lowering it takes no borrowed connection away. */
    void setMaximumPoolSize(int maxPoolSize);

    int getMinimumIdle();

    /** At most maximumPoolSize. */
    void setMinimumIdle(int minIdle);

    String getPoolName();
}
