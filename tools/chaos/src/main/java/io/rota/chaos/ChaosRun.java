package io.rota.chaos;

import io.rota.chaos.checker.Verdict;
import io.rota.chaos.history.Event;
import io.rota.chaos.history.History;
import io.rota.chaos.history.HistoryReader;
import io.rota.chaos.history.HistoryWriter;
import io.rota.chaos.nemesis.ClockControl;
import io.rota.chaos.nemesis.ClockNemesis;
import io.rota.chaos.nemesis.Faults;
import io.rota.chaos.nemesis.KillNemesis;
import io.rota.chaos.nemesis.MembershipNemesis;
import io.rota.chaos.nemesis.MembershipPlan;
import io.rota.chaos.nemesis.MixedNemesis;
import io.rota.chaos.nemesis.Nemesis;
import io.rota.chaos.nemesis.NemesisSchedule;
import io.rota.chaos.nemesis.PartitionNemesis;
import io.rota.chaos.nemesis.PauseNemesis;
import io.rota.chaos.net.MemberSlots;
import io.rota.chaos.net.Network;
import io.rota.chaos.workload.LockWorkload;
import io.rota.chaos.workload.Workload;
import io.rota.chaos.workload.WorkloadContext;
import io.rota.chaos.workload.WorkloadResult;
import io.rota.chaos.workload.Workloads;
import io.rota.client.Auth;
import io.rota.client.RotaClient;
import io.rota.testkit.Ports;
import io.rota.testkit.ProcessCluster;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * One chaos run: a three-member cluster of real server processes whose Raft traffic, and their clients'
 * traffic, crosses a {@link Network} of fault proxies; a workload's clients; a nemesis on a seeded schedule;
 * then heal, final reads, and the check. The members run with {@code --unsafe-fault-injection} only when the
 * nemesis sets clocks ({@link #FAULT_INJECTION}). Everything lands in the output directory:
 * {@code history.jsonl}, {@code nemesis.log}, {@code cluster/n1.log ..} (member logs and data),
 * {@code report.txt} and {@code report.json}.
 *
 * <p>A member process that exits while no nemesis stopped it — a crash, a fail-stop, a refusal — fails the run
 * whatever the checker says ({@link Outcome#selfExits()}): a nemesis or the final heal may restart it so the
 * run goes on, but the cluster keeps every such exit ({@link ProcessCluster#takeSelfExits()}) and the report
 * names each, with its status and last log lines.
 *
 * <p>The membership nemesis changes who the members are, so its run is wired differently: the members dial
 * each other directly (there is no partition to inject, and a new member's peer address is the one it
 * registers with {@code member add}), and the clients dial a fixed set of {@link MemberSlots}, each forwarding
 * to whichever member occupies it now, so they reach new members and stop reaching removed ones.
 */
public final class ChaosRun {

    /** The nemesis names {@code --nemesis} accepts. */
    public static final List<String> NEMESES = List.of("kill", "pause", "partition", "clock", "mixed", "membership",
            "none");
    /** The nemeses that need the members' fault-injection endpoint (the clock nemesis, alone or in mixed). */
    public static final List<String> FAULT_INJECTION = List.of("clock", "mixed");

    /**
     * A run's settings.
     *
     * @param nemesis   kill, pause, partition, clock, mixed, membership or none
     * @param workload  register, lease or lock (see {@link Workloads#NAMES})
     * @param duration  how long the workload runs under faults
     * @param out       the output directory (created)
     * @param seed      the seed of the nemesis schedule and the clients
     * @param clients   concurrent client processes
     * @param keys      keys of the register workload
     * @param rate      target operations per second, all clients together
     * @param minSpell  shortest fault (and quiet) spell
     * @param maxSpell  longest fault (and quiet) spell
     * @param election  the members' election timeout
     * @param auth      enable auth: the workload runs as a user allowed only its own prefix (lock workload
     *                  only, not under the membership nemesis), so its refusals are part of the run
     * @param snapshotCount the members' {@code --snapshot-count}, or 0 for the server's default: a small one makes
     *                  members snapshot while membership changes are in flight, which once stopped them (issue 32)
     */
    public record Settings(String nemesis, String workload, Duration duration, Path out, long seed, int clients,
                           int keys, double rate, Duration minSpell, Duration maxSpell, Duration election,
                           boolean auth, int snapshotCount) {
    }

    /**
     * The outcome of a run.
     *
     * @param verdict   linearizable: yes, no or unknown
     * @param counts    ok / failed / indeterminate operations
     * @param lost      acknowledged writes lost
     * @param faults    faults injected
     * @param selfExits member processes that exited on their own (0 for a saved history: not known there)
     * @param verdictLine the one-line summary
     */
    public record Outcome(Verdict verdict, History.Counts counts, long lost, int faults, int selfExits,
                          String verdictLine) {

        /**
         * The process exit code: 0 when linearizable, nothing lost and no member exited on its own; 1 on a
         * violation or a member that exited on its own; 2 when undecided.
         *
         * @return the exit code
         */
        public int exitCode() {
            if (verdict == Verdict.NO || lost > 0 || selfExits > 0) {
                return 1;
            }
            return verdict == Verdict.UNKNOWN ? 2 : 0;
        }
    }

    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);
    private static final Duration RECOVERY_TIMEOUT = Duration.ofSeconds(120);

    private ChaosRun() {
    }

    /**
     * Turns auth on (issue 31, item 7): {@code root}, and the workload's user {@code chaos} with readwrite on
     * {@link LockWorkload#PREFIX} only, so the lock workload's attempts elsewhere are permission refusals.
     */
    private static WorkloadContext.Login enableAuth(String endpoints, PrintStream progress) {
        try (RotaClient admin = RotaClient.builder().endpoints(endpoints).callTimeout(Duration.ofSeconds(30))
                .credentials("root", "chaos-root".toCharArray()).build()) {
            Auth auth = admin.auth();
            auth.addUser("root", "chaos-root".toCharArray());
            auth.grantRole("root", "root");
            auth.addRole("chaos-lock");
            auth.grantPermission("chaos-lock", Auth.Permission.prefix(Auth.PermissionType.READWRITE, LockWorkload.PREFIX));
            auth.addUser("chaos", "chaos-pw".toCharArray());
            auth.grantRole("chaos", "chaos-lock");
            auth.enable();
        }
        progress.println("auth enabled: the workload runs as user 'chaos', readwrite on '" + LockWorkload.PREFIX
                + "' only");
        return new WorkloadContext.Login("chaos", "chaos-pw");
    }

    /**
     * Runs the whole thing and writes the report.
     *
     * @param s        the settings
     * @param progress where progress lines and the verdict go
     * @return the outcome
     */
    public static Outcome run(Settings s, PrintStream progress) {
        if (!NEMESES.contains(s.nemesis())) {
            throw new IllegalArgumentException("unknown nemesis '" + s.nemesis() + "': use one of " + NEMESES);
        }
        if (s.auth() && (!s.workload().equals("lock") || s.nemesis().equals("membership"))) {
            throw new IllegalArgumentException("--auth runs the lock workload only, under any nemesis but membership"
                    + " (its administrator would need credentials); drop --auth or use --workload lock");
        }
        Workload workload = Workloads.create(s.workload(), s.keys(), s.election());
        createDirectories(s.out());
        Path historyFile = s.out().resolve("history.jsonl");
        long started = System.nanoTime();
        Random random = new Random(s.seed());
        int faultCount;
        progress.printf(Locale.ROOT, "chaos: nemesis=%s workload=%s duration=%ds seed=%d out=%s%n", s.nemesis(),
                s.workload(), s.duration().toSeconds(), s.seed(), s.out());
        boolean faultInjection = FAULT_INJECTION.contains(s.nemesis());
        boolean membership = s.nemesis().equals("membership");
        String membershipSummary = null;
        List<ProcessCluster.SelfExit> selfExits;
        try (Network network = new Network(3, Ports::freePort);
             MemberSlots slots = membership ? new MemberSlots(MembershipPlan.MAX_MEMBERS, Ports::freePort) : null;
             HistoryWriter history = new HistoryWriter(historyFile, () -> System.nanoTime() - started)) {
            List<String> args = new java.util.ArrayList<>(List.of("--election-ms", Long.toString(s.election().toMillis())));
            if (s.snapshotCount() > 0) {
                args.addAll(List.of("--snapshot-count", Integer.toString(s.snapshotCount())));
            }
            if (faultInjection) {
                args.add("--unsafe-fault-injection");
            }
            ProcessCluster cluster = ProcessCluster.prepare(s.out().resolve("cluster"), 3,
                    membership ? null : network::address, args.toArray(String[]::new));
            MembershipNemesis members = null;
            try (cluster) {
                if (!membership) {
                    network.start(cluster::peerPort);
                    network.startClients(cluster::clientPort);
                }
                createDirectories(s.out().resolve("cluster"));
                cluster.startAll();
                cluster.awaitLeader();
                if (membership) {
                    for (int i = 0; i < cluster.size(); i++) {
                        slots.assign(cluster.clientPort(i));
                    }
                    members = new MembershipNemesis(cluster, slots);
                }
                ClockControl clocks = faultInjection ? new ClockControl(java.util.stream.IntStream.range(0, 3)
                        .mapToObj(i -> "127.0.0.1:" + cluster.httpPort(i)).toList()) : null;
                Faults faults = new Faults(cluster, network, clocks);
                WorkloadContext.Login login = s.auth() ? enableAuth(cluster.endpoints(), progress) : null;
                if (login != null) {   // the HTTP port answers root only now: /status (the leader), /fault/clock
                    cluster.httpCredentials("root", "chaos-root");
                    if (clocks != null) {
                        clocks.credentials("root", "chaos-root");
                    }
                }
                WorkloadContext context = membership
                        ? new WorkloadContext(slots.endpoints(0), slots::endpoints, history, started, s.seed(),
                        s.clients(), s.rate(), null)
                        : new WorkloadContext(cluster.endpoints(), c -> network.clientEndpoints(c % cluster.size()),
                        history, started, s.seed(), s.clients(), s.rate(), login);
                workload.start(context);
                NemesisSchedule schedule = new NemesisSchedule(membership ? members : nemesis(s.nemesis(), faults),
                        random, s.minSpell(), s.maxSpell(), history, s.out().resolve("nemesis.log"));
                try (schedule) {
                    if (!s.nemesis().equals("none")) {
                        schedule.start();
                    }
                    long end = System.nanoTime() + s.duration().toNanos();
                    while (System.nanoTime() < end) {
                        long wait = Math.min(end - System.nanoTime(), PROGRESS_EVERY.toNanos());
                        java.util.concurrent.locks.LockSupport.parkNanos(wait);
                        history.flush();
                        progress.printf(Locale.ROOT, "[%5d s] ops %s  fault: %s%n",
                                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started), workload.counters(),
                                schedule.current());
                    }
                }
                faultCount = schedule.faultCount();
                workload.stop();
                if (membership) {
                    // Nothing to undo; every member that should run is restarted if it stopped. One that does
                    // not come back is reported (a bug to look at), and the final reads need only a leader
                    // and a majority of the voters.
                    try {
                        progress.println("members: " + members.heal());
                    } catch (RuntimeException | AssertionError e) {
                        progress.println("WARNING: " + e.getMessage());
                    }
                    progress.println("waiting for a leader, then the final reads");
                    recover(cluster, List.of());
                } else {
                    healEverything(cluster, network, progress);
                    progress.println("healed; waiting for every member and a leader, then the final reads");
                    recover(cluster, java.util.stream.IntStream.range(0, cluster.size()).boxed().toList());
                }
                if (clocks != null) {
                    for (int i = 0; i < cluster.size(); i++) {
                        clocks.set(i, ClockControl.Setting.NONE);
                    }
                }
                workload.finish();
                if (schedule.failure() != null) {
                    progress.println("WARNING: the nemesis stopped early: " + schedule.failure());
                }
                if (members != null) {
                    membershipSummary = members.summary();
                    progress.println(membershipSummary);
                }
                // Taken here, reported below: the cluster's close() would throw them instead.
                selfExits = cluster.takeSelfExits();
                progress.println(selfExitReport(selfExits));
            } finally {
                if (members != null) {
                    members.close();
                }
            }
        }
        List<Event> events = HistoryReader.read(historyFile);
        WorkloadResult result = workload.check(events);
        History.Counts counts = History.counts(events);
        double seconds = (System.nanoTime() - started) / 1e9;
        String line = verdictLine(result, counts) + "  members exited on their own: " + selfExits.size();
        writeReports(s, result, counts, faultCount, seconds, line, membershipSummary, selfExits);
        progress.println(line);
        return new Outcome(result.verdict(), counts, result.lostAcknowledged(), faultCount, selfExits.size(), line);
    }

    /**
     * What the report says of the members that exited on their own: the count, then each with its status and
     * last log lines.
     *
     * @param exits the member processes that exited on their own
     * @return e.g. "members exited on their own: 0", or the count, "(the run fails)" and one entry each
     */
    static String selfExitReport(List<ProcessCluster.SelfExit> exits) {
        StringBuilder text = new StringBuilder("members exited on their own: " + exits.size());
        if (!exits.isEmpty()) {
            text.append(" (the run fails: a crash, a fail-stop or a refusal, not a nemesis's kill)");
            for (ProcessCluster.SelfExit e : exits) {
                text.append(System.lineSeparator()).append("  ").append(e.toString().replace("\n",
                        System.lineSeparator() + "    "));
            }
        }
        return text.toString();
    }

    private static String verdictLine(WorkloadResult result, History.Counts counts) {
        return String.format(Locale.ROOT,
                "linearizable: %s  ops: ok=%d failed=%d indeterminate=%d  acknowledged writes lost: %d",
                result.verdict().name().toLowerCase(Locale.ROOT), counts.ok(), counts.failed(), counts.info(),
                result.lostAcknowledged());
    }

    /**
     * The {@code check FILE} mode: judges a saved history.
     *
     * @param historyFile a history.jsonl
     * @param workload    the workload that produced it
     * @param out         where the verdict and report go
     * @return the outcome
     */
    public static Outcome check(Path historyFile, String workload, PrintStream out) {
        List<Event> events = HistoryReader.read(historyFile);
        WorkloadResult result = Workloads.create(workload, 1, Duration.ofSeconds(1)).check(events);
        History.Counts counts = History.counts(events);
        String line = verdictLine(result, counts);
        out.print(result.report());
        out.println(line);
        int faults = (int) events.stream().filter(e -> e.isNemesis() && !e.f().equals("heal")).count();
        return new Outcome(result.verdict(), counts, result.lostAcknowledged(), faults, 0, line);
    }

    private static Nemesis nemesis(String name, Faults faults) {
        return switch (name) {
            case "kill" -> new KillNemesis(faults);
            case "pause" -> new PauseNemesis(faults);
            case "partition" -> new PartitionNemesis(faults);
            case "clock" -> new ClockNemesis(faults.clocks(), faults.cluster()::leader);
            default -> new MixedNemesis(faults);   // "mixed"; "none" never starts its schedule
        };
    }

    /**
     * Belt and braces after the schedule's own heal: every link up, every member running and resumed. A member
     * that is down now exited on its own (the schedule restarted those it killed): the cluster has counted it,
     * and it is started again for the final reads.
     */
    private static void healEverything(ProcessCluster cluster, Network network, PrintStream progress) {
        network.heal();
        for (int i = 0; i < cluster.size(); i++) {
            if (cluster.isAlive(i)) {
                cluster.resume(i);
            } else {
                progress.println("restarting " + ProcessCluster.name(i) + ", which exited on its own");
                cluster.startMember(i);
            }
        }
    }

    /** Waits until these members answer /health and one of them is the leader. */
    private static void recover(ProcessCluster cluster, List<Integer> members) {
        long deadline = System.nanoTime() + RECOVERY_TIMEOUT.toNanos();
        for (int i : members) {
            cluster.awaitHealthy(i);
        }
        while (cluster.leader() < 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no leader " + RECOVERY_TIMEOUT.toSeconds()
                        + " s after healing every fault; see the member logs");
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    private static void writeReports(Settings s, WorkloadResult result, History.Counts counts, int faults,
                                     double seconds, String line, String membership,
                                     List<ProcessCluster.SelfExit> selfExits) {
        String text = String.format(Locale.ROOT, "nemesis: %s%nworkload: %s%nseed: %d%nduration: %.1f s (workload %d s)"
                        + "%nfaults injected: %d%n%sclients: %d, keys: %d, target rate: %.0f ops/s%n%n%s%n%s%n%s%n",
                s.nemesis(), s.workload(), s.seed(), seconds, s.duration().toSeconds(), faults,
                membership == null ? "" : membership + System.lineSeparator(), s.clients(), s.keys(), s.rate(),
                result.report(), selfExitReport(selfExits), line);
        String json = String.format(Locale.ROOT, "{\"nemesis\": \"%s\", \"workload\": \"%s\", \"seed\": %d,"
                        + " \"duration_s\": %.1f, \"faults\": %d, \"ok\": %d, \"failed\": %d, \"indeterminate\": %d,"
                        + " \"lost_acknowledged_writes\": %d, \"linearizable\": \"%s\","
                        + " \"members_exited_on_their_own\": %d}%n",
                s.nemesis(), s.workload(), s.seed(), seconds, faults, counts.ok(), counts.failed(), counts.info(),
                result.lostAcknowledged(), result.verdict().name().toLowerCase(Locale.ROOT), selfExits.size());
        try {
            Files.writeString(s.out().resolve("report.txt"), text);
            Files.writeString(s.out().resolve("report.json"), json);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the report in " + s.out(), e);
        }
    }

    private static void createDirectories(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
    }
}
