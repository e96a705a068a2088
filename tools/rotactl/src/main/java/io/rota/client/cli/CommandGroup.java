package io.rota.client.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** A command that only groups subcommands ({@code lease}, {@code endpoint}, {@code member}, {@code jobs}). */
abstract class CommandGroup implements Runnable {

    @Spec
    CommandSpec spec;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help.")
    boolean help;

    /** The usage error for the group alone, naming its subcommands. */
    private final String nameOne;

    CommandGroup(String nameOne) {
        this.nameOne = nameOne;
    }

    /** The group alone, without a subcommand: a usage error listing the subcommands. */
    @Override
    public final void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), nameOne);
    }
}
