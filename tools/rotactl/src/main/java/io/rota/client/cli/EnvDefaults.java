package io.rota.client.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Global options from the environment, as etcdctl reads {@code ETCDCTL_<FLAG>}: {@code --dial-timeout} from
 * {@code ROTA_DIAL_TIMEOUT}, {@code --write-out} from {@code ROTA_WRITE_OUT}, and so on — the flag's long name
 * in capitals, dashes as underscores. A flag on the command line wins over its variable, the variable over the
 * built-in default. {@code --endpoints} is not here: {@link Endpoints} reads {@code ROTA_ENDPOINTS} itself, so
 * its errors can say where a bad endpoint came from.
 *
 * <p>A bad value is a usage error naming the variable (exit 2), so that a forgotten export is not mistaken
 * for a bad flag.
 */
final class EnvDefaults implements CommandLine.IDefaultValueProvider {

    /** The global options that a variable may set (their long names). */
    static final Set<String> GLOBALS = Set.of("--dial-timeout", "--command-timeout", "--write-out", "--hex",
            "--cacert", "--cert", "--key", "--user", "--password", "--password-file");

    private final Map<String, String> env;

    EnvDefaults(Map<String, String> env) {
        this.env = env;
    }

    /** {@code --dial-timeout} → {@code ROTA_DIAL_TIMEOUT}. */
    static String variable(String longName) {
        return "ROTA_" + longName.substring(2).toUpperCase(Locale.ROOT).replace('-', '_');
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        if (!(arg instanceof OptionSpec option) || !GLOBALS.contains(option.longestName())) {
            return null;
        }
        String name = variable(option.longestName());
        String value = env.get(name);
        if (value == null || value.isBlank()) {
            return null;
        }
        check(option, name, value.trim());
        return value.trim();
    }

    /** Checks a variable's value as the option would, so the error can name the variable. */
    private static void check(OptionSpec option, String name, String value) {
        String problem = null;
        try {
            if (option.type() == java.time.Duration.class) {
                Conversions.duration(value);
            } else if (option.type() == Printer.Format.class) {
                Printer.Format.valueOf(value.toUpperCase(Locale.ROOT));
            } else if (option.type() == boolean.class && !value.equalsIgnoreCase("true")
                    && !value.equalsIgnoreCase("false")) {
                problem = "expected true or false";
            } else if (option.type() == Path.class && !Files.isReadable(Path.of(value))) {
                // Checked here too, because the TLS set-up's own message names only the flags.
                problem = "no readable file there";
            }
        } catch (IllegalArgumentException e) {
            problem = option.type() == Printer.Format.class ? "expected simple, json or table" : e.getMessage();
        }
        if (problem != null) {
            throw new CommandLine.ParameterException(option.command().commandLine(),
                    "environment variable " + name + "='" + value + "' (the default for " + option.longestName()
                            + "): " + problem + "; fix or unset it");
        }
    }
}
