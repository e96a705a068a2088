package io.rota.client.cli;

/**
 * A command that ran but failed: the message is printed as {@code Error: <message>} on stderr, so it says what
 * went wrong and what to do. The exit code is 1 (the cluster could not do it), 2 when the cluster refused a
 * value given on the command line (an empty key, a TTL or value over a limit: fix the value, not the cluster),
 * or 128 + N when a signal N stopped the command (as shells report a process killed by a signal: 130 for
 * Ctrl-C, 143 for SIGTERM). Under {@code -w json} it is printed as {@code {"error":CODE,"message":TEXT}} instead;
 * {@link #code()} is that CODE (design HS66).
 */
final class CommandFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The code of a usage error (exit code 2), for {@code -w json}. */
    static final String USAGE = "USAGE";

    private final int exitCode;
    private final String code;

    CommandFailure(String message) {
        this("FAILED", message);
    }

    /** A failure with its own {@code code} for {@code -w json} (an SDK error code, or a rotactl one); exit code 1. */
    CommandFailure(String code, String message) {
        this(code, message, 1);
    }

    private CommandFailure(String code, String message, int exitCode) {
        super(message);
        this.code = code;
        this.exitCode = exitCode;
    }

    /** A value the cluster (or the SDK) refused as invalid: exit code 2, as for a usage error. */
    static CommandFailure badValue(String message) {
        return badValue("INVALID_ARGUMENT", message);
    }

    /** As {@link #badValue(String)}, with the SDK's code (INVALID_ARGUMENT, REQUEST_TOO_LARGE). */
    static CommandFailure badValue(String code, String message) {
        return new CommandFailure(code, message, 2);
    }

    /** A command stopped by {@code signal} (INT, TERM) before it finished: exit code 128 + the signal's number. */
    static CommandFailure stopped(String message, String signal) {
        return new CommandFailure("STOPPED", message, 128 + signalNumber(signal));
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

    /** What failed, in one stable word: the SDK's error code (TIMEOUT, UNAVAILABLE, ...), or FAILED, STOPPED, ... */
    String code() {
        return code;
    }
}
