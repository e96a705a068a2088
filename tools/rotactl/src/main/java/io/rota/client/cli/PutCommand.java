package io.rota.client.cli;

import io.rota.client.PutResult;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;

/** {@code rotactl put KEY [VALUE] [--lease ID] [--prev-kv]}: prints {@code OK}. */
@Command(name = "put", sortOptions = false,
        description = {"Puts KEY = VALUE: creates the key or overwrites it, at a new revision. Prints OK.",
                "Without VALUE, the value is read from stdin: all of it, byte for byte, a trailing newline "
                        + "included (printf 'v' | rotactl put k stores no newline; echo v | rotactl put k stores one).",
                "With --hex, KEY and VALUE are hex digits (stdin is still read as raw bytes)."})
final class PutCommand extends ClientCommand {

    /** Values read from stdin are bounded (the server's default request limit is 1.5 MiB). */
    private static final int MAX_STDIN_VALUE = 16 * 1024 * 1024;

    @Parameters(index = "0", paramLabel = "KEY", description = "The key.")
    String key;

    @Parameters(index = "1", arity = "0..1", paramLabel = "VALUE", description = "The value (default: stdin).")
    String value;

    @Option(names = "--lease", paramLabel = "ID", converter = Conversions.LeaseIdConverter.class,
            description = "Attach the key to this lease (the hex ID 'lease grant' printed): the key is deleted "
                    + "when the lease is revoked or expires.")
    Long lease;

    @Option(names = "--prev-kv", description = "Also print the key and value as they were before.")
    boolean prevKv;

    @Override
    int run(RotaClient client, Printer printer) throws IOException {
        if (key.isEmpty()) {
            throw usage("the key is empty; give a key, e.g. put config/mode blue");
        }
        byte[] k = root().bytes(spec, key, "KEY");
        byte[] v = value != null ? root().bytes(spec, value, "VALUE") : stdin();
        long leaseId = lease == null ? 0 : lease;
        PutResult result;
        try {
            result = client.kv().put(k, v, leaseId);
        } catch (RotaException e) {
            throw leaseFailure(e, leaseId);
        }
        printer.put(result, prevKv);
        return 0;
    }

    /** stdin as is: the bytes, not text, so binary values and a trailing newline survive. */
    private byte[] stdin() throws IOException {
        byte[] bytes = root().in().readNBytes(MAX_STDIN_VALUE + 1);
        if (bytes.length > MAX_STDIN_VALUE) {
            throw CommandFailure.badValue("the value on stdin is larger than " + MAX_STDIN_VALUE / (1024 * 1024)
                    + " MiB; Rota is for small coordination data, store large values elsewhere");
        }
        return bytes;
    }
}
