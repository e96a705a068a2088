package io.rota.client;

import io.rota.proto.PutResponse;

import java.util.Optional;

/**
 * The result of a put.
 *
 * @param revision the revision the put wrote
 * @param prevKv   the key before the put, or null if it did not exist
 */
public record PutResult(long revision, KeyValue prevKv) implements OpResult {

    static PutResult of(PutResponse r) {
        return new PutResult(r.getHeader().getRevision(), r.hasPrevKv() ? KeyValue.of(r.getPrevKv()) : null);
    }

    /**
     * The key before the put.
     *
     * @return the previous key, or empty if the put created it
     */
    public Optional<KeyValue> prev() {
        return Optional.ofNullable(prevKv);
    }
}
