package io.rota.client.cli;

import io.rota.client.RotaClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code rotactl compaction REV}, as etcdctl's (issue 18): the cluster forgets the revision history at and below
 * REV. The current keys stay; gets and watches of older revisions fail COMPACTED from then on.
 */
@Command(name = "compaction", description = {"Compacts the revision history at REV (replicated): gets with --rev"
        + " below REV and watches from REV or below fail COMPACTED afterwards. Current keys are untouched.",
        "Frees the space the old revisions took (see 'rotactl alarm')."})
final class CompactionCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "REV", description = "At most the current revision ('rotactl endpoint"
            + " status' shows it).")
    long revision;

    @Override
    int run(RotaClient client, Printer printer) {
        if (revision < 1) {
            throw usage("REV must be a revision (1 or more), got " + revision);
        }
        printer.compacted(client.maintenance().compact(revision));
        return 0;
    }
}
