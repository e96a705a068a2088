package io.rota.client.cli;

/**
 * A command that ran but failed: the message is printed as {@code Error: <message>} on stderr, so it says what
 * went wrong and what to do. The exit code is 1 (the cluster could not do it), 2 when the cluster refused a
 * value given on the command line (an empty key, a TTL or value over a limit: fix the value, not the cluster),
 * or 128 + N when a signal N stopped the command (as shells report a process killed by a signal: 130 for
 * Ctrl-C, 143 for SIGTERM).
 */
final class CommandFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int exitCode;

    CommandFailure(String message) {
        this(message, 1);
    }

    private CommandFailure(String message, int exitCode) {
        super(message);
        this.exitCode = exitCode;
    }

    /** A value the cluster (or the SDK) refused as invalid: exit code 2, as for a usage error. */
    static CommandFailure badValue(String message) {
        return new CommandFailure(message, 2);
    }

    /** A command stopped by {@code signal} (INT, TERM) before it finished: exit code 128 + the signal's number. */
    static CommandFailure stopped(String message, String signal) {
        return new CommandFailure(message, 128 + signalNumber(signal));
    }

    /** The POSIX number of the signals rotactl forwards (INT 2, TERM 15). */
    static int signalNumber(String signal) {
        return switch (signal) {
            case "INT" -> 2;
            case "HUP" -> 1;
            case "KILL" -> 9;
            default -> 15;
        };
    }

    int exitCode() {
        return exitCode;
    }
}
