package io.rota.server.cluster;

import io.rota.raft.core.Role;
import io.rota.raft.node.Clock;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The timeline is a bounded ring: the newest events, in order, numbered without gaps. */
class TimelineTest {

    @Test
    void keepsTheNewestEventsUpToItsCapacity() {
        Timeline t = new Timeline(3, Clock.SYSTEM);
        t.note("start", 0, "n1 started");
        t.role(Role.FOLLOWER, 1, 0, 2);
        t.role(Role.FOLLOWER, 1, 2, 2);
        t.role(Role.PRE_CANDIDATE, 1, 0, 2);
        List<Timeline.Event> last = t.last(10);
        assertEquals(List.of(2L, 3L, 4L), last.stream().map(Timeline.Event::seq).toList());
        assertEquals(Role.PRE_CANDIDATE, last.get(2).role());
        assertEquals(List.of(4L), t.last(1).stream().map(Timeline.Event::seq).toList());
    }
}
