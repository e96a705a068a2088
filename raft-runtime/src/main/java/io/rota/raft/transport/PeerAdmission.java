package io.rota.raft.transport;

/**
 * Who may join the peer connections beyond the checks of the handshake itself (cluster id, protocol, a
 * known peer id), and what happens when a peer refuses this node (issue 13: a member restarted under a
 * known id on an empty data directory).
 *
 * <p>Each side of a handshake says whether it is {@linkplain #fresh() fresh}: it starts from an empty data
 * directory and has never joined. The other side asks, before its own checks of the id, {@link #refuse} — the server answers from its
 * replicated member table, which knows every id that has joined or was removed — and a refused peer
 * {@linkplain #refusedBy hears why} in a refusal frame before the connection closes. Called on event
 * loops: no method may block.
 */
public interface PeerAdmission {

    /** Admits everyone the handshake admits; this node never claims to be fresh. The default. */
    PeerAdmission OPEN = new PeerAdmission() {
        @Override
        public boolean fresh() {
            return false;
        }

        @Override
        public String refuse(long peerId, boolean fresh) {
            return null;
        }

        @Override
        public void refusedBy(long peerId, String reason) {
        }
    };

    /** Whether this node starts from an empty data directory and has never joined (sent in its handshake). */
    boolean fresh();

    /**
     * Why peer {@code peerId} must not connect, or null to admit it: its id was removed from the cluster, or
     * it is {@code fresh} under an id that has joined.
     */
    String refuse(long peerId, boolean fresh);

    /** Peer {@code peerId} refused this node's handshake for {@code reason}. */
    void refusedBy(long peerId, String reason);
}
