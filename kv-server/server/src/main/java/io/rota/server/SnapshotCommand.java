package io.rota.server;

import io.rota.raft.core.Snapshot;
import io.rota.server.backup.BackupFile;
import io.rota.server.backup.Restore;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

/** {@code rota snapshot ...}: offline work on backup files (issue 18), as etcdutl's. */
@Command(name = "snapshot", mixinStandardHelpOptions = true, subcommands = SnapshotCommand.RestoreCommand.class,
        description = "Offline work on backup files taken with 'rotactl snapshot save'.")
final class SnapshotCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: try 'rota snapshot restore'");
    }

    /**
     * {@code rota snapshot restore FILE --name N --initial-cluster ... --data-dir DIR}: one member's data
     * directory of a new cluster (see {@link Restore}). Exit 0 when written, 1 if the file is not a valid backup
     * or the directory cannot be written, 2 for a bad command line.
     */
    @Command(name = "restore", mixinStandardHelpOptions = true,
            description = "Build a data directory of a NEW cluster from a backup file. Run it once per member"
                    + " (same FILE, --initial-cluster and --cluster-id), then start every member with rota server.")
    static final class RestoreCommand implements Callable<Integer> {

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "FILE", description = "A backup from 'rotactl snapshot save'.")
        Path file;

        @Option(names = "--name", required = true, description = "The member this directory is for, as in"
                + " --initial-cluster.")
        String name;

        @Option(names = "--initial-cluster", required = true, description = "The new cluster's members, as rota server"
                + " takes it: n1=host:port,n2=host:port,... (ids by position) or n1=1@host:port,...")
        String initialCluster;

        @Option(names = "--data-dir", required = true, description = "Where to build the member's directory; must"
                + " not exist or be empty.")
        Path dataDir;

        @Option(names = "--cluster-id", description = "The new cluster's id (default: restored-<8 random hex digits>,"
                + " new at every restore: give the id the first restore printed to the other members'). Must differ"
                + " from the backed-up cluster's, so that its surviving members are refused by the new one.")
        String clusterId;

        @Override
        public Integer call() {
            Map<String, Long> explicit = new LinkedHashMap<>();
            Map<String, InetSocketAddress> members;
            try {
                members = ServerCommand.cluster(initialCluster, explicit);
            } catch (FlagException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            if (!members.containsKey(name)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--name " + name + " is not in"
                        + " --initial-cluster " + members.keySet());
            }
            Map<String, Long> ids = new LinkedHashMap<>();
            long position = 1;
            for (String member : members.keySet()) {
                ids.put(member, explicit.isEmpty() ? position++ : explicit.get(member));
            }
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            BackupFile backup;
            try {
                backup = BackupFile.read(file);
            } catch (BackupFile.InvalidBackupException e) {
                err.println("rota snapshot restore: " + e.getMessage());
                return 1;
            } catch (IOException e) {
                err.println("rota snapshot restore: cannot read " + file + ": " + e.getMessage());
                return 1;
            }
            String oldCluster = backup.info().getClusterId();
            // Random unless named (issue 32): two restores of one backup are two clusters, and must not admit
            // each other's members (one derived from the file's hash gave every restore of it the same id).
            byte[] random = new byte[4];
            new java.security.SecureRandom().nextBytes(random);
            String newCluster = clusterId != null ? clusterId : "restored-" + java.util.HexFormat.of().formatHex(random);
            if (newCluster.isBlank() || newCluster.equals(oldCluster)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--cluster-id must name a new cluster,"
                        + " not '" + oldCluster + "' (the backed-up cluster's): its surviving members would be admitted");
            }
            Set<Long> voters = new LinkedHashSet<>(ids.values());
            Snapshot snapshot;
            try {
                java.util.TreeMap<Long, String> byId = new java.util.TreeMap<>();
                members.forEach((member, address) -> byId.put(ids.get(member),
                        member + "=" + ids.get(member) + "@" + ServerConfig.format(address)));
                snapshot = Restore.write(backup, dataDir, newCluster, ids.get(name), voters, String.join(",", byId.values()));
            } catch (RuntimeException e) {
                err.println("rota snapshot restore: " + e.getMessage());
                return 1;
            }
            out.printf("restored %s into %s for member %s (id %d) of a new cluster%n", file, dataDir, name, ids.get(name));
            out.printf("  revision %d, %d keys, %d leases (their TTLs restart in full), history compacted at %d%n",
                    backup.image().getRevision(), backup.image().getKvsCount(), backup.image().getLeasesCount(),
                    backup.image().getCompactRevision());
            out.printf("  the log starts after entry %d (term %d); voters %s%n", snapshot.index(), snapshot.term(), voters);
            out.printf("  cluster id %s (the backup came from '%s')%n", newCluster, oldCluster);
            out.printf("next: restore every other member of --initial-cluster from the same file with --cluster-id %s,"
                    + " then start each with%n", newCluster);
            out.printf("  rota server --name %s --data-dir %s --initial-cluster %s --cluster-id %s"
                    + " --listen-peer %s --listen-client HOST:PORT%n", name, dataDir, initialCluster, newCluster,
                    ServerConfig.format(members.get(name)));
            out.flush();
            return 0;
        }
    }
}
