package io.rota.server.kv;

import com.google.protobuf.ByteString;

import java.util.Collections;
import java.util.Comparator;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The keys a request addresses, with etcd's range_end rules: an empty end means the single key; the end
 * "\0" means every key &ge; key; otherwise the half-open interval [key, end) (a prefix p is [p, p+1)).
 */
public record KeyRange(ByteString key, ByteString end) {

    /** Keys sort as unsigned bytes, like etcd's (Go's bytes.Compare). */
    static final Comparator<ByteString> ORDER = ByteString.unsignedLexicographicalComparator();

    private static final ByteString ALL_ABOVE = ByteString.copyFrom(new byte[] {0});

    public boolean contains(ByteString k) {
        if (end.isEmpty()) {
            return k.equals(key);
        }
        return ORDER.compare(k, key) >= 0 && (end.equals(ALL_ABOVE) || ORDER.compare(k, end) < 0);
    }

    /** A live view of the entries of {@code map} in this range. */
    <V> NavigableMap<ByteString, V> slice(NavigableMap<ByteString, V> map) {
        if (end.isEmpty()) {
            return map.subMap(key, true, key, true);
        }
        if (end.equals(ALL_ABOVE)) {
            return map.tailMap(key, true);
        }
        if (ORDER.compare(end, key) <= 0) {
            return Collections.unmodifiableNavigableMap(new TreeMap<>(ORDER));
        }
        return map.subMap(key, true, end, false);
    }
}
