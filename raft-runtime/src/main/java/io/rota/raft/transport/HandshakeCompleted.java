package io.rota.raft.transport;

/** Pipeline event fired by {@link HandshakeHandler} once the peer is known and accepted. */
record HandshakeCompleted(long peerId) {
}
