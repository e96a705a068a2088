package io.rota.server.sim;

import com.google.protobuf.ByteString;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.proto.KeyValue;
import io.rota.proto.RangeRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;

import java.util.Comparator;
import java.util.List;

/**
 * One seeded run of the lock recipe under failing operations (issue 31, item 5; design.md LF11): four
 * {@link RecipeClient}s, each one process with one session lease shared by up to two of three locks, next to
 * the server simulation's nemesis (crashes, pauses, partitions, clock steps and rates) and the operation
 * failures the issue names: a lock name over the key limit (REQUEST_TOO_LARGE), writes during a NOSPACE alarm,
 * answers lost (a timeout: outcome unknown), processes paused past their TTL that re-grant an ended lease id,
 * and an operator deleting a waiter's key; and three {@link OnceClient}s claiming a new once-key every few seconds,
 * pausing past their claims' TTL. The world checks after every event that no two holders of a lock (or claimers
 * of a once-key) are inside their safe windows at once (invariant 8) and that no once-key completes twice
 * (invariant 10), besides its own invariants.
 */
final class RecipeSimulation {

    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;
    static final int CLIENTS = 4;
    /** Processes running once-jobs ({@link OnceClient}) beside the lock clients. */
    static final int ONCE_CLIENTS = 3;

    private RecipeSimulation() {
    }

    /** Run seed {@code seed}; throws AssertionError naming the seed if an invariant breaks. */
    static ServerWorld run(long seed, int members, int seconds, RecipeClient.Mutation mutation) {
        return run(seed, members, seconds, mutation, OnceClient.Mutation.NONE, 0);
    }

    /**
     * The same with {@code onceClients} {@link OnceClient}s beside the lock clients, and a bug of the once-records
     * put back ({@link OnceClient.Mutation}). The lock mutations' pinned seeds were found without once clients,
     * whose events change every later random draw.
     */
    static ServerWorld run(long seed, int members, int seconds, RecipeClient.Mutation mutation,
                           OnceClient.Mutation onceMutation, int onceClients) {
        ServerWorld w = new ServerWorld(seed, members);
        w.recipes = true;
        w.start();
        long end = seconds * S;
        for (int i = 1; i <= CLIENTS; i++) {
            w.addClient(new RecipeClient(w, "app-" + i, mutation, end));
        }
        for (int i = 1; i <= onceClients; i++) {
            w.addClient(new OnceClient(w, "job-" + i, onceMutation, end));
        }
        w.addClient(new Operator(w, end));
        ServerSimulation.scheduleNemesis(w, end);
        scheduleNoSpace(w, end);
        w.runUntil(end);
        w.healAll();
        long locksBefore = w.lockAcquisitions;
        w.runUntil(end + 20 * S);
        if (w.lockAcquisitions == locksBefore) {
            w.fail("liveness: 20 s after every fault healed, no recipe lock was acquired");
        }
        return w;
    }

    /**
     * NOSPACE armed now and then for 0.5–4 s: joins (a txn with a put) and grants are refused meanwhile. The
     * disarm is proposed every 500 ms until the next arm (until the run's end after the last): a proposal
     * without a leader, or lost with it, would leave the alarm armed for good; disarming twice changes nothing.
     */
    private static void scheduleNoSpace(ServerWorld w, long end) {
        long t = w.random.nextLong(2 * S, 6 * S);
        while (t < end - 5 * S) {
            w.loop.at(t, () -> w.proposeNoSpace(true));
            long disarm = t + w.random.nextLong(500 * MS, 4 * S);
            long next = disarm + w.random.nextLong(2 * S, 8 * S);
            long until = next < end - 5 * S ? next - MS : end + 20 * S;
            for (long d = disarm; d < until; d += 500 * MS) {
                w.loop.at(d, () -> w.proposeNoSpace(false));
            }
            t = next;
        }
    }

    /**
     * An operator who deletes a waiter's key by hand ({@code rotactl del}), as
     * {@code LockCycleTest.aWaiterWhoseKeyVanishedIsNotHandedTheLock} does: only while the first contender is
     * still the one it read, so no holder's key is touched — that nothing can protect a holder from.
     */
    static final class Operator extends SimClient {
        private final long until;

        Operator(ServerWorld world, long until) {
            super(world, "operator");
            this.until = until;
        }

        @Override
        void start() {
            later(world.random.nextLong(1_000, 4_000), this::visit);
        }

        private void visit() {
            if (world.now() >= until) {
                return;
            }
            String queue = RecipeClient.LOCKS.get(world.random.nextInt(RecipeClient.LOCKS.size()));
            ByteString from = ByteString.copyFromUtf8(queue);
            ByteString to = ByteString.copyFromUtf8(queue.substring(0, queue.length() - 1) + "0");
            call(Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(from).setRangeEnd(to)).build(),
                    (f, why) -> {
                        if (f != null && f.hasRangeResponse() && f.getRangeResponse().getKvsCount() >= 2) {
                            List<KeyValue> queued = f.getRangeResponse().getKvsList().stream()
                                    .sorted(Comparator.comparingLong(KeyValue::getCreateRevision)).toList();
                            KeyValue victim = queued.get(1 + world.random.nextInt(queued.size() - 1));
                            world.note("operator deletes waiter key " + victim.getKey().toStringUtf8());
                            world.countRecipe("operator deletes of a waiter's key");
                            call(Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                                    .addCompare(created(queued.get(0)))
                                    .addCompare(created(victim))
                                    .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(
                                            DeleteRangeRequest.newBuilder().setKey(victim.getKey())))).build(),
                                    (g, w) -> { });
                        }
                        later(world.random.nextLong(1_000, 4_000), this::visit);
                    });
        }

        private static Compare created(KeyValue kv) {
            return Compare.newBuilder().setKey(kv.getKey()).setTarget(Compare.Target.CREATE)
                    .setResult(Compare.Result.EQUAL).setCreateRevision(kv.getCreateRevision()).build();
        }
    }
}
