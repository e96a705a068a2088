package io.rota.client.cli;

import io.rota.client.GetOptions;
import io.rota.client.GetResult;
import io.rota.client.RotaClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.Arrays;
import java.util.Locale;

/**
 * {@code rotactl get KEY [END] [--prefix|--from-key] [--keys-only|--print-value-only|--count-only] [--rev N]
 * [--limit N] [--sort-by T] [--order O] [--serializable]}: prints each key and its value on their own lines.
 */
@Command(name = "get", sortOptions = false,
        description = {"Gets KEY; the range [KEY, END); every key starting with KEY (--prefix); or every key from "
                + "KEY on (--from-key). Sorted by key unless --sort-by/--order say otherwise.",
                "Simple output: the key on one line, the value on the next, for each key; nothing if none matches.",
                "Keys and values with a newline, a control character or bytes that are not UTF-8 are escaped "
                        + "(\\n, \\xNN, \\\\); --hex or -w json (base64) show the exact bytes.",
                "Reads are linearizable unless --serializable."})
final class GetCommand extends ClientCommand {

    /** etcdctl's {@code --sort-by} names; MODIFY is the mod revision. */
    enum SortBy {
        KEY, CREATE, MODIFY, VERSION, VALUE;

        GetOptions.SortTarget target() {
            return this == MODIFY ? GetOptions.SortTarget.MOD : GetOptions.SortTarget.valueOf(name());
        }
    }

    @Parameters(index = "0", paramLabel = "KEY", description = "The key, the range's start, or the prefix with "
            + "--prefix (\"\" with --prefix or --from-key: all keys).")
    String key;

    @Parameters(index = "1", arity = "0..1", paramLabel = "END", description = "Get the range [KEY, END): END "
            + "itself is not included.")
    String end;

    @Option(names = "--prefix", description = "Get every key that starts with KEY.")
    boolean prefix;

    @Option(names = "--from-key", description = "Get every key that sorts at or after KEY (byte order).")
    boolean fromKey;

    @Option(names = "--keys-only", description = "Print keys only.")
    boolean keysOnly;

    @Option(names = "--print-value-only", description = "Print values only (simple output).")
    boolean valuesOnly;

    @Option(names = "--count-only", description = "Print only the number of matching keys.")
    boolean countOnly;

    @Option(names = "--rev", paramLabel = "N", description = "Read as of revision N (0: the current one).")
    long revision;

    @Option(names = "--limit", paramLabel = "N", description = "Return at most N keys (0: no limit); stderr says "
            + "how many more matched.")
    long limit;

    @Option(names = "--sort-by", paramLabel = "TARGET", description = "Sort by KEY, CREATE, MODIFY, VERSION or VALUE "
            + "(on the server, before --limit applies; default order ASCEND).")
    SortBy sortBy;

    @Option(names = "--order", paramLabel = "ORDER", description = "ASCEND or DESCEND (default: ASCEND; by KEY "
            + "unless --sort-by).")
    GetOptions.SortOrder order;

    @Option(names = "--serializable", description = "Let the member answer from its own state without asking the "
            + "leader: faster and works without a majority, but may be stale.")
    boolean serializable;

    @Override
    int run(RotaClient client, Printer printer) {
        if ((keysOnly ? 1 : 0) + (valuesOnly ? 1 : 0) + (countOnly ? 1 : 0) > 1) {
            throw usage("--keys-only, --print-value-only and --count-only exclude each other");
        }
        if ((prefix ? 1 : 0) + (fromKey ? 1 : 0) + (end != null ? 1 : 0) > 1) {
            throw usage("--prefix, --from-key and a range END exclude each other");
        }
        if (revision < 0) {
            throw usage("--rev must not be negative (got " + revision + "); 0 reads the latest revision");
        }
        if (limit < 0) {
            throw usage("--limit must not be negative (got " + limit + "); 0 means no limit");
        }
        if (key.isEmpty() && !prefix && !fromKey) {
            throw usage("the key is empty; to get every key use: get \"\" --prefix");
        }
        byte[] start = root().bytes(spec, key, "KEY");
        GetOptions.Builder options = GetOptions.builder().revision(revision).limit(limit);
        if (prefix) {
            options.prefix();
        }
        if (fromKey) {
            options.fromKey();
        }
        if (end != null) {
            byte[] stop = root().bytes(spec, end, "END");
            if (stop.length == 0 || Arrays.compareUnsigned(stop, start) <= 0) {
                throw usage("END must sort after KEY: the range [KEY, END) would be empty");
            }
            options.rangeEnd(stop);
        }
        if (sortBy != null || order != null) {
            options.sort(sortBy == null ? GetOptions.SortTarget.KEY : sortBy.target(),
                    order == null ? GetOptions.SortOrder.ASCEND : order);
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
        GetResult result = client.kv().get(start, options.build());
        printer.get(result, view);
        if (result.more() && !countOnly && root().writeOutFormat() != Printer.Format.JSON) {
            // On stderr, so the value stays the last line of stdout; JSON says it in "more" and "count".
            spec.commandLine().getErr().println(String.format(Locale.ROOT, "(%d of %d keys shown: --limit %d; "
                    + "raise --limit, or narrow the range, to see the rest)", result.kvs().size(), result.count(), limit));
            spec.commandLine().getErr().flush();
        }
        return 0;
    }
}
