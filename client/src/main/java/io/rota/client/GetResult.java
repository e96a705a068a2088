package io.rota.client;

import io.rota.proto.RangeResponse;

import java.util.List;
import java.util.Optional;

/**
 * The result of a get: the keys found, sorted by key.
 *
 * @param kvs      the keys found (immutable)
 * @param count    how many keys the range holds (ignoring a limit)
 * @param more     whether more keys matched than were returned
 * @param revision the store revision the read observed
 */
public record GetResult(List<KeyValue> kvs, long count, boolean more, long revision) implements OpResult {

    /**
     * Copies the list.
     *
     * @param kvs see the record component
     * @param count see the record component
     * @param more see the record component
     * @param revision see the record component
     */
    public GetResult {
        kvs = List.copyOf(kvs);
    }

    static GetResult of(RangeResponse r) {
        return new GetResult(r.getKvsList().stream().map(KeyValue::of).toList(), r.getCount(), r.getMore(),
                r.getHeader().getRevision());
    }

    /**
     * The first key found, if any (for a single-key get: the key).
     *
     * @return the first key, or empty
     */
    public Optional<KeyValue> first() {
        return kvs.isEmpty() ? Optional.empty() : Optional.of(kvs.get(0));
    }
}
