package io.rota.client.cli;

import io.rota.client.RotaClient;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.SingletonJob;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.stream.Collectors;

/** {@code rotactl jobs list [--prefix P]} and {@code rotactl jobs history NAME [--prefix P] [--limit N]}. */
@Command(name = "jobs", description = "Singleton job commands (jobs run by the SDK's SingletonJob).",
        subcommands = {JobsCommand.ListJobs.class, JobsCommand.History.class})
final class JobsCommand extends CommandGroup {

    JobsCommand() {
        super("name a jobs command: list, history");
    }

    /** The jobs' key prefix, as the application's {@code SingletonJob.Builder.prefix} set it. */
    static final class Prefix {
        @Option(names = "--prefix", paramLabel = "P", defaultValue = SingletonJob.Builder.DEFAULT_PREFIX,
                description = "The jobs' key prefix, if the application set one with SingletonJob.Builder.prefix "
                        + "(default: ${DEFAULT-VALUE}).")
        String value;
    }

    /** {@code jobs list [--prefix P]}. */
    @Command(name = "list", description = {"Prints every job that has run under the prefix, with its latest "
            + "attempt: name, fire time, fencing token, instance, state, outcome."})
    static final class ListJobs extends ClientCommand {
        @Mixin
        Prefix prefix = new Prefix();

        @Override
        int run(RotaClient client, Printer printer) {
            String p = checked(this, prefix);
            List<JobRun> latest = SingletonJob.latestRuns(client, p);
            if (latest.isEmpty()) {
                throw new CommandFailure("no job has run under " + p + "/ yet; if the application sets its own prefix "
                        + "(SingletonJob.Builder.prefix), pass it: rotactl jobs list --prefix P");
            }
            printer.jobList(latest);
            return 0;
        }
    }

    /** {@code jobs history NAME [--prefix P] [--limit N]}. */
    @Command(name = "history", description = {"Prints the recorded attempts of the singleton job NAME, oldest first: "
            + "fire time, fencing token, instance, state, start, end, outcome.",
            "The job keeps its recent history only (SingletonJob's historyLimit). 'rotactl jobs list' names the jobs."})
    static final class History extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME", description = "The job's name.")
        String name;

        @Mixin
        Prefix prefix = new Prefix();

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
            String p = checked(this, prefix);
            List<JobRun> runs = SingletonJob.history(client, p, name);
            if (runs.isEmpty()) {
                throw new CommandFailure(unknownJob(name, p, SingletonJob.latestRuns(client, p)));
            }
            printer.jobHistory(limit == 0 || runs.size() <= limit ? runs : runs.subList(runs.size() - limit, runs.size()));
            return 0;
        }
    }

    /** The prefix without a trailing '/', or a usage error for an empty one. */
    private static String checked(ClientCommand command, Prefix prefix) {
        String p = prefix.value.endsWith("/") ? prefix.value.substring(0, prefix.value.length() - 1) : prefix.value;
        if (p.isEmpty()) {
            throw command.usage("--prefix is empty: give the prefix the application's SingletonJob uses (default "
                    + SingletonJob.Builder.DEFAULT_PREFIX + ")");
        }
        return p;
    }

    /** What to say when NAME has no history under the prefix: which jobs there are, or where else to look. */
    static String unknownJob(String name, String prefix, List<JobRun> jobs) {
        String where = "no recorded runs of job '" + name + "' under " + prefix + "/";
        if (jobs.isEmpty()) {
            return where + ", and no job has run there; if the application sets its own prefix "
                    + "(SingletonJob.Builder.prefix), pass it with --prefix";
        }
        return where + "; jobs there: " + jobs.stream().map(JobRun::job).collect(Collectors.joining(", "))
                + " (rotactl jobs list" + (prefix.equals(SingletonJob.Builder.DEFAULT_PREFIX) ? "" : " --prefix " + prefix)
                + ")";
    }
}
