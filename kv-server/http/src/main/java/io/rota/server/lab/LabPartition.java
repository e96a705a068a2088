package io.rota.server.lab;

import io.rota.raft.core.Message;
import io.rota.raft.transport.PeerTransport;

import java.net.InetSocketAddress;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * LAB MODE ONLY: the peer transport with a switch that cuts this member off from every peer, as a pulled
 * network cable would — Raft messages to and from it are lost (sends report success, as a cable cannot say
 * otherwise). Only Raft peer traffic is cut: the client and HTTP ports still answer, which is what lets the
 * dashboard show the partitioned member and heal it. Without lab mode the transport is not wrapped at all.
 */
public final class LabPartition implements PeerTransport {

    private final PeerTransport transport;
    private volatile boolean cut;

    public LabPartition(PeerTransport transport) {
        this.transport = transport;
    }

    /** Cut ({@code true}) or restore ({@code false}) every peer link of this member. */
    public void cut(boolean on) {
        cut = on;
    }

    public boolean isCut() {
        return cut;
    }

    @Override
    public void start(Consumer<Message> inbound, LongConsumer peerDown) {
        start(inbound, peerDown, peer -> { });
    }

    @Override
    public void start(Consumer<Message> inbound, LongConsumer peerDown, LongConsumer snapshotFailed) {
        transport.start(m -> {
            if (!cut) {
                inbound.accept(m);
            }
        }, peer -> {
            if (!cut) {
                peerDown.accept(peer);
            }
        }, snapshotFailed);
    }

    @Override
    public InetSocketAddress localAddress() {
        return transport.localAddress();
    }

    @Override
    public boolean send(Message message) {
        return cut || transport.send(message);
    }

    @Override
    public void flush() {
        transport.flush();
    }

    @Override
    public Set<Long> connectedPeers() {
        return cut ? Set.of() : transport.connectedPeers();
    }

    @Override
    public void close() {
        transport.close();
    }
}
