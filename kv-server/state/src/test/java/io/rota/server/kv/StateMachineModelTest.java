package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Error;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.raft.core.Entry;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Model-based test: seeded random operations go to {@link CoordinationStateMachine} and to a deliberately
 * simple reference model written here from etcd v3's documented semantics (a sorted map of keys, a
 * revision counter, a lease → keys map). After every op the answers and a full Range must agree; every
 * 50 ops the machine is replaced by a copy restored from its snapshot.
 *
 * <p>{@code -Drota.model.seeds=N} runs N seeds (default 200); {@code -Drota.model.seed=S} replays one.
 * A failure names the seed, the op number and the op.
 */
@Tag("sim")
class StateMachineModelTest {

    private static final int OPS = 300;

    // ---- random operations ------------------------------------------------------------------------------

    private static final String[] PREFIXES = {"a/", "b/", "ab/"};

    private static ByteString b(String s) {
        return ByteString.copyFromUtf8(s);
    }

    private static ByteString randomKey(SplittableRandom rnd) {
        if (rnd.nextInt(100) == 0) {
            return ByteString.EMPTY; // refused: INVALID_ARGUMENT
        }
        return b(PREFIXES[rnd.nextInt(PREFIXES.length)] + rnd.nextInt(5));
    }

    /** A key and range_end: one key, a prefix, everything from a key on ("\0"), or an empty interval. */
    private static ByteString[] randomRange(SplittableRandom rnd) {
        int kind = rnd.nextInt(10);
        if (kind < 5) {
            return new ByteString[] {randomKey(rnd), ByteString.EMPTY};
        }
        if (kind < 8) {
            String p = PREFIXES[rnd.nextInt(PREFIXES.length)];
            byte[] end = p.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            end[end.length - 1]++;
            return new ByteString[] {b(p), ByteString.copyFrom(end)};
        }
        if (kind == 8) {
            return new ByteString[] {randomKey(rnd), ByteString.copyFrom(new byte[] {0})};
        }
        return new ByteString[] {b("b/"), b("a/")}; // end before key: empty
    }

    private static long randomLease(SplittableRandom rnd, ReferenceModel m) {
        int kind = rnd.nextInt(10);
        if (kind < 5 || m.leaseTtl.isEmpty() && kind < 9) {
            return 0;
        }
        if (kind < 9) {
            List<Long> ids = new ArrayList<>(m.leaseTtl.keySet());
            return ids.get(rnd.nextInt(ids.size()));
        }
        return 5000 + rnd.nextInt(10); // unknown: LEASE_NOT_FOUND
    }

    private static PutRequest.Builder randomPut(SplittableRandom rnd, ReferenceModel m) {
        return PutRequest.newBuilder().setKey(randomKey(rnd)).setValue(b("v" + rnd.nextInt(4)))
                .setLease(randomLease(rnd, m)).setPrevKv(rnd.nextBoolean());
    }

    private static DeleteRangeRequest.Builder randomDelete(SplittableRandom rnd) {
        ByteString[] r = randomRange(rnd);
        return DeleteRangeRequest.newBuilder().setKey(r[0]).setRangeEnd(r[1]).setPrevKv(rnd.nextBoolean());
    }

    private static RangeRequest.Builder randomRangeRequest(SplittableRandom rnd) {
        ByteString[] r = randomRange(rnd);
        RangeRequest.Builder req = RangeRequest.newBuilder().setKey(r[0]).setRangeEnd(r[1]);
        if (rnd.nextInt(4) == 0) {
            req.setLimit(1 + rnd.nextInt(3));
        }
        req.setKeysOnly(rnd.nextInt(5) == 0).setCountOnly(rnd.nextInt(8) == 0);
        return req;
    }

    /** A compare on a value near the key's own, so every operator both holds and fails often. */
    private static Compare randomCompare(SplittableRandom rnd, ReferenceModel m) {
        ByteString[] r = rnd.nextInt(5) == 0 ? randomRange(rnd) : new ByteString[] {randomKey(rnd), ByteString.EMPTY};
        if (r[0].isEmpty()) {
            r[0] = b("a/0");
        }
        ReferenceModel.Kv kv = m.kvs.getOrDefault(r[0], new ReferenceModel.Kv(ByteString.EMPTY, 0, 0, 0, 0));
        Compare.Builder c = Compare.newBuilder().setKey(r[0]).setRangeEnd(r[1])
                .setResult(Compare.Result.forNumber(rnd.nextInt(4)));
        long delta = rnd.nextInt(3) - 1;
        switch (rnd.nextInt(4)) {
            case 0 -> c.setTarget(Compare.Target.VERSION).setVersion(kv.version() + delta);
            case 1 -> c.setTarget(Compare.Target.CREATE).setCreateRevision(kv.create() + delta);
            case 2 -> c.setTarget(Compare.Target.MOD).setModRevision(kv.mod() + delta);
            default -> c.setTarget(Compare.Target.VALUE).setValue(b("v" + rnd.nextInt(4)));
        }
        return c.build();
    }

    private static RequestOp randomTxnOp(SplittableRandom rnd, ReferenceModel m) {
        return switch (rnd.nextInt(3)) {
            case 0 -> RequestOp.newBuilder().setRequestPut(randomPut(rnd, m)).build();
            case 1 -> RequestOp.newBuilder().setRequestDeleteRange(randomDelete(rnd)).build();
            default -> RequestOp.newBuilder().setRequestRange(randomRangeRequest(rnd)).build();
        };
    }

    private static Command.Builder randomCommand(SplittableRandom rnd, ReferenceModel m) {
        Command.Builder cmd = Command.newBuilder();
        int kind = rnd.nextInt(20);
        if (kind < 6) {
            cmd.setPut(randomPut(rnd, m));
        } else if (kind < 9) {
            cmd.setDeleteRange(randomDelete(rnd));
        } else if (kind < 14) {
            TxnRequest.Builder t = TxnRequest.newBuilder();
            int compares = rnd.nextInt(3);
            for (int i = 0; i < compares; i++) {
                t.addCompare(randomCompare(rnd, m));
            }
            int success = rnd.nextInt(rnd.nextInt(30) == 0 ? 16 : 4);
            for (int i = 0; i < success; i++) {
                t.addSuccess(randomTxnOp(rnd, m));
            }
            int failure = rnd.nextInt(3);
            for (int i = 0; i < failure; i++) {
                t.addFailure(randomTxnOp(rnd, m));
            }
            cmd.setTxn(t);
        } else if (kind < 16) {
            long[] ttls = {0, 1, 5, 60, 3600, 3601, -1};
            long id = switch (rnd.nextInt(4)) {
                case 0 -> randomLease(rnd, m);
                case 1 -> 1 + rnd.nextInt(400);
                case 2 -> rnd.nextInt(20) == 0 ? -1 : 0;
                default -> 0;
            };
            cmd.setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(ttls[rnd.nextInt(ttls.length)]).setID(id));
        } else if (kind < 18) {
            cmd.setLeaseRevoke(LeaseRevokeRequest.newBuilder().setID(randomLease(rnd, m)));
        } else {
            long lease = randomLease(rnd, m);
            long renewal = rnd.nextBoolean() ? m.leaseRenewal.getOrDefault(lease, 0L) : rnd.nextInt(400);
            cmd.setLeaseExpire(LeaseExpireRequest.newBuilder().setID(lease).setRenewal(renewal));
        }
        return cmd;
    }

    // ---- the test -----------------------------------------------------------------------------------------

    /** The machine's answer with the error message dropped (the model only knows codes). */
    private static CommandResult codeOnly(CommandResult r) {
        return r.hasError() ? CommandResult.newBuilder().setError(Error.newBuilder().setCode(r.getError().getCode()))
                .build() : r;
    }

    private static RangeResponse fullRange(CoordinationStateMachine sm) {
        return sm.range(RangeRequest.newBuilder().setKey(b("\0")).setRangeEnd(b("\0")).build());
    }

    private static RangeResponse fullRange(ReferenceModel m) {
        return m.range(RangeRequest.newBuilder().setKey(b("\0")).setRangeEnd(b("\0")).build());
    }

    private static Object rangeOrError(CoordinationStateMachine sm, RangeRequest req) {
        try {
            return sm.range(req);
        } catch (StoreException e) {
            return e.error().getCode();
        }
    }

    private static Object rangeOrError(ReferenceModel m, RangeRequest req) {
        try {
            return m.range(req);
        } catch (ReferenceModel.Refused r) {
            return r.code;
        }
    }

    private static void run(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        ReferenceModel model = new ReferenceModel();
        CoordinationStateMachine sm = new CoordinationStateMachine(ReferenceModel.LIMITS);
        long index = 0;
        long now = 1_000_000;
        for (int op = 1; op <= OPS; op++) {
            String at = "seed " + seed + ", op " + op;
            now += rnd.nextInt(500);
            // Failure messages are built lazily: rendering every op as text would dominate the run time.
            Supplier<String> where;
            if (rnd.nextInt(6) == 0) {
                RangeRequest req = randomRangeRequest(rnd).build();
                where = () -> at + " Range " + req.toString().replace('\n', ' ');
                assertEquals(rangeOrError(model, req), rangeOrError(sm, req), where);
            } else {
                Command cmd = randomCommand(rnd, model)
                        .setStamp(io.rota.proto.ClockStamp.newBuilder().setTerm(1).setElapsedMs(now)).build();
                where = () -> at + " " + cmd.toString().replace('\n', ' ');
                index++;
                CommandResult expected = model.apply(index, cmd);
                CommandResult actual = sm.apply(List.of(Entry.command(index, 1, cmd.toByteArray()))).get(0);
                assertEquals(expected, codeOnly(actual), where);
            }
            Supplier<String> context = where;
            assertEquals(fullRange(model), fullRange(sm), () -> context.get() + ": full range afterwards");
            assertEquals(model.leases(), sm.leases(), () -> context.get() + ": leases afterwards");
            if (op % 50 == 0) {
                CoordinationStateMachine restored = new CoordinationStateMachine(ReferenceModel.LIMITS);
                restored.restore(sm.capture().serialize());
                assertEquals(fullRange(sm), fullRange(restored), () -> context.get() + ": right after restore");
                assertEquals(sm.leases(), restored.leases(), () -> context.get() + ": leases right after restore");
                sm = restored; // the rest of the run must be answered identically by the restored copy
            }
        }
    }

    @Test
    @DisplayName("etcd v3 KV/Txn/Lease semantics: the state machine answers like a simple reference model "
            + "(revisions, create/mod/version, prev_kv, deleted counts, txn compares), also after snapshot/restore")
    void theStateMachineAgreesWithTheReferenceModel() {
        String one = System.getProperty("rota.model.seed");
        if (one != null) {
            run(Long.parseLong(one));
            return;
        }
        int seeds = Integer.getInteger("rota.model.seeds", 200);
        for (int i = 0; i < seeds; i++) {
            run(0x30de1L * 1_000 + i);
        }
    }

    @Test
    @DisplayName("The reference model itself: a lease's keys go in one revision, a txn with a duplicate put "
            + "is all-or-nothing (etcd Txn atomicity)")
    void theModelAgreesOnAHandWrittenScenario() {
        ReferenceModel m = new ReferenceModel();
        CoordinationStateMachine sm = new CoordinationStateMachine(ReferenceModel.LIMITS);
        List<Command> cmds = List.of(
                Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(10)).build(),
                Command.newBuilder().setPut(PutRequest.newBuilder().setKey(b("a/1")).setLease(1)).build(),
                Command.newBuilder().setPut(PutRequest.newBuilder().setKey(b("a/2")).setLease(1)).build(),
                Command.newBuilder().setTxn(TxnRequest.newBuilder()
                        .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("b/1"))))
                        .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("b/1")))))
                        .build(),
                Command.newBuilder().setLeaseRevoke(LeaseRevokeRequest.newBuilder().setID(1)).build());
        long index = 0;
        for (Command unstamped : cmds) {
            index++;
            // Stamped by the leader of the entry's term, as every entry a leader proposes: a lease is timed only
            // from a counted stamp (design.md LF10).
            Command cmd = unstamped.toBuilder()
                    .setStamp(io.rota.proto.ClockStamp.newBuilder().setTerm(1).setElapsedMs(index)).build();
            assertEquals(m.apply(index, cmd), codeOnly(sm.apply(List.of(Entry.command(index, 1, cmd.toByteArray())))
                    .get(0)), cmd.toString());
        }
        assertEquals(4, sm.revision(), "two puts, then one revision for both lease keys");
        assertEquals(0, fullRange(sm).getCount());
        assertEquals(Map.of(), m.kvs);
    }
}
