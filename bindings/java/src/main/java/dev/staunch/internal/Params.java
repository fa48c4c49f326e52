package dev.staunch.internal;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.UUID;

/** Java values to a staunch_param array (in the caller's scope); the JNI path's twin of the FFM Params. */
public final class Params {
    private Params() {}

    public static final int NULL = 0, INT64 = 1, UINT64 = 2, DOUBLE = 3, TEXT = 4, BYTES = 5, DATE = 6,
            DATETIME = 7, TIME = 8, DECIMAL = 9;

    private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    /** The array (NULL for none). Unsupported types: IllegalArgumentException naming the parameter. */
    public static Mem.Seg encode(Mem.Scope a, Object[] params) {
        if (params == null || params.length == 0) {
            return Mem.Seg.NULL;
        }
        Mem.Seg arr = a.allocate(Abi.VALUE_SIZE * params.length);
        for (int i = 0; i < params.length; i++) {
            set(a, arr, i * Abi.VALUE_SIZE, params[i], i + 1);
        }
        return arr;
    }

    private static void set(Mem.Scope a, Mem.Seg p, long o, Object v, int position) {
        if (v == null) {
            p.putInt(o + Abi.V_TYPE, NULL);
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            i64(p, o, ((Number) v).longValue());
        } else if (v instanceof Boolean) {
            i64(p, o, (Boolean) v ? 1 : 0);
        } else if (v instanceof Double || v instanceof Float) {
            f64(p, o, ((Number) v).doubleValue());
        } else if (v instanceof BigInteger) {
            BigInteger b = (BigInteger) v;
            if (b.signum() >= 0 && b.compareTo(U64_MAX) <= 0) {
                if (b.bitLength() < 64) {
                    i64(p, o, b.longValue());
                } else {
                    p.putInt(o + Abi.V_TYPE, UINT64);
                    p.putLong(o + Abi.V_U64, b.longValue());
                }
            } else if (b.bitLength() < 64) {
                i64(p, o, b.longValue());
            } else {
                text(a, p, o, b.toString());
            }
        } else if (v instanceof BigDecimal) {
            // Exact: the server reads it as a DECIMAL (checked by the library: at most 65 digits, 38 after the point).
            text(a, p, o, ((BigDecimal) v).toPlainString(), DECIMAL);
        } else if (v instanceof String || v instanceof Character || v instanceof UUID) {
            text(a, p, o, v.toString());
        } else if (v instanceof byte[]) {
            byte[] b = (byte[]) v;
            p.putInt(o + Abi.V_TYPE, BYTES);
            p.putAddress(o + Abi.V_PTR, a.allocateFrom(b).address());
            p.putLong(o + Abi.V_LEN, b.length);
        } else if (v instanceof LocalDate) {
            LocalDate d = (LocalDate) v;
            p.putInt(o + Abi.V_TYPE, DATE);
            datetime(p, o, d.getYear(), d.getMonthValue(), d.getDayOfMonth(), 0, 0, 0, 0, position);
        } else if (v instanceof LocalDateTime) {
            LocalDateTime t = (LocalDateTime) v;
            p.putInt(o + Abi.V_TYPE, DATETIME);
            datetime(p, o, t.getYear(), t.getMonthValue(), t.getDayOfMonth(), t.getHour(), t.getMinute(),
                    t.getSecond(), t.getNano() / 1000, position);
        } else if (v instanceof java.sql.Timestamp) {
            set(a, p, o, ((java.sql.Timestamp) v).toLocalDateTime(), position);
        } else if (v instanceof java.sql.Date) {
            set(a, p, o, ((java.sql.Date) v).toLocalDate(), position);
        } else if (v instanceof java.sql.Time) {
            set(a, p, o, ((java.sql.Time) v).toLocalTime(), position);
        } else if (v instanceof java.util.Date) {
            throw new IllegalArgumentException("parameter " + position
                    + ": java.util.Date has no time zone to interpret it in; pass a java.time.LocalDateTime"
                    + " (or java.sql.Timestamp)");
        } else if (v instanceof LocalTime) {
            time(p, o, Duration.ofNanos(((LocalTime) v).toNanoOfDay()), position);
        } else if (v instanceof Duration) {
            time(p, o, (Duration) v, position);
        } else if (v instanceof Enum<?>) {
            text(a, p, o, ((Enum<?>) v).name());
        } else {
            throw new IllegalArgumentException("parameter " + position + ": staunch cannot send a "
                    + v.getClass().getName() + " (use null, Long/Integer/Short/Byte/Boolean, Double/Float, "
                    + "BigInteger, BigDecimal, String, byte[], LocalDate, LocalDateTime, LocalTime, Duration)");
        }
    }

    private static void i64(Mem.Seg p, long o, long v) {
        p.putInt(o + Abi.V_TYPE, INT64);
        p.putLong(o + Abi.V_I64, v);
    }

    private static void f64(Mem.Seg p, long o, double v) {
        p.putInt(o + Abi.V_TYPE, DOUBLE);
        p.putDouble(o + Abi.V_F64, v);
    }

    private static void text(Mem.Scope a, Mem.Seg p, long o, String s) {
        text(a, p, o, s, TEXT);
    }

    private static void text(Mem.Scope a, Mem.Seg p, long o, String s, int kind) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        p.putInt(o + Abi.V_TYPE, kind);
        p.putAddress(o + Abi.V_PTR, a.allocateFrom(b).address());
        p.putLong(o + Abi.V_LEN, b.length);
    }

    /**
     * The fields as the C struct holds them. The library checks the range
     * (year up to 9999) and fails with OUT_OF_RANGE naming the field; here
     * only a year the struct's u16 cannot carry is refused.
     */
    private static void datetime(Mem.Seg p, long o0, int y, int mo, int d, int h, int mi, int s, int us, int position) {
        if (y < 0 || y > 0xFFFF) {
            throw new IllegalArgumentException("parameter " + position + ": year " + y + " is outside 0..9999");
        }
        long o = o0 + Abi.V_DATETIME;
        p.putShort(o + Abi.DT_YEAR, (short) y);
        p.putByte(o + Abi.DT_MONTH, (byte) mo);
        p.putByte(o + Abi.DT_DAY, (byte) d);
        p.putByte(o + Abi.DT_HOUR, (byte) h);
        p.putByte(o + Abi.DT_MINUTE, (byte) mi);
        p.putByte(o + Abi.DT_SECOND, (byte) s);
        p.putInt(o + Abi.DT_MICRO, us);
    }

    /**
     * A TIME as days, hours, minutes, seconds and microseconds, in the
     * server's range (838:59:59.999999 either way). The library refuses
     * the same range (so both faces agree); this check stays because a
     * Duration's days may not fit the struct's 32 bits, where a cast would
     * wrap to a small, valid-looking TIME.
     */
    private static void time(Mem.Seg p, long o0, Duration d, int position) {
        boolean neg = d.isNegative();
        Duration abs = d.abs();
        long totalSeconds = abs.getSeconds();
        long days = totalSeconds / 86400;
        if (totalSeconds > 838L * 3600 + 59 * 60 + 59) {
            throw new IllegalArgumentException("parameter " + position + ": a TIME is at most 838:59:59, not " + d);
        }
        long o = o0 + Abi.V_TIME;
        p.putInt(o0 + Abi.V_TYPE, TIME);
        p.putBoolean(o + Abi.TM_NEG, neg);
        p.putInt(o + Abi.TM_DAYS, (int) days);
        p.putByte(o + Abi.TM_HOURS, (byte) ((totalSeconds / 3600) % 24));
        p.putByte(o + Abi.TM_MINUTES, (byte) ((totalSeconds / 60) % 60));
        p.putByte(o + Abi.TM_SECONDS, (byte) (totalSeconds % 60));
        p.putInt(o + Abi.TM_MICRO, abs.getNano() / 1000);
    }
}
