package io.rota.client.recipes;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.Month;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.TemporalAdjusters;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A cron expression as a {@link FireSchedule}: Spring's six fields ({@code second minute hour day-of-month
 * month day-of-week}) or crontab's five (no seconds: second 0), read in one time zone. See
 * {@link FireSchedule#cron(String, ZoneId)} for the syntax and docs/jobs.md for the rules at DST changes.
 *
 * <p>Fire times are found on the zone's wall clock, then mapped to instants with three rules (design F1):
 * <ul>
 *   <li>a wall time that exists once is that instant;</li>
 *   <li>a wall time skipped by a gap (spring forward) fires at the instant it would have had with the offset
 *       before the gap, i.e. shifted later by the gap's length (02:30 in Berlin's March gap is 03:30 CEST),
 *       as {@link java.time.ZonedDateTime} resolves it and as {@link FireSchedule#daily} does;</li>
 *   <li>a wall time repeated by an overlap (fall back) fires at its first occurrence; it fires at the second
 *       too only when the hour field is {@code *}, so "every 15 minutes" keeps its pace through the repeated
 *       hour while "02:30 every day" runs once (the rule of Vixie cron).</li>
 * </ul>
 * Day-of-month and day-of-week must both match, as in Spring's {@code CronExpression} (crontab matches
 * either when both are restricted: write one of them as {@code *} or {@code ?} to get its meaning).
 */
final class CronSchedule implements FireSchedule {

    /** An expression whose next fire time is further than this is refused (it would never fire in practice). */
    private static final int MAX_YEARS_AHEAD = 30;

    private static final String[] MONTHS = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT",
            "NOV", "DEC"};
    private static final String[] DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

    private final String expression;
    private final ZoneId zone;
    private final ZoneRules rules;
    private final BitSet seconds;
    private final BitSet minutes;
    private final BitSet hours;
    private final BitSet daysOfMonth;
    private final boolean lastDayOfMonth;
    private final BitSet months;
    /** Bits 1 (Monday) .. 7 (Sunday), as {@link DayOfWeek#getValue()}. */
    private final BitSet daysOfWeek;
    private final boolean everyHour;

    private CronSchedule(String expression, ZoneId zone, String[] f) {
        this.expression = expression;
        this.zone = zone;
        this.rules = zone.getRules();
        this.seconds = parse(f[0], "second", 0, 59, null);
        this.minutes = parse(f[1], "minute", 0, 59, null);
        this.hours = parse(f[2], "hour", 0, 23, null);
        this.lastDayOfMonth = f[3].equalsIgnoreCase("L");
        this.daysOfMonth = lastDayOfMonth ? new BitSet() : parse(f[3], "day-of-month", 1, 31, null);
        this.months = parse(f[4], "month", 1, 12, MONTHS);
        BitSet dow = parse(f[5], "day-of-week", 0, 7, DAYS);
        if (dow.get(0)) {
            dow.set(7);   // 0 and 7 are both Sunday
        }
        dow.clear(0);
        this.daysOfWeek = dow;
        this.everyHour = hours.cardinality() == 24;
        if (!possible()) {
            throw new IllegalArgumentException("cron expression \"" + expression + "\" never fires: no month in it "
                    + "has the day-of-month it asks for");
        }
    }

    /**
     * Parses {@code expression} (5 or 6 fields, or a macro such as {@code @daily}) for {@code zone}.
     *
     * @param expression the expression
     * @param zone       the zone whose wall clock it is read on
     * @return the schedule
     * @throws IllegalArgumentException naming the field that is wrong
     */
    static CronSchedule parse(String expression, ZoneId zone) {
        Objects.requireNonNull(expression, "expression");
        Objects.requireNonNull(zone, "zone");
        String e = macro(expression.trim());
        String[] f = e.split("\\s+");
        if (f.length == 5) {
            f = new String[] {"0", f[0], f[1], f[2], f[3], f[4]};
        } else if (f.length != 6) {
            throw new IllegalArgumentException("cron expression \"" + expression + "\" has " + f.length
                    + " fields; expected 6 (second minute hour day-of-month month day-of-week) or 5 (without"
                    + " the second), e.g. \"0 0 8 * * MON-FRI\"");
        }
        return new CronSchedule(expression.trim(), zone, f);
    }

    private static String macro(String e) {
        switch (e.toLowerCase(Locale.ROOT)) {
            case "@yearly":
            case "@annually":
                return "0 0 0 1 1 *";
            case "@monthly":
                return "0 0 0 1 * *";
            case "@weekly":
                return "0 0 0 * * SUN";
            case "@daily":
            case "@midnight":
                return "0 0 0 * * *";
            case "@hourly":
                return "0 0 * * * *";
            default:
                return e;
        }
    }

    @Override
    public Instant next(Instant after) {
        Objects.requireNonNull(after, "after");
        // Walk the zone's offset periods: within one, wall time and instant move together, so the first
        // matching wall time is the first fire time; past its end (a transition) look on from there.
        Instant from = after;
        boolean inclusive = false;
        Instant inGap = null;
        while (true) {
            ZoneOffset offset = rules.getOffset(from);
            ZoneOffsetTransition transition = rules.nextTransition(from);
            LocalDateTime wall = LocalDateTime.ofEpochSecond(from.getEpochSecond(), 0, offset);
            if (!inclusive || from.getNano() != 0) {
                wall = wall.plusSeconds(1);   // strictly after: the next whole second
            }
            LocalDateTime match = nextWall(wall);
            while (secondPassOfOverlap(match, offset)) {
                match = nextWall(match.plusSeconds(1));
            }
            Instant candidate = match.toInstant(offset);
            if (transition == null || candidate.isBefore(transition.getInstant())) {
                return inGap != null && inGap.isBefore(candidate) ? inGap : candidate;
            }
            if (transition.isGap() && match.isBefore(transition.getDateTimeAfter())) {
                // A wall time inside the gap fires with the offset before it (shifted by the gap's length);
                // wall times after the gap may still come first (02:30 shifted is 03:30, after 03:15).
                inGap = inGap == null || candidate.isBefore(inGap) ? candidate : inGap;
            }
            from = transition.getInstant();   // itself a possible fire time, with the offset after
            inclusive = true;
        }
    }

    /** A wall time of an overlap's repeated hour seen with the later (second) offset, and the hour is fixed. */
    private boolean secondPassOfOverlap(LocalDateTime wall, ZoneOffset offset) {
        if (everyHour) {
            return false;
        }
        List<ZoneOffset> valid = rules.getValidOffsets(wall);
        return valid.size() == 2 && offset.equals(valid.get(1));
    }

    /** The first wall time at or after {@code from} (whole seconds) that matches every field. */
    private LocalDateTime nextWall(LocalDateTime from) {
        LocalDate date = from.toLocalDate();
        LocalTime floor = from.toLocalTime();
        LocalDate limit = date.plusYears(MAX_YEARS_AHEAD);
        while (date.isBefore(limit)) {
            if (!months.get(date.getMonthValue())) {
                date = date.with(TemporalAdjusters.firstDayOfNextMonth());
                floor = LocalTime.MIDNIGHT;
                continue;
            }
            if (dayMatches(date)) {
                LocalTime t = nextTime(floor);
                if (t != null) {
                    return date.atTime(t);
                }
            }
            date = date.plusDays(1);
            floor = LocalTime.MIDNIGHT;
        }
        throw new IllegalStateException("cron expression \"" + expression + "\" has no fire time within "
                + MAX_YEARS_AHEAD + " years of " + from);
    }

    private boolean dayMatches(LocalDate date) {
        boolean dom = lastDayOfMonth ? date.getDayOfMonth() == date.lengthOfMonth() : daysOfMonth.get(date.getDayOfMonth());
        return dom && daysOfWeek.get(date.getDayOfWeek().getValue());
    }

    /** The first matching time of day at or after {@code floor}, or null if none is left that day. */
    private LocalTime nextTime(LocalTime floor) {
        for (int h = hours.nextSetBit(floor.getHour()); h >= 0; h = hours.nextSetBit(h + 1)) {
            int m0 = h == floor.getHour() ? floor.getMinute() : 0;
            for (int m = minutes.nextSetBit(m0); m >= 0; m = minutes.nextSetBit(m + 1)) {
                int s0 = h == floor.getHour() && m == floor.getMinute() ? floor.getSecond() : 0;
                int s = seconds.nextSetBit(s0);
                if (s >= 0) {
                    return LocalTime.of(h, m, s);
                }
            }
        }
        return null;
    }

    /** Whether some allowed month has an allowed day-of-month (the day-of-week then comes round in time). */
    private boolean possible() {
        for (int m = months.nextSetBit(1); m >= 0; m = months.nextSetBit(m + 1)) {
            int maxDay = Month.of(m).maxLength();
            if (lastDayOfMonth || daysOfMonth.nextSetBit(1) <= maxDay && daysOfMonth.nextSetBit(1) >= 1) {
                return true;
            }
        }
        return false;
    }

    /** One field: {@code *}, {@code ?}, values, names, ranges {@code a-b}, steps {@code x/n}, comma lists. */
    private static BitSet parse(String field, String name, int min, int max, String[] names) {
        BitSet bits = new BitSet(max + 1);
        for (String part : field.split(",", -1)) {
            String range = part;
            int step = 1;
            int slash = part.indexOf('/');
            if (slash >= 0) {
                range = part.substring(0, slash);
                step = number(part.substring(slash + 1), name, field);
                if (step < 1) {
                    throw bad(name, field, "a step must be at least 1");
                }
            }
            int lo;
            int hi;
            if (range.equals("*") || range.equals("?")) {
                lo = min;
                hi = max;
            } else {
                int dash = range.indexOf('-', 1);
                if (dash >= 0) {
                    lo = value(range.substring(0, dash), name, field, min, max, names);
                    hi = value(range.substring(dash + 1), name, field, min, max, names);
                    if (lo > hi) {
                        throw bad(name, field, "range " + range + " runs backwards");
                    }
                } else {
                    lo = value(range, name, field, min, max, names);
                    hi = slash >= 0 ? max : lo;   // "5/15" means from 5 to the end, every 15
                }
            }
            for (int v = lo; v <= hi; v += step) {
                bits.set(v);
            }
        }
        return bits;
    }

    private static int value(String s, String name, String field, int min, int max, String[] names) {
        if (names != null) {
            for (int i = 0; i < names.length; i++) {
                if (names[i].equalsIgnoreCase(s)) {
                    return names == MONTHS ? i + 1 : i;
                }
            }
        }
        int v = number(s, name, field);
        if (v < min || v > max) {
            throw bad(name, field, v + " is outside " + min + "-" + max);
        }
        return v;
    }

    private static int number(String s, String name, String field) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw bad(name, field, "\"" + s + "\" is not a number" + (s.isEmpty() ? "" : " or a name")
                    + " (supported: * ? a-b x/n lists, names JAN-DEC and SUN-SAT, L as the day-of-month)");
        }
    }

    private static IllegalArgumentException bad(String name, String field, String why) {
        return new IllegalArgumentException("bad cron " + name + " field \"" + field + "\": " + why);
    }

    /** For humans: the expression and its zone. */
    @Override
    public String toString() {
        return "cron(" + expression + " in " + zone + ")";
    }
}
