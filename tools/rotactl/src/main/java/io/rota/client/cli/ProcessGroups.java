package io.rota.client.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Signals to and liveness of a whole process group, which Java's {@link ProcessHandle} cannot address: through
 * the shell's {@code kill} with a negative pid, and on Linux by reading {@code /proc/PID/stat}.
 */
final class ProcessGroups {

    private static final Path PROC = Path.of("/proc");

    private ProcessGroups() {
    }

    /**
     * Sends {@code signal} to every process of group {@code pgid}; a group already gone is not an error.
     *
     * @param signal the signal's name without SIG: INT, TERM, KILL
     */
    static void signal(long pgid, String signal) {
        run("kill -s \"$1\" -- \"-$2\" 2>/dev/null", signal, Long.toString(pgid));
    }

    /**
     * Whether any live process (not a zombie) is in group {@code pgid}.
     */
    static boolean alive(long pgid) {
        if (Files.isDirectory(PROC.resolve("self"))) {
            return !members(pgid).isEmpty();
        }
        return run("kill -0 -- \"-$1\" 2>/dev/null", Long.toString(pgid)) == 0;
    }

    /** The pids of the live (not zombie) processes in group {@code pgid}, from /proc (Linux). */
    static List<Long> members(long pgid) {
        List<Long> out = new ArrayList<>();
        try (Stream<Path> all = Files.list(PROC)) {
            all.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                String stat;
                try {
                    stat = Files.readString(p.resolve("stat"), StandardCharsets.UTF_8);
                } catch (IOException | UncheckedIOException e) {
                    return;   // exited meanwhile
                }
                // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so parse after the last ')'.
                String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                if (!rest[0].equals("Z") && Long.parseLong(rest[2]) == pgid) {
                    out.add(Long.parseLong(p.getFileName().toString()));
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + PROC, e);
        }
        return out;
    }

    private static int run(String script, String... args) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", script, "sh"));
        argv.addAll(List.of(args));
        try {
            return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start().waitFor();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run sh to signal process group " + args[args.length - 1], e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
