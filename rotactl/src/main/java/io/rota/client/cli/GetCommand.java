package io.rota.client.cli;

import io.rota.client.GetOptions;
import io.rota.client.RotaClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rotactl get KEY [--prefix] [--keys-only|--print-value-only|--count-only] [--rev N] [--limit N]
 * [--serializable]}: prints each key and its value on their own lines.
 */
@Command(name = "get", sortOptions = false,
        description = {"Gets KEY, or every key starting with it (--prefix), sorted by key.",
                "Simple output: the key on one line, the value on the next, for each key; nothing if none matches.",
                "Reads are linearizable unless --serializable."})
final class GetCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "KEY", description = "The key, or the prefix with --prefix (\"\" for all keys).")
    String key;

    @Option(names = "--prefix", description = "Get every key that starts with KEY.")
    boolean prefix;

    @Option(names = "--keys-only", description = "Print keys only.")
    boolean keysOnly;

    @Option(names = "--print-value-only", description = "Print values only (simple output).")
    boolean valuesOnly;

    @Option(names = "--count-only", description = "Print only the number of matching keys.")
    boolean countOnly;

    @Option(names = "--rev", paramLabel = "N", description = "Read as of revision N (0: the current one).")
    long revision;

    @Option(names = "--limit", paramLabel = "N", description = "Return at most N keys (0: no limit).")
    long limit;

    @Option(names = "--serializable", description = "Let the member answer from its own state without asking the "
            + "leader: faster and works without a majority, but may be stale.")
    boolean serializable;

    @Override
    int run(RotaClient client, Printer printer) {
        if ((keysOnly ? 1 : 0) + (valuesOnly ? 1 : 0) + (countOnly ? 1 : 0) > 1) {
            throw usage("--keys-only, --print-value-only and --count-only exclude each other");
        }
        if (revision < 0 || limit < 0) {
            throw usage("--rev and --limit must not be negative");
        }
        if (key.isEmpty() && !prefix) {
            throw usage("the key is empty; to get every key use: get \"\" --prefix");
        }
        GetOptions.Builder options = GetOptions.builder().revision(revision).limit(limit);
        if (prefix) {
            options.prefix();
        }
        if (keysOnly) {
            options.keysOnly();
        }
        if (countOnly) {
            options.countOnly();
        }
        if (serializable) {
            options.serializable();
        }
        Printer.GetView view = keysOnly ? Printer.GetView.KEYS_ONLY : valuesOnly ? Printer.GetView.VALUES_ONLY
                : countOnly ? Printer.GetView.COUNT_ONLY : Printer.GetView.FULL;
        printer.get(client.kv().get(key, options.build()), view);
        return 0;
    }
}
