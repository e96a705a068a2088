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

    /**
     * The first line of {@code file}, for a password kept in a file (a mounted secret) rather than in the command
     * line, where every user of the machine can read it ({@code ps}). Issue 33.
     */
    static char[] fromFile(java.nio.file.Path file, String flag) {
        String text;
        try {
            text = java.nio.file.Files.readString(file, java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw CommandFailure.badValue("cannot read " + flag + " " + file + ": " + e.getMessage());
        }
        int end = text.indexOf('\n');
        String line = (end < 0 ? text : text.substring(0, end)).replaceFirst("\r$", "");
        if (line.isEmpty()) {
            throw CommandFailure.badValue(flag + " " + file + " is empty: its first line must be the password");
        }
        return line.toCharArray();
    }

    /**
     * On a terminal, a note that a password given on the command line is visible to other users (ps); not in
     * scripts, whose output may be parsed, and which have ROTA_PASSWORD and --password-file.
     */
    static void warnIfVisible(java.io.PrintWriter err) {
        if (System.console() != null) {
            err.println("note: a password on the command line can be read by other users of this machine (ps);"
                    + " prefer the prompt, ROTA_PASSWORD or --password-file");
            err.flush();
        }
    }

    /** A new password, typed twice. */
    static char[] promptNew(ClientCommand command, String what) {
        Console console = System.console();
        if (console == null) {
            throw command.usage("no terminal to ask for the password on: give --new-user-password-file FILE (or"
                    + " --new-user-password PASSWORD)");
        }
        char[] first = console.readPassword("%s: ", what);
        char[] again = console.readPassword("Type it again: ");
        if (first == null || first.length == 0 || !Arrays.equals(first, again)) {
            throw command.usage(first == null || first.length == 0 ? "the password is empty" : "the passwords differ");
        }
        return first;
    }
}
