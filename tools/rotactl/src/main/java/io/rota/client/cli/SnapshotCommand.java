package io.rota.client.cli;

import io.rota.client.Maintenance;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.SnapshotSummary;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code rotactl snapshot save|status}, as etcdctl's (issue 18): a backup of one member's state in a file, and a
 * check of one. Restoring is the server's: {@code rota snapshot restore} (docs/operations.md, "Restore").
 */
@Command(name = "snapshot", description = "Backups: save one, check one (restore with 'rota snapshot restore').",
        subcommands = {SnapshotCommand.SaveCommand.class, SnapshotCommand.StatusCommand.class})
final class SnapshotCommand extends CommandGroup {

    /** Progress lines on stderr every this many bytes received. */
    static final long PROGRESS_EVERY_BYTES = 64L << 20;

    SnapshotCommand() {
        super("name a snapshot command: save, status");
    }

    /** {@code snapshot save FILE}. */
    @Command(name = "save", description = {"Streams a consistent snapshot of one member (the first of --endpoints) into"
            + " FILE: written to FILE.part, checked (SHA-256), fsync'd, then renamed to FILE.",
            "The snapshot holds every write acknowledged before the command started."})
    static final class SaveCommand extends ClientCommand {
        @Parameters(index = "0", paramLabel = "FILE", description = "Where the backup goes (replaced if it exists).")
        Path file;

        @Override
        int run(RotaClient client, Printer printer) throws IOException {
            // A place the file cannot go is a bad value (exit 2), found before a member streams anything.
            Path dir = file.toAbsolutePath().getParent();
            if (dir == null || !Files.isDirectory(dir)) {
                throw CommandFailure.badValue("cannot write " + file + ": the directory " + dir
                        + " does not exist; create it or give another FILE");
            }
            if (!Files.isWritable(dir)) {
                throw CommandFailure.badValue("cannot write " + file + ": the directory " + dir
                        + " is not writable; give a FILE in a directory you may write to");
            }
            if (Files.isDirectory(file)) {
                throw CommandFailure.badValue("cannot write " + file + ": it is a directory; give a file name");
            }
            String endpoint = client.endpoints().get(0);
            if (client.endpoints().size() > 1) {
                root().note(spec, Rotactl.note("source").field("endpoint", endpoint),
                        "snapshot from " + endpoint + " (the first of --endpoints)");
            }
            Path part = file.resolveSibling(file.getFileName() + ".part");
            SnapshotSummary summary;
            boolean saved = false;
            // Issue 33: a backup holds every key, value and password hash: readable by its owner only (0600),
            // whatever the umask. A stale .part of another run is removed first, so its mode is not inherited.
            Files.deleteIfExists(part);
            try (FileChannel channel = FileChannel.open(part, Set.of(StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE), ownerOnly())) {
                OutputStream out = Channels.newOutputStream(channel);
                long[] nextReport = {PROGRESS_EVERY_BYTES};
                summary = client.maintenance().snapshot(endpoint, out, received -> {
                    if (received >= nextReport[0]) {
                        root().note(spec, Rotactl.note("received").field("bytes", received),
                                "received " + (received >> 20) + " MiB...");
                        nextReport[0] += PROGRESS_EVERY_BYTES;
                    }
                });
                out.flush();
                channel.force(true);
                saved = true;
            } finally {
                if (!saved) {
                    Files.deleteIfExists(part);
                }
            }
            Files.move(part, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            } catch (IOException ignored) {
                // Some platforms cannot fsync a directory; the rename itself is atomic.
            }
            printer.snapshot(summary, file.toString());
            return 0;
        }
    }

    /** Owner read and write only, where the file system has POSIX modes (none elsewhere: Windows ACLs apply). */
    static java.nio.file.attribute.FileAttribute<?>[] ownerOnly() {
        if (!java.nio.file.FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
            return new java.nio.file.attribute.FileAttribute<?>[0];
        }
        return new java.nio.file.attribute.FileAttribute<?>[] {java.nio.file.attribute.PosixFilePermissions
                .asFileAttribute(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"))};
    }

    /** {@code snapshot status FILE}: reads and checks a backup, offline. */
    @Command(name = "status", description = "Checks a backup file (SHA-256, header against image) and prints its"
            + " revision, keys, leases, size and hash. Needs no cluster.")
    static final class StatusCommand implements Callable<Integer> {
        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @picocli.CommandLine.Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help.")
        boolean help;

        @Parameters(index = "0", paramLabel = "FILE", description = "A backup from 'rotactl snapshot save'.")
        Path file;

        @Override
        public Integer call() {
            Rotactl root = (Rotactl) spec.root().userObject();
            SnapshotSummary summary;
            try (InputStream in = Files.newInputStream(file)) {
                summary = Maintenance.verify(in);
            } catch (NoSuchFileException e) {
                throw CommandFailure.badValue("no such file: " + file + "; give the path of a backup that"
                        + " 'rotactl snapshot save' wrote");
            } catch (IOException e) {
                throw new CommandFailure("cannot read " + file + ": " + e.getMessage());
            } catch (RotaException e) {
                // The SDK's message is "INVALID_ARGUMENT: not a valid backup: why"; the code says nothing here.
                String why = e.getMessage().replaceFirst("^" + e.code() + ": ", "");
                throw new CommandFailure(file + " is " + why + "; take a new backup with 'rotactl snapshot save'");
            }
            root.writeOutFormat().on(spec.commandLine().getOut(), root.hex()).snapshot(summary, null);
            return 0;
        }
    }
}
