package io.rota.client;

/**
 * A member of the cluster, as it published its addresses (etcd's member attributes).
 *
 * @param id            the Raft id: the member's 1-based position in {@code --initial-cluster}
 * @param name          its name ({@code --name})
 * @param clientAddress {@code host:port} of its client protocol
 * @param peerAddress   {@code host:port} of its Raft peer port
 */
public record Member(long id, String name, String clientAddress, String peerAddress) {

    static Member of(io.rota.proto.Member m) {
        return new Member(m.getId(), m.getName(), m.getClientAddress(), m.getPeerAddress());
    }
}
