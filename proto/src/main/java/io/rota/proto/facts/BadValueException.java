package io.rota.proto.facts;

/**
 * A value that breaks a protocol fact (a port out of range, a member name with a space). The message names the
 * field and says what was wrong in one line, so every door can hand it to the user as it is: rotactl prints
 * it and exits 2, the client port answers INVALID_ARGUMENT with it, apply records it as the entry's refusal.
 */
public final class BadValueException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    public BadValueException(String message) {
        super(message);
    }
}
