package io.rota.client.recipes;

import java.time.Duration;

/** A lock was not acquired within the time given; the waiter's key was removed, nothing is held. */
public final class LockTimeoutException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param name    the lock
     * @param timeout the time waited
     */
    public LockTimeoutException(String name, Duration timeout) {
        super("lock '" + name + "' not acquired within " + timeout.toMillis()
                + " ms: another holder has it; retry later or wait longer");
    }
}
