package io.rota.client.cli;

import io.rota.client.KvHash;
import io.rota.client.Member;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.ConnectException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiFunction;
import java.util.function.Function;

/** {@code rotactl endpoint status|health|hashkv [--cluster]}: one row per member. */
@Command(name = "endpoint", description = "Endpoint commands: each member's status, health or hash of its keys.",
        subcommands = {EndpointCommand.Status.class, EndpointCommand.Health.class, EndpointCommand.HashKv.class})
final class EndpointCommand extends CommandGroup {

    EndpointCommand() {
        super("name an endpoint command: status, health or hashkv");
    }

    /** The endpoints to ask: the configured ones, or with --cluster every member's published client address. */
    static List<String> targets(RotaClient client, boolean cluster) {
        return cluster ? client.cluster().members().stream().map(Member::clientAddress).toList() : client.endpoints();
    }

    /** Why a call to one member failed, in a few words (the row names the member). */
    static String reason(Throwable t, String timeout) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof ConnectException) {
                return "UNAVAILABLE: connection refused";
            }
        }
        Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        if (cause instanceof RotaException r) {
            return r.code() == RotaException.Code.TIMEOUT ? "TIMEOUT: no answer within " + timeout : r.getMessage();
        }
        return String.valueOf(cause);
    }

    /** Fails when some endpoints did not answer, naming them. */
    static void requireAll(List<String> failed, int total, String what) {
        if (!failed.isEmpty()) {
            throw new CommandFailure("ENDPOINTS_FAILED", failed.size() + " of " + total + " endpoints " + what + ": "
                    + String.join(", ", failed) + "; is every member running? (scripts/cluster.sh status)");
        }
    }

    /**
     * Asks every endpoint at once and waits for all (each call is bounded by the command timeout); an
     * answer becomes {@code answered(endpoint, value)}, a failure {@code failed(endpoint, reason)}.
     */
    static <T, R> List<R> askEach(List<String> endpoints, Function<String, CompletableFuture<T>> ask,
                                  BiFunction<String, T, R> answered, BiFunction<String, String, R> failed,
                                  String timeout) {
        List<CompletableFuture<R>> calls = new ArrayList<>();
        for (String e : endpoints) {
            calls.add(ask.apply(e).handle((value, x) -> x == null ? answered.apply(e, value)
                    : failed.apply(e, reason(x, timeout))));
        }
        return calls.stream().map(CompletableFuture::join).toList();
    }

    /** {@code endpoint status}. */
    @Command(name = "status", description = {"Prints each member's status: endpoint, member ID, name, version, "
            + "whether it leads, Raft term, Raft (commit) index, applied index, store revision, errors.",
            "Endpoints that do not answer are listed with the reason; then the exit code is 1."})
    static final class Status extends ClientCommand {
        @Option(names = "--cluster", description = "Ask every member the cluster lists, not only --endpoints.")
        boolean cluster;

        @Override
        int run(RotaClient client, Printer printer) {
            List<Printer.StatusRow> rows = askEach(targets(client, cluster), client.cluster()::statusAsync,
                    (e, s) -> new Printer.StatusRow(e, s, null), (e, why) -> new Printer.StatusRow(e, null, why),
                    root().timeoutText());
            printer.endpointStatus(rows);
            requireAll(rows.stream().filter(r -> r.status() == null).map(Printer.StatusRow::endpoint).toList(),
                    rows.size(), "did not answer");
            return 0;
        }
    }

    /** {@code endpoint health}. */
    @Command(name = "health", description = {"Checks that each member serves a linearizable read (it reaches a "
            + "leader with a working majority) and prints how long it took.",
            "Exit code 1 if any member is unhealthy."})
    static final class Health extends ClientCommand {
        @Option(names = "--cluster", description = "Check every member the cluster lists, not only --endpoints.")
        boolean cluster;

        @Override
        int run(RotaClient client, Printer printer) {
            List<Printer.HealthRow> rows = askEach(targets(client, cluster), client.cluster()::healthAsync,
                    (e, took) -> new Printer.HealthRow(e, took, null), (e, why) -> new Printer.HealthRow(e, null, why),
                    root().timeoutText());
            printer.endpointHealth(rows);
            requireAll(rows.stream().filter(r -> r.error() != null).map(Printer.HealthRow::endpoint).toList(),
                    rows.size(), "are unhealthy");
            return 0;
        }
    }

    /** {@code endpoint hashkv}. */
    @Command(name = "hashkv", description = {"Prints each member's hash of its key-value state at a revision "
            + "(etcd's HashKV): endpoint, hash, revision hashed. Members that applied the same revision must "
            + "have the same hash; a different one means their states diverged.",
            "Exit code 1 if a member does not answer, or if members hashed the same revision differently."})
    static final class HashKv extends ClientCommand {
        @Option(names = "--rev", paramLabel = "N", description = "Hash the state as of revision N (default 0: each "
                + "member's current revision, which may differ while writes go on; give N to compare).")
        long revision;

        @Option(names = "--cluster", description = "Ask every member the cluster lists, not only --endpoints.")
        boolean cluster;

        @Override
        int run(RotaClient client, Printer printer) {
            if (revision < 0) {
                throw usage("--rev must not be negative");
            }
            List<Printer.HashRow> rows = askEach(targets(client, cluster), e -> client.cluster().hashKvAsync(e, revision),
                    (e, h) -> new Printer.HashRow(e, h, null), (e, why) -> new Printer.HashRow(e, null, why),
                    root().timeoutText());
            printer.hashKv(rows);
            requireAll(rows.stream().filter(r -> r.hash() == null).map(Printer.HashRow::endpoint).toList(),
                    rows.size(), "did not answer");
            List<KvHash> hashes = rows.stream().map(Printer.HashRow::hash).toList();
            boolean sameRevision = hashes.stream().map(KvHash::revision).distinct().count() == 1;
            if (sameRevision && hashes.stream().map(KvHash::hash).distinct().count() > 1) {
                throw new CommandFailure("HASH_MISMATCH", "the members' states differ at revision " + hashes.get(0).revision()
                        + ": their hashes are not equal; a member whose hash differs from the majority's has "
                        + "diverged (check its log: 'rotactl endpoint status', the member's log file)");
            }
            if (!sameRevision) {
                long lowest = hashes.stream().mapToLong(KvHash::revision).min().orElse(0);
                root().note(spec, Rotactl.note("revisions_differ").field("rev", lowest), "(the members hashed"
                        + " different revisions, as writes went on; to compare them, give one: --rev " + lowest + ")");
            }
            return 0;
        }
    }
}
