package io.rota.client.cli;

/**
 * A command that ran but failed (exit code 1): the message is printed as {@code Error: <message>} on
 * stderr, so it says what went wrong and what to do.
 */
final class CommandFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    CommandFailure(String message) {
        super(message);
    }
}
