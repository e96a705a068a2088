package io.rota.raft.transport;

import io.netty.channel.Channel;
import io.rota.raft.core.Message;

/**
 * What a connection's handlers report to the transport. Called on the connection's event loop; no method
 * may block. This is the handlers' only way out: they never touch Raft state.
 */
interface ConnectionEvents {

    /** The handshake succeeded: {@code channel} now carries messages to and from {@code peerId}. */
    void connected(long peerId, Channel channel);

    /** A handshaken connection closed. */
    void disconnected(long peerId, Channel channel);

    /** The connection can take writes again (below the low water mark). */
    void writable(long peerId, Channel channel);

    /** A message from {@code peerId} arrived; hand it to the inbound sink. */
    void delivered(long peerId, Message message);

    /** A frame from {@code peerId} made no valid message ({@link InvalidFrameException}, or too long): count it. */
    void rejected(long peerId);

    /** Peer {@code peerId} refused this node in its handshake, for {@code reason} (see {@link PeerAdmission}). */
    void refusedBy(long peerId, String reason);
}
