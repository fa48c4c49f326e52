package dev.staunch.spring;

/**
 * Staunch's Spring Boot auto-configuration of the pool's Micrometer meters. This is the Java 11 placeholder, which
 * does nothing: the auto-configuration itself is built for Java 17 (Spring Boot 3 and 4's minimum) and lives in the
 * jar's {@code META-INF/versions/17}, which a JVM of 17 or later loads instead of this class. It exists so that
 * {@code META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports}, which every Boot 2.7+
 * application reads whatever its JVM, never names a class missing on Java 11 to 16 (Boot would refuse to start).
 */
public class StaunchMetricsAutoConfiguration {
    /** Registered by Spring Boot 2.7 on Java 11 to 16 as an empty configuration. */
    public StaunchMetricsAutoConfiguration() {}
}
