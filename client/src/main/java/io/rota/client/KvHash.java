package io.rota.client;

/**
 * One member's hash of its key-value state at a revision ({@link Cluster#hashKvAsync}), etcd's HashKV:
 * members that applied the same revision have the same hash.
 *
 * @param endpoint        the member asked
 * @param memberId        its id
 * @param hash            CRC-32C over every key, in key order, as of {@code revision} (unsigned)
 * @param revision        the revision hashed
 * @param compactRevision the oldest revision the member can still hash
 */
public record KvHash(String endpoint, long memberId, long hash, long revision, long compactRevision) {
}
