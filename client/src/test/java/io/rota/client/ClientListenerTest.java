package io.rota.client;

import io.rota.proto.Frame;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.RangeRequest;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The metrics seam: operation names, and a failing listener that cannot break the others (or a call). */
class ClientListenerTest {

    @Test
    @DisplayName("a call's operation is its request's field name without _request")
    void operationNames() {
        assertEquals("range", Call.operation(Frame.newBuilder().setRangeRequest(RangeRequest.getDefaultInstance())));
        assertEquals("lease_keep_alive", Call.operation(Frame.newBuilder()
                .setLeaseKeepAliveRequest(LeaseKeepAliveRequest.getDefaultInstance())));
    }

    @Test
    @DisplayName("a listener that throws is skipped; the next one still hears every event")
    void throwingListenerIsContained() {
        List<String> heard = new ArrayList<>();
        ClientListener broken = new ClientListener() {
            @Override
            public void callEnded(String operation, Duration latency, int attempts, RotaException failure) {
                throw new IllegalStateException("broken metrics");
            }

            @Override
            public void leaderChanged(String endpoint) {
                throw new IllegalStateException("broken metrics");
            }
        };
        ClientListener recording = new ClientListener() {
            @Override
            public void callEnded(String operation, Duration latency, int attempts, RotaException failure) {
                heard.add(operation + " x" + attempts);
            }

            @Override
            public void leaderChanged(String endpoint) {
                heard.add("leader " + endpoint);
            }
        };
        GuardedListener both = new GuardedListener(List.of(broken, recording));
        both.callEnded("put", Duration.ofMillis(3), 2, null);
        both.leaderChanged("127.0.0.1:7002");
        both.retrying("put", new RotaException(RotaException.Code.UNAVAILABLE, "x"));
        assertEquals(List.of("put x2", "leader 127.0.0.1:7002"), heard);
    }
}
