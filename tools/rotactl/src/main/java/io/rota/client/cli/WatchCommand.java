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

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * {@code rotactl watch KEY [--prefix] [--rev N] [--prev-kv] [--progress-notify] [-- COMMAND ARGS...]}: prints
 * events until Ctrl-C, and runs COMMAND once per event if one is given.
 */
@Command(name = "watch", sortOptions = false,
        description = {"Watches KEY, or every key starting with it (--prefix), and prints each change as it comes "
                + "until Ctrl-C: PUT or DELETE, then the key, then the value, each on its own line.",
                "Events come in revision order, each once, also when the member serving the watch fails.",
                "With -- COMMAND, each event is printed and then COMMAND runs, with ROTA_WATCH_EVENT_TYPE, "
                        + "ROTA_WATCH_KEY, ROTA_WATCH_VALUE and ROTA_WATCH_REVISION in its environment "
                        + "(etcdctl's ETCD_WATCH_*); the next event waits for it. If it fails, the watch ends "
                        + "(exit 1) saying the --rev to resume from."})
final class WatchCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "KEY", description = "The key, or the prefix with --prefix.")
    String key;

    @Parameters(index = "1..*", paramLabel = "COMMAND", description = "A command to run per event, after '--', "
            + "e.g. -- sh -c 'echo \"$ROTA_WATCH_KEY changed\"'")
    List<String> command;

    @Option(names = "--prefix", description = "Watch every key that starts with KEY.")
    boolean prefix;

    @Option(names = "--rev", paramLabel = "N", description = "Start at revision N (replays history from it; "
            + "0: from the next change).")
    long revision;

    @Option(names = "--prev-kv", description = "Also print each key as it was before the change.")
    boolean prevKv;

    @Option(names = "--progress-notify", description = "Ask the member for progress notifications while no event "
            + "comes (every 10 s by default): prints 'progress notify: REVISION', all events up to it printed.")
    boolean progressNotify;

    /** What the listener hands to the command's thread, in order. */
    private record Item(WatchEvent event, long progress, RotaException error) {
    }

    @Override
    int run(RotaClient client, Printer printer) throws InterruptedException {
        if (revision < 0) {
            throw usage("--rev must not be negative");
        }
        if (key.isEmpty() && !prefix) {
            throw usage("the key is empty; to watch every key use: watch \"\" --prefix");
        }
        WatchOptions options = (prefix ? WatchOptions.prefix() : WatchOptions.key()).fromRevision(revision);
        options = prevKv ? options.withPrevKv() : options;
        options = progressNotify ? options.withProgressNotify() : options;
        // Printing and the command run on this thread, not the client's callback thread: a slow command then
        // holds back only this watch's next event, and Ctrl-C (an interrupt) reaches it.
        BlockingQueue<Item> items = new LinkedBlockingQueue<>();
        Watch watch = client.watches().watch(root().bytes(spec, key, "KEY"), options, new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                items.add(new Item(event, 0, null));
            }

            @Override
            public void onProgress(long revision) {
                items.add(new Item(null, revision, null));
            }

            @Override
            public void onError(RotaException error) {
                items.add(new Item(null, 0, error));
            }
        });
        try {
            while (true) {
                Item item = items.take();
                if (item.error() != null) {
                    throw item.error();
                }
                if (item.event() == null) {
                    printer.watchProgress(item.progress());
                    continue;
                }
                printer.watchEvent(item.event());
                if (command != null && !command.isEmpty()) {
                    runCommand(item.event());
                }
            }
        } catch (InterruptedException e) {
            // Stopped (Ctrl-C, or the thread running an embedded rotactl): a normal end.
            return 0;
        } finally {
            watch.close();
        }
    }

    /** Runs COMMAND for one event and waits for it; a failure ends the watch. */
    private void runCommand(WatchEvent event) throws InterruptedException {
        long rev = event.kv().modRevision();
        ChildCommand child = ChildCommand.start(command, Map.of(
                "ROTA_WATCH_EVENT_TYPE", event.type().name(),
                "ROTA_WATCH_KEY", variable(event.kv().key()),
                "ROTA_WATCH_VALUE", variable(event.kv().value()),
                "ROTA_WATCH_REVISION", Long.toString(rev)));
        int exit;
        try {
            exit = child.exit().get();
        } catch (InterruptedException e) {
            // Ctrl-C: the command's whole process group gets the same signal, and is gone before the watch ends.
            child.terminate(root().stop().forwardedSignal(), System.nanoTime() + ChildCommand.GRACE.toNanos());
            throw e;
        } catch (ExecutionException e) {
            throw new CommandFailure("could not wait for " + child.display() + ": " + e.getCause());
        }
        if (exit != 0) {
            throw new CommandFailure(child.display() + " exited with " + exit + " for the event at revision " + rev
                    + "; the watch stopped there: fix the command, then resume with --rev " + rev);
        }
    }

    /**
     * A key or value for the command's environment: hex with {@code --hex}; else its UTF-8 text, escaped
     * only if it cannot be carried as is (a NUL byte, or bytes that are not UTF-8).
     */
    private String variable(byte[] bytes) {
        if (root().hex()) {
            return Bytes.display(bytes, true);
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        boolean exact = !text.contains("\0") && Arrays.equals(text.getBytes(StandardCharsets.UTF_8), bytes);
        return exact ? text : Bytes.display(bytes, false);
    }
}
