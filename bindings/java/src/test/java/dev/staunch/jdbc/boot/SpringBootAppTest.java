package dev.staunch.jdbc.boot;

import dev.staunch.Env;
import dev.staunch.jdbc.StaunchDataSource;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One Spring Boot application context (the only one in the suite: it is the
 * slow part) on StaunchDataSource chosen by {@code spring.datasource.type}:
 * it starts, Flyway migrates, JPA validates the migrated schema, the REST
 * endpoint serves and writes,
 * the actuator's health reports the DataSource up, its metrics and Prometheus
 * endpoint the pool's jdbc.connections.* and staunch.connections.* (bound by
 * staunch's auto-configuration: BootApp declares no binder), and closing the
 * context closes the pool.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SpringBootAppTest {
    static final String DB = "tool_boot";

    static String get(HttpClient http, String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), url + ": " + r.body());
        return r.body();
    }

    static String post(HttpClient http, String url, String json) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), url + ": " + r.body());
        return r.body();
    }

    @Test
    void boot_app_starts_migrates_serves_and_shuts_down_on_staunch() throws Exception {
        Object port = Env.server().server(0).get("port");
        String base = "jdbc:mariadb://127.0.0.1:" + port + "/";
        try (Connection c = DriverManager.getConnection(base + "staunch_test", "app", "app-secret"); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + DB);
            s.execute("CREATE DATABASE " + DB + " CHARACTER SET utf8mb4");
        }
        SpringApplication app = new SpringApplication(BootApp.class);
        long t0 = System.nanoTime();
        ConfigurableApplicationContext ctx = app.run(
                "--spring.datasource.type=dev.staunch.jdbc.StaunchDataSource",
                "--spring.datasource.url=" + base + DB + "?connectTimeout=2000",
                "--spring.datasource.username=app",
                "--spring.datasource.password=app-secret",
                "--spring.flyway.locations=classpath:db/boot",
                "--spring.jpa.hibernate.ddl-auto=validate",
                "--spring.jpa.open-in-view=false",
                "--server.port=0",
                "--management.endpoints.web.exposure.include=health,metrics,prometheus",
                "--management.endpoint.health.show-details=always",
                "--spring.main.banner-mode=off");
        StaunchDataSource ds;
        try {
            System.out.printf("SpringBootAppTest: context started in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
            ds = assertInstanceOf(StaunchDataSource.class, ctx.getBean(DataSource.class));
            int httpPort = ((WebServerApplicationContext) ctx).getWebServer().getPort();
            String url = "http://127.0.0.1:" + httpPort;
            HttpClient http = HttpClient.newHttpClient();

            String notes = get(http, url + "/notes");
            assertTrue(notes.contains("\"migrated by Flyway\"") && notes.contains("1.25"), notes);
            String added = post(http, url + "/notes", "{\"text\":\"posted\",\"amount\":\"12345678.1234\"}");
            assertTrue(added.contains("12345678.1234"), added);

            String health = get(http, url + "/actuator/health");
            assertTrue(health.endsWith(",\"status\":\"UP\"}"), health);
            assertTrue(health.matches(".*\"db\":\\{\"details\":\\{\"database\":\"MariaDB\"[^}]*},\"status\":\"UP\"}.*"), health);
            try (Connection c = ds.getConnection(); Statement s = c.createStatement();
                 ResultSet r = s.executeQuery("SELECT COUNT(*) FROM flyway_schema_history WHERE success = 1")) {
                assertTrue(r.next());
                assertEquals(1, r.getInt(1));
                // /actuator/metrics as HikariCP's users read it: Boot's jdbc.connections.* from staunch's
                // DataSourcePoolMetadataProvider, tagged with the bean's name (one series: not StaunchMetrics' too).
                String active = get(http, url + "/actuator/metrics/jdbc.connections.active?tag=name:dataSource");
                assertTrue(active.contains("\"measurements\":[{\"statistic\":\"VALUE\",\"value\":1.0}]"), active);
                String max = get(http, url + "/actuator/metrics/jdbc.connections.max");
                assertTrue(max.contains("\"value\":10.0") && max.contains("\"values\":[\"dataSource\"]"), max);
                // staunch's own meters, tagged with the pool's name (as HikariCP's hikaricp.connections.*).
                String pool = ds.getPoolName();
                String tag = "?tag=name:" + java.net.URLEncoder.encode(pool, java.nio.charset.StandardCharsets.UTF_8);
                String total = get(http, url + "/actuator/metrics/staunch.connections" + tag);
                assertTrue(total.contains("\"value\":1.0") || total.contains("\"value\":2.0"), total);

                String prometheus = get(http, url + "/actuator/prometheus");
                String label = "{name=\"" + pool + "\"}";
                StringBuilder staunch = new StringBuilder();
                for (String line : prometheus.split("\n")) {
                    if (line.startsWith("staunch_") || line.startsWith("jdbc_connections_")) {
                        staunch.append(line).append('\n');
                    }
                }
                System.out.print("SpringBootAppTest: /actuator/prometheus, staunch's series:\n" + staunch);
                for (String series : new String[] {"staunch_connections ", "staunch_connections_pending ",
                        "staunch_connections_timeout_total ", "staunch_connections_acquire_seconds_count ",
                        "staunch_connections_acquire_seconds_sum ", "staunch_connections_creation_seconds_count ",
                        "staunch_connections_usage_seconds_count "}) {
                    String name = series.trim();
                    assertTrue(staunch.toString().contains(name + label + " "), name + label + " in\n" + staunch);
                }
                assertTrue(staunch.toString().contains("jdbc_connections_active{name=\"dataSource\"} 1.0"), staunch.toString());
                assertFalse(staunch.toString().contains("jdbc_connections_active" + label), staunch.toString());
                assertFalse(staunch.toString().contains("staunch_connections_creation_seconds_count" + label + " 0"),
                        "the connects Flyway, JPA and this test made are timed:\n" + staunch);
            }
        } finally {
            ctx.close();
        }
        assertTrue(ds.isClosed(), "closing the context closes the pool");
        assertFalse(ctx.isActive());
        try (Connection c = DriverManager.getConnection(base + "staunch_test", "app", "app-secret"); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE " + DB);
        }
    }
}
