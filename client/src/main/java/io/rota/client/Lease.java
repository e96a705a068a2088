package io.rota.client;

import java.time.Duration;

/**
 * A granted lease.
 *
 * @param id  the lease id (attach keys with {@link Kv#put(String, String, long)})
 * @param ttl the granted TTL (the cluster may raise the requested one to its minimum)
 */
public record Lease(long id, Duration ttl) {
}
