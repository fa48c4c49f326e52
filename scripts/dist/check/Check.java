// What scripts/dist-check.sh runs with only the jar from dist/maven on the
// class path (resolved by Maven into a fresh local repository, no
// STAUNCH_LIBRARY: the library comes out of the jar): open a pool on
// args[0], borrow, query with a parameter, cancel a running statement from
// another thread (Status.CANCELLED, the connection goes on), return the
// connection, close the pool.
import dev.staunch.Conn;
import dev.staunch.Pool;
import dev.staunch.Rows;
import dev.staunch.Status;
import dev.staunch.Staunch;
import dev.staunch.StaunchException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

public class Check {
    static long one(Conn c, String sql, Object arg) {
        try (Rows r = c.query(sql, arg)) {
            if (!r.next()) throw new AssertionError(sql + ": no row");
            return r.getLong(0);
        }
    }

    public static void main(String[] args) throws Exception {
        if (System.getenv("STAUNCH_LIBRARY") != null) throw new AssertionError("STAUNCH_LIBRARY is set");
        try (Pool pool = Staunch.open(args[0]); Conn c = pool.get(Duration.ofSeconds(5))) {
            if (one(c, "SELECT ? + 1", 41) != 42) throw new AssertionError("SELECT 41 + 1");
            AtomicBoolean found = new AtomicBoolean();
            Thread canceller = new Thread(() -> {
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    return;
                }
                found.set(c.cancel());
            });
            canceller.start();
            try {
                one(c, "SELECT SLEEP(?)", 30);
                throw new AssertionError("the statement was not cancelled");
            } catch (StaunchException e) {
                if (e.status() != Status.CANCELLED) throw e;
            }
            canceller.join();
            if (!found.get()) throw new AssertionError("the cancel found no statement running");
            if (one(c, "SELECT ? * 2", 21) != 42) throw new AssertionError("after the cancel");
        }
        String from = Staunch.class.getProtectionDomain().getCodeSource().getLocation().getPath();
        System.out.println("staunch " + Staunch.version() + " (JVM, " + from
                + "): borrowed, queried, cancelled a statement, closed");
    }
}
