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
