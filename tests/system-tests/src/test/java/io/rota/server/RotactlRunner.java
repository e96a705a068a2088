package io.rota.server;

import io.rota.client.cli.Rotactl;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs rotactl in-process against a cluster with captured streams, as the rotactl process tests do: one run
 * to its end, or a long-running one (watch, keep-alive, lock, elect) on its own thread.
 */
final class RotactlRunner {

    /** How long a stopped or ending background run may take. */
    private static final Duration END = Duration.ofSeconds(20);

    private RotactlRunner() {
    }

    /** What one rotactl run printed and returned. */
    record Run(int exitCode, String out, String err) {
        List<String> lines() {
            return out.lines().toList();
        }
    }

    /** Runs rotactl with {@code --endpoints endpoints} before {@code args}, stdin {@code stdin}. */
    static Run run(String endpoints, String stdin, String... args) {
        return run(Map.of(), stdin, withEndpoints(endpoints, args));
    }

    /** Runs rotactl with exactly {@code args}, environment {@code env} and stdin {@code stdin}. */
    static Run run(Map<String, String> env, String stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Rotactl.commandLine(new PrintWriter(out), new PrintWriter(err),
                new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), env).execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    /** The first {@code "revision":N} of a JSON result (its header's). */
    static long revision(String json) {
        Matcher m = Pattern.compile("\"revision\":(\\d+)").matcher(json);
        assertTrue(m.find(), json);
        return Long.parseLong(m.group(1));
    }

    /** A run that succeeded, printed exactly {@code out} and nothing on stderr. */
    static void assertOk(Run r, String out) {
        assertEquals(0, r.exitCode(), r.toString());
        assertEquals(out, r.out(), r.toString());
        assertEquals("", r.err(), r.toString());
    }

    private static String[] withEndpoints(String endpoints, String... args) {
        List<String> all = new ArrayList<>(List.of("--endpoints", endpoints));
        all.addAll(List.of(args));
        return all.toArray(String[]::new);
    }

    /** A long-running rotactl on its own thread; its output can be read while it runs. */
    static final class Background {
        private final StringWriter out = new StringWriter();
        private final StringWriter err = new StringWriter();
        private final AtomicReference<Integer> exitCode = new AtomicReference<>();
        private final Thread thread;

        Background(String endpoints, String... args) {
            String[] all = withEndpoints(endpoints, args);
            thread = new Thread(() -> exitCode.set(Rotactl.commandLine(new PrintWriter(out), new PrintWriter(err),
                    new ByteArrayInputStream(new byte[0]), Map.of()).execute(all)), "rotactl-" + args[0]);
            thread.start();
        }

        String out() {
            return out.toString();
        }

        String err() {
            return err.toString();
        }

        boolean isRunning() {
            return thread.isAlive();
        }

        /** Stops it as Ctrl-C would end the command (an interrupt) and waits for its exit code. */
        Run stop() throws InterruptedException {
            thread.interrupt();
            return awaitEnd();
        }

        Run awaitEnd() throws InterruptedException {
            thread.join(END.toMillis());
            assertTrue(!thread.isAlive(), "rotactl did not end: " + out + err);
            return new Run(exitCode.get(), out.toString(), err.toString());
        }
    }
}
