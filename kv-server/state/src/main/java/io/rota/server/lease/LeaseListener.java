package io.rota.server.lease;

/**
 * Told by the state machine, on the applying thread, about every lease change a log entry made — on every
 * member, whoever proposed the entry — so the leader's {@code LeaseKeeper} (maintenance) times exactly what the log
 * says, including renewals it did not propose itself.
 */
public interface LeaseListener {

    /** A grant or keep-alive at log index {@code renewal} restarted the lease at its full TTL. */
    void renewed(long id, long ttlSeconds, long renewal);

    /** A revoke or an expiry removed the lease and deleted its {@code keysDeleted} keys. */
    void ended(long id, int keysDeleted);

    LeaseListener NONE = new LeaseListener() {
        @Override
        public void renewed(long id, long ttlSeconds, long renewal) {
        }

        @Override
        public void ended(long id, int keysDeleted) {
        }
    };
}
