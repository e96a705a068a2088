package io.rota.raft.transport;

/**
 * A frame from a peer that makes no valid core message. Nothing of it reaches the core, and the node keeps
 * running; what happens to the connection depends on the {@link Reason}. {@link PeerMessageHandler} logs
 * both kinds (rate-limited) and counts them in {@link PeerStats#rejected()}.
 *
 * <p>An {@code IllegalArgumentException}, as before it existed, so callers that only care that a frame was
 * refused need not know the difference.
 */
public final class InvalidFrameException extends IllegalArgumentException {

    /** Why a frame was refused, and so what becomes of its connection. */
    public enum Reason {
        /**
         * A message type (or entry type) this version does not know: most likely a peer running a newer
         * version. The frame is skipped and the connection stays up, so the messages this version does
         * know keep flowing; Raft tolerates a lost message.
         */
        UNKNOWN_TYPE,
        /**
         * The frame does not parse, or its content breaks a message's rules (an entry at index 0, a
         * second handshake). The stream cannot be trusted any more: the connection is closed, and the
         * dialler reconnects.
         */
        MALFORMED
    }

    private final Reason reason;

    private InvalidFrameException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    static InvalidFrameException unknownType(String message) {
        return new InvalidFrameException(Reason.UNKNOWN_TYPE, message, null);
    }

    static InvalidFrameException malformed(String message, Throwable cause) {
        return new InvalidFrameException(Reason.MALFORMED, message, cause);
    }

    public Reason reason() {
        return reason;
    }
}
