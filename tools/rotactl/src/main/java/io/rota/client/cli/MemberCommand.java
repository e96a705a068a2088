package io.rota.client.cli;

import io.rota.client.AddedMember;
import io.rota.client.ClusterMember;
import io.rota.client.ProtocolFacts;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * {@code rotactl member add|remove|promote|update|list}, as etcdctl has them (issue 13). Each change goes to the
 * leader, one server at a time; the output says what was done and what to do next. docs/operations.md has
 * the runbooks that string them together.
 */
@Command(name = "member", description = "Member commands: add, remove, promote, update, list.",
        subcommands = {MemberCommand.AddCommand.class, MemberCommand.RemoveCommand.class,
                MemberCommand.PromoteCommand.class, MemberCommand.UpdateCommand.class,
                MemberCommand.ListCommand.class})
final class MemberCommand extends CommandGroup {

    MemberCommand() {
        super("name a member command: add, remove, promote, update, list");
    }

    /** {@code member add NAME --peer-urls HOST:PORT [--client-urls HOST:PORT] [--learner]}. */
    @Command(name = "add", description = {"Adds a member: the cluster assigns its id (never reused) and adds it to the"
            + " configuration. Prints the command that starts it (--initial-cluster-state existing, on an empty data"
            + " dir).", "A learner (--learner) receives the log without a vote: promote it once caught up ('member"
            + " promote'). Without --learner the new member votes at once, while its log is still empty.",
            "Strict: a voter add is refused (QUORUM_AT_RISK) unless the voters that answer the leader are a quorum"
            + " of the larger configuration; --force adds it anyway.",
            "--learner --promote-when-caught-up: adds the learner, prints that (start the member now), then waits,"
            + " with a progress line a second on stderr, until it has caught up, and promotes it (design HS68)."})
    static final class AddCommand extends ClientCommand {
        /** How often the wait for a learner asks the leader for its progress, and prints it. */
        private static final Duration POLL = Duration.ofSeconds(1);

        @Parameters(index = "0", paramLabel = "NAME", description = "The new member's name (unique).")
        String name;

        @Option(names = "--peer-urls", required = true, paramLabel = "HOST:PORT",
                description = "Where the other members dial it (its --listen-peer): HOST:PORT, no scheme (rota"
                        + " peers speak their own protocol, not http).")
        String peerUrls;

        @Option(names = "--client-urls", paramLabel = "HOST:PORT",
                description = "Its client address (its --listen-client), for the printed command; it publishes it"
                        + " itself when it starts.")
        String clientUrls;

        @Option(names = "--learner", description = "Add as a learner (no vote until 'member promote').")
        boolean learner;

        @Option(names = "--force", description = "Add a voter even if too few voters answer the leader to commit"
                + " the larger configuration (the cluster may stop until the new member starts).")
        boolean force;

        @Option(names = "--promote-when-caught-up", description = "With --learner: wait until the learner has"
                + " caught up, then promote it to voter (exit 1 if it has not by --catch-up-timeout: it stays a"
                + " learner).")
        boolean promoteWhenCaughtUp;

        @Option(names = "--catch-up-timeout", paramLabel = "DURATION", defaultValue = "60s",
                converter = Conversions.DurationConverter.class,
                description = "How long --promote-when-caught-up waits (default: ${DEFAULT-VALUE}).")
        Duration catchUpTimeout;

        @Override
        int run(RotaClient client, Printer printer) {
            if (promoteWhenCaughtUp && !learner) {
                throw usage("--promote-when-caught-up needs --learner: a voter votes at once and has nothing to"
                        + " wait for; add --learner, or drop --promote-when-caught-up");
            }
            if (catchUpTimeout.isNegative() || catchUpTimeout.isZero()) {
                throw usage("--catch-up-timeout must be positive (got " + Conversions.format(catchUpTimeout) + ")");
            }
            String peer;
            String clientAddress;
            try {
                ProtocolFacts.memberName("NAME", name);
                peer = peerAddress("--peer-urls", peerUrls);
                clientAddress = clientUrls == null ? "" : ProtocolFacts.hostPort("--client-urls", clientUrls);
            } catch (IllegalArgumentException e) {
                throw usage(e.getMessage());
            }
            AddedMember added = client.cluster().addMember(name, peer, clientAddress, learner, force);
            printAdded(printer, added, clientAddress, promoteWhenCaughtUp);
            if (promoteWhenCaughtUp) {
                printer.memberPromoted("Member " + added.name() + " (id " + added.id() + ") caught up and was promoted"
                        + " to voter", promoteWhenCaughtUp(client, added));
            }
            return 0;
        }

        /**
         * Waits until learner {@code added} has caught up and promotes it; returns its record as a voter. The
         * leader decides: a promotion it refuses as LEARNER_BEHIND or LEARNER_NOT_RESPONDING (not started yet)
         * is tried again at the next poll, until the deadline.
         */
        private ClusterMember promoteWhenCaughtUp(RotaClient client, AddedMember added) {
            long deadline = System.nanoTime() + catchUpTimeout.toNanos();
            ClusterMember last = null;
            String refusal = "";
            while (true) {
                try {
                    last = find(client, added.id());
                    if (last == null) {
                        throw new CommandFailure("NOT_A_MEMBER", "member " + added.name() + " (id " + added.id()
                                + ") is no longer in the configuration (removed meanwhile?); nothing promoted"
                                + " (rotactl member list)");
                    }
                } catch (RotaException e) {
                    if (!transientFailure(e)) {
                        throw e;
                    }
                    refusal = "; the cluster did not answer: " + e.code();   // an election, say: ask again
                }
                if (last != null && !last.learner()) {
                    return last;   // promoted: by us on the previous round (the answer was lost), or by hand
                }
                if (last != null) {
                    long leaderIndex = last.matchIndex() + last.lag();
                    root().note(spec, Rotactl.note("catching_up").field("id", added.id())
                            .field("match_index", last.matchIndex()).field("leader_index", leaderIndex)
                            .field("lag", last.lag()).field("caught_up", last.caughtUp()),
                            "waiting for " + added.name() + " (id " + added.id() + ") to catch up: match index "
                                    + last.matchIndex() + " of the leader's " + leaderIndex + " (lag " + last.lag()
                                    + ")" + refusal);
                    refusal = "";
                    if (last.caughtUp()) {
                        try {
                            client.cluster().promoteMember(added.id(), force);
                            ClusterMember now = find(client, added.id());
                            return now != null ? now : last;
                        } catch (RotaException e) {
                            String why = e.membershipRefusal();
                            if (transientFailure(e)) {
                                refusal = "; the promotion got no answer (" + e.code() + "): trying again";
                            } else if ("LEARNER_BEHIND".equals(why) || "LEARNER_NOT_RESPONDING".equals(why)) {
                                refusal = "; the leader refused the promotion: " + why;
                            } else {
                                throw e;
                            }
                        }
                    }
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new CommandFailure("NOT_CAUGHT_UP", "member " + added.name() + " (id " + added.id()
                            + ") did not catch up within " + Conversions.format(catchUpTimeout)
                            + (last == null ? "" : " (match index " + last.matchIndex() + ", lag " + last.lag() + ")")
                            + "; it is still a learner: check that it runs (the command above) and its log, watch"
                            + " 'rotactl member list --progress', then 'rotactl member promote " + added.id() + "'");
                }
                try {
                    Thread.sleep(POLL.toMillis());
                } catch (InterruptedException e) {
                    root().stop().beginCleanup();
                    throw CommandFailure.stopped("stopped while waiting for member " + added.id() + " to catch up;"
                            + " it is still a learner: 'rotactl member promote " + added.id() + "' once 'rotactl"
                            + " member list --progress' shows it caught up", root().stop().forwardedSignal());
                }
            }
        }

        /** A failure worth asking again while the deadline allows (an election in progress, a slow member). */
        private static boolean transientFailure(RotaException e) {
            return e.code() == RotaException.Code.TIMEOUT || e.code() == RotaException.Code.UNAVAILABLE
                    || e.code() == RotaException.Code.NOT_LEADER;
        }

        /** Member {@code id} as the leader lists it; null if it is not (any more) in the configuration. */
        private static ClusterMember find(RotaClient client, long id) {
            return client.cluster().memberListing().members().stream().filter(m -> m.id() == id).findFirst()
                    .orElse(null);
        }

        /**
         * What {@code member add} prints: what was done, what it did to the quorum (a voter raises it at once,
         * while its log is empty: §4.2.1), and the command that starts the new member.
         */
        static void printAdded(Printer printer, AddedMember added, String clientAddress) {
            printAdded(printer, added, clientAddress, false);
        }

        /** As above; {@code promoting}: the command waits and promotes it, so it says that instead of what to run. */
        static void printAdded(Printer printer, AddedMember added, String clientAddress, boolean promoting) {
            List<String> next = new ArrayList<>();
            next.add(added.quorumEffect());
            next.add("Start it on an empty data dir:");
            next.add("  rota server --name " + added.name() + " --data-dir DATA_DIR --listen-peer " + added.peerAddress()
                    + " --listen-client " + (clientAddress.isEmpty() ? "HOST:PORT" : clientAddress)
                    + " --initial-cluster " + added.initialCluster() + " --initial-cluster-state existing"
                    + (added.clusterId().isEmpty() ? " [--cluster-id ID, as the others]"
                    : " --cluster-id " + added.clusterId()));
            if (added.learner() && promoting) {
                next.add("Waiting for it to catch up, then promoting it (progress on stderr).");
            } else if (added.learner()) {
                next.add("Then, once 'rotactl member list --progress' shows it caught up: rotactl member promote "
                        + added.id());
            }
            printer.memberAdded(added, clientAddress, "Member " + added.name() + " added with id " + added.id()
                    + " as a " + (added.learner() ? "learner" : "voter") + " (peer " + added.peerAddress() + ")", next);
        }
    }

    /**
     * A peer address as {@code HOST:PORT}. A scheme is refused rather than stripped: {@code http://} suggests the
     * peers speak HTTP, which they do not, and an address copied from etcd's documentation would otherwise be
     * taken silently (issue 32, item 7). The etcd door still takes etcd's {@code http://HOST:PORT} form.
     */
    static String peerAddress(String field, String value) {
        if (value.contains("://")) {
            throw new IllegalArgumentException(field + " '" + value + "': " + field + " takes HOST:PORT; rota peers"
                    + " do not speak http (give e.g. " + value.substring(value.indexOf("://") + 3) + ")");
        }
        return ProtocolFacts.hostPort(field, value);
    }

    /** {@code member remove ID [--force]}. */
    @Command(name = "remove", description = {"Removes a member from the configuration and retires its id for good.",
            "Strict: refused (QUORUM_AT_RISK) unless the remaining voters that answer the leader are a quorum of"
            + " them; --force removes anyway (docs/operations.md, 'Membership changes that lose quorum')."})
    static final class RemoveCommand extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID", description = "The member's id (see 'member list').")
        long id;

        @Option(names = "--force", description = "Remove even if the remaining voters that answer are too few to"
                + " commit the change: for members that are gone for good. The cluster takes no writes until"
                + " enough of the remaining voters answer.")
        boolean force;

        @Override
        int run(RotaClient client, Printer printer) {
            // The cluster treats removing a non-member as done (so that a retried remove completes); a user who
            // typed the wrong id must hear that nothing was removed, not "removed".
            List<ClusterMember> members = client.cluster().memberList();
            if (members.stream().noneMatch(m -> m.id() == id)) {
                throw new CommandFailure("NOT_A_MEMBER", "no member " + id + " in the cluster (it was never added, or is already"
                        + " removed); nothing removed; its members: " + members.stream()
                        .map(m -> m.id() + " " + m.name()).collect(Collectors.joining(", "))
                        + " (rotactl member list)");
            }
            client.cluster().removeMember(id, force);
            printer.memberChanged("Member " + id + " removed from the cluster", id, List.of(
                    "Its process exits by itself once it learns of the removal (status 3; a process under id " + id
                            + " is refused from now on); then delete its data dir.",
                    "To put a member back on that host: rotactl member add NAME --peer-urls HOST:PORT"));
            return 0;
        }
    }

    /** {@code member promote ID [--force]}. */
    @Command(name = "promote", description = {"Promotes a learner to voter; refused while it is behind the leader"
            + " or has not answered it within an election timeout.",
            "Strict: refused (QUORUM_AT_RISK) unless the voters that answer the leader are a quorum of the larger"
            + " configuration; --force skips that check (not the other two)."})
    static final class PromoteCommand extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID", description = "The learner's id.")
        long id;

        @Option(names = "--force", description = "Promote even if too few voters answer the leader to commit the"
                + " larger configuration (a learner behind or not answering is refused all the same).")
        boolean force;

        @Override
        int run(RotaClient client, Printer printer) {
            try {
                client.cluster().promoteMember(id, force);
            } catch (RotaException e) {
                if ("LEARNER_BEHIND".equals(e.membershipRefusal())) {
                    throw new CommandFailure("LEARNER_BEHIND", "member " + id + " is still catching up (LEARNER_BEHIND); see its LAG in"
                            + " 'rotactl member list --progress' and promote it again when CAUGHT UP is true");
                }
                if ("LEARNER_NOT_RESPONDING".equals(e.membershipRefusal())) {
                    throw new CommandFailure("LEARNER_NOT_RESPONDING", "member " + id + " has not answered the leader within an election timeout"
                            + " (LEARNER_NOT_RESPONDING): start it, or check its network, then promote it again");
                }
                throw e;
            }
            printer.memberChanged("Member " + id + " promoted to voter", id, List.of());
            return 0;
        }
    }

    /** {@code member update ID --peer HOST:PORT} (etcdctl's {@code member update ID --peer-urls URL}). */
    @Command(name = "update", description = {"Changes a member's peer address: every member dials it there from now"
            + " on. Then restart that member listening there (--listen-peer, --advertise-peer) on its own data dir.",
            "No configuration change: the member keeps its id, its vote and its log."})
    static final class UpdateCommand extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID", description = "The member's id (see 'member list').")
        long id;

        @Option(names = {"--peer", "--peer-urls"}, required = true, paramLabel = "HOST:PORT",
                description = "Its new peer address: HOST:PORT, no scheme.")
        String peerUrls;

        @Override
        int run(RotaClient client, Printer printer) {
            String peer;
            try {
                peer = peerAddress("--peer", peerUrls);
            } catch (IllegalArgumentException e) {
                throw usage(e.getMessage());
            }
            try {
                client.cluster().updateMember(id, peer);
            } catch (RotaException e) {
                if ("NOT_A_MEMBER".equals(e.membershipRefusal())) {
                    throw new CommandFailure("NOT_A_MEMBER", "no member " + id + " in the cluster (it was never added, or was"
                            + " removed); nothing updated (rotactl member list)");
                }
                throw e;
            }
            printer.memberChanged("Member " + id + " updated: peer " + peer, id, List.of(
                    "Restart member " + id + " with --listen-peer " + peer + " (and --advertise-peer, if it has one)"
                            + " on its own data dir; the others dial it there now."));
            return 0;
        }
    }

    /** {@code member list [--progress]}. */
    @Command(name = "list", description = {"Lists the members of the configuration: ID, status (started once it"
            + " published its client address), name, peer address, client address, whether a learner.",
            "--progress adds, from the leader: whether it leads, its match index, its lag in entries, and whether"
            + " it is caught up (a learner can be promoted)."})
    static final class ListCommand extends ClientCommand {
        @Option(names = {"--progress", "-l"}, description = "Add leader, match index, lag and caught-up columns.")
        boolean progress;

        @Override
        int run(RotaClient client, Printer printer) {
            io.rota.client.Cluster.MemberListing listing;
            try {
                listing = client.cluster().memberListing();
            } catch (RotaException e) {
                if (e.code() != RotaException.Code.INVALID_ARGUMENT) {
                    throw e;
                }
                // A server from before issue 13 answers no member list: show what members published.
                printer.memberList(client.cluster().members());
                return 0;
            }
            printer.clusterMembers(listing.members(), progress, listing.clusterId());
            return 0;
        }
    }

}
