package io.rota.chaos;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * {@code rota-chaos run ...} runs a chaos test against three real server processes; {@code rota-chaos check
 * FILE} judges a saved history. Exit code 0: linearizable and nothing lost (and, for a run, no member exited on its
 * own); 1: a violation (or a member that exited on its own); 2: undecided.
 */
@Command(name = "rota-chaos", mixinStandardHelpOptions = true, subcommands = {ChaosMain.Run.class, ChaosMain.Check.class},
        description = "Jepsen-style chaos tests of a three-member Rota cluster, with a linearizability checker.")
public final class ChaosMain implements Runnable {

    /**
     * Entry point.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(new CommandLine(new ChaosMain()).execute(args));
    }

    /** Without a subcommand: the usage. */
    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /** {@code run}: a chaos run. */
    @Command(name = "run", mixinStandardHelpOptions = true, description = "Run a workload under a nemesis and check it.")
    static final class Run implements Callable<Integer> {
        @Option(names = "--nemesis", defaultValue = "mixed", description = "kill, pause, partition, clock, mixed, membership or none (default: ${DEFAULT-VALUE}).")
        String nemesis;
        @Option(names = "--workload", defaultValue = "register", description = "register, lease or lock (default: ${DEFAULT-VALUE}).")
        String workload;
        @Option(names = "--seconds", defaultValue = "120", description = "How long the workload runs under faults (default: ${DEFAULT-VALUE}).")
        long seconds;
        @Option(names = "--out", required = true, description = "Output directory (created).")
        Path out;
        @Option(names = "--seed", description = "Seed of the schedule and the clients (default: random, printed).")
        Long seed;
        @Option(names = "--clients", defaultValue = "20", description = "Concurrent client processes (default: ${DEFAULT-VALUE}).")
        int clients;
        @Option(names = "--keys", defaultValue = "8", description = "Keys of the register workload; locks of the lock workload (default: ${DEFAULT-VALUE}).")
        int keys;
        @Option(names = "--rate", defaultValue = "1000", description = "Target operations per second, all clients (default: ${DEFAULT-VALUE}).")
        double rate;
        @Option(names = "--min-spell-s", defaultValue = "5", description = "Shortest fault / quiet spell (default: ${DEFAULT-VALUE}).")
        long minSpell;
        @Option(names = "--max-spell-s", defaultValue = "10", description = "Longest fault / quiet spell (default: ${DEFAULT-VALUE}).")
        long maxSpell;
        @Option(names = "--election-ms", defaultValue = "1000", description = "The members' election timeout (default: ${DEFAULT-VALUE}).")
        long electionMs;
        @Option(names = "--snapshot-count", defaultValue = "0", description = "The members' --snapshot-count; 0 keeps the server's default. A small one (e.g. 20) makes members snapshot while membership changes are in flight (issue 32).")
        int snapshotCount;
        @Option(names = "--auth", description = "Enable auth; the lock workload runs as a user allowed only its own prefix and also tries others (lock workload only; not with the membership nemesis).")
        boolean auth;

        @Override
        public Integer call() {
            long s = seed != null ? seed : new java.util.Random().nextLong();
            ChaosRun.Outcome outcome = ChaosRun.run(new ChaosRun.Settings(nemesis, workload, Duration.ofSeconds(seconds),
                    out.toAbsolutePath(), s, clients, keys, rate, Duration.ofSeconds(minSpell), Duration.ofSeconds(maxSpell),
                    Duration.ofMillis(electionMs), auth, snapshotCount), System.out);
            return outcome.exitCode();
        }
    }

    /** {@code check FILE}: judge a saved history. */
    @Command(name = "check", mixinStandardHelpOptions = true, description = "Check a saved history.jsonl.")
    static final class Check implements Callable<Integer> {
        @Parameters(index = "0", description = "The history file.")
        Path file;
        @Option(names = "--workload", defaultValue = "register", description = "The workload that wrote it: register, lease or lock (default: ${DEFAULT-VALUE}).")
        String workload;

        @Override
        public Integer call() {
            return ChaosRun.check(file, workload, System.out).exitCode();
        }
    }
}
