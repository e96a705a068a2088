package io.rota.raft.node;

import io.rota.raft.core.Message;
import io.rota.raft.transport.PeerTransport;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * A network in memory for drivers in one JVM: {@code send} hands the message straight to the receiver's
 * inbound sink, which only enqueues it for that receiver's driver thread — so delivery is in order per
 * pair, and a node that is not running receives nothing (the message is lost, as Raft allows).
 */
final class MemoryNetwork {

    private final Map<Long, Consumer<Message>> sinks = new ConcurrentHashMap<>();

    /** Node {@code id}'s transport; it joins the network when its driver starts it. */
    PeerTransport port(long id) {
        return new PeerTransport() {
            private Consumer<Message> sink;

            @Override
            public void start(Consumer<Message> inbound, LongConsumer peerDown) {
                sink = inbound;
                sinks.put(id, inbound);
            }

            @Override
            public InetSocketAddress localAddress() {
                return new InetSocketAddress(0);
            }

            @Override
            public boolean send(Message message) {
                Consumer<Message> to = sinks.get(message.to());
                if (to != null) {
                    to.accept(message);
                }
                return true;
            }

            @Override
            public Set<Long> connectedPeers() {
                return Set.copyOf(sinks.keySet());
            }

            @Override
            public void close() {
                sinks.remove(id, sink);
            }
        };
    }
}
