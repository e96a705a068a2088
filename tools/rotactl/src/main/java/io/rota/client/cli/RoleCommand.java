package io.rota.client.cli;

import io.rota.client.Auth;
import io.rota.client.RotaClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.charset.StandardCharsets;

/**
 * {@code rotactl role add|delete|list|get|grant-permission|revoke-permission}, as etcdctl's:
 * {@code role grant-permission ROLE read|write|readwrite KEY [RANGE_END] [--prefix]}.
 */
@Command(name = "role", description = "Role commands: add, delete, list, get, grant-permission, revoke-permission.",
        subcommands = {RoleCommand.Add.class, RoleCommand.Delete.class, RoleCommand.ListRoles.class,
                RoleCommand.Get.class, RoleCommand.Grant.class, RoleCommand.Revoke.class})
final class RoleCommand extends CommandGroup {

    RoleCommand() {
        super("name a role command: add, delete, list, get, grant-permission, revoke-permission");
    }

    @Command(name = "add", description = "Adds a role without permissions.")
    static final class Add extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ROLE")
        String role;

        @Override
        int run(RotaClient client, Printer printer) {
            client.auth().addRole(role);
            printer.authChanged("Role " + role + " added. Next: rotactl role grant-permission " + role
                    + " read|write|readwrite KEY [--prefix]");
            return 0;
        }
    }

    @Command(name = "delete", description = "Deletes a role (and takes it from every user).")
    static final class Delete extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ROLE")
        String role;

        @Override
        int run(RotaClient client, Printer printer) {
            client.auth().deleteRole(role);
            printer.authChanged("Role " + role + " deleted.");
            return 0;
        }
    }

    @Command(name = "list", description = "Lists the roles.")
    static final class ListRoles extends ClientCommand {
        @Override
        int run(RotaClient client, Printer printer) {
            printer.roleList(client.auth().listRoles());
            return 0;
        }
    }

    @Command(name = "get", description = "Shows a role's permissions.")
    static final class Get extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ROLE")
        String role;

        @Override
        int run(RotaClient client, Printer printer) {
            printer.role(role, client.auth().getRole(role));
            return 0;
        }
    }

    /** {@code role grant-permission ROLE TYPE KEY [RANGE_END] [--prefix]}. */
    @Command(name = "grant-permission", description = {"Grants a role read, write or readwrite on a key, a range"
            + " [KEY, RANGE_END) or, with --prefix, every key that starts with KEY.",
            "Example: rotactl role grant-permission app-a readwrite app-a/ --prefix"})
    static final class Grant extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ROLE")
        String role;
        @Parameters(index = "1", paramLabel = "TYPE", description = "read, write or readwrite.")
        Auth.PermissionType type;
        @Parameters(index = "2", paramLabel = "KEY")
        String key;
        @Parameters(index = "3", paramLabel = "RANGE_END", arity = "0..1",
                description = "End of the range (exclusive); \\0 for every key >= KEY.")
        String rangeEnd;
        @Option(names = "--prefix", description = "Every key that starts with KEY.")
        boolean prefix;

        @Override
        int run(RotaClient client, Printer printer) {
            Auth.Permission p = permission(this, type, key, rangeEnd, prefix);
            client.auth().grantPermission(role, p);
            printer.authChanged("Role " + role + " may now " + p + ".");
            return 0;
        }
    }

    /** {@code role revoke-permission ROLE KEY [RANGE_END] [--prefix]}. */
    @Command(name = "revoke-permission", description = "Revokes a role's permission on exactly that key, range"
            + " or prefix.")
    static final class Revoke extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ROLE")
        String role;
        @Parameters(index = "1", paramLabel = "KEY")
        String key;
        @Parameters(index = "2", paramLabel = "RANGE_END", arity = "0..1")
        String rangeEnd;
        @Option(names = "--prefix", description = "The permission was granted with --prefix.")
        boolean prefix;

        @Override
        int run(RotaClient client, Printer printer) {
            Auth.Permission p = permission(this, Auth.PermissionType.READ, key, rangeEnd, prefix);
            client.auth().revokePermission(role, p.key(), p.rangeEnd());
            printer.authChanged("Permission of role " + role + " on " + p.toString().substring(5) + " revoked.");
            return 0;
        }
    }

    private static Auth.Permission permission(ClientCommand command, Auth.PermissionType type, String key,
                                              String rangeEnd, boolean prefix) {
        Rotactl root = command.root();
        byte[] k = root.bytes(command.spec, key, "KEY");
        if (prefix && rangeEnd != null) {
            throw command.usage("give RANGE_END or --prefix, not both");
        }
        if (prefix) {
            return Auth.Permission.prefix(type, new String(k, StandardCharsets.UTF_8));
        }
        byte[] end = rangeEnd == null ? new byte[0]
                : rangeEnd.equals("\\0") ? new byte[] {0} : root.bytes(command.spec, rangeEnd, "RANGE_END");
        return new Auth.Permission(type, k, end);
    }
}
