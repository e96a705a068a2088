package io.rota.server;

/**
 * A {@code rota server} flag, or a combination of flags, that the server refuses. The message is one line
 * in the operator's terms: it names the flag(s) as typed and says what would be accepted. {@link #flag()}
 * is the flag to change; for a rule between two flags, the one the message puts first.
 *
 * <p>Only {@link ServerConfig} and the flag parsing in {@link ServerCommand} throw it, and ServerCommand
 * turns it into exit code 2. The core configurations below ServerConfig name their fields, not flags: they
 * know nothing of a command line.
 */
public final class FlagException extends IllegalArgumentException {

    private final String flag;

    public FlagException(String flag, String message) {
        super(message);
        this.flag = flag;
    }

    /** The flag to change, as typed on the command line (e.g. {@code --election-ms}). */
    public String flag() {
        return flag;
    }
}
