package dev.staunch.internal;

import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.MemorySegment;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.UUID;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/** Java values to a staunch_param array (in the caller's arena). */
public final class Params {
    private Params() {}

    public static final int NULL = 0, INT64 = 1, UINT64 = 2, DOUBLE = 3, TEXT = 4, BYTES = 5, DATE = 6,
            DATETIME = 7, TIME = 8, DECIMAL = 9;

    private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    /** The array (NULL for none). Unsupported types: IllegalArgumentException naming the parameter. */
    public static MemorySegment encode(SegmentAllocator a, Object[] params) {
        if (params == null || params.length == 0) {
            return MemorySegment.NULL;
        }
        long sz = Native.PARAM.byteSize();
        MemorySegment arr = a.allocate(sz * params.length, 8);
        for (int i = 0; i < params.length; i++) {
            set(a, arr.asSlice(i * sz, sz), params[i], i + 1);
        }
        return arr;
    }

    private static void set(SegmentAllocator a, MemorySegment p, Object v, int position) {
        switch (v) {
            case null -> p.set(JAVA_INT, Native.V_TYPE, NULL);
            case Long l -> i64(p, l);
            case Integer x -> i64(p, x);
            case Short x -> i64(p, x);
            case Byte x -> i64(p, x);
            case Boolean b -> i64(p, b ? 1 : 0);
            case Double d -> f64(p, d);
            case Float f -> f64(p, f);
            case BigInteger b -> {
                if (b.signum() >= 0 && b.compareTo(U64_MAX) <= 0) {
                    if (b.bitLength() < 64) {
                        i64(p, b.longValue());
                    } else {
                        p.set(JAVA_INT, Native.V_TYPE, UINT64);
                        p.set(JAVA_LONG, Native.V_U64, b.longValue());
                    }
                } else if (b.bitLength() < 64) {
                    i64(p, b.longValue());
                } else {
                    text(a, p, b.toString());
                }
            }
            // Exact: the server reads it as a DECIMAL (checked by the library: at most 65 digits, 38 after the point).
            case BigDecimal d -> text(a, p, d.toPlainString(), DECIMAL);
            case String s -> text(a, p, s);
            case Character c -> text(a, p, c.toString());
            case UUID u -> text(a, p, u.toString());
            case byte[] b -> {
                p.set(JAVA_INT, Native.V_TYPE, BYTES);
                MemorySegment d = b.length == 0 ? MemorySegment.NULL : a.allocateFrom(JAVA_BYTE, b);
                p.set(ADDRESS, Native.V_PTR, d);
                p.set(JAVA_LONG, Native.V_LEN, b.length);
            }
            case LocalDate d -> {
                p.set(JAVA_INT, Native.V_TYPE, DATE);
                datetime(p, d.getYear(), d.getMonthValue(), d.getDayOfMonth(), 0, 0, 0, 0, position);
            }
            case LocalDateTime t -> {
                p.set(JAVA_INT, Native.V_TYPE, DATETIME);
                datetime(p, t.getYear(), t.getMonthValue(), t.getDayOfMonth(), t.getHour(), t.getMinute(),
                        t.getSecond(), t.getNano() / 1000, position);
            }
            case java.sql.Timestamp t -> set(a, p, t.toLocalDateTime(), position);
            case java.sql.Date d -> set(a, p, d.toLocalDate(), position);
            case java.sql.Time t -> set(a, p, t.toLocalTime(), position);
            case java.util.Date d -> throw new IllegalArgumentException("parameter " + position
                    + ": java.util.Date has no time zone to interpret it in; pass a java.time.LocalDateTime"
                    + " (or java.sql.Timestamp)");
            case LocalTime t -> time(p, Duration.ofNanos(t.toNanoOfDay()), position);
            case Duration d -> time(p, d, position);
            case Enum<?> e -> text(a, p, e.name());
            default -> throw new IllegalArgumentException("parameter " + position + ": staunch cannot send a "
                    + v.getClass().getName() + " (use null, Long/Integer/Short/Byte/Boolean, Double/Float, "
                    + "BigInteger, BigDecimal, String, byte[], LocalDate, LocalDateTime, LocalTime, Duration)");
        }
    }

    private static void i64(MemorySegment p, long v) {
        p.set(JAVA_INT, Native.V_TYPE, INT64);
        p.set(JAVA_LONG, Native.V_I64, v);
    }

    private static void f64(MemorySegment p, double v) {
        p.set(JAVA_INT, Native.V_TYPE, DOUBLE);
        p.set(JAVA_DOUBLE, Native.V_F64, v);
    }

    private static void text(SegmentAllocator a, MemorySegment p, String s) {
        text(a, p, s, TEXT);
    }

    private static void text(SegmentAllocator a, MemorySegment p, String s, int kind) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        p.set(JAVA_INT, Native.V_TYPE, kind);
        p.set(ADDRESS, Native.V_PTR, b.length == 0 ? MemorySegment.NULL : a.allocateFrom(JAVA_BYTE, b));
        p.set(JAVA_LONG, Native.V_LEN, b.length);
    }

    private static void datetime(MemorySegment p, int y, int mo, int d, int h, int mi, int s, int us, int position) {
        if (y < 0 || y > 9999) {
            throw new IllegalArgumentException("parameter " + position + ": year " + y + " is outside 0..9999");
        }
        long o = Native.V_DATETIME;
        p.set(JAVA_SHORT, o + Native.DT_YEAR, (short) y);
        p.set(JAVA_BYTE, o + Native.DT_MONTH, (byte) mo);
        p.set(JAVA_BYTE, o + Native.DT_DAY, (byte) d);
        p.set(JAVA_BYTE, o + Native.DT_HOUR, (byte) h);
        p.set(JAVA_BYTE, o + Native.DT_MINUTE, (byte) mi);
        p.set(JAVA_BYTE, o + Native.DT_SECOND, (byte) s);
        p.set(JAVA_INT, o + Native.DT_MICRO, us);
    }

    private static void time(MemorySegment p, Duration d, int position) {
        boolean neg = d.isNegative();
        Duration abs = d.abs();
        long totalSeconds = abs.getSeconds();
        long days = totalSeconds / 86400;
        if (totalSeconds > 838L * 3600 + 59 * 60 + 59) {
            throw new IllegalArgumentException("parameter " + position + ": a TIME is at most 838:59:59, not " + d);
        }
        long o = Native.V_TIME;
        p.set(JAVA_INT, Native.V_TYPE, TIME);
        p.set(JAVA_BOOLEAN, o + Native.TM_NEG, neg);
        p.set(JAVA_INT, o + Native.TM_DAYS, (int) days);
        p.set(JAVA_BYTE, o + Native.TM_HOURS, (byte) ((totalSeconds / 3600) % 24));
        p.set(JAVA_BYTE, o + Native.TM_MINUTES, (byte) ((totalSeconds / 60) % 60));
        p.set(JAVA_BYTE, o + Native.TM_SECONDS, (byte) (totalSeconds % 60));
        p.set(JAVA_INT, o + Native.TM_MICRO, abs.getNano() / 1000);
    }
}
