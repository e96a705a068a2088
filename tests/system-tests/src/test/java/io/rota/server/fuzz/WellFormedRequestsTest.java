package io.rota.server.fuzz;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.grpc.MethodDescriptor;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.proto.PutRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The well-formed generator is deterministic per seed and reaches every request type; the guard keeps its
 * rules on what it admits (WellFormedFuzzProcessTest relies on both).
 */
@Tag("cluster")
class WellFormedRequestsTest {

    private static final int MEMBERS = 3;

    @Test
    void theSameSeedMakesTheSameRequests() {
        assertEquals(frames(42, 300), frames(42, 300));
        assertFalse(frames(42, 300).equals(frames(43, 300)));
    }

    private static List<ByteString> frames(long seed, int n) {
        Tally tally = new Tally();
        ClientDoor door = new ClientDoor(new WellFormedRequests(new Random(seed), MEMBERS),
                new DoorGuard(MEMBERS, Set.of("nobody"), tally), DoorGuard.Caller.AUTH_OFF, tally, 1 << 20, null);
        List<ByteString> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(door.next(i).toByteString());
        }
        return out;
    }

    @Test
    void everyRequestBodyAndEveryEtcdMethodIsGenerated() {
        Tally tally = new Tally();
        ClientDoor door = new ClientDoor(new WellFormedRequests(new Random(7), MEMBERS),
                new DoorGuard(MEMBERS, Set.of(), tally), DoorGuard.Caller.UNPRIVILEGED, tally, 1 << 20, null);
        Map<Frame.BodyCase, Integer> seen = new HashMap<>();
        for (int i = 0; i < 5_000; i++) {
            seen.merge(door.next(i).getBodyCase(), 1, Integer::sum);
        }
        assertEquals(ClientDoor.BODIES.size(), seen.size(), "bodies seen: " + seen.keySet());
        WellFormedRequests gen = new WellFormedRequests(new Random(7), MEMBERS);
        for (MethodDescriptor<?, ?> m : EtcdDoor.METHODS) {
            Message prototype = (Message) ((MethodDescriptor.PrototypeMarshaller<?>) m.getRequestMarshaller())
                    .getMessagePrototype();
            for (int i = 0; i < 20; i++) {
                assertEquals(prototype.getDescriptorForType(), gen.next(prototype).getDescriptorForType());
            }
        }
    }

    @Test
    void whatTheGuardAdmitsKeepsItsRules() {
        Tally tally = new Tally();
        DoorGuard guard = new DoorGuard(MEMBERS, Set.of("nobody"), tally);
        ClientDoor door = new ClientDoor(new WellFormedRequests(new Random(11), MEMBERS), guard,
                DoorGuard.Caller.ROOT, tally, 1 << 20, null);
        int voterAdds = 0;
        for (int i = 0; i < 50_000; i++) {
            Frame f = door.next(i);
            switch (f.getBodyCase()) {
                case MEMBER_ADD_REQUEST -> voterAdds += f.getMemberAddRequest().getLearner() ? 0 : 1;
                case MEMBER_REMOVE_REQUEST -> assertFalse(real(f.getMemberRemoveRequest().getId()), f.toString());
                case MEMBER_UPDATE_REQUEST -> assertTrue(!real(f.getMemberUpdateRequest().getId())
                        || DoorGuard.harmless(f.getMemberUpdateRequest().getPeerAddress()), f.toString());
                case PUBLISH_MEMBER_REQUEST -> {
                    io.rota.proto.Member m = f.getPublishMemberRequest().getMember();
                    assertTrue(!real(m.getId()) || DoorGuard.harmless(m.getPeerAddress())
                            && DoorGuard.harmless(m.getClientAddress()), f.toString());
                }
                case AUTH_REQUEST -> assertFalse(f.getAuthRequest().hasDisable(), f.toString());
                case DELETE_RANGE_REQUEST -> deleteKeepsToThePrefix(f.getDeleteRangeRequest());
                case PUT_REQUEST -> putKeepsToThePrefix(f.getPutRequest());
                case TXN_REQUEST -> txnKeepsToThePrefix(f.getTxnRequest());
                default -> {
                }
            }
            if (f.hasSession()) {
                long c = f.getSession().getClientId();
                assertTrue(c <= 0 || c >= 1L << 20, f.toString());
            }
        }
        assertTrue(voterAdds <= DoorGuard.PHANTOM_VOTERS, voterAdds + " voter adds");
    }

    private static boolean real(long id) {
        return id >= 1 && id <= MEMBERS;
    }

    private static void txnKeepsToThePrefix(TxnRequest t) {
        List<RequestOp> ops = new ArrayList<>(t.getSuccessList());
        ops.addAll(t.getFailureList());
        for (RequestOp op : ops) {
            switch (op.getRequestCase()) {
                case REQUEST_PUT -> putKeepsToThePrefix(op.getRequestPut());
                case REQUEST_DELETE_RANGE -> deleteKeepsToThePrefix(op.getRequestDeleteRange());
                case REQUEST_TXN -> txnKeepsToThePrefix(op.getRequestTxn());
                default -> {
                }
            }
        }
    }

    private static void putKeepsToThePrefix(PutRequest p) {
        assertTrue(p.getKey().isEmpty() || p.getKey().startsWith(ByteString.copyFromUtf8(WellFormedRequests.PREFIX)),
                p.toString());
    }

    private static void deleteKeepsToThePrefix(DeleteRangeRequest d) {
        assertTrue(d.getKey().isEmpty() ? d.getRangeEnd().isEmpty()
                : d.getKey().startsWith(ByteString.copyFromUtf8(WellFormedRequests.PREFIX)), d.toString());
    }

    @Test
    void theAddressesThatOnceTookTheClusterDownAreNotValidLooking() {
        for (String a : WellFormedRequests.BAD_ADDRESSES) {
            assertFalse(WellFormedRequests.validLooking(a), a);
        }
        for (String a : WellFormedRequests.VALID_LOOKING) {
            assertTrue(WellFormedRequests.validLooking(a), a);
        }
        assertFalse(WellFormedRequests.plausible("n4:71010"));
        assertTrue(WellFormedRequests.plausible("h: 80"));
        for (int i = 0; i < 1_000; i++) {
            assertTrue(DoorGuard.harmless(DoorGuard.harmlessAddress(new Random(i))));
        }
    }
}
