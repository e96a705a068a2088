package io.rota.client;

import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.util.Optional;

/**
 * Why an endpoint cannot be a member's client port at all, as opposed to a member that is slow, partitioned or
 * between leaders: its host name does not resolve, nothing listens on its port (the connection is refused), or
 * what listens there is not a Rota client port (a member's peer or HTTP port: it closes the connection on our
 * first request, or answers with bytes that are not a Rota frame). The retrier fails a call at once, with these
 * causes, when every configured endpoint is unreachable this way; anything else is retried until the deadline.
 */
enum Unreachable {
    /** The host name does not resolve. Nothing was sent. */
    UNKNOWN_HOST("unknown host"),
    /** Nothing listens on the port. Nothing was sent. */
    REFUSED("connection refused: nothing listens there"),
    /**
     * Something else listens there: it answered with bytes that are no Rota frame (not applied), or it closed the
     * connection on our request without answering (a member that crashed does that too: maybe applied).
     */
    NOT_A_CLIENT_PORT("not a Rota client port"),
    /**
     * The TLS handshake failed: an untrusted certificate, a certificate the member refused, or TLS on one side
     * only. A configuration error, not a passing fault; nothing was sent.
     */
    TLS_FAILED("TLS handshake failed");

    private final String text;

    Unreachable(String text) {
        this.text = text;
    }

    /** Said after the endpoint in a message. */
    String text() {
        return text;
    }

    /** The marker cause of a {@link RotaException} for a port that is not a client port; its message says why. */
    static final class NotAClientPort extends Exception {
        private static final long serialVersionUID = 1L;

        /** Whether the request may have reached a member after all (see {@link #mayHaveReachedAMember}). */
        private final boolean mayHaveReachedAMember;

        NotAClientPort(String message, boolean mayHaveReachedAMember) {
            super(message, null, false, false);
            this.mayHaveReachedAMember = mayHaveReachedAMember;
        }
    }

    /**
     * Whether {@code failure} leaves open that the request reached a member and was applied: a connection closed
     * after our request without any answer is what a peer port does, but also what a member (or a proxy before
     * it) that crashes mid-request does. Bytes that are no Rota frame never come from a member, and a refused or
     * unresolved connection sent nothing.
     */
    static boolean mayHaveReachedAMember(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof NotAClientPort) {
                return ((NotAClientPort) t).mayHaveReachedAMember;
            }
        }
        return false;
    }

    /**
     * What to say about an endpoint that failed with {@code failure}, if it is one of these: the kind, and for a
     * port that is not a client port what it did.
     */
    static Optional<String> describe(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof NotAClientPort || t instanceof javax.net.ssl.SSLException) {
                return Optional.of(t instanceof NotAClientPort ? t.getMessage() : TLS_FAILED.text() + ": " + t.getMessage());
            }
        }
        return of(failure).map(Unreachable::text);
    }

    /** Which of these {@code failure} is, looking through its causes; empty for any other failure. */
    static Optional<Unreachable> of(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof UnknownHostException || t instanceof UnresolvedAddressException) {
                return Optional.of(UNKNOWN_HOST);
            }
            if (t instanceof ConnectException && !(t instanceof io.netty.channel.ConnectTimeoutException)) {
                return Optional.of(REFUSED);
            }
            if (t instanceof NotAClientPort) {
                return Optional.of(NOT_A_CLIENT_PORT);
            }
            if (t instanceof javax.net.ssl.SSLException) {
                return Optional.of(TLS_FAILED);
            }
        }
        return Optional.empty();
    }
}
