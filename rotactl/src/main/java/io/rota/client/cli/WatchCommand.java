package io.rota.client.cli;

import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;
import io.rota.client.WatchOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** {@code rotactl watch KEY [--prefix] [--rev N] [--prev-kv]}: prints events until Ctrl-C. */
@Command(name = "watch", sortOptions = false,
        description = {"Watches KEY, or every key starting with it (--prefix), and prints each change as it comes "
                + "until Ctrl-C: PUT or DELETE, then the key, then the value, each on its own line.",
                "Events come in revision order, each once, also when the member serving the watch fails."})
final class WatchCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "KEY", description = "The key, or the prefix with --prefix.")
    String key;

    @Option(names = "--prefix", description = "Watch every key that starts with KEY.")
    boolean prefix;

    @Option(names = "--rev", paramLabel = "N", description = "Start at revision N (replays history from it; "
            + "0: from the next change).")
    long revision;

    @Option(names = "--prev-kv", description = "Also print each key as it was before the change.")
    boolean prevKv;

    @Override
    int run(RotaClient client, Printer printer) throws InterruptedException {
        if (revision < 0) {
            throw usage("--rev must not be negative");
        }
        if (key.isEmpty() && !prefix) {
            throw usage("the key is empty; to watch every key use: watch \"\" --prefix");
        }
        WatchOptions options = (prefix ? WatchOptions.prefix() : WatchOptions.key()).fromRevision(revision);
        CompletableFuture<Void> ended = new CompletableFuture<>();
        Watch watch = client.watches().watch(key, prevKv ? options.withPrevKv() : options, new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                printer.watchEvent(event);
            }

            @Override
            public void onError(RotaException error) {
                ended.completeExceptionally(error);
            }
        });
        try {
            ended.get();
        } catch (InterruptedException e) {
            // Stopped (Ctrl-C, or the thread running an embedded rotactl): a normal end.
            return 0;
        } catch (ExecutionException e) {
            throw (RotaException) e.getCause();
        } finally {
            watch.close();
        }
        return 0;
    }
}
