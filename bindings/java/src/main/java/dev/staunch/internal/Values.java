package dev.staunch.internal;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * The one value converter of both faces: a column's natural value (what
 * {@code Rows.getObject} gives: null, Long, BigInteger, Double, BigDecimal,
 * String, byte[], LocalDate, LocalDateTime, Duration; rows made in the JDBC
 * driver may also hold a Boolean) to what a getter asks for. Each face keeps
 * its own error: a conversion that cannot be made throws {@link Mismatch},
 * which {@code Rows} turns into a {@code StaunchException} and the JDBC
 * result set into an {@code SQLDataException} with its SQLSTATE. Where the
 * faces differ on purpose (the native API's integers are exact, JDBC's
 * truncate as Connector/J does; JDBC reads text as dates and BIT as numbers)
 * there is one method for each rule, named after it.
 */
public final class Values {
    private Values() {}

    /** Why a value cannot be read as asked. */
    public enum Kind {
        /** The value's type does not convert to the one asked for. */
        TYPE,
        /** It converts, but the result does not fit (the message says what). */
        RANGE,
        /** A TIME that is not a time of day (negative, or 24 hours or more). */
        NOT_A_TIME_OF_DAY
    }

    /** A conversion that cannot be made; each face wraps it in its own error type. No stack trace. */
    public static final class Mismatch extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final Kind kind;

        Mismatch(Kind kind, String message) {
            super(message, null, false, false);
            this.kind = kind;
        }

        public Kind kind() {
            return kind;
        }
    }

    private static Mismatch type() {
        return new Mismatch(Kind.TYPE, "");
    }

    private static Mismatch range(String what) {
        return new Mismatch(Kind.RANGE, what);
    }

    // ---- numbers ----------------------------------------------------------

    /**
     * The native API's integer: exact. An integral Long, BigDecimal or Double,
     * or integer text; a fraction or a value past a long is RANGE (a Double
     * past one is TYPE).
     */
    public static long exactLong(Object v) {
        if (v instanceof Long) {
            return (Long) v;
        } else if (v instanceof BigInteger) {
            throw range(v + " does not fit in a long");
        } else if (v instanceof BigDecimal) {
            try {
                return ((BigDecimal) v).longValueExact();
            } catch (ArithmeticException e) {
                throw range(v + " is not a long");
            }
        } else if (v instanceof Double && (Double) v == Math.rint((Double) v) && Math.abs((Double) v) < 0x1p63) {
            return ((Double) v).longValue();
        } else if (v instanceof String) {
            try {
                return Long.parseLong(((String) v).trim());
            } catch (NumberFormatException e) {
                throw type();
            }
        }
        throw type();
    }

    /**
     * JDBC's integer in {@code min..max}: a fraction is cut toward zero (as
     * Connector/J does), a Boolean is 0 or 1, a BIT(n) of up to 8 bytes is its
     * big-endian number; a value outside the range is RANGE.
     */
    public static long integer(Object v, long min, long max, String to) {
        long r;
        if (v instanceof Long) {
            r = (Long) v;
        } else if (v instanceof BigInteger) {
            throw range(v + " is out of range for " + to);
        } else if (v instanceof Double) {
            double d = (Double) v;
            if (Double.isNaN(d) || d < min || d > max) {
                throw range(v + " is out of range for " + to);
            }
            r = (long) d;
        } else if (v instanceof BigDecimal) {
            BigDecimal t = ((BigDecimal) v).setScale(0, RoundingMode.DOWN);
            if (t.compareTo(BigDecimal.valueOf(min)) < 0 || t.compareTo(BigDecimal.valueOf(max)) > 0) {
                throw range(v + " is out of range for " + to);
            }
            r = t.longValue();
        } else if (v instanceof Boolean) {
            r = (Boolean) v ? 1 : 0;
        } else if (v instanceof String) {
            try {
                r = new BigDecimal(((String) v).trim()).setScale(0, RoundingMode.DOWN).longValueExact();
            } catch (NumberFormatException | ArithmeticException e) {
                throw type();
            }
        } else if (v instanceof byte[] && ((byte[]) v).length <= 8) {
            r = 0;
            for (byte y : (byte[]) v) {
                r = (r << 8) | (y & 0xFF);
            }
        } else {
            throw type();
        }
        if (r < min || r > max) {
            throw range(r + " is out of range for " + to);
        }
        return r;
    }

    /** A number, a Boolean (0 or 1) or numeric text as a double. */
    public static double toDouble(Object v) {
        if (v instanceof Number) {
            return ((Number) v).doubleValue();
        } else if (v instanceof Boolean) {
            return (Boolean) v ? 1 : 0;
        } else if (v instanceof String) {
            try {
                return Double.parseDouble(((String) v).trim());
            } catch (NumberFormatException e) {
                throw type();
            }
        }
        throw type();
    }

    /** A DECIMAL, an integer, a double (its shortest text) or numeric text as a BigDecimal. */
    public static BigDecimal decimal(Object v) {
        if (v instanceof BigDecimal) {
            return (BigDecimal) v;
        } else if (v instanceof Long) {
            return BigDecimal.valueOf((Long) v);
        } else if (v instanceof BigInteger) {
            return new BigDecimal((BigInteger) v);
        } else if (v instanceof Double) {
            return BigDecimal.valueOf((Double) v);
        } else if (v instanceof String) {
            try {
                return new BigDecimal(((String) v).trim());
            } catch (NumberFormatException e) {
                throw type();
            }
        }
        throw type();
    }

    /** A BIGINT UNSIGNED as it is, anything {@link #decimal} reads when it is a whole number. */
    public static BigInteger bigInteger(Object v) {
        if (v instanceof BigInteger) {
            return (BigInteger) v;
        }
        try {
            return decimal(v).toBigIntegerExact();
        } catch (ArithmeticException e) {
            throw range(v + " is not a whole number");
        }
    }

    /** JDBC's boolean: a number is true unless 0, a one-byte BIT its byte, text 1/true/y/yes or 0/false/n/no/"". */
    public static boolean bool(Object v) {
        if (v instanceof Long) {
            return (Long) v != 0;
        } else if (v instanceof BigInteger) {
            return ((BigInteger) v).signum() != 0;
        } else if (v instanceof Double) {
            return (Double) v != 0;
        } else if (v instanceof BigDecimal) {
            return ((BigDecimal) v).signum() != 0;
        } else if (v instanceof Boolean) {
            return (Boolean) v;
        } else if (v instanceof byte[] && ((byte[]) v).length == 1) {
            return ((byte[]) v)[0] != 0;
        } else if (v instanceof String) {
            switch (((String) v).trim().toLowerCase(java.util.Locale.ROOT)) {
                case "1":
                case "true":
                case "y":
                case "yes":
                    return true;
                case "0":
                case "false":
                case "n":
                case "no":
                case "":
                    return false;
                default:
                    throw type();
            }
        }
        throw type();
    }

    // ---- text and bytes ---------------------------------------------------

    /** Any value as Java text: bytes as UTF-8, a DECIMAL without exponent, the rest by toString (ISO dates, Duration's PT form). */
    public static String string(Object v) {
        if (v instanceof String) {
            return (String) v;
        } else if (v instanceof byte[]) {
            return new String((byte[]) v, StandardCharsets.UTF_8);
        } else if (v instanceof BigDecimal) {
            return ((BigDecimal) v).toPlainString();
        }
        return v.toString();
    }

    private static final DateTimeFormatter DATETIME_TEXT = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss[.SSSSSS]");
    private static final DateTimeFormatter DATETIME_TEXT_WHOLE = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    /** Any value as the server writes it: as {@link #string}, but DATETIME as {@code yyyy-MM-dd HH:mm:ss[.ffffff]} and TIME as {@code [-]h:mm:ss[.ffffff]}. */
    public static String sqlText(Object v) {
        if (v instanceof LocalDateTime) {
            LocalDateTime t = (LocalDateTime) v;
            return t.format(t.getNano() == 0 ? DATETIME_TEXT_WHOLE : DATETIME_TEXT);
        } else if (v instanceof Duration) {
            return timeText((Duration) v);
        }
        return string(v);
    }

    /** A TIME as the server writes it: {@code [-]hh:mm:ss[.ffffff]}, hours past 24 included. */
    public static String timeText(Duration d) {
        Duration a = d.abs();
        long s = a.getSeconds();
        String base = String.format("%s%02d:%02d:%02d", d.isNegative() ? "-" : "", s / 3600, (s / 60) % 60, s % 60);
        return a.getNano() == 0 ? base : base + String.format(".%06d", a.getNano() / 1000);
    }

    /** Bytes as they are, text as UTF-8. */
    public static byte[] bytes(Object v) {
        if (v instanceof byte[]) {
            return (byte[]) v;
        } else if (v instanceof String) {
            return ((String) v).getBytes(StandardCharsets.UTF_8);
        }
        throw type();
    }

    // ---- dates and times --------------------------------------------------

    /** A DATETIME, or a DATE at its start. */
    public static LocalDateTime dateTime(Object v) {
        if (v instanceof LocalDateTime) {
            return (LocalDateTime) v;
        } else if (v instanceof LocalDate) {
            return ((LocalDate) v).atStartOfDay();
        }
        throw type();
    }

    /** As {@link #dateTime}, and text in {@code yyyy-MM-dd[ HH:mm:ss[.f]]} (JDBC's getTimestamp of a VARCHAR). */
    public static LocalDateTime dateTimeOrText(Object v) {
        if (v instanceof String) {
            try {
                String t = ((String) v).trim();
                return t.length() <= 10 ? LocalDate.parse(t).atStartOfDay() : LocalDateTime.parse(t.replace(' ', 'T'));
            } catch (DateTimeParseException e) {
                throw type();
            }
        }
        return dateTime(v);
    }

    /** A DATE, or the date of a DATETIME. */
    public static LocalDate date(Object v) {
        return v instanceof LocalDate ? (LocalDate) v : dateTime(v).toLocalDate();
    }

    /** A TIME as a signed duration (the server sends up to 838:59:59.999999 either way). */
    public static Duration duration(Object v) {
        if (v instanceof Duration) {
            return (Duration) v;
        }
        throw type();
    }

    /** Whether a TIME is a time of day (0 up to 24 hours), so a java.sql.Time or LocalTime can hold it. */
    public static boolean isTimeOfDay(Duration d) {
        return !d.isNegative() && d.compareTo(Duration.ofDays(1)) < 0;
    }

    /** A TIME of day, the time of a DATETIME, or text in {@code HH:mm[:ss[.f]]}; a TIME outside a day is NOT_A_TIME_OF_DAY. */
    public static LocalTime timeOfDay(Object v) {
        if (v instanceof Duration) {
            Duration d = (Duration) v;
            if (!isTimeOfDay(d)) {
                throw new Mismatch(Kind.NOT_A_TIME_OF_DAY, "TIME " + timeText(d) + " is not a time of day");
            }
            return LocalTime.ofNanoOfDay(d.toNanos());
        } else if (v instanceof LocalDateTime) {
            return ((LocalDateTime) v).toLocalTime();
        } else if (v instanceof String) {
            try {
                return LocalTime.parse(((String) v).trim());
            } catch (DateTimeParseException e) {
                throw type();
            }
        }
        throw type();
    }
}
