package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.DeleteRangeResponse;
import io.rota.proto.Error;
import io.rota.proto.KeyValue;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseGrantResponse;
import io.rota.proto.LeaseLeasesResponse;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.LeaseStatus;
import io.rota.proto.PutRequest;
import io.rota.proto.PutResponse;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RequestOp;
import io.rota.proto.ResponseHeader;
import io.rota.proto.ResponseOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;
import io.rota.raft.core.Entry;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
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

    private static final Limits LIMITS = Harness.LIMITS.toBuilder().maxKeys(10_000).build();
    private static final int OPS = 300;

    // ---- the reference model ---------------------------------------------------------------------------

    /** One key as etcd describes it. */
    private record Kv(ByteString value, long create, long mod, long version, long lease) {
        KeyValue proto(ByteString key) {
            return KeyValue.newBuilder().setKey(key).setValue(value).setCreateRevision(create)
                    .setModRevision(mod).setVersion(version).setLease(lease).build();
        }
    }

    /** A failed op: only its error code is modelled (the message is for humans). */
    private static final class Refused extends RuntimeException {
        final Error.Code code;

        Refused(Error.Code code) {
            super(code.toString(), null, false, false);
            this.code = code;
        }
    }

    private static final class Model {
        TreeMap<ByteString, Kv> kvs = new TreeMap<>(ByteString.unsignedLexicographicalComparator());
        TreeMap<Long, Long> leaseTtl = new TreeMap<>();
        /** Lease id → the index of its grant (the model has no keep-alives): what an expiry must name. */
        TreeMap<Long, Long> leaseRenewal = new TreeMap<>();
        TreeMap<Long, TreeSet<ByteString>> leaseKeys = new TreeMap<>();
        long revision = 1;

        /** etcd's range_end rules. */
        List<ByteString> keysIn(ByteString key, ByteString end) {
            List<ByteString> out = new ArrayList<>();
            for (ByteString k : kvs.keySet()) {
                if (inRange(k, key, end)) {
                    out.add(k);
                }
            }
            return out;
        }

        static boolean inRange(ByteString k, ByteString key, ByteString end) {
            var order = ByteString.unsignedLexicographicalComparator();
            if (end.isEmpty()) {
                return k.equals(key);
            }
            if (end.equals(ByteString.copyFrom(new byte[] {0}))) {
                return order.compare(k, key) >= 0;
            }
            return order.compare(k, key) >= 0 && order.compare(k, end) < 0;
        }

        static void checkKey(ByteString key) {
            if (key.isEmpty()) {
                throw new Refused(Error.Code.INVALID_ARGUMENT);
            }
        }

        void write(ByteString key, Kv kv) {
            remove(key);
            kvs.put(key, kv);
            if (kv.lease() != 0) {
                leaseKeys.computeIfAbsent(kv.lease(), l -> new TreeSet<>(ByteString.unsignedLexicographicalComparator()))
                        .add(key);
            }
        }

        void remove(ByteString key) {
            Kv old = kvs.remove(key);
            if (old != null && old.lease() != 0) {
                leaseKeys.get(old.lease()).remove(key);
            }
        }

        /** A put at {@code rev} (the revision of the write in progress). */
        PutResponse.Builder put(PutRequest req, long rev) {
            checkKey(req.getKey());
            if (req.getLease() != 0 && !leaseTtl.containsKey(req.getLease())) {
                throw new Refused(Error.Code.LEASE_NOT_FOUND);
            }
            Kv prev = kvs.get(req.getKey());
            write(req.getKey(), new Kv(req.getValue(), prev == null ? rev : prev.create(), rev,
                    prev == null ? 1 : prev.version() + 1, req.getLease()));
            PutResponse.Builder out = PutResponse.newBuilder();
            if (prev != null && req.getPrevKv()) {
                out.setPrevKv(prev.proto(req.getKey()));
            }
            return out;
        }

        DeleteRangeResponse.Builder delete(DeleteRangeRequest req) {
            checkKey(req.getKey());
            DeleteRangeResponse.Builder out = DeleteRangeResponse.newBuilder();
            List<ByteString> victims = keysIn(req.getKey(), req.getRangeEnd());
            out.setDeleted(victims.size());
            for (ByteString k : victims) {
                if (req.getPrevKv()) {
                    out.addPrevKvs(kvs.get(k).proto(k));
                }
                remove(k);
            }
            return out;
        }

        RangeResponse range(RangeRequest req) {
            checkKey(req.getKey());
            List<ByteString> keys = keysIn(req.getKey(), req.getRangeEnd());
            long limit = req.getLimit() == 0 ? Long.MAX_VALUE : req.getLimit();
            RangeResponse.Builder out = RangeResponse.newBuilder().setHeader(header(revision))
                    .setCount(keys.size()).setMore(keys.size() > limit);
            if (!req.getCountOnly()) {
                for (int i = 0; i < keys.size() && i < limit; i++) {
                    KeyValue kv = kvs.get(keys.get(i)).proto(keys.get(i));
                    out.addKvs(req.getKeysOnly() ? kv.toBuilder().clearValue().build() : kv);
                }
            }
            return out.build();
        }

        boolean holds(Compare c) {
            List<ByteString> keys = keysIn(c.getKey(), c.getRangeEnd());
            if (keys.isEmpty()) {
                return c.getTarget() != Compare.Target.VALUE && holds(c, new Kv(ByteString.EMPTY, 0, 0, 0, 0));
            }
            return keys.stream().allMatch(k -> holds(c, kvs.get(k)));
        }

        static boolean holds(Compare c, Kv kv) {
            int cmp = switch (c.getTarget()) {
                case VERSION -> Long.compare(kv.version(), c.getVersion());
                case CREATE -> Long.compare(kv.create(), c.getCreateRevision());
                case MOD -> Long.compare(kv.mod(), c.getModRevision());
                case VALUE -> ByteString.unsignedLexicographicalComparator().compare(kv.value(), c.getValue());
                case LEASE -> Long.compare(kv.lease(), c.getLease());
                default -> throw new AssertionError(c);
            };
            return switch (c.getResult()) {
                case EQUAL -> cmp == 0;
                case NOT_EQUAL -> cmp != 0;
                case GREATER -> cmp > 0;
                case LESS -> cmp < 0;
                default -> throw new AssertionError(c);
            };
        }

        Model copy() {
            Model m = new Model();
            m.kvs = new TreeMap<>(kvs);
            m.leaseTtl = new TreeMap<>(leaseTtl);
            m.leaseRenewal = new TreeMap<>(leaseRenewal);
            leaseKeys.forEach((l, keys) -> m.leaseKeys.put(l, new TreeSet<>(keys)));
            m.revision = revision;
            return m;
        }

        /** Apply one command at Raft index {@code index}; what the state machine must answer. */
        CommandResult apply(long index, Command cmd) {
            Model before = copy();
            try {
                return execute(index, cmd);
            } catch (Refused r) {
                kvs = before.kvs;
                leaseTtl = before.leaseTtl;
                leaseRenewal = before.leaseRenewal;
                leaseKeys = before.leaseKeys;
                revision = before.revision;
                return CommandResult.newBuilder().setError(Error.newBuilder().setCode(r.code)).build();
            }
        }

        private CommandResult execute(long index, Command cmd) {
            CommandResult.Builder out = CommandResult.newBuilder();
            long next = revision + 1;
            switch (cmd.getOpCase()) {
                case PUT -> {
                    PutResponse.Builder r = put(cmd.getPut(), next);
                    revision = next;
                    out.setPut(r.setHeader(header(revision)));
                }
                case DELETE_RANGE -> {
                    DeleteRangeResponse.Builder r = delete(cmd.getDeleteRange());
                    revision = r.getDeleted() > 0 ? next : revision;
                    out.setDeleteRange(r.setHeader(header(revision)));
                }
                case TXN -> out.setTxn(txn(cmd.getTxn(), next));
                case LEASE_GRANT -> out.setLeaseGrant(grant(index, cmd.getLeaseGrant()));
                case LEASE_REVOKE -> out.setLeaseRevoke(io.rota.proto.LeaseRevokeResponse.newBuilder()
                        .setHeader(revoke(cmd.getLeaseRevoke().getID())));
                case LEASE_EXPIRE -> out.setLeaseExpire(expire(cmd.getLeaseExpire()));
                default -> throw new AssertionError("not modelled: " + cmd);
            }
            return out.build();
        }

        private TxnResponse txn(TxnRequest req, long next) {
            if (req.getCompareCount() + req.getSuccessCount() + req.getFailureCount() > LIMITS.maxTxnOps()) {
                throw new Refused(Error.Code.REQUEST_TOO_LARGE);
            }
            // A key put twice in either branch is refused before anything runs, whichever branch would (etcd).
            for (List<RequestOp> branch : List.of(req.getSuccessList(), req.getFailureList())) {
                if (branch.stream().filter(RequestOp::hasRequestPut).map(op -> op.getRequestPut().getKey())
                        .distinct().count() < branch.stream().filter(RequestOp::hasRequestPut).count()) {
                    throw new Refused(Error.Code.INVALID_ARGUMENT);
                }
            }
            boolean succeeded = req.getCompareList().stream().allMatch(this::holds);
            List<ResponseOp.Builder> responses = new ArrayList<>();
            boolean wrote = false;
            for (RequestOp op : succeeded ? req.getSuccessList() : req.getFailureList()) {
                switch (op.getRequestCase()) {
                    case REQUEST_RANGE -> responses.add(ResponseOp.newBuilder()
                            .setResponseRange(range(op.getRequestRange()).toBuilder()));
                    case REQUEST_PUT -> {
                        responses.add(ResponseOp.newBuilder().setResponsePut(put(op.getRequestPut(), next)));
                        wrote = true;
                    }
                    case REQUEST_DELETE_RANGE -> {
                        DeleteRangeResponse.Builder d = delete(op.getRequestDeleteRange());
                        wrote |= d.getDeleted() > 0;
                        responses.add(ResponseOp.newBuilder().setResponseDeleteRange(d));
                    }
                    default -> throw new AssertionError(op);
                }
            }
            if (wrote) {
                revision = next;
            }
            TxnResponse.Builder out = TxnResponse.newBuilder().setHeader(header(revision)).setSucceeded(succeeded);
            for (ResponseOp.Builder r : responses) {
                switch (r.getResponseCase()) {
                    case RESPONSE_RANGE -> r.getResponseRangeBuilder().setHeader(header(revision));
                    case RESPONSE_PUT -> r.getResponsePutBuilder().setHeader(header(revision));
                    case RESPONSE_DELETE_RANGE -> r.getResponseDeleteRangeBuilder().setHeader(header(revision));
                    default -> throw new AssertionError(r);
                }
                out.addResponses(r);
            }
            return out.build();
        }

        private LeaseGrantResponse grant(long index, LeaseGrantRequest req) {
            if (req.getTTL() < 1 || req.getTTL() > LIMITS.maxLeaseTtlSeconds() || req.getID() < 0
                    || req.getID() != 0 && leaseTtl.containsKey(req.getID())) {
                throw new Refused(Error.Code.INVALID_ARGUMENT);
            }
            long id = req.getID();
            if (id == 0) {
                id = Math.max(1, index);
                while (leaseTtl.containsKey(id)) {
                    id++;
                }
            }
            long ttl = req.getTTL();
            leaseTtl.put(id, ttl);
            leaseRenewal.put(id, index);
            return LeaseGrantResponse.newBuilder().setHeader(header(revision)).setID(id).setTTL(ttl).build();
        }

        /** An expiry of an older renewal than the lease's latest deletes nothing (issue 11, hole 1). */
        private io.rota.proto.LeaseExpireResponse expire(LeaseExpireRequest req) {
            Long renewal = leaseRenewal.get(req.getID());
            if (renewal != null && renewal != req.getRenewal()) {
                return io.rota.proto.LeaseExpireResponse.newBuilder().setHeader(header(revision))
                        .setRenewedSince(true).build();
            }
            return io.rota.proto.LeaseExpireResponse.newBuilder().setHeader(revoke(req.getID())).build();
        }

        /** Revoke and Expire: the lease and all its keys, in one revision (none if it had no keys). */
        private ResponseHeader revoke(long id) {
            if (leaseTtl.remove(id) == null) {
                throw new Refused(Error.Code.LEASE_NOT_FOUND);
            }
            leaseRenewal.remove(id);
            TreeSet<ByteString> keys = leaseKeys.remove(id);
            if (keys != null && !keys.isEmpty()) {
                keys.forEach(kvs::remove);
                revision++;
            }
            return header(revision);
        }

        LeaseLeasesResponse leases() {
            LeaseLeasesResponse.Builder out = LeaseLeasesResponse.newBuilder().setHeader(header(revision));
            leaseTtl.keySet().forEach(id -> out.addLeases(LeaseStatus.newBuilder().setID(id)));
            return out.build();
        }
    }

    private static ResponseHeader header(long revision) {
        return ResponseHeader.newBuilder().setRevision(revision).build();
    }

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

    private static long randomLease(SplittableRandom rnd, Model m) {
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

    private static PutRequest.Builder randomPut(SplittableRandom rnd, Model m) {
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
    private static Compare randomCompare(SplittableRandom rnd, Model m) {
        ByteString[] r = rnd.nextInt(5) == 0 ? randomRange(rnd) : new ByteString[] {randomKey(rnd), ByteString.EMPTY};
        if (r[0].isEmpty()) {
            r[0] = b("a/0");
        }
        Kv kv = m.kvs.getOrDefault(r[0], new Kv(ByteString.EMPTY, 0, 0, 0, 0));
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

    private static RequestOp randomTxnOp(SplittableRandom rnd, Model m) {
        return switch (rnd.nextInt(3)) {
            case 0 -> RequestOp.newBuilder().setRequestPut(randomPut(rnd, m)).build();
            case 1 -> RequestOp.newBuilder().setRequestDeleteRange(randomDelete(rnd)).build();
            default -> RequestOp.newBuilder().setRequestRange(randomRangeRequest(rnd)).build();
        };
    }

    private static Command.Builder randomCommand(SplittableRandom rnd, Model m) {
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

    private static RangeResponse fullRange(Model m) {
        return m.range(RangeRequest.newBuilder().setKey(b("\0")).setRangeEnd(b("\0")).build());
    }

    private static Object rangeOrError(CoordinationStateMachine sm, RangeRequest req) {
        try {
            return sm.range(req);
        } catch (StoreException e) {
            return e.error().getCode();
        }
    }

    private static Object rangeOrError(Model m, RangeRequest req) {
        try {
            return m.range(req);
        } catch (Refused r) {
            return r.code;
        }
    }

    private static void run(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Model model = new Model();
        CoordinationStateMachine sm = new CoordinationStateMachine(LIMITS);
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
                CoordinationStateMachine restored = new CoordinationStateMachine(LIMITS);
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
        Model m = new Model();
        CoordinationStateMachine sm = new CoordinationStateMachine(LIMITS);
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
