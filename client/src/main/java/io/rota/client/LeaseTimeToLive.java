package io.rota.client;

import java.time.Duration;
import java.util.List;

/**
 * What the cluster knows about a live lease.
 *
 * @param id         the lease id
 * @param grantedTtl the TTL it was granted with
 * @param remaining  the time left before it expires (rounded up to whole seconds; zero when the deadline
 *                   has passed but the expiry is not applied yet)
 * @param keys       the keys attached to it, as UTF-8 text (immutable; empty unless asked for)
 */
public record LeaseTimeToLive(long id, Duration grantedTtl, Duration remaining, List<String> keys) {

    /**
     * Copies the list.
     *
     * @param id see the record component
     * @param grantedTtl see the record component
     * @param remaining see the record component
     * @param keys see the record component
     */
    public LeaseTimeToLive {
        keys = List.copyOf(keys);
    }
}
