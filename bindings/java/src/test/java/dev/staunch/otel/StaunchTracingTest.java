package dev.staunch.otel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.staunch.Conn;
import dev.staunch.Env;
import dev.staunch.Pool;
import dev.staunch.Rows;
import dev.staunch.Staunch;
import dev.staunch.StaunchException;
import dev.staunch.Testkit;
import dev.staunch.TraceEvent;
import dev.staunch.jdbc.StaunchDataSource;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * OpenTelemetry spans of the JVM binding (StaunchTracing over staunch_options_set_tracer), on either native
 * path, against the shared MariaDB server: the span tree under the application's span, the attributes, a
 * server error's status, the statement text's opt-in, and that nothing leaks into the thread's context.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StaunchTracingTest {
    private static final AtomicInteger SEQ = new AtomicInteger();

    private InMemorySpanExporter exporter;
    private SdkTracerProvider provider;
    private OpenTelemetry otel;

    @BeforeEach
    void sdk() {
        exporter = InMemorySpanExporter.create();
        provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
        otel = OpenTelemetrySdk.builder().setTracerProvider(provider).build();
    }

    @AfterEach
    void shutdown() {
        provider.close();
    }

    private static String unique(String base) {
        return base + "-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
    }

    private static StaunchDataSource ds(String name) {
        Testkit s = Env.server();
        StaunchDataSource ds = new StaunchDataSource();
        ds.setJdbcUrl("jdbc:mariadb://127.0.0.1:" + s.server(0).get("port") + "/staunch_test?connectTimeout=2000");
        ds.setUsername("app");
        ds.setPassword("app-secret");
        ds.setMaximumPoolSize(2);
        ds.setPoolName(name);
        return ds;
    }

    /** Inside a span "request": get a connection, SELECT 1, a failing SELECT, close; returns the spans. */
    @SuppressWarnings("try") // the scope is the point, not a variable
    private List<SpanData> request(StaunchDataSource ds) throws Exception {
        Span parent = otel.getTracer("test").spanBuilder("request").startSpan();
        try (Scope ignored = parent.makeCurrent()) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                try (ResultSet r = s.executeQuery("SELECT 1")) {
                    assertTrue(r.next());
                }
                SQLException e = assertThrows(SQLException.class, () -> s.executeQuery("SELECT * FROM no_such_table"));
                assertEquals(1146, e.getErrorCode());
                assertEquals(parent.getSpanContext(), Span.current().getSpanContext(),
                        "between statements the application's span is current again");
            }
            assertEquals(parent.getSpanContext(), Span.current().getSpanContext(), "no scope left open");
        } finally {
            parent.end();
        }
        assertFalse(Span.current().getSpanContext().isValid(), "nothing left in the thread's context");
        return exporter.getFinishedSpanItems();
    }

    private static SpanData one(List<SpanData> spans, String name) {
        List<SpanData> r = spans.stream().filter(s -> s.getName().equals(name)).collect(Collectors.toList());
        assertEquals(1, r.size(), name + " in " + names(spans));
        return r.get(0);
    }

    private static List<String> names(List<SpanData> spans) {
        List<String> r = new ArrayList<>();
        for (SpanData s : spans) {
            r.add(s.getName() + "(" + s.getKind() + " " + s.getStatus() + " " + s.getAttributes().asMap() + ")");
        }
        return r;
    }

    @Test
    void a_request_is_a_tree_of_acquire_and_statements_under_the_applications_span() throws Exception {
        String name = unique("traced");
        int port = Integer.parseInt(Env.server().server(0).get("port").toString());
        List<SpanData> spans;
        try (StaunchDataSource ds = ds(name)) {
            ds.setOpenTelemetry(otel);
            spans = request(ds);
        }
        SpanData parent = one(spans, "request");
        System.out.println("StaunchTracingTest: the request's spans, in the order they ended: " + names(spans));
        SpanData acquire = one(spans, "staunch.acquire");
        List<SpanData> statements = spans.stream().filter(s -> s.getName().equals("staunch.statement"))
                .collect(Collectors.toList());
        assertEquals(spans.size(), 2 + statements.size(), "only acquire and statement spans: " + names(spans));
        for (SpanData s : spans) {
            if (s != parent) {
                assertEquals(parent.getSpanId(), s.getParentSpanId(), "a child of the request: " + s);
                assertEquals(parent.getTraceId(), s.getTraceId());
                assertEquals("mysql", s.getAttributes().get(StaunchTracing.DB_SYSTEM_NAME));
                assertEquals(name, s.getAttributes().get(StaunchTracing.POOL_NAME));
                assertEquals("127.0.0.1", s.getAttributes().get(StaunchTracing.SERVER_ADDRESS), s.toString());
                assertEquals(port, s.getAttributes().get(StaunchTracing.SERVER_PORT).intValue());
                assertNull(s.getAttributes().get(StaunchTracing.QUERY_TEXT), "no text without the opt-in: " + s);
                assertFalse(s.toString().contains("app-secret"), "no secret in a span: " + s);
                assertTrue(s.getStartEpochNanos() >= parent.getStartEpochNanos() && s.getEndEpochNanos() <= parent.getEndEpochNanos());
            }
        }
        assertEquals(SpanKind.INTERNAL, acquire.getKind());
        assertEquals(StatusCode.UNSET, acquire.getStatus().getStatusCode());
        List<SpanData> failed = statements.stream().filter(s -> s.getStatus().getStatusCode() == StatusCode.ERROR)
                .collect(Collectors.toList());
        assertEquals(1, failed.size(), "the failing SELECT: " + names(spans));
        SpanData bad = failed.get(0);
        assertEquals(SpanKind.CLIENT, bad.getKind());
        assertEquals("1146", bad.getAttributes().get(StaunchTracing.STATUS_CODE));
        assertEquals("1146", bad.getAttributes().get(StaunchTracing.ERROR_TYPE));
        assertTrue(bad.getStatus().getDescription().contains("no_such_table"), bad.getStatus().getDescription());
        assertTrue(statements.size() >= 2, "SELECT 1 and the failing one: " + names(spans));
        for (SpanData s : statements) {
            if (s != bad) {
                assertEquals(StatusCode.UNSET, s.getStatus().getStatusCode(), s.toString());
                assertNull(s.getAttributes().get(StaunchTracing.ERROR_TYPE));
            }
        }
        assertTrue(acquire.getEndEpochNanos() <= statements.stream().mapToLong(SpanData::getStartEpochNanos).min().getAsLong(),
                "the borrow ends before the first statement starts");
    }

    @Test
    void the_statement_text_only_with_the_opt_in() throws Exception {
        List<SpanData> spans;
        try (StaunchDataSource ds = ds(unique("texts"))) {
            ds.setOpenTelemetry(otel);
            ds.setTraceStatementText(true);
            spans = request(ds);
        }
        List<String> texts = spans.stream().filter(s -> s.getName().equals("staunch.statement"))
                .map(s -> s.getAttributes().get(StaunchTracing.QUERY_TEXT)).collect(Collectors.toList());
        assertTrue(texts.contains("SELECT 1"), texts.toString());
        assertTrue(texts.contains("SELECT * FROM no_such_table"), texts.toString());
        SpanData bad = spans.stream().filter(s -> s.getStatus().getStatusCode() == StatusCode.ERROR).findFirst().orElseThrow();
        assertEquals("SELECT * FROM no_such_table", bad.getAttributes().get(StaunchTracing.QUERY_TEXT));
        assertNull(one(spans, "staunch.acquire").getAttributes().get(StaunchTracing.QUERY_TEXT));
    }

    @Test
    @SuppressWarnings("try")
    void the_native_api_pool_builder_takes_a_tracer() {
        String name = unique("native");
        Span parent = otel.getTracer("test").spanBuilder("job").startSpan();
        try (Pool pool = Staunch.builder().url(Env.url("pool_name=" + name + "&max_size=1"))
                .tracer(StaunchTracing.builder(otel).statementText(true).build()).open();
             Scope ignored = parent.makeCurrent();
             Conn c = pool.get(Duration.ofSeconds(5))) {
            try (Rows r = c.query("SELECT 2")) {
                assertTrue(r.next());
            }
            StaunchException e = assertThrows(StaunchException.class, () -> c.query("SELEKT").close());
            assertEquals(1064, e.serverCode());
        } finally {
            parent.end();
        }
        List<SpanData> spans = exporter.getFinishedSpanItems();
        SpanData job = one(spans, "job");
        SpanData acquire = one(spans, "staunch.acquire");
        assertEquals(job.getSpanId(), acquire.getParentSpanId());
        SpanData select = spans.stream().filter(s -> "SELECT 2".equals(s.getAttributes().get(StaunchTracing.QUERY_TEXT)))
                .findFirst().orElseThrow(() -> new AssertionError(names(spans)));
        assertEquals(job.getSpanId(), select.getParentSpanId());
        SpanData bad = spans.stream().filter(s -> "SELEKT".equals(s.getAttributes().get(StaunchTracing.QUERY_TEXT)))
                .findFirst().orElseThrow(() -> new AssertionError(names(spans)));
        assertEquals(StatusCode.ERROR, bad.getStatus().getStatusCode());
        assertEquals("1064", bad.getAttributes().get(StaunchTracing.ERROR_TYPE));
    }

    /**
     * A streamed answer's span stays current while the rows are read and closes at their end; one whose rows
     * are closed on another thread ends there, and its scope closes at this thread's next call.
     */
    @Test
    @SuppressWarnings("try")
    void a_streamed_answer_spans_its_reading_even_when_another_thread_ends_it() throws Exception {
        Span parent = otel.getTracer("test").spanBuilder("stream").startSpan();
        try (Pool pool = Staunch.builder().url(Env.url("max_size=1"))
                .tracer(StaunchTracing.builder(otel).statementText(true).build()).open();
             Scope ignored = parent.makeCurrent();
             Conn c = pool.get(Duration.ofSeconds(5))) {
            try (Rows r = c.queryStream("SELECT seq FROM seq_1_to_100000")) {
                assertTrue(r.next());
                assertNotEquals(parent.getSpanContext(), Span.current().getSpanContext(),
                        "the statement's span is current while its answer is read");
                int n = 1;
                while (r.next()) {
                    n++;
                }
                assertEquals(100000, n);
                assertEquals(parent.getSpanContext(), Span.current().getSpanContext(), "read to its end: closed");
            }
            Rows other = c.queryStream("SELECT seq FROM seq_1_to_100001");
            assertTrue(other.next());
            Thread t = new Thread(other::close, "closer");
            t.start();
            t.join();
            assertTrue(exporter.getFinishedSpanItems().stream()
                            .anyMatch(s -> "SELECT seq FROM seq_1_to_100001".equals(s.getAttributes().get(StaunchTracing.QUERY_TEXT))),
                    "ended on the closer's thread: " + names(exporter.getFinishedSpanItems()));
            try (Rows r = c.query("SELECT 4")) {
                assertTrue(r.next());
            }
            assertEquals(parent.getSpanContext(), Span.current().getSpanContext(), "the stale scope closed here");
        } finally {
            parent.end();
        }
        List<SpanData> spans = exporter.getFinishedSpanItems();
        SpanData job = one(spans, "stream");
        for (SpanData s : spans) {
            if (s != job) {
                assertEquals(job.getSpanId(), s.getParentSpanId(), "a child of the job: " + s);
            }
        }
        // The three statements with their text (the library may add its own, textless, at the return).
        assertEquals(3L, spans.stream().filter(s -> s.getName().equals("staunch.statement")
                && s.getAttributes().get(StaunchTracing.QUERY_TEXT) != null).count(), names(spans).toString());
    }

    @Test
    void a_listener_that_throws_fails_nothing() {
        AtomicInteger heard = new AtomicInteger();
        try (Pool pool = Staunch.builder().url(Env.url("max_size=1")).tracer(ev -> {
                heard.incrementAndGet();
                throw new IllegalStateException("boom at " + ev.kind());
            }).open();
             Conn c = pool.get(Duration.ofSeconds(5));
             Rows r = c.query("SELECT 3")) {
            assertTrue(r.next());
            assertEquals(3, r.getLong(0));
        }
        assertTrue(heard.get() >= 4, "acquire and statement, start and end: " + heard.get());
    }

    @Test
    void the_events_come_in_pairs_on_the_calling_thread() {
        List<String> seen = new ArrayList<>();
        Thread me = Thread.currentThread();
        try (Pool pool = Staunch.builder().url(Env.url("max_size=1")).tracer(ev -> {
                if (Thread.currentThread() == me) {
                    seen.add(ev.kind() + (ev.error() == null ? "" : " " + ev.errorCode()));
                }
            }).open();
             Conn c = pool.get(Duration.ofSeconds(5))) {
            assertThrows(StaunchException.class, () -> c.query("SELECT * FROM no_such_table").close());
        }
        assertEquals(List.of(TraceEvent.Kind.ACQUIRE_START.toString(), TraceEvent.Kind.ACQUIRE_END.toString(),
                TraceEvent.Kind.STATEMENT_START.toString(), TraceEvent.Kind.STATEMENT_END + " 1146"),
                seen.subList(0, Math.min(4, seen.size())), seen.toString());
    }

    /** Only dev.staunch.otel names OpenTelemetry: the JDBC data source and the rest load without it. */
    @Test
    void only_the_otel_package_names_opentelemetry() throws Exception {
        java.nio.file.Path jar = java.nio.file.Path.of(Pool.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(jar.toString().endsWith(".jar"), "the tests run against the packaged jar: " + jar);
        int classes = 0;
        try (java.util.jar.JarFile j = new java.util.jar.JarFile(jar.toFile())) {
            for (java.util.jar.JarEntry e : java.util.Collections.list(j.entries())) {
                if (!e.getName().endsWith(".class")) {
                    continue;
                }
                classes++;
                byte[] b = j.getInputStream(e).readAllBytes();
                boolean names = new String(b, java.nio.charset.StandardCharsets.ISO_8859_1).contains("io/opentelemetry/");
                assertEquals(e.getName().startsWith("dev/staunch/otel/"), names, e.getName());
            }
        }
        assertTrue(classes > 20, classes + " classes");
    }

    @Test
    void host_and_port() {
        assertEquals(List.of("db.example", "3306"), List.of(StaunchTracing.hostPort("db.example:3306")));
        assertEquals(List.of("::1", "3307"), List.of(StaunchTracing.hostPort("[::1]:3307")));
        String[] sock = StaunchTracing.hostPort("/run/mysqld/mysqld.sock");
        assertEquals("/run/mysqld/mysqld.sock", sock[0]);
        assertNull(sock[1]);
        assertNull(StaunchTracing.hostPort(""));
    }
}
