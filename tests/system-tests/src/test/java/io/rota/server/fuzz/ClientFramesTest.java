package io.rota.server.fuzz;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.rota.proto.AlarmRequest;
import io.rota.proto.AuthEnableRequest;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthStatusRequest;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.proto.Member;
import io.rota.proto.PublishMemberRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.SessionRef;
import io.rota.proto.TxnRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fuzz generator keeps its promise that nothing it sends can touch what a fuzz test checks (keys below
 * {@code fuzz/}, the members, auth, real clients' sessions), for well-formed frames and for the mangled ones
 * that happen to parse. FuzzProcessTest's seed 7995664785814 lost its {@code acked/} keys to a bit-flipped
 * delete before {@link ClientFrames#stray} existed.
 */
@Tag("cluster")
class ClientFramesTest {

    private static final int MEMBERS = 3;

    @Test
    void theFlippedDeleteOfSeed7995664785814IsStray() throws InvalidProtocolBufferException {
        Frame f = Frame.newBuilder().setCallId(156).setDeleteRangeRequest(DeleteRangeRequest.newBuilder()
                .setKey(ByteString.copyFrom(new byte[] {'F', 'u', 'z', 'z', (byte) 0257, '5', '1', '2'}))
                .setRangeEnd(ByteString.copyFrom(new byte[] {0})).setPrevKv(true)).build();
        assertNotNull(frames(1).stray(Frame.parseFrom(f.toByteArray())), "a delete from below fuzz/ to the end");
    }

    @Test
    void strayNamesEveryWayOutOfTheFuzzKeySpace() {
        ClientFrames g = frames(1);
        assertNull(g.stray(delete("fuzz/1", "\0")), "from fuzz/1 to the end stays at or above fuzz/");
        assertNull(g.stray(delete("fuzz/1", "a")), "an empty range (end below key)");
        assertNull(g.stray(delete("", "")), "the empty key without an end is refused or a no-op");
        assertNull(g.stray(delete("fuzz0", "")), "a key above every fuzz/ key");
        assertNotNull(g.stray(delete("", "\0")), "the whole key space");
        assertNotNull(g.stray(delete("", "fuzz/3")), "from the start to fuzz/3");
        assertNotNull(g.stray(delete("acked/0/n1", "")), "one acked key");
        assertNotNull(g.stray(put("acked/0/n1")), "a put of an acked key");
        assertNull(g.stray(put("")), "the empty key is refused");
        Frame nested = Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder().addFailure(RequestOp.newBuilder()
                .setRequestTxn(TxnRequest.newBuilder().addSuccess(RequestOp.newBuilder()
                        .setRequestDeleteRange(delete("Fuzz/1", "\0").getDeleteRangeRequest()))))).build();
        assertNotNull(g.stray(nested), "a delete two txns deep");
        assertNotNull(g.stray(Frame.newBuilder().setPublishMemberRequest(PublishMemberRequest.newBuilder()
                .setMember(Member.newBuilder().setId(2))).build()), "a PublishMember naming a member");
        assertNull(g.stray(Frame.newBuilder().setPublishMemberRequest(PublishMemberRequest.newBuilder()
                .setMember(Member.newBuilder().setId(MEMBERS + 1))).build()), "a non-member");
        assertNotNull(g.stray(Frame.newBuilder().setAlarmRequest(AlarmRequest.getDefaultInstance()).build()));
        Frame enable = Frame.newBuilder().setAuthRequest(AuthRequest.newBuilder()
                .setEnable(AuthEnableRequest.getDefaultInstance())).build();
        assertNotNull(g.stray(enable), "auth enable while auth is disabled");
        assertNull(frames(1).authEnabled(true).stray(enable), "refused when auth is on");
        assertNull(g.stray(Frame.newBuilder().setAuthRequest(AuthRequest.newBuilder()
                .setStatus(AuthStatusRequest.getDefaultInstance())).build()));
        assertNotNull(g.stray(put("fuzz/1").toBuilder().setSession(SessionRef.newBuilder().setClientId(7)).build()),
                "a session a real client may hold");
        assertNull(g.stray(put("fuzz/1").toBuilder().setSession(SessionRef.newBuilder().setClientId(-1)).build()));
    }

    /** Every frame the generator makes, well-formed or mangled, keeps the promise; across many seeds. */
    @Test
    void nothingGeneratedIsStray() {
        int mangledThatParse = 0;
        for (long seed = 0; seed < 20; seed++) {
            for (boolean auth : new boolean[] {false, true}) {
                long s = seed;
                ClientFrames g = frames(seed).authEnabled(auth);
                for (int i = 0; i < 2_500; i++) {
                    Frame f = g.request(i).frame();
                    String why = g.stray(f);
                    assertNull(why, () -> "seed " + s + " generated " + f + ": " + why);
                    mangledThatParse += strayIfParses(g, g.bitFlipped(f), "bit-flipped");
                    mangledThatParse += strayIfParses(g, g.garbage(new Random(seed + i).nextInt(256)), "garbage");
                }
            }
        }
        // The mangled frames that still parse are what the check is about: there must be plenty of them.
        assertTrue(mangledThatParse > 20_000, "only " + mangledThatParse + " mangled frames parsed");
    }

    private static int strayIfParses(ClientFrames g, byte[] bytes, String what) {
        Frame parsed;
        try {
            parsed = Frame.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            return 0;
        }
        assertEquals(null, g.stray(parsed), () -> what + " frame parses into a stray request: " + parsed);
        return 1;
    }

    private static ClientFrames frames(long seed) {
        return new ClientFrames(new Random(seed), MEMBERS);
    }

    private static Frame delete(String key, String end) {
        return Frame.newBuilder().setDeleteRangeRequest(DeleteRangeRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8(key)).setRangeEnd(ByteString.copyFromUtf8(end))).build();
    }

    private static Frame put(String key) {
        return Frame.newBuilder().setPutRequest(PutRequest.newBuilder().setKey(ByteString.copyFromUtf8(key))).build();
    }
}
