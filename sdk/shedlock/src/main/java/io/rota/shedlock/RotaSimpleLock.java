package io.rota.shedlock;

import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.util.Optional;

/**
 * A ShedLock lock held in a Rota cluster, with its fencing token: pass {@link #fencingToken()} with every
 * write to the protected resource (for a database, {@code io.rota.client.recipes.JdbcFencing}), which then
 * refuses the writes of a holder that was paused past {@code lockAtMostFor} while another took the lock.
 * Inside a {@code @SchedulerLock} method, where the lock object is not at hand, use
 * {@link RotaLockProvider#fencingToken()}.
 */
public final class RotaSimpleLock extends AbstractSimpleLock {

    private final RotaLockProvider provider;
    private final String key;
    private final long token;
    /** The revision of this lock's last write: unlock and extend change the record only if it is still this. */
    private final long modRevision;
    private final long leaseId;
    private volatile boolean released;

    RotaSimpleLock(RotaLockProvider provider, LockConfiguration configuration, String key, long token,
                   long modRevision, long leaseId) {
        super(configuration);
        this.provider = provider;
        this.key = key;
        this.token = token;
        this.modRevision = modRevision;
        this.leaseId = leaseId;
    }

    /**
     * This holder's fencing token: the cluster revision at which it took the lock. A later holder of the same
     * lock always has a higher one; extending the lock keeps it.
     *
     * @return the token, positive
     */
    public long fencingToken() {
        return token;
    }

    /**
     * The key in the Rota cluster that holds the lock record.
     *
     * @return the key, the provider's prefix and the lock's name
     */
    public String key() {
        return key;
    }

    /** The lock's configuration (name, lockAtMostFor, lockAtLeastFor). */
    LockConfiguration configuration() {
        return lockConfiguration;
    }

    long modRevision() {
        return modRevision;
    }

    long leaseId() {
        return leaseId;
    }

    boolean released() {
        return released;
    }

    @Override
    protected void doUnlock() {
        released = true;
        provider.unlock(this);
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
        Optional<SimpleLock> extended = provider.extend(this, newConfiguration);
        if (extended.isPresent()) {
            released = true;
        }
        return extended;
    }

    @Override
    public String toString() {
        return "RotaSimpleLock[" + key + ", token " + token + "]";
    }
}
