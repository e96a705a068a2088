package io.rota.client.cli;

import io.rota.client.RotaClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/** {@code rotactl txn [-i]}: a transaction read from stdin in etcdctl's syntax. */
@Command(name = "txn", sortOptions = false,
        description = {"Runs a transaction read from stdin: comparisons, a blank line, the requests to run if all "
                + "hold, a blank line, the requests to run otherwise. Prints SUCCESS or FAILURE, then each result.",
                "",
                "  value(\"KEY\") = \"VALUE\"    also != < >; targets value, version, create, mod",
                "  mod(\"KEY\") > \"0\"          (short forms val, ver, c, m)",
                "  <blank line>",
                "  put KEY VALUE              requests: put, get, del; quote words with spaces",
                "  get KEY",
                "  <blank line>",
                "  del KEY",
                "",
                "Example:  printf 'version(\"job\") = \"0\"\\n\\nput job app-1\\n\\nget job\\n' | rotactl txn"})
final class TxnCommand extends ClientCommand {

    @Option(names = {"-i", "--interactive"}, description = "Prompt on stderr for each section.")
    boolean interactive;

    @Override
    int run(RotaClient client, Printer printer) {
        PrintWriter prompt = interactive ? spec.commandLine().getErr() : null;
        TxnParser.ParsedTxn txn;
        try {
            txn = TxnParser.parse(new InputStreamReader(root().in(), StandardCharsets.UTF_8), prompt);
        } catch (TxnParser.SyntaxError e) {
            throw usage(e.getMessage());
        }
        printer.txn(txn.applyTo(client.kv().txn()).commit());
        return 0;
    }
}
