package io.rota.client.cli;

import io.rota.client.RotaClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rotactl user add|delete|list|get|passwd|grant-role|revoke-role}, as etcdctl's. Once auth is enabled
 * these need the root user ({@code --user root}). Output follows {@code -w} (simple, json, table).
 */
@Command(name = "user", description = "User commands: add, delete, list, get, passwd, grant-role, revoke-role.",
        subcommands = {UserCommand.Add.class, UserCommand.Delete.class, UserCommand.ListUsers.class,
                UserCommand.Get.class, UserCommand.Passwd.class, UserCommand.GrantRole.class,
                UserCommand.RevokeRole.class})
final class UserCommand extends CommandGroup {

    UserCommand() {
        super("name a user command: add, delete, list, get, passwd, grant-role, revoke-role");
    }

    /** {@code user add NAME [--new-user-password P]}: prompts for the password when it is not given. */
    @Command(name = "add", description = "Adds a user. The password is prompted for (twice) unless"
            + " --new-user-password gives it (for scripts).")
    static final class Add extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME", description = "The user's name.")
        String name;

        @Option(names = "--new-user-password", paramLabel = "PASSWORD",
                description = "The new user's password (visible in the process list: prefer the prompt or"
                        + " --new-user-password-file).")
        String password;

        @Option(names = "--new-user-password-file", paramLabel = "FILE",
                description = "Read the new user's password from the first line of FILE.")
        java.nio.file.Path passwordFile;

        @Override
        int run(RotaClient client, Printer printer) {
            char[] pw = passwordFile != null ? Passwords.fromFile(passwordFile, "--new-user-password-file")
                    : password != null ? password.toCharArray() : Passwords.promptNew(this, "Password of " + name);
            client.auth().addUser(name, pw);
            printer.authChanged("User " + name + " added. Next: rotactl user grant-role " + name + " ROLE");
            return 0;
        }
    }

    /** {@code user delete NAME}. */
    @Command(name = "delete", description = "Deletes a user.")
    static final class Delete extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        int run(RotaClient client, Printer printer) {
            client.auth().deleteUser(name);
            printer.authChanged("User " + name + " deleted (its tokens are no longer valid).");
            return 0;
        }
    }

    /** {@code user list}. */
    @Command(name = "list", description = "Lists the users.")
    static final class ListUsers extends ClientCommand {
        @Override
        int run(RotaClient client, Printer printer) {
            printer.userList(client.auth().listUsers());
            return 0;
        }
    }

    /** {@code user get NAME}. */
    @Command(name = "get", description = "Shows a user's roles.")
    static final class Get extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        int run(RotaClient client, Printer printer) {
            printer.user(client.auth().getUser(name));
            return 0;
        }
    }

    /** {@code user passwd NAME [--new-user-password P]}. */
    @Command(name = "passwd", description = "Changes a user's password (prompted for unless --new-user-password).")
    static final class Passwd extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Option(names = "--new-user-password", paramLabel = "PASSWORD", description = "The new password (visible in"
                + " the process list: prefer the prompt or --new-user-password-file).")
        String password;

        @Option(names = "--new-user-password-file", paramLabel = "FILE",
                description = "Read the new password from the first line of FILE.")
        java.nio.file.Path passwordFile;

        @Override
        int run(RotaClient client, Printer printer) {
            char[] pw = passwordFile != null ? Passwords.fromFile(passwordFile, "--new-user-password-file")
                    : password != null ? password.toCharArray() : Passwords.promptNew(this, "New password of " + name);
            client.auth().changePassword(name, pw);
            printer.authChanged("Password of " + name + " changed (every client logs in again).");
            return 0;
        }
    }

    /** {@code user grant-role NAME ROLE}. */
    @Command(name = "grant-role", description = "Gives a user a role (root: the role that may do anything).")
    static final class GrantRole extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Parameters(index = "1", paramLabel = "ROLE")
        String role;

        @Override
        int run(RotaClient client, Printer printer) {
            client.auth().grantRole(name, role);
            printer.authChanged("Role " + role + " granted to user " + name + ".");
            return 0;
        }
    }

    /** {@code user revoke-role NAME ROLE}. */
    @Command(name = "revoke-role", description = "Takes a role from a user.")
    static final class RevokeRole extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Parameters(index = "1", paramLabel = "ROLE")
        String role;

        @Override
        int run(RotaClient client, Printer printer) {
            client.auth().revokeRole(name, role);
            printer.authChanged("Role " + role + " revoked from user " + name + ".");
            return 0;
        }
    }
}
