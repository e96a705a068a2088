package io.rota.client;

/**
 * A member of the cluster's configuration as its leader sees it ({@link Cluster#memberList()}): its role and
 * how far its log is behind the leader's.
 *
 * @param id            the member id (never reused; `member add` assigns it)
 * @param name          its name ("" if it has neither registered nor published one)
 * @param peerAddress   {@code host:port} of its Raft peer port
 * @param clientAddress {@code host:port} of its client protocol ("" until it publishes it)
 * @param learner       a learner (receives the log, no vote) rather than a voter
 * @param leader        whether it is the leader
 * @param matchIndex    the leader's matchIndex for it: the last entry known to be in its log
 * @param lag           entries it lacks: the leader's last index minus {@code matchIndex}
 * @param caughtUp      within the promotion threshold of the leader and heard from this term: a learner
 *                      in this state can be promoted
 */
public record ClusterMember(long id, String name, String peerAddress, String clientAddress, boolean learner,
                            boolean leader, long matchIndex, long lag, boolean caughtUp) {

    static ClusterMember of(io.rota.proto.MemberInfo m) {
        return new ClusterMember(m.getId(), m.getName(), m.getPeerAddress(), m.getClientAddress(), m.getLearner(),
                m.getLeader(), m.getMatchIndex(), m.getLag(), m.getCaughtUp());
    }
}
