package dev.staunch.otel;

import dev.staunch.TraceEvent;
import dev.staunch.TraceListener;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * OpenTelemetry spans of a staunch pool: one per borrow ({@code staunch.acquire}, kind INTERNAL) and one
 * per statement ({@code staunch.statement}, kind CLIENT), each a child of the span current on the borrowing
 * thread ({@link Context#current()}) and current itself between its start and its end, with the database
 * semantic conventions' attributes:
 *
 * <ul>
 *   <li>{@code db.system.name} = {@code mysql}, {@code db.client.connection.pool.name} = the pool's name;
 *   <li>{@code server.address}, {@code server.port}: the server of the connection (a statement's, and a
 *       borrow's that got one);
 *   <li>{@code db.query.text}: the statement's text, only with {@link Builder#statementText(boolean)} (it may
 *       hold what the application put in it);
 *   <li>on failure: status ERROR with the error's text, {@code error.type} (the server's error number, or
 *       {@code _OTHER}) and {@code db.response.status_code} (the server's error number, when there is one).
 * </ul>
 *
 * <pre>{@code
 * Pool pool = Staunch.builder().url(url).tracer(StaunchTracing.create(openTelemetry)).open();
 * dataSource.setOpenTelemetry(openTelemetry);   // JDBC; setTraceStatementText(true) opts in to db.query.text
 * }</pre>
 *
 * <p>The library calls it on the borrowing thread, during the call (get, query, reading a streamed answer),
 * a start and its end in pairs; nothing it throws reaches the library. A statement whose end comes on
 * another thread (a streamed answer whose connection the GC's Cleaner returned) is ended there, and its
 * scope closed at the next start or end on the thread that began it.
 *
 * <p>OpenTelemetry's API is an optional dependency of staunch: only this package names it, and nothing in
 * staunch loads this class unless the application creates one (or gives a data source its OpenTelemetry).
 */
public final class StaunchTracing implements TraceListener {
    /** The instrumentation scope's name. */
    public static final String INSTRUMENTATION_NAME = "dev.staunch";

    static final AttributeKey<String> DB_SYSTEM_NAME = AttributeKey.stringKey("db.system.name");
    static final AttributeKey<String> POOL_NAME = AttributeKey.stringKey("db.client.connection.pool.name");
    static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
    static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
    static final AttributeKey<String> QUERY_TEXT = AttributeKey.stringKey("db.query.text");
    static final AttributeKey<String> STATUS_CODE = AttributeKey.stringKey("db.response.status_code");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

    private final Tracer tracer;
    private final boolean statementText;
    /** The spans begun on each thread and not yet closed there, innermost last. */
    private final ThreadLocal<ArrayDeque<Open>> open = ThreadLocal.withInitial(ArrayDeque::new);
    /** The open statements by pool and connection, for an end heard on another thread. */
    private final Map<String, Open> statements = new ConcurrentHashMap<>();

    private StaunchTracing(Builder b) {
        this.tracer = b.openTelemetry.getTracer(INSTRUMENTATION_NAME);
        this.statementText = b.statementText;
    }

    /** Spans on {@code openTelemetry}'s tracer, without the statements' text. */
    public static StaunchTracing create(OpenTelemetry openTelemetry) {
        return builder(openTelemetry).build();
    }

    public static Builder builder(OpenTelemetry openTelemetry) {
        return new Builder(openTelemetry);
    }

    /**
     * For {@code StaunchDataSource.setOpenTelemetry(Object)}, whose parameter is an {@code Object} so that the
     * data source's own methods name no OpenTelemetry type (Spring's binders reflect over them, with or without
     * OpenTelemetry on the class path): {@code openTelemetry} must be an {@link OpenTelemetry}.
     */
    public static StaunchTracing forOpenTelemetry(Object openTelemetry, boolean statementText) {
        if (!(openTelemetry instanceof OpenTelemetry)) {
            throw new IllegalArgumentException("not an io.opentelemetry.api.OpenTelemetry: "
                    + (openTelemetry == null ? "null" : openTelemetry.getClass().getName()));
        }
        return builder((OpenTelemetry) openTelemetry).statementText(statementText).build();
    }

    public static final class Builder {
        private final OpenTelemetry openTelemetry;
        private boolean statementText;

        private Builder(OpenTelemetry openTelemetry) {
            if (openTelemetry == null) {
                throw new IllegalArgumentException("openTelemetry must not be null");
            }
            this.openTelemetry = openTelemetry;
        }

        /**
         * Whether statement spans carry {@code db.query.text}, the statement as the application wrote it
         * (default false: it may hold values, which staunch otherwise never puts in a span).
         */
        public Builder statementText(boolean on) {
            this.statementText = on;
            return this;
        }

        public StaunchTracing build() {
            return new StaunchTracing(this);
        }
    }

    @Override
    public boolean statementText() {
        return statementText;
    }

    /** A span begun here, its scope, and whether its end came (perhaps on another thread). */
    private static final class Open {
        final boolean acquire;
        final String key;
        final Span span;
        final Scope scope;
        volatile boolean ended;

        Open(boolean acquire, String key, Span span, Scope scope) {
            this.acquire = acquire;
            this.key = key;
            this.span = span;
            this.scope = scope;
        }
    }

    @Override
    public void onTrace(TraceEvent e) {
        try {
            ArrayDeque<Open> stack = open.get();
            sweep(stack);
            if (e.kind().isStart()) {
                start(stack, e);
            } else {
                end(stack, e);
            }
        } catch (Throwable ignored) {
            // a tracer must not fail the borrow or the statement (and nothing may reach the library)
        }
    }

    private void start(ArrayDeque<Open> stack, TraceEvent e) {
        boolean acquire = e.kind().isAcquire();
        SpanBuilder b = tracer.spanBuilder(acquire ? "staunch.acquire" : "staunch.statement")
                .setSpanKind(acquire ? SpanKind.INTERNAL : SpanKind.CLIENT)
                .setParent(Context.current())
                .setAttribute(DB_SYSTEM_NAME, "mysql")
                .setAttribute(POOL_NAME, e.pool());
        if (!acquire) {
            server(b, e.server());
            if (statementText && e.statement() != null) {
                b.setAttribute(QUERY_TEXT, e.statement());
            }
        }
        Span span = b.startSpan();
        String key = acquire ? null : e.pool() + '#' + e.connectionId();
        Open o = new Open(acquire, key, span, span.makeCurrent());
        stack.addLast(o);
        if (key != null) {
            statements.put(key, o);
        }
    }

    private void end(ArrayDeque<Open> stack, TraceEvent e) {
        boolean acquire = e.kind().isAcquire();
        String key = acquire ? null : e.pool() + '#' + e.connectionId();
        Open found = null;
        for (Iterator<Open> it = stack.descendingIterator(); it.hasNext(); ) {
            Open o = it.next();
            if (!o.ended && o.acquire == acquire && (acquire || o.key.equals(key))) {
                found = o;
                break;
            }
        }
        if (found == null && key != null) {
            found = statements.get(key); // begun on another thread: end it here, its thread closes its scope
        }
        if (found == null) {
            return;
        }
        if (key != null) {
            statements.remove(key, found);
        }
        Span span = found.span;
        if (acquire && !e.server().isEmpty()) {
            server(span, e.server());
        }
        if (e.error() != null) {
            String code = e.errorCode() != 0 ? Integer.toString(e.errorCode()) : null;
            if (code != null) {
                span.setAttribute(STATUS_CODE, code);
            }
            span.setAttribute(ERROR_TYPE, code != null ? code : "_OTHER");
            span.setStatus(StatusCode.ERROR, e.error());
        }
        found.ended = true;
        span.end();
        sweep(stack);
    }

    /** Closes the scopes of the innermost spans that ended, innermost first (scopes close in order). */
    private static void sweep(ArrayDeque<Open> stack) {
        while (!stack.isEmpty() && stack.peekLast().ended) {
            stack.removeLast().scope.close();
        }
    }

    /** server.address and server.port from "host:port", "[v6]:port" or a socket path. */
    private static void server(SpanBuilder b, String server) {
        String[] hp = hostPort(server);
        if (hp != null) {
            b.setAttribute(SERVER_ADDRESS, hp[0]);
            if (hp[1] != null) {
                b.setAttribute(SERVER_PORT, Long.parseLong(hp[1]));
            }
        }
    }

    private static void server(Span s, String server) {
        String[] hp = hostPort(server);
        if (hp != null) {
            s.setAttribute(SERVER_ADDRESS, hp[0]);
            if (hp[1] != null) {
                s.setAttribute(SERVER_PORT, Long.parseLong(hp[1]));
            }
        }
    }

    static String[] hostPort(String server) {
        if (server == null || server.isEmpty()) {
            return null;
        }
        int colon = server.lastIndexOf(':');
        String port = colon > 0 ? server.substring(colon + 1) : "";
        if (server.charAt(0) != '/' && !port.isEmpty() && port.length() <= 5
                && port.chars().allMatch(c -> c >= '0' && c <= '9')) {
            String host = server.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            return new String[] {host, port};
        }
        return new String[] {server, null};
    }
}
