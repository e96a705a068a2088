package io.rota.client.recipes;

/**
 * A lock (or leadership, or a once-record's claim) is no longer held, or can no longer be assumed held: its
 * lease expired or was revoked, its key was deleted, or safe-until passed without a confirmed keep-alive. Whatever the holder
 * was doing may now overlap with a new holder; stop, and let fencing tokens reject late writes.
 */
public final class LockLostException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param key    the contender key that was lost
     * @param reason why it was lost
     */
    public LockLostException(String key, String reason) {
        super("lost " + key + ": " + reason + "; stop work protected by it and acquire again");
    }
}
