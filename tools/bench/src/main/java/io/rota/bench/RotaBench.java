package io.rota.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code rota-bench}: the side-by-side bench. {@code rota-bench compare} runs the same workloads against
 * Rota, etcd and ZooKeeper, each alone on the machine, and prints one Markdown table with ratios. Normally
 * started by {@code scripts/bench.sh compare}, which builds the jars first. {@code rota-bench disk} measures
 * what the disk alone allows (the floor under every row of compare).
 */
@Command(name = "rota-bench", mixinStandardHelpOptions = true,
        subcommands = {RotaBench.CompareCommand.class, RotaBench.DiskCommand.class},
        description = "Benchmarks Rota side by side with etcd and ZooKeeper (see docs/performance.md).")
public final class RotaBench implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "name a command: rota-bench compare [options], or rota-bench disk [options]");
    }

    /**
     * Runs the command line.
     *
     * @param args arguments
     */
    public static void main(String[] args) {
        System.exit(new CommandLine(new RotaBench()).execute(args));
    }

    /** {@code rota-bench compare}: one pass over the chosen systems. */
    @Command(name = "compare", mixinStandardHelpOptions = true,
            description = {"Starts each system's three-member cluster in turn (alone on the machine), runs the "
                    + "workloads against it from a fresh client JVM, stops it, and prints one Markdown table.",
                    "The peers are started by etcd-cluster.sh and zk-cluster.sh, which apt-get install Debian's "
                    + "etcd-server/etcd-client and zookeeper packages if they are missing (this is said before it "
                    + "happens). A system that cannot start, or whose ports are busy, is skipped loudly."})
    static final class CompareCommand implements Callable<Integer> {

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--systems", split = ",", paramLabel = "NAME[,NAME...]", defaultValue = "rota,etcd,zk",
                description = "Systems to run, in order: rota, rota-etcd (Rota's etcd port through etcd's jetcd"
                        + " driver), etcd, zk (default: ${DEFAULT-VALUE}).")
        List<String> systems;

        @Option(names = "--quick", description = "A short pass (1 s warm-up, 3 s per row): the shape, in under "
                + "4 minutes; not for publishing.")
        boolean quick;

        @Option(names = "--workloads", split = ",", paramLabel = "NAME[,NAME...]",
                description = "Only these workloads (default: all): write-1, write-64, write-256, read-lin-64, "
                        + "read-ser-64, lock-1x1, lock-8x1, lock-64x64, failover (failover last).")
        List<String> workloads;

        @Option(names = "--warmup", paramLabel = "SECONDS", description = "Warm-up per row (default: 5, --quick 1).")
        Double warmupSeconds;

        @Option(names = "--measure", paramLabel = "SECONDS", description = "Measured window per row (default: 10, "
                + "--quick 3).")
        Double measureSeconds;

        @Option(names = "--out", paramLabel = "FILE", description = "Also write the report to FILE.")
        Path outFile;

        @Option(names = "--root", paramLabel = "DIR", defaultValue = ".",
                description = "The Rota repository: scripts/cluster.sh and kv-server/target/rota-server.jar "
                        + "(default: the current directory).")
        Path root;

        @Option(names = "--peer-tools", paramLabel = "DIR",
                description = "Where etcd-cluster.sh and zk-cluster.sh are (default: ROOT/../shared/tools).")
        Path peerTools;

        @Option(names = "--jars", paramLabel = "DIR",
                description = "Where the driver jars are (default: ROOT/tools/bench/target, "
                        + "ROOT/tools/bench/etcd/target, ROOT/tools/bench/zookeeper/target).")
        Path jars;

        @Option(names = "--work-dir", paramLabel = "DIR",
                description = "Logs and the clusters' data (default: a new directory under /tmp).")
        Path workDir;

        @Option(names = "--rota-base-port", paramLabel = "PORT", defaultValue = "9300",
                description = "ROTA_BASE_PORT for Rota's members: clients on PORT+1..3 (default: ${DEFAULT-VALUE}).")
        int rotaBasePort;

        @Override
        public Integer call() throws IOException {
            Plan plan = plan();
            Path repo = root.toAbsolutePath().normalize();
            Path tools = peerTools != null ? peerTools.toAbsolutePath() : repo.resolveSibling("shared").resolve("tools");
            Path work = workDir != null ? workDir.toAbsolutePath() : Files.createTempDirectory("rota-bench-");
            Files.createDirectories(work);
            List<SystemUnderTest> list = new ArrayList<>();
            for (String s : plan.systems()) {
                list.add(switch (s) {
                    case "rota" -> new RotaSystem(repo, work.resolve("rota"), rotaBasePort,
                            jar(repo, "tools/bench/target", "rota-bench.jar"));
                    case "rota-etcd" -> new RotaEtcdSystem(repo, work.resolve("rota-etcd"), rotaBasePort,
                            jar(repo, "tools/bench/etcd/target", "rota-bench-etcd.jar"));
                    case "etcd" -> new EtcdSystem(tools, work.resolve("etcd"), jar(repo, "tools/bench/etcd/target",
                            "rota-bench-etcd.jar"));
                    default -> new ZooKeeperSystem(tools, work.resolve("zookeeper"),
                            jar(repo, "tools/bench/zookeeper/target", "rota-bench-zookeeper.jar"));
                });
            }
            // UTF-8 whatever the locale: the report has µ, × and –.
            PrintStream out = new PrintStream(System.out, true, java.nio.charset.StandardCharsets.UTF_8);
            out.println("rota-bench: " + (plan.quick() ? "quick" : "full") + " pass over " + plan.systems()
                    + ", each alone on the machine; logs in " + work);
            Compare compare = new Compare(plan, list, work, repo, out);
            List<SystemRun> runs = compare.run();
            String report = compare.report(runs);
            out.println();
            out.print(report);
            if (outFile != null) {
                Files.writeString(outFile, report);
                out.println("\nrota-bench: the report is also in " + outFile);
            }
            out.println("rota-bench: logs of this pass: " + work + " (delete it when done)");
            if (runs.stream().allMatch(r -> r.skipped() != null)) {
                out.println("rota-bench: every system was skipped (reasons above); nothing was measured");
                return 1;
            }
            return 0;
        }

        private Path jar(Path repo, String dir, String name) {
            return jars != null ? jars.resolve(name) : repo.resolve(dir).resolve(name);
        }

        /** The options as a Plan; a bad value ends the command with exit 2 and a message naming the option. */
        Plan plan() {
            try {
                List<String> names = new ArrayList<>();
                for (String s : systems) {
                    String n = s.trim().toLowerCase(java.util.Locale.ROOT);
                    names.add(n.equals("zk") ? "zookeeper" : n);
                }
                Plan.Builder b = Plan.builder().quick(quick).systems(names);
                if (workloads != null) {
                    b.workloads(workloads.stream().map(String::trim).toList());
                }
                if (warmupSeconds != null) {
                    b.warmupMs(Math.round(warmupSeconds * 1000));
                }
                if (measureSeconds != null) {
                    b.measureMs(Math.round(measureSeconds * 1000));
                }
                return b.build();
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
        }
    }

    /** {@code rota-bench disk}: the disk's durable-append floor (see {@link DiskFloor}). */
    @Command(name = "disk", mixinStandardHelpOptions = true,
            description = {"Measures what the disk alone allows a Raft log: small appends, each made durable with "
                    + "fdatasync, by one writer and by WRITERS at once (members sharing the disk), and prints the "
                    + "ceilings they put on writes at one in flight and on lock cycles. Writes only in a new "
                    + "directory under --dir, deleted afterwards. Run it where the members' data dirs go, with "
                    + "nothing else busy."})
    static final class DiskCommand implements Callable<Integer> {

        @Option(names = "--dir", paramLabel = "DIR", defaultValue = ".",
                description = "Where to write: on the disk of the data dirs (default: the current directory).")
        Path dir;

        @Option(names = "--writers", paramLabel = "N", defaultValue = "3",
                description = "Writers sharing the disk at once, as members do on one machine "
                        + "(default: ${DEFAULT-VALUE}).")
        int writers;

        @Option(names = "--rounds", paramLabel = "N", defaultValue = "1000",
                description = "Timed appends of each kind (default: ${DEFAULT-VALUE}).")
        int rounds;

        @Option(names = "--bytes", paramLabel = "N", defaultValue = "300",
                description = "Bytes per append; an entry of a 256-byte put is about 300 (default: ${DEFAULT-VALUE}).")
        int bytes;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws IOException, InterruptedException {
            if (writers < 1 || rounds < 1 || bytes < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--writers, --rounds and --bytes must be at least 1");
            }
            Path where = dir.toAbsolutePath().normalize();
            if (!Files.isDirectory(where) || !Files.isWritable(where)) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--dir " + where + " is not a writable directory");
            }
            PrintStream out = new PrintStream(System.out, true, java.nio.charset.StandardCharsets.UTF_8);
            out.println("rota-bench disk: " + rounds + " synced appends alone, then " + rounds + " rounds of "
                    + writers + " at once, in " + where + " ...");
            DiskFloor.Result r = DiskFloor.measure(where, writers, rounds, bytes);
            out.print(DiskFloor.report(r, where));
            return 0;
        }
    }
}
