package io.rota.server.auth;

import com.google.protobuf.ByteString;
import io.rota.proto.Permission;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What one user may read and write: the union of its roles' permissions, as two sorted lists of disjoint
 * half-open key intervals. A request's range is allowed when one merged interval covers all of it (etcd's
 * rule: a range that spans two grants with a gap between them is refused, even if no key lies in the gap).
 *
 * <p>Ranges follow RangeRequest's rules: an empty range_end is the single key {@code [key, key+"\0")};
 * range_end "\0" is every key &ge; key (the interval's end is "infinity", kept as {@code null}); a request
 * with key = range_end = "\0" addresses every key ({@code [empty, infinity)}). Immutable.
 */
public final class Permissions {

    /** Everything: the root role's permissions. */
    static final Permissions ALL = new Permissions(List.of(new Interval(ByteString.EMPTY, null)),
            List.of(new Interval(ByteString.EMPTY, null)));
    static final Permissions NONE = new Permissions(List.of(), List.of());

    private static final Comparator<ByteString> ORDER = ByteString.unsignedLexicographicalComparator();
    private static final ByteString ZERO = ByteString.copyFrom(new byte[] {0});

    /** [start, end); end null = no upper bound. */
    record Interval(ByteString start, ByteString end) {
        boolean covers(Interval other) {
            return ORDER.compare(start, other.start) <= 0
                    && (end == null || (other.end != null && ORDER.compare(other.end, end) <= 0));
        }
    }

    private final List<Interval> read;
    private final List<Interval> write;

    private Permissions(List<Interval> read, List<Interval> write) {
        this.read = read;
        this.write = write;
    }

    /** The union of {@code perms} (READWRITE counts for both lists). */
    static Permissions of(List<Permission> perms) {
        List<Interval> read = new ArrayList<>();
        List<Interval> write = new ArrayList<>();
        for (Permission p : perms) {
            Interval i = interval(p.getKey(), p.getRangeEnd());
            if (p.getPermType() != Permission.Type.WRITE) {
                read.add(i);
            }
            if (p.getPermType() != Permission.Type.READ) {
                write.add(i);
            }
        }
        return new Permissions(merge(read), merge(write));
    }

    public boolean canRead(ByteString key, ByteString rangeEnd) {
        return allows(read, key, rangeEnd);
    }

    public boolean canWrite(ByteString key, ByteString rangeEnd) {
        return allows(write, key, rangeEnd);
    }

    private static boolean allows(List<Interval> granted, ByteString key, ByteString rangeEnd) {
        if (granted.isEmpty()) {
            return false;
        }
        Interval wanted = interval(key, rangeEnd);
        if (wanted.end != null && ORDER.compare(wanted.end, wanted.start) <= 0) {
            return true;   // an empty range addresses no key
        }
        for (Interval g : granted) {
            if (g.covers(wanted)) {
                return true;
            }
        }
        return false;
    }

    /** A request's or grant's range as an interval, with RangeRequest's rules (see the class comment). */
    static Interval interval(ByteString key, ByteString rangeEnd) {
        if (rangeEnd.isEmpty()) {
            return new Interval(key, key.concat(ZERO));
        }
        if (rangeEnd.equals(ZERO)) {
            return new Interval(key.equals(ZERO) ? ByteString.EMPTY : key, null);
        }
        return new Interval(key, rangeEnd);
    }

    /** Sorted by start, overlapping or touching intervals joined. */
    private static List<Interval> merge(List<Interval> in) {
        List<Interval> sorted = new ArrayList<>(in);
        sorted.removeIf(i -> i.end != null && ORDER.compare(i.end, i.start) <= 0);
        sorted.sort((a, b) -> ORDER.compare(a.start, b.start));
        List<Interval> out = new ArrayList<>();
        for (Interval i : sorted) {
            Interval last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && (last.end == null || ORDER.compare(i.start, last.end) <= 0)) {
                ByteString end = last.end == null || i.end == null ? null
                        : ORDER.compare(i.end, last.end) > 0 ? i.end : last.end;
                out.set(out.size() - 1, new Interval(last.start, end));
            } else {
                out.add(i);
            }
        }
        return List.copyOf(out);
    }
}
