package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Error;
import io.rota.proto.LeaseCheckpointRequest;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.SessionKeepAliveRequest;
import io.rota.proto.SessionRef;
import io.rota.proto.TxnRequest;
import io.rota.raft.core.Entry;
import io.rota.raft.core.StateMachine;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.rota.server.kv.Harness.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Snapshot/restore and determinism, with seeded random operations: the seed is in every failure message,
 * and {@code -Drota.seed=N} replays one run.
 */
class SnapshotTest {

    private static final int RUNS = 20;
    private static final int OPS = 400;

    /** A random command over a small key space, so keys, leases and sessions collide often. */
    private static Command.Builder randomCommand(Random rnd, List<Long> clients, long[] sequences) {
        String key = "k" + rnd.nextInt(12);
        long lease = rnd.nextInt(4) == 0 ? 0 : 1 + rnd.nextInt(20);
        Command.Builder cmd = Command.newBuilder();
        switch (rnd.nextInt(12)) {
            case 0, 1, 2 -> cmd.setPut(PutRequest.newBuilder().setKey(b(key)).setValue(b("v" + rnd.nextInt(5)))
                    .setLease(rnd.nextBoolean() ? 0 : lease).setPrevKv(rnd.nextBoolean()));
            case 3 -> cmd.setDeleteRange(DeleteRangeRequest.newBuilder().setKey(b(key))
                    .setRangeEnd(rnd.nextBoolean() ? b("") : b("k5")).setPrevKv(true));
            case 4, 5 -> cmd.setTxn(TxnRequest.newBuilder()
                    .addCompare(Compare.newBuilder().setKey(b(key)).setTarget(Compare.Target.VERSION)
                            .setResult(Compare.Result.forNumber(rnd.nextInt(4))).setVersion(rnd.nextInt(3)))
                    .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b(key + "t")).setLease(lease)))
                    .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(b("k")).setRangeEnd(b("l"))))
                    .addFailure(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(b(key)))));
            case 6 -> cmd.setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(1 + rnd.nextInt(30))
                    .setID(rnd.nextInt(4) == 0 ? 0 : lease));
            case 7 -> cmd.setLeaseRevoke(LeaseRevokeRequest.newBuilder().setID(lease));
            case 8 -> cmd.setLeaseExpire(LeaseExpireRequest.newBuilder().setID(lease));
            case 9 -> cmd.setLeaseKeepAlive(LeaseKeepAliveRequest.newBuilder().setID(lease));
            case 10 -> cmd.setLeaseCheckpoint(LeaseCheckpointRequest.newBuilder().addCheckpoints(
                    LeaseCheckpointRequest.Checkpoint.newBuilder().setID(lease).setRemainingMs(rnd.nextInt(20_000))));
            default -> {
                if (clients.isEmpty() || rnd.nextInt(3) == 0) {
                    return cmd.setRegisterSession(RegisterSessionRequest.getDefaultInstance());
                }
                return cmd.setSessionKeepAlive(SessionKeepAliveRequest.newBuilder()
                        .setClientId(clients.get(rnd.nextInt(clients.size()))));
            }
        }
        if (!clients.isEmpty() && rnd.nextBoolean()) {
            int c = rnd.nextInt(clients.size());
            // Mostly new sequences, sometimes a retry of the last one.
            long seq = rnd.nextInt(4) == 0 && sequences[c] > 0 ? sequences[c] : ++sequences[c];
            cmd.setSession(SessionRef.newBuilder().setClientId(clients.get(c)).setSequence(seq));
        }
        return cmd;
    }

    /**
     * A random log over several terms: each term's leader stamps how long it has led (mostly growing,
     * sometimes stepping back: a stamp taken earlier and appended later), some stamps name another term,
     * and half the expiries and checkpoints name the lease's current renewal (read off an oracle machine).
     */
    private static List<Entry> randomLog(long seed) {
        Random rnd = new Random(seed);
        List<Entry> log = new ArrayList<>();
        List<Long> clients = new ArrayList<>();
        long[] sequences = new long[OPS];
        CoordinationStateMachine oracle = new CoordinationStateMachine(Harness.LIMITS);
        long term = 1;
        long elapsed = 1_000;
        for (int i = 1; i <= OPS; i++) {
            if (rnd.nextInt(50) == 0) {
                term++;
                elapsed = rnd.nextInt(500);
            }
            elapsed += rnd.nextInt(10) == 0 ? -rnd.nextInt(2_000) : rnd.nextInt(3_000);
            Entry entry;
            if (rnd.nextInt(20) == 0) {
                entry = Entry.noOp(i, term);
            } else {
                Command.Builder cmd = randomCommand(rnd, clients, sequences);
                if (cmd.hasRegisterSession()) {
                    clients.add((long) i);
                }
                if (rnd.nextBoolean()) {
                    nameCurrentRenewal(cmd, oracle);
                }
                long stampTerm = rnd.nextInt(10) == 0 ? term - 1 : term;
                entry = Entry.command(i, term, cmd.setStamp(io.rota.proto.ClockStamp.newBuilder()
                        .setTerm(stampTerm).setElapsedMs(Math.max(0, elapsed))).build().toByteArray());
            }
            log.add(entry);
            oracle.apply(List.of(entry));
        }
        return log;
    }

    private static void nameCurrentRenewal(Command.Builder cmd, CoordinationStateMachine oracle) {
        for (var lease : oracle.leaseImages()) {
            if (cmd.hasLeaseExpire() && cmd.getLeaseExpire().getID() == lease.getID()) {
                cmd.getLeaseExpireBuilder().setRenewal(lease.getRenewal());
            }
            if (cmd.hasLeaseCheckpoint() && cmd.getLeaseCheckpoint().getCheckpoints(0).getID() == lease.getID()) {
                cmd.getLeaseCheckpointBuilder().getCheckpointsBuilder(0).setRenewal(lease.getRenewal());
            }
        }
    }

    private static long seed(int run) {
        String fixed = System.getProperty("rota.seed");
        return fixed != null ? Long.parseLong(fixed) : 0x5eed0000L + run;
    }

    /** Every read the server can make, rendered to compare two machines. */
    /** Capture and serialise at once, as the driver does in two steps on two threads. */
    private static byte[] image(CoordinationStateMachine sm) {
        return sm.capture().serialize();
    }

    /**
     * The driver serialises a capture on its snapshot thread while later entries are applied: the bytes
     * must be those of the state at capture time, whatever the applies change meanwhile (docs/design.md H7).
     */
    @Test
    void aCaptureIsNotChangedByLaterApplies() {
        for (int run = 0; run < RUNS; run++) {
            long seed = seed(run);
            List<Entry> log = randomLog(seed);
            int cut = new Random(seed).nextInt(log.size());
            CoordinationStateMachine sm = new CoordinationStateMachine(Harness.LIMITS);
            sm.apply(log.subList(0, cut));
            StateMachine.Capture capture = sm.capture();
            sm.apply(log.subList(cut, log.size()));

            CoordinationStateMachine atCut = new CoordinationStateMachine(Harness.LIMITS);
            atCut.apply(log.subList(0, cut));
            assertArrayEquals(image(atCut), capture.serialize(), "seed " + seed + ": capture at entry " + cut);
        }
    }

    private static String answers(CoordinationStateMachine sm) {
        StringBuilder out = new StringBuilder();
        out.append(sm.range(RangeRequest.newBuilder().setKey(b("\0")).setRangeEnd(b("\0")).build()));
        out.append(sm.leases());
        for (var l : sm.leases().getLeasesList()) {
            out.append(sm.timeToLive(LeaseTimeToLiveRequest.newBuilder().setID(l.getID()).setKeys(true).build()));
        }
        out.append(sm.history(1)).append(sm.nowMs());
        return out.toString();
    }

    @Test
    void aRestoredCopyAnswersExactlyLikeTheOriginal() {
        for (int run = 0; run < RUNS; run++) {
            long seed = seed(run);
            List<Entry> log = randomLog(seed);
            int cut = new Random(seed).nextInt(log.size());
            CoordinationStateMachine original = new CoordinationStateMachine(Harness.LIMITS);
            original.apply(log.subList(0, cut));
            CoordinationStateMachine copy = new CoordinationStateMachine(Harness.LIMITS);
            copy.restore(image(original));
            assertEquals(answers(original), answers(copy), "seed " + seed + " right after restore");

            List<CommandResult> fromOriginal = original.apply(log.subList(cut, log.size()));
            List<CommandResult> fromCopy = copy.apply(log.subList(cut, log.size()));
            assertEquals(fromOriginal, fromCopy, "seed " + seed + ": results after restore");
            assertEquals(answers(original), answers(copy), "seed " + seed + ": state after the rest of the log");
        }
    }

    @Test
    void theSameEntriesGiveByteIdenticalSnapshots() {
        for (int run = 0; run < RUNS; run++) {
            long seed = seed(run);
            List<Entry> log = randomLog(seed);
            CoordinationStateMachine a = new CoordinationStateMachine(Harness.LIMITS);
            CoordinationStateMachine b = new CoordinationStateMachine(Harness.LIMITS);
            // Batching must not matter: one machine gets the log in one call, the other entry by entry.
            a.apply(log);
            log.forEach(e -> b.apply(List.of(e)));
            assertArrayEquals(image(a), image(b), "seed " + seed);
            CoordinationStateMachine c = new CoordinationStateMachine(Harness.LIMITS);
            c.restore(image(a));
            assertArrayEquals(image(a), image(c), "seed " + seed + ": snapshot of a restored copy");
        }
    }

    @Test
    void aSessionsRememberedResponsesSurviveASnapshot() {
        Harness h = new Harness();
        long client = h.register();
        CommandResult first = h.put(client, 1, "k", "v");
        Harness restored = new Harness();
        restored.sm.restore(image(h.sm));
        restored.index = h.index;
        restored.nowMs = h.nowMs;
        assertEquals(first, restored.run(Command.newBuilder().setSession(h.ref(client, 1))
                .setPut(PutRequest.newBuilder().setKey(b("k")).setValue(b("v")))));
        assertEquals(1, restored.get("k").getVersion());
    }

    @Test
    void noOpEntriesYieldNullAndMalformedCommandsYieldInvalidArgument() {
        CoordinationStateMachine sm = new CoordinationStateMachine(Harness.LIMITS);
        List<CommandResult> results = sm.apply(List.of(Entry.noOp(1, 1),
                Entry.command(2, 1, new byte[] {(byte) 0xff, 0x01, 0x02}),
                Entry.command(3, 1, Command.newBuilder().setStamp(io.rota.proto.ClockStamp.newBuilder().setTerm(1)
                        .setElapsedMs(5)).build().toByteArray())));
        assertNull(results.get(0));
        assertEquals(Error.Code.INVALID_ARGUMENT, results.get(1).getError().getCode());
        assertEquals(Error.Code.INVALID_ARGUMENT, results.get(2).getError().getCode());
        assertEquals(1, sm.revision());
    }

    @Test
    void aCorruptSnapshotIsRefused() {
        CoordinationStateMachine sm = new CoordinationStateMachine(Harness.LIMITS);
        assertThrows(IllegalArgumentException.class, () -> sm.restore(new byte[] {(byte) 0xff, 0x01}));
    }
}
