package io.rota.client;

import java.util.List;

/**
 * What {@link Cluster#addMember} did: the member it registered, with the id the cluster assigned, and the
 * configuration's members after the change — what the new member's {@code --initial-cluster} lists.
 *
 * @param id            the new member's id (one above every id ever used; never reused)
 * @param name          its name
 * @param peerAddress   its peer address
 * @param learner       added as a learner (promote it once caught up) rather than a voter
 * @param members       every member of the configuration after the change, the new one included
 * @param clusterId     the cluster's id, the new member's {@code --cluster-id} (empty from a server before
 *                      issue 32, whose clusters were all "rota" unless named)
 */
public record AddedMember(long id, String name, String peerAddress, boolean learner, List<ClusterMember> members,
                          String clusterId) {

    /** How many voters the configuration has after the change (the members that are not learners). */
    public int voters() {
        return (int) members.stream().filter(m -> !m.learner()).count();
    }

    /** How many votes commit an entry after the change: a majority of {@link #voters()} (§5.3). */
    public int quorum() {
        return voters() / 2 + 1;
    }

    /**
     * One sentence on what the add did to the quorum, for an operator: a voter raises the votes needed at once,
     * while its log is still empty (§4.2.1), so until it starts the cluster tolerates one failure fewer; a
     * learner changes nothing.
     */
    public String quorumEffect() {
        if (learner) {
            return "A learner does not vote: the cluster still needs " + quorum() + " of " + voters() + " votes.";
        }
        int spare = voters() - 1 - quorum(); // the others, all up, beyond the quorum
        String risk = spare <= 0 ? "one more failure stops it"
                : "it survives " + spare + (spare == 1 ? " failure" : " failures") + ", not " + (spare + 1);
        return "The cluster now needs " + quorum() + " of " + voters() + " votes; until " + name + " starts, " + risk
                + ". Prefer --learner, then 'rotactl member promote'.";
    }

    /** The {@code --initial-cluster} value for the new member: {@code NAME=ID@HOST:PORT} for every member. */
    public String initialCluster() {
        StringBuilder out = new StringBuilder();
        for (ClusterMember m : members) {
            if (out.length() > 0) {
                out.append(',');
            }
            out.append(m.name().isEmpty() ? "m" + m.id() : m.name()).append('=').append(m.id()).append('@')
                    .append(m.peerAddress());
        }
        return out.toString();
    }
}
