package io.rota.raft.sim;

import io.rota.raft.core.ProposalResult;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Role;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs simulated histories: a list of {@link Action}s against a fresh {@link SimCluster}, then (for
 * liveness) a healing phase. A failing run is shrunk to a short list of actions that still fails, and
 * reported with its seed so it can be replayed exactly ({@code -Dsim.seed=<seed>}).
 */
public final class Simulation {

    /** Healthy rounds (each: one tick per node, then deliver everything) allowed for recovery. */
    static final int LIVENESS_ROUNDS = 200;
    /** Healthy rounds a healed cluster's leader must keep its term for: three election timeouts. */
    static final int QUIET_ROUNDS = 30;

    private Simulation() {
    }

    /**
     * The result of one run: {@code failure} is null when every invariant held. {@code nodes} is the number
     * of voters the cluster starts with (it also has {@link SimCluster#SPARES} spares).
     */
    public record Outcome(int nodes, long seed, List<Action> actions, int failedAtStep, String failure,
                          String trace, long committed, long proposals, long reads, long changes) {
        public boolean ok() {
            return failure == null;
        }
    }

    /** Run {@code actions}; if {@code liveness}, then heal everything and require progress. */
    public static Outcome run(int nodes, long seed, List<Action> actions, boolean liveness) {
        SimCluster cluster = new SimCluster(nodes, seed);
        int i = 0;
        try {
            for (; i < actions.size(); i++) {
                cluster.run(actions.get(i));
            }
            if (liveness) {
                checkLiveness(cluster);
            }
            // A passing run keeps no history: a long sweep holds every outcome until it is counted.
            return new Outcome(nodes, seed, List.of(), -1, null, null, cluster.maxCommitted(),
                    cluster.proposalsAccepted(), cluster.readsReleased(), cluster.changesCommitted());
        } catch (RuntimeException e) {
            String failure = e.getClass().getSimpleName() + ": " + e.getMessage();
            return new Outcome(nodes, seed, actions, i, failure, cluster.trace(), cluster.maxCommitted(),
                    cluster.proposalsAccepted(), cluster.readsReleased(), cluster.changesCommitted());
        }
    }

    /**
     * Liveness: once the faults stop (every node up, every link repaired, every message delivered), a
     * leader emerges and a new proposal is applied everywhere within {@link #LIVENESS_ROUNDS} rounds. A
     * leader may still step down right after healing (CheckQuorum judges the window that contained the
     * partition, and old messages such as a TimeoutNow may still arrive); then the client proposes again
     * to the next leader, as a real client would. Only the members of the leader's configuration must
     * follow it and apply the proposal: spares and removed servers are not in the cluster.
     */
    static void checkLiveness(SimCluster cluster) {
        cluster.healAll();
        ProposalResult.Accepted proposal = null;
        for (int round = 0; round < LIVENESS_ROUNDS; round++) {
            cluster.healthyRound();
            long leader = cluster.stableLeader();
            if (leader != RaftNode.NONE && (proposal == null
                    || cluster.node(leader).term(proposal.lastIndex()) != proposal.term())) {
                proposal = cluster.proposeAtLeader("liveness".getBytes(StandardCharsets.UTF_8));
            }
            if (proposal != null && cluster.allApplied(proposal.lastIndex(), proposal.term())) {
                // The proposal sits after any configuration entry the leader had: every change accepted has
                // now committed or was truncated (refused ones never entered the log).
                checkUndisturbed(cluster);
                return;
            }
        }
        throw new InvariantViolation("liveness: " + LIVENESS_ROUNDS + " healthy rounds after healing, "
                + (proposal == null ? "no stable leader took a proposal"
                : "the proposal at " + proposal.lastIndex() + " was not applied everywhere"));
    }

    /**
     * §4.2.3, §9.6: with PreVote or CheckQuorum on, a leader of a healed cluster that is a voter of its own
     * configuration keeps its term for {@link #QUIET_ROUNDS} more healthy rounds — no removed server (still
     * running, perhaps unaware of its removal) and no spare may depose it (issue 32, item 6).
     */
    static void checkUndisturbed(SimCluster cluster) {
        long leader = cluster.stableLeader();
        if (!cluster.disruptionGuards() || leader == RaftNode.NONE
                || !cluster.node(leader).configuration().isVoter(leader)) {
            return;
        }
        long term = cluster.node(leader).currentTerm();
        for (int round = 0; round < QUIET_ROUNDS; round++) {
            cluster.healthyRound();
        }
        if (cluster.node(leader).role() != Role.LEADER || cluster.node(leader).currentTerm() != term) {
            throw new InvariantViolation("disruption: leader " + leader + " of term " + term + " was deposed in a "
                    + "healthy cluster with PreVote or CheckQuorum on: " + cluster.node(leader));
        }
    }

    /**
     * Cut a failing run down (delta debugging): drop the steps after the failure, then try removing
     * ever smaller chunks, keeping every removal after which the run still fails.
     */
    public static Outcome shrink(Outcome failing, boolean liveness, int maxRuns) {
        Outcome best = failing;
        List<Action> actions = new ArrayList<>(failing.actions().subList(0,
                Math.min(failing.actions().size(), failing.failedAtStep() + 1)));
        Outcome truncated = run(failing.nodes(), failing.seed(), actions, liveness);
        if (!truncated.ok()) {
            best = truncated;
        } else {
            actions = new ArrayList<>(failing.actions());
        }
        int runs = 1;
        for (int chunk = Math.max(1, actions.size() / 2); chunk >= 1 && runs < maxRuns; chunk /= 2) {
            for (int start = 0; start < actions.size() && runs < maxRuns; ) {
                List<Action> candidate = new ArrayList<>(actions.subList(0, start));
                candidate.addAll(actions.subList(Math.min(actions.size(), start + chunk), actions.size()));
                Outcome o = run(failing.nodes(), failing.seed(), candidate, liveness);
                runs++;
                if (!o.ok()) {
                    actions = candidate;
                    best = o;
                } else {
                    start += chunk;
                }
            }
        }
        return best;
    }

    /** A failure report naming the seed and the shortest failing history found. */
    public static String report(Outcome original, Outcome shrunk) {
        StringBuilder sb = new StringBuilder();
        sb.append("Simulation failed: ").append(original.nodes()).append(" nodes (+").append(SimCluster.SPARES)
                .append(" spares), seed ").append(original.seed())
                .append(", at step ").append(original.failedAtStep()).append(" of ").append(original.actions().size())
                .append("\n  ").append(original.failure())
                .append("\n  replay: ./mvnw -B verify -pl raft-core -am -Dtest=SimulationTest -Dsim.seed=")
                .append(original.seed()).append(" -Dsim.nodes=").append(original.nodes())
                .append("\nShrunk to ").append(shrunk.actions().size()).append(" actions: ").append(shrunk.actions())
                .append("\n  ").append(shrunk.failure())
                .append("\nLast events of the shrunk run:\n").append(shrunk.trace());
        return sb.toString();
    }
}
