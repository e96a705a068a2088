package io.rota.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the cluster scripts (and a few version probes), with a deadline, appending their output to the log. */
final class Shell {

    /**
     * The outcome of one command.
     *
     * @param exit   its exit status (-1: killed at the deadline)
     * @param output standard output and error, interleaved
     */
    record Result(int exit, String output) {
        boolean ok() {
            return exit == 0;
        }
    }

    private final Path log;

    Shell(Path log) {
        this.log = log;
    }

    /**
     * Runs {@code command} and waits for it at most {@code timeout}; a command still running then is killed.
     *
     * @param timeout the deadline
     * @param env     variables added to this process's environment
     * @param command the program and its arguments
     * @return its exit status and output
     */
    Result run(Duration timeout, Map<String, String> env, String... command) {
        Path out = null;
        try {
            out = Files.createTempFile("rota-bench-", ".out");
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(out.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.environment().putAll(env);
            Process p = pb.start();
            int exit;
            if (p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                exit = p.exitValue();
            } else {
                p.destroyForcibly();
                exit = -1;
            }
            String text = Files.readString(out);
            Files.writeString(log, "$ " + String.join(" ", command) + "  (exit " + exit + ")\n" + text,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            return new Result(exit, text);
        } catch (IOException e) {
            return new Result(-1, "could not run " + List.of(command) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    /** The first line of a command's output, or {@code fallback} if it failed. */
    String firstLine(String fallback, String... command) {
        Result r = run(Duration.ofSeconds(20), Map.of(), command);
        if (!r.ok() || r.output().isBlank()) {
            return fallback;
        }
        return r.output().strip().lines().findFirst().orElse(fallback);
    }

    /** Whether {@code program} is on the PATH. */
    static boolean onPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }
}
