package io.rota.chaos.nemesis;

import io.rota.chaos.net.MemberSlots;
import io.rota.client.AddedMember;
import io.rota.client.ClusterMember;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.testkit.ProcessCluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Changes the cluster while it runs, as an operator would (issue 13; Jepsen's etcd tests do the same): each
 * fault is one step of the {@link MembershipPlan} — grow (add a new member as a learner on a fresh data dir,
 * wait until it caught up, promote it), shrink (remove a voter, the leader half the time, and stop its
 * process) or replace (kill -9 a voter, delete its data dir, remove it and add a new member in its place).
 * Every change goes through the SDK's {@code Cluster} API, every new process is started as the runbook says
 * ({@code --initial-cluster} from {@code member add}, {@code --initial-cluster-state existing}). New members
 * get new names and new ids; neither is ever reused.
 *
 * <p>A refused change (one already in flight, a learner not caught up, no leader right now) is retried for up
 * to {@link #OPERATION_BUDGET}, then skipped; both are counted, neither stops the run. A change whose answer
 * was lost is judged by reading the member list again. The plan keeps 3..5 voters after every operation, and
 * at most one member is dead at a time (the one being replaced), so a majority is always up.
 *
 * <p>Heal has nothing to undo (a membership change is permanent): it restarts any member that exited on its
 * own, so the run goes on — the cluster has counted the exit ({@link ProcessCluster#selfExits()}) and the run
 * fails for it — and says what the membership is. A removed member may stop itself before it is stopped (its
 * peers refuse it): that exit is expected, not counted.
 */
public final class MembershipNemesis implements Nemesis, AutoCloseable {

    /** How long one operation is retried before it is skipped. */
    static final Duration OPERATION_BUDGET = Duration.ofSeconds(60);
    private static final long RETRY_PAUSE_MS = 500;

    private final ProcessCluster cluster;
    private final MemberSlots slots;
    private final RotaClient admin;
    private final MembershipPlan plan;
    private int added;
    private int promoted;
    private int removed;
    private int removedLeaders;
    private int replaced;
    private int refusals;
    private int skipped;

    /**
     * A membership nemesis for a running cluster whose members are all in {@code slots}.
     *
     * @param cluster the members (n1..n3 running, a leader elected)
     * @param slots   the client slots the workload dials; the nemesis moves members in and out of them
     */
    public MembershipNemesis(ProcessCluster cluster, MemberSlots slots) {
        this.cluster = cluster;
        this.slots = slots;
        this.admin = RotaClient.builder().endpoints(slots.endpoints(0)).callTimeout(Duration.ofSeconds(10))
                .attemptTimeout(Duration.ofSeconds(2)).build();
        this.plan = new MembershipPlan(initialIds());
    }

    /** n1..nN → their ids, once every member has published its name. */
    private Map<Integer, Long> initialIds() {
        long deadline = System.nanoTime() + OPERATION_BUDGET.toNanos();
        while (true) {
            Map<Integer, Long> ids = new LinkedHashMap<>();
            try {
                for (ClusterMember m : admin.cluster().memberList()) {
                    for (int i = 0; i < cluster.size(); i++) {
                        if (m.name().equals(ProcessCluster.name(i))) {
                            ids.put(i, m.id());
                        }
                    }
                }
            } catch (RotaException e) {
                // no leader yet: ask again
            }
            if (ids.size() == cluster.size()) {
                return ids;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the members did not publish their names: " + ids);
            }
            pause();
        }
    }

    @Override
    public String name() {
        return "membership";
    }

    @Override
    public String fault(Random random) {
        int leader = cluster.leader();
        MembershipPlan.Step step = plan.next(random, leader);
        List<String> done = new ArrayList<>();
        int newcomer = -1;
        boolean dead = false;
        for (MembershipPlan.Op op : plan.operations(step)) {
            switch (op) {
                case KILL_AND_WIPE:
                    cluster.kill(step.target());
                    cluster.deleteDataDir(step.target());
                    plan.killed(step.target());
                    dead = true;
                    done.add("kill -9 " + label(step.target(), step.leader()) + " and wipe its disk");
                    break;
                case REMOVE:
                    done.add(remove(step.target(), step.leader() && !dead));
                    break;
                case ADD_LEARNER:
                    if (plan.canAdd()) {
                        newcomer = cluster.addMember();
                        done.add(addLearner(newcomer));
                    } else {
                        skipped++;
                        done.add("add: skipped (" + plan.voters() + " voters already)");
                    }
                    break;
                default:   // PROMOTE
                    if (newcomer >= 0 && plan.isMember(newcomer)) {
                        done.add(promote(newcomer));
                    }
                    break;
            }
        }
        if (step.kind() == MembershipPlan.Kind.REPLACE && dead && !plan.isMember(step.target())
                && newcomer >= 0 && plan.isMember(newcomer) && plan.member(newcomer).voter()) {
            replaced++;
        }
        String prefix = step.kind() == MembershipPlan.Kind.REPLACE ? "replace " + ProcessCluster.name(step.target())
                + ": " : "";
        return prefix + String.join(" -> ", done) + "  [voters " + plan.voters() + "]";
    }

    /** Removes member {@code index} and stops its process; a dead one whose removal is refused stays pending. */
    private String remove(int index, boolean wasLeader) {
        String name = ProcessCluster.name(index);
        if (!plan.canRemove(index)) {
            skipped++;
            return "remove " + name + ": skipped (would leave fewer than " + MembershipPlan.MIN_VOTERS + " voters)";
        }
        long id = plan.member(index).id();
        Boolean ok = retry(() -> {
            admin.cluster().removeMember(id);   // a removed leader hands over once this commits (§4.2.2)
            return true;
        }, () -> inConfiguration(id).isEmpty());
        if (ok == null) {
            return "remove " + name + ": skipped after " + OPERATION_BUDGET.toSeconds() + " s of refusals";
        }
        plan.removed(index);
        removed++;
        if (wasLeader) {
            removedLeaders++;
        }
        slots.release(cluster.clientPort(index));
        // Refused by its peers from now on, it may have stopped itself already, and rightly (exit 3).
        cluster.expectExit(index);
        stop(index);
        return "remove " + label(index, wasLeader);
    }

    /** Adds process {@code index} as a learner and starts it on an empty data dir, as `member add` prints. */
    private String addLearner(int index) {
        String name = ProcessCluster.name(index);
        if (plan.indexUsed(index)) {
            throw new IllegalStateException(name + " was used before");
        }
        String peer = "127.0.0.1:" + cluster.peerPort(index);
        // Calling member add again with the same name and peer address returns the same member, so a lost
        // answer is simply asked again.
        AddedMember member = retry(() -> admin.cluster().addMember(name, peer, "", true), () -> false);
        if (member == null) {
            return "add " + name + ": skipped after " + OPERATION_BUDGET.toSeconds() + " s of refusals";
        }
        plan.added(index, member.id());   // refuses an id seen before: ids are never reused
        added++;
        if (slots.assign(cluster.clientPort(index)) < 0) {
            throw new IllegalStateException("no free client slot for " + name);
        }
        cluster.startMember(index, member.initialCluster(), "--initial-cluster-state", "existing",
                "--cluster-id", member.clusterId());
        cluster.awaitHealthy(index);
        return "add " + name + " (learner, id " + member.id() + ")";
    }

    /** Waits until the learner caught up and promotes it; one that never does is removed again. */
    private String promote(int index) {
        String name = ProcessCluster.name(index);
        long id = plan.member(index).id();
        // etcd refuses to promote a learner that is behind, and so does Rota: wait for "caught up" first.
        long deadline = System.nanoTime() + OPERATION_BUDGET.toNanos();
        while (!caughtUp(id) && System.nanoTime() < deadline) {
            pause();
        }
        Boolean ok = retry(() -> {
            admin.cluster().promoteMember(id);
            return true;
        }, () -> inConfiguration(id).map(m -> !m.learner()).orElse(false));
        if (ok != null) {
            plan.promoted(index);
            promoted++;
            return "promote " + name;
        }
        String undo = remove(index, false);
        return "promote " + name + ": skipped after " + OPERATION_BUDGET.toSeconds() + " s (" + undo + ")";
    }

    /**
     * Runs {@code call} until it succeeds, for up to {@link #OPERATION_BUDGET}; after each failure,
     * {@code applied} says whether the change happened anyway (its answer was lost). Null when it gave up.
     */
    private <T> T retry(Supplier<T> call, Supplier<Boolean> applied) {
        long deadline = System.nanoTime() + OPERATION_BUDGET.toNanos();
        while (true) {
            try {
                return call.get();
            } catch (RotaException e) {
                refusals++;
                try {
                    if (applied.get()) {
                        @SuppressWarnings("unchecked")
                        T yes = (T) Boolean.TRUE;
                        return yes;
                    }
                } catch (RotaException again) {
                    // no leader to ask right now: retry the change
                }
            }
            if (System.nanoTime() > deadline) {
                skipped++;
                return null;
            }
            pause();
        }
    }

    private boolean caughtUp(long id) {
        try {
            return inConfiguration(id).map(ClusterMember::caughtUp).orElse(false);
        } catch (RotaException e) {
            return false;   // no leader to ask right now
        }
    }

    /** The member with this id in the leader's member list, if it is there (throws when no leader answers). */
    private Optional<ClusterMember> inConfiguration(long id) {
        return admin.cluster().memberList().stream().filter(m -> m.id() == id).findFirst();
    }

    /** Stops a removed member's process: SIGTERM, then SIGKILL if it lingers. */
    private void stop(int index) {
        if (!cluster.isAlive(index)) {
            return;
        }
        try {
            cluster.terminate(index, Duration.ofSeconds(15));
        } catch (IllegalStateException e) {
            cluster.kill(index);
        }
    }

    @Override
    public String heal() {
        List<String> restarted = new ArrayList<>();
        for (MembershipPlan.Member m : plan.members()) {
            if (!plan.isDead(m.index()) && !cluster.isAlive(m.index())) {
                // Nothing the nemesis did stopped it: counted by the cluster, restarted so the run goes on.
                String name = ProcessCluster.name(m.index());
                String status = cluster.selfExits().stream().filter(e -> e.name().equals(name))
                        .reduce((first, last) -> last).map(e -> " with status " + e.status()).orElse("");
                cluster.startMember(m.index());
                restarted.add(name + " (it exited on its own" + status + ")");
            }
        }
        List<String> down = new ArrayList<>();
        for (MembershipPlan.Member m : plan.members()) {
            if (!plan.isDead(m.index())) {
                try {
                    cluster.awaitHealthy(m.index());
                } catch (AssertionError e) {
                    down.add(ProcessCluster.name(m.index()) + " (see " + cluster.logFile(m.index()) + ")");
                }
            }
        }
        if (!down.isEmpty()) {
            throw new IllegalStateException("members that do not come back: " + String.join(", ", down)
                    + "; members: " + describe());
        }
        return (restarted.isEmpty() ? "" : "restarted " + String.join(", ", restarted) + "; ") + "members now: "
                + describe();
    }

    /**
     * The members now, e.g. {@code n1, n4, n6 (voters), n7 (learner), n3 (dead, removal pending)}.
     *
     * @return a description
     */
    public String describe() {
        return plan.members().stream().map(m -> ProcessCluster.name(m.index()) + "=" + m.id()
                        + (m.voter() ? "" : " (learner)") + (plan.isDead(m.index()) ? " (dead, removal pending)" : ""))
                .collect(Collectors.joining(", "));
    }

    /**
     * The process indexes of the members that should be up (every member but a dead one awaiting removal).
     *
     * @return the indexes
     */
    public List<Integer> liveMembers() {
        return plan.members().stream().map(MembershipPlan.Member::index).filter(i -> !plan.isDead(i)).toList();
    }

    /**
     * The counts, for the progress output and the report.
     *
     * @return e.g. "membership changes: 31 (added 11, promoted 11, removed 9 (leader 4); replaced 3) ..."
     */
    public String summary() {
        return String.format(Locale.ROOT, "membership changes: %d (added %d, promoted %d, removed %d of which the"
                        + " leader %d; replacements %d), refused and retried: %d, skipped: %d, ids used: %d, never"
                        + " reused; members at the end: %s",
                added + promoted + removed, added, promoted, removed, removedLeaders, replaced, refusals, skipped,
                plan.usedIds().size(), describe());
    }

    /**
     * The number of successful changes (adds, promotions and removals).
     *
     * @return the count
     */
    public int changes() {
        return added + promoted + removed;
    }

    private static String label(int index, boolean leader) {
        return ProcessCluster.name(index) + (leader ? " (leader)" : "");
    }

    private static void pause() {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(RETRY_PAUSE_MS));
    }

    /** Closes the nemesis's own client. */
    @Override
    public void close() {
        admin.close();
    }
}
