package dev.staunch;

/**
 * Hears the start and the end of each borrow and each statement of a pool, <b>on the thread that
 * borrows or runs it, during that call</b> ({@code staunch_options_set_tracer}): a start and its end
 * come in pairs, in order, so a listener can open a span at the start and close it at the end.
 * {@link dev.staunch.otel.StaunchTracing} is the OpenTelemetry one.
 *
 * <p>It must be quick, must not block and must not use the pool or the connection concerned. An
 * exception it throws is caught and logged (it never crosses into C). A streamed answer's statement
 * ends when it is read to its end, at the next statement on its connection, or when the connection
 * goes back: usually on the same thread, but on the Cleaner's thread for a connection left to the GC.
 */
public interface TraceListener {
    void onTrace(TraceEvent event);

    /**
     * Whether {@link TraceEvent#statement()} should carry the statement's text. False by default: the
     * text may hold what the application put in it, so it is copied out of the library only for a
     * listener that asks (it is read once, when the pool opens).
     */
    default boolean statementText() {
        return false;
    }
}
