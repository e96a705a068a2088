package io.rota.server.lab;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * LAB MODE ONLY (a local cluster started by {@code ROTA_LAB=1 scripts/cluster.sh start}): the dashboard's
 * kill, pause, resume and restart buttons. The server never signals a process itself: it runs
 * {@code cluster.sh ACTION NAME}, which finds the member by its PID file and checks that the PID is a
 * rota-server before it signals it, exactly as from a terminal. One action at a time; each is bounded in
 * time. The script's output goes to a file in the cluster directory, not to a pipe, so that an action on
 * this very member (kill, restart) runs to its end after this JVM is gone.
 *
 * <p>Partitioning (see {@link LabPartition}) is also lab-only, and this member's own switch.
 */
public final class LabController implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LabController.class);
    /** What a button may ask of cluster.sh; nothing else is ever passed to it. */
    public static final Set<String> ACTIONS = Set.of("kill", "pause", "resume", "restart");
    private static final long ACTION_TIMEOUT_S = 90;

    /** What cluster.sh said, and its exit code (-1: it did not finish in time). */
    public record Result(int exitCode, String output) {
    }

    private final Path script;
    private final Path clusterDir;
    private final LabPartition partition;
    private final AtomicBoolean busy = new AtomicBoolean();
    private final ExecutorService runner = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "rota-lab");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param script     scripts/cluster.sh of the cluster this member belongs to
     * @param clusterDir its ROTA_CLUSTER_DIR (PID files, logs)
     */
    public LabController(Path script, Path clusterDir, LabPartition partition) {
        this.script = script;
        this.clusterDir = clusterDir;
        this.partition = partition;
    }

    public LabPartition partition() {
        return partition;
    }

    /**
     * Runs {@code cluster.sh action name}. Fails with IllegalArgumentException for an action or name that
     * is not allowed, IllegalStateException while another action runs.
     */
    public CompletableFuture<Result> member(String action, String name) {
        if (!ACTIONS.contains(action)) {
            throw new IllegalArgumentException("unknown lab action '" + action + "'; one of " + ACTIONS);
        }
        if (name == null || !name.matches("[A-Za-z0-9_.-]{1,32}")) {
            throw new IllegalArgumentException("name a member, e.g. name=n2");
        }
        if (!busy.compareAndSet(false, true)) {
            throw new IllegalStateException("another lab action is still running; try again in a moment");
        }
        log.warn("LAB MODE: cluster.sh {} {}", action, name);
        return CompletableFuture.supplyAsync(() -> run(action, name), runner)
                .whenComplete((r, e) -> busy.set(false));
    }

    private Result run(String action, String name) {
        try {
            Path out = Files.createTempFile(clusterDir, "lab-", ".out");
            try {
                ProcessBuilder pb = new ProcessBuilder(List.of("bash", script.toString(), action, name))
                        .redirectErrorStream(true).redirectOutput(out.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
                pb.environment().put("ROTA_CLUSTER_DIR", clusterDir.toString());
                Process p = pb.start();
                boolean done = p.waitFor(ACTION_TIMEOUT_S, TimeUnit.SECONDS);
                String text = Files.readString(out, StandardCharsets.UTF_8);
                return new Result(done ? p.exitValue() : -1, text.isEmpty() && !done
                        ? "cluster.sh " + action + " " + name + " did not finish in " + ACTION_TIMEOUT_S + " s" : text);
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            return new Result(-1, "could not run " + script + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        }
    }

    @Override
    public void close() {
        runner.shutdownNow();
    }
}
