package io.rota.client.cli;

import io.rota.client.RotaClient;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.SingletonJob;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;

/** {@code rotactl jobs history NAME [--limit N]}. */
@Command(name = "jobs", description = "Singleton job commands (jobs run by the SDK's SingletonJob).",
        subcommands = JobsCommand.History.class)
final class JobsCommand extends CommandGroup {

    JobsCommand() {
        super("name a jobs command: history");
    }

    /** {@code jobs history NAME [--limit N]}. */
    @Command(name = "history", description = {"Prints the recorded attempts of the singleton job NAME, oldest first: "
            + "fire time, fencing token, instance, state, start, end, outcome.",
            "The job keeps its recent history only (SingletonJob's historyLimit)."})
    static final class History extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME", description = "The job's name.")
        String name;

        @Option(names = "--limit", paramLabel = "N", description = "Print only the N most recent attempts "
                + "(default: all).")
        int limit;

        @Override
        int run(RotaClient client, Printer printer) {
            if (limit < 0) {
                throw usage("--limit must not be negative (got " + limit + ")");
            }
            if (name.isEmpty()) {
                throw usage("the job name is empty");
            }
            List<JobRun> runs = SingletonJob.history(client, name);
            printer.jobHistory(limit == 0 || runs.size() <= limit ? runs : runs.subList(runs.size() - limit, runs.size()));
            return 0;
        }
    }
}
