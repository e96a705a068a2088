package io.rota.server.auth;

import io.rota.proto.Error;

/**
 * A typed refusal of an auth call or change: its {@link Error} goes to the client as it is. An expected
 * outcome, not a bug: no stack trace.
 */
public final class AuthException extends RuntimeException {

    private final transient Error error;

    public AuthException(Error error) {
        super(error.getMessage(), null, false, false);
        this.error = error;
    }

    public Error error() {
        return error;
    }
}
