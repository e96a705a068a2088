package io.rota.client.cli;

import java.io.Console;
import java.util.Arrays;

/**
 * Password prompts on the terminal (as etcdctl's): never echoed, never read from stdin, so a script that
 * forgot a password fails at once with what to pass instead of hanging.
 */
final class Passwords {

    private Passwords() {
    }

    /** The password of {@code user} for {@code --user NAME} without one. */
    static char[] prompt(String user) {
        Console console = System.console();
        if (console == null) {
            throw CommandFailure.badValue("no password for user " + user + " and no terminal to ask on: give --user "
                    + user + ":PASSWORD or --password PASSWORD (or ROTA_PASSWORD)");
        }
        char[] pw = console.readPassword("Password of %s: ", user);
        if (pw == null || pw.length == 0) {
            throw CommandFailure.badValue("no password given for user " + user);
        }
        return pw;
    }

    /** A new password, typed twice. */
    static char[] promptNew(ClientCommand command, String what) {
        Console console = System.console();
        if (console == null) {
            throw command.usage("no terminal to ask for the password on: give --new-user-password PASSWORD");
        }
        char[] first = console.readPassword("%s: ", what);
        char[] again = console.readPassword("Type it again: ");
        if (first == null || first.length == 0 || !Arrays.equals(first, again)) {
            throw command.usage(first == null || first.length == 0 ? "the password is empty" : "the passwords differ");
        }
        return first;
    }
}
