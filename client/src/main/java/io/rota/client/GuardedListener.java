package io.rota.client;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The client's {@link ClientListener}s as one: each is called in turn, and an exception from one is logged
 * and dropped, so a broken metrics binding cannot fail a call or stall the event loop's work.
 */
final class GuardedListener implements ClientListener {

    private static final Logger log = LoggerFactory.getLogger(GuardedListener.class);

    private final List<ClientListener> listeners;

    GuardedListener(List<ClientListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public void callEnded(String operation, Duration latency, int attempts, RotaException failure) {
        each(l -> l.callEnded(operation, latency, attempts, failure));
    }

    @Override
    public void retrying(String operation, RotaException cause) {
        each(l -> l.retrying(operation, cause));
    }

    @Override
    public void leaderChanged(String endpoint) {
        each(l -> l.leaderChanged(endpoint));
    }

    @Override
    public void keepAliveFailed(long leaseId, RotaException cause) {
        each(l -> l.keepAliveFailed(leaseId, cause));
    }

    private void each(Consumer<ClientListener> event) {
        for (ClientListener l : listeners) {
            try {
                event.accept(l);
            } catch (RuntimeException e) {
                log.warn("client listener {} failed; event dropped", l, e);
            }
        }
    }
}
