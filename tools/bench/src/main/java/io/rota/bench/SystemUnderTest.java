package io.rota.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One system the bench compares: how to start its three members, find their processes and its leader, read
 * its version, and stop it. Each starts through its own script (Rota's scripts/cluster.sh, the peers'
 * etcd-cluster.sh and zk-cluster.sh), so a reader can start the same cluster by hand.
 */
abstract class SystemUnderTest {

    /** The name in the table's header. */
    abstract String displayName();

    /** The driver's system name (DriverMain.TARGETS) — also the key of --systems. */
    abstract String driverName();

    /** The jar the driver JVM runs with. */
    abstract Path driverJar();

    /** The ports the members will listen on; any already in use means another instance runs: skip. */
    abstract List<Integer> ports();

    /**
     * What is missing to run this system at all (a script, a built jar), or null when nothing is.
     *
     * @return a message saying what is missing and how to get it
     */
    abstract String missing();

    /** A line to print before starting, e.g. that the script may apt-get install a package; or null. */
    abstract String installNotice();

    /**
     * Starts the three members and waits until they serve.
     *
     * @param shell runs the script
     * @return the client endpoints, comma-separated host:port
     * @throws IOException with the script's output if it failed
     */
    abstract String start(Shell shell) throws IOException;

    /** The members' process ids (those alive). */
    abstract List<Long> memberPids();

    /**
     * The current leader's process id.
     *
     * @param shell runs the status probe
     * @return the pid
     * @throws IOException if no leader is known
     */
    abstract long leaderPid(Shell shell) throws IOException;

    /** The server's version, from its binary or the running server. */
    abstract String serverVersion(Shell shell);

    /** Stops the members and removes their data. Never throws: the next system must get a quiet machine. */
    abstract void stop(Shell shell);

    /** Ports in {@link #ports()} that something on 127.0.0.1 already listens on. */
    final List<Integer> busyPorts() {
        List<Integer> busy = new ArrayList<>();
        for (int port : ports()) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                busy.add(port);
            } catch (IOException free) {
                // Nothing listens there: what we want.
            }
        }
        return busy;
    }

    /** The pids in files {@code dir/n1.pid .. n3.pid} whose processes are alive. */
    static List<Long> pidsIn(Path dir) {
        List<Long> pids = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            Path f = dir.resolve("n" + i + ".pid");
            try {
                long pid = Long.parseLong(Files.readString(f).trim());
                if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                    pids.add(pid);
                }
            } catch (IOException | NumberFormatException absent) {
                // Not started, or stopped: no pid.
            }
        }
        return pids;
    }

    /** The pid in {@code dir/nI.pid}. */
    static long pidOf(Path dir, int member) throws IOException {
        try {
            return Long.parseLong(Files.readString(dir.resolve("n" + member + ".pid")).trim());
        } catch (NumberFormatException e) {
            throw new IOException("bad pid file " + dir.resolve("n" + member + ".pid"), e);
        }
    }
}
