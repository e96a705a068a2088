package io.rota.client;

/**
 * Whether a {@link RotaClient} can reach a working cluster, with the meanings of Apache Curator's
 * {@code ConnectionState}, so an application can stop work when it loses the cluster and resume when it is
 * back. Read it with {@link RotaClient#connectionState()}; be told of changes with a
 * {@link ConnectionStateListener}.
 *
 * <p>The client learns it from its own calls (an application's keep-alives and watches make some all the
 * time) and, while no member answers, from a probe it sends in the background with backoff. Until the first
 * member answers, a new client is {@link #SUSPENDED} (no listener is told of that starting state).
 *
 * <pre>
 *   SUSPENDED --first answer--> CONNECTED --every member fails--> SUSPENDED --an answer--> RECONNECTED
 *   any state --a kept-alive lease is lost, or close()--> LOST --an answer (not after close)--> RECONNECTED
 * </pre>
 */
public enum ConnectionState {
    /** A member answered for the first time: the client works. */
    CONNECTED,
    /**
     * No member answers now (every configured member failed or had no leader since the last answer); the
     * client keeps retrying. Leases may still be alive: work that must not overlap another holder's should
     * pause until {@link #RECONNECTED}, and give up if {@link #LOST} follows.
     */
    SUSPENDED,
    /** A member answers again after {@link #SUSPENDED} or {@link #LOST}: the client works again. */
    RECONNECTED,
    /**
     * What the client kept for the application could not be kept: a lease it kept alive expired or was
     * revoked (locks, elections and once-records held with it are gone), or the client was closed. After a
     * lease loss the client still works and will report {@link #RECONNECTED} on the next answer; leases,
     * locks and records must be taken again. After {@link RotaClient#close()} it stays LOST.
     */
    LOST;

    /**
     * Whether the client can reach a working cluster in this state.
     *
     * @return true for {@link #CONNECTED} and {@link #RECONNECTED}
     */
    public boolean isConnected() {
        return this == CONNECTED || this == RECONNECTED;
    }
}
