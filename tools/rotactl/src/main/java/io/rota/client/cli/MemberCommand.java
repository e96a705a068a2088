package io.rota.client.cli;

import io.rota.client.AddedMember;
import io.rota.client.ClusterMember;
import io.rota.client.ProtocolFacts;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

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
            + " of the larger configuration; --force adds it anyway."})
    static final class AddCommand extends ClientCommand {
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

        @Override
        int run(RotaClient client, Printer printer) {
            String peer;
            String clientAddress;
            try {
                ProtocolFacts.memberName("NAME", name);
                peer = peerAddress("--peer-urls", peerUrls);
                clientAddress = clientUrls == null ? "" : ProtocolFacts.hostPort("--client-urls", clientUrls);
            } catch (IllegalArgumentException e) {
                throw usage(e.getMessage());
            }
            printAdded(printer, client.cluster().addMember(name, peer, clientAddress, learner, force), clientAddress);
            return 0;
        }

        /**
         * What {@code member add} prints: what was done, what it did to the quorum (a voter raises it at once,
         * while its log is empty: §4.2.1), and the command that starts the new member.
         */
        static void printAdded(Printer printer, AddedMember added, String clientAddress) {
            List<String> next = new ArrayList<>();
            next.add(added.quorumEffect());
            next.add("Start it on an empty data dir:");
            next.add("  rota server --name " + added.name() + " --data-dir DATA_DIR --listen-peer " + added.peerAddress()
                    + " --listen-client " + (clientAddress.isEmpty() ? "HOST:PORT" : clientAddress)
                    + " --initial-cluster " + added.initialCluster() + " --initial-cluster-state existing"
                    + (added.clusterId().isEmpty() ? " [--cluster-id ID, as the others]"
                    : " --cluster-id " + added.clusterId()));
            if (added.learner()) {
                next.add("Then, once 'rotactl member list --progress' shows it caught up: rotactl member promote "
                        + added.id());
            }
            printer.memberChanged("Member " + added.name() + " added with id " + added.id() + " as a "
                    + (added.learner() ? "learner" : "voter") + " (peer " + added.peerAddress() + ")", added.id(), next);
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
                throw new CommandFailure("no member " + id + " in the cluster (it was never added, or is already"
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
                    throw new CommandFailure("member " + id + " is still catching up (LEARNER_BEHIND); see its LAG in"
                            + " 'rotactl member list --progress' and promote it again when CAUGHT UP is true");
                }
                if ("LEARNER_NOT_RESPONDING".equals(e.membershipRefusal())) {
                    throw new CommandFailure("member " + id + " has not answered the leader within an election timeout"
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
                    throw new CommandFailure("no member " + id + " in the cluster (it was never added, or was"
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
