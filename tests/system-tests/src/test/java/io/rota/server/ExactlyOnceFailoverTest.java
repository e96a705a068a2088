package io.rota.server;

import io.rota.proto.Frame;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RegisterSessionResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static io.rota.server.Requests.get;
import static io.rota.server.Requests.inSession;
import static io.rota.server.Requests.ok;
import static io.rota.server.Requests.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** Exactly-once over the client protocol, across members and across a leader change (own cluster: it stops the leader). */
@Tag("cluster")
class ExactlyOnceFailoverTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    @Test
    @DisplayName("Raft thesis §6.3: a (client_id, sequence) write retried on the same member, on a follower "
            + "(forwarded) and after the leader is stopped is applied once; every retry gets the first answer")
    void aRetriedWriteIsAppliedOnceAcrossMembersAndALeaderChange() {
        int leader = CLUSTER.get().awaitLeader();
        int follower = CLUSTER.get().follower();
        RegisterSessionResponse session;
        Frame first;
        try (FrameClient c = new FrameClient(CLUSTER.get().client(leader))) {
            session = ok(c.call(Frame.newBuilder().setRegisterSessionRequest(RegisterSessionRequest.getDefaultInstance())))
                    .getRegisterSessionResponse();
            first = ok(c.call(inSession(put("once/x", "v"), session, 1)));
            Frame again = ok(c.call(inSession(put("once/x", "v"), session, 1)));
            assertEquals(first.getPutResponse(), again.getPutResponse(), "the same member, the same answer");
        }
        long revision = first.getPutResponse().getHeader().getRevision();
        try (FrameClient c = new FrameClient(CLUSTER.get().client(follower))) {
            Frame forwarded = ok(c.call(inSession(put("once/x", "v"), session, 1)));
            // The header names the member asked (S3); the rest of the answer is the remembered one.
            assertEquals(first.getPutResponse().getHeader().getRevision(),
                    forwarded.getPutResponse().getHeader().getRevision());
            assertEquals(first.getPutResponse().getPrevKv(), forwarded.getPutResponse().getPrevKv());
        }

        CLUSTER.get().stop(leader);
        int newLeader = CLUSTER.get().awaitLeader();
        assertNotEquals(leader, newLeader);
        for (int member = 0; member < 3; member++) {
            if (member == leader) {
                continue;
            }
            try (FrameClient c = new FrameClient(CLUSTER.get().client(member))) {
                Frame after = ok(c.call(inSession(put("once/x", "v"), session, 1)));
                assertEquals(revision, after.getPutResponse().getHeader().getRevision(),
                        "member " + (member + 1) + " after the leader change: the remembered answer");
                Frame read = ok(c.call(get("once/x")));
                assertEquals(1, read.getRangeResponse().getKvs(0).getVersion(), "applied once");
                assertEquals(revision, read.getRangeResponse().getKvs(0).getModRevision(), "one revision");
                assertEquals(revision, read.getRangeResponse().getKvs(0).getCreateRevision());
            }
        }
        // The next sequence is a new write: applied.
        try (FrameClient c = new FrameClient(CLUSTER.get().client(newLeader))) {
            Frame next = ok(c.call(inSession(put("once/x", "w"), session, 2)));
            assertEquals(2, ok(c.call(get("once/x"))).getRangeResponse().getKvs(0).getVersion(),
                    "sequence 2 is a new write: " + next);
        }
    }
}
