package io.rota.client.cli;

import io.rota.client.DeleteResult;
import io.rota.client.RotaClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code rotactl del KEY [--prefix] [--prev-kv]}: prints the number of keys deleted. */
@Command(name = "del", aliases = "delete", sortOptions = false,
        description = {"Deletes KEY, or every key starting with it (--prefix), in one revision.",
                "Prints the number of keys deleted. Deleting nothing is an error (exit code 1)."})
final class DelCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "KEY", description = "The key, or the prefix with --prefix.")
    String key;

    @Option(names = "--prefix", description = "Delete every key that starts with KEY.")
    boolean prefix;

    @Option(names = "--prev-kv", description = "Also print each deleted key and its value.")
    boolean prevKv;

    @Override
    int run(RotaClient client, Printer printer) {
        if (key.isEmpty() && !prefix) {
            throw usage("the key is empty; to delete every key use: del \"\" --prefix");
        }
        byte[] k = root().bytes(spec, key, "KEY");
        DeleteResult result = prefix ? client.kv().deletePrefix(k) : client.kv().delete(k);
        if (result.deleted() == 0) {
            throw new CommandFailure(prefix ? "no key starts with \"" + key + "\"; nothing deleted"
                    : "key \"" + key + "\" not found; nothing deleted");
        }
        printer.delete(result, prevKv);
        return 0;
    }
}
