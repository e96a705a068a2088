package io.rota.client.cli;

import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.TlsOptions;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code rotactl}, the command line of Rota, shaped like etcdctl: {@code put}, {@code get}, {@code del},
 * {@code txn}, {@code watch}, {@code lease ...}, {@code endpoint status|health|hashkv}, {@code member ...},
 * {@code version}, {@code check perf}; and the recipes: {@code lock}, {@code elect}, {@code once},
 * {@code jobs history}. Global options also come from {@code ROTA_<FLAG>} variables ({@link EnvDefaults}).
 *
 * <p>Exit codes: 0 success, 1 a failed operation ({@code Error: ...} on stderr says what went wrong and
 * what to do), 2 a usage error or a value the cluster refused, 128 + N when signal N stopped the command.
 * Under {@code -w json} the error is a JSON object instead, and so are the notes on stderr (design HS65, HS66).
 * Only {@link #main} exits the JVM; tests build the command line with {@link #commandLine} and their own
 * streams and environment.
 */
@Command(name = "rotactl", usageHelpAutoWidth = true,
        header = "The command line of Rota, a Raft coordination service (etcdctl-like).",
        description = {"Talks to the members given by --endpoints, else ROTA_ENDPOINTS, else the local cluster "
                + "of scripts/cluster.sh (ROTA_BASE_PORT + 1..3, else the ports its state file in the data dir "
                + "records, else 127.0.0.1:7001-7003).",
                "lock, elect, once and jobs use the SDK's recipes (docs/locks.md, docs/jobs.md)."},
        subcommands = {PutCommand.class, GetCommand.class, DelCommand.class, TxnCommand.class, WatchCommand.class,
                LeaseCommand.class, EndpointCommand.class, MemberCommand.class, MoveLeaderCommand.class, LockCommand.class,
                ElectCommand.class,
                OnceCommand.class, JobsCommand.class, VersionCommand.class, CheckCommand.class,
                SnapshotCommand.class, AlarmCommand.class, CompactionCommand.class,

                UserCommand.class, RoleCommand.class, AuthCommand.class,
                CommandLine.HelpCommand.class},
        footerHeading = "%n",
        footer = {"Environment:",
                "  ROTA_ENDPOINTS  default for --endpoints (host:port,host:port,...)",
                "  ROTA_BASE_PORT  scripts/cluster.sh's base port, if ROTA_ENDPOINTS is unset",
                "  ROTA_DIAL_TIMEOUT, ROTA_COMMAND_TIMEOUT, ROTA_WRITE_OUT, ROTA_HEX  defaults for those options",
                "  ROTA_CACERT, ROTA_CERT, ROTA_KEY  defaults for --cacert, --cert, --key (TLS)",

                "  ROTA_USER, ROTA_PASSWORD, ROTA_PASSWORD_FILE  defaults for --user, --password, --password-file",
                "  ROTA_CLUSTER_DIR  scripts/cluster.sh's data dir (default ./data): its cluster.env records the ports",
                "Exit codes: 0 success, 1 the cluster could not do it (or a lock or leadership was lost), 2 a usage",
                "  error or a value the cluster refused (empty key, over a limit); lock and once with a COMMAND exit",
                "  with the command's exit code; 130 (143) when Ctrl-C (SIGTERM) stopped a call in flight.",
                "With -w json, stderr is JSON too: an error is {\"error\":CODE,\"message\":...}, a note while a",
                "  command runs {\"note\":KIND,...}; the exit codes are the same.",
                "Ctrl-C stops a long-running command cleanly: lock releases, elect resigns, watch ends; a COMMAND of",
                "  lock or once gets the same signal in its whole process group, and is gone before the release.",
                "Walkthrough: docs/rotactl.md"})
public final class Rotactl implements Callable<Integer> {

    /** The longest a single attempt on one member may take before the client tries another one. */
    private static final Duration MAX_ATTEMPT = Duration.ofSeconds(2);
    /** How long an error path waits to learn whether any member answers at all. */
    private static final Duration PROBE = Duration.ofSeconds(1);

    @Spec
    CommandSpec spec;

    @Option(names = "--endpoints", scope = ScopeType.INHERIT, paramLabel = "HOST:PORT[,...]",
            description = "Client addresses of the members, comma-separated (default: ROTA_ENDPOINTS, else "
                    + "scripts/cluster.sh's cluster: ROTA_BASE_PORT, its cluster.env, else 127.0.0.1:7001-7003).")
    String endpoints;

    @Option(names = "--command-timeout", scope = ScopeType.INHERIT, paramLabel = "DURATION", defaultValue = "5s",
            converter = Conversions.DurationConverter.class,
            description = "How long a command may take, retries on other members included, e.g. 5s, 500ms, 1m "
                    + "(default: ${DEFAULT-VALUE}).")
    Duration commandTimeout;

    @Option(names = "--dial-timeout", scope = ScopeType.INHERIT, paramLabel = "DURATION", defaultValue = "2s",
            converter = Conversions.DurationConverter.class,
            description = "How long opening a connection to one member may take before the next one is tried "
                    + "(default: ${DEFAULT-VALUE}).")
    Duration dialTimeout;

    @Option(names = "--cacert", scope = ScopeType.INHERIT, paramLabel = "PEM",
            description = "Talk TLS, trusting the CA certificates in this PEM file (default: ROTA_CACERT, else "
                    + "scripts/cluster.sh's cluster.env when the endpoints come from it).")
    Path cacert;

    @Option(names = "--cert", scope = ScopeType.INHERIT, paramLabel = "PEM",
            description = "Client certificate (PEM) for members that require one (default: ROTA_CERT); with --key.")
    Path cert;

    @Option(names = "--key", scope = ScopeType.INHERIT, paramLabel = "PEM",
            description = "The client certificate's private key (PEM, unencrypted PKCS#8; default: ROTA_KEY).")
    Path key;

    @Option(names = {"-w", "--write-out"}, scope = ScopeType.INHERIT, paramLabel = "FORMAT", defaultValue = "simple",
            description = "Output format: simple, json or table (default: ${DEFAULT-VALUE}).")
    Printer.Format writeOut;

    @Option(names = "--hex", scope = ScopeType.INHERIT, description = "Keys and values in hex, in and out: "
            + "arguments are hex digits (6b6579 or \\x6b\\x65\\x79), output is \\x6b\\x65\\x79.")
    boolean hex;

    @Option(names = "--user", scope = ScopeType.INHERIT, paramLabel = "NAME[:PASSWORD]",
            description = "Log in as NAME when the cluster has auth enabled; without :PASSWORD (and without"
                    + " --password) the password is asked for on the terminal (default: ROTA_USER).")
    String user;

    @Option(names = "--password", scope = ScopeType.INHERIT, paramLabel = "PASSWORD",
            description = "The password of --user, for scripts (default: ROTA_PASSWORD). Visible to other users in"
                    + " the process list: prefer --password-file, ROTA_PASSWORD or the prompt.")
    String password;

    @Option(names = "--password-file", scope = ScopeType.INHERIT, paramLabel = "FILE",
            description = "Read the password of --user from the first line of FILE (a secret mounted as a file).")
    Path passwordFile;

    @Option(names = "--version", description = "Print rotactl's version and each reachable member's (as 'version').")
    boolean version;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help.")
    boolean help;

    private final Map<String, String> env;
    private final InputStream in;
    /** How a signal stops the command; its thread is the one that builds and runs the command line. */
    private final StopSignal stop = new StopSignal(Thread.currentThread());

    private Rotactl(Map<String, String> env, InputStream in) {
        this.env = env;
        this.in = in;
    }

    /**
     * Runs rotactl and exits the JVM with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
        PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
        CommandLine cmd = commandLine(out, err, System.in, System.getenv());
        // Ctrl-C (SIGINT) and SIGTERM interrupt the command, as an embedding thread would, and let it clean up: a
        // lock is released and a leader resigns at once instead of blocking others until their lease expires.
        StopSignal stop = ((Rotactl) cmd.getCommand()).stop;
        stop.install(System.err);
        int code = cmd.execute(args);
        out.flush();
        err.flush();
        stop.finished();
        System.exit(stop.exitCode(code));
    }

    /**
     * Builds the command line with its own streams and environment (for tests and embedding);
     * {@code execute(args)} then returns the exit code.
     *
     * @param out stdout: results
     * @param err stderr: errors and prompts
     * @param in  stdin: a txn, or put's value when it is not an argument
     * @param env the environment ({@code ROTA_ENDPOINTS}, {@code ROTA_BASE_PORT})
     * @return the command line
     */
    public static CommandLine commandLine(PrintWriter out, PrintWriter err, InputStream in, Map<String, String> env) {
        CommandLine cmd = new CommandLine(new Rotactl(Map.copyOf(env), in));
        cmd.setDefaultValueProvider(new EnvDefaults(env));
        cmd.setOut(out);
        cmd.setErr(err);
        cmd.setCaseInsensitiveEnumValuesAllowed(true);
        cmd.setParameterExceptionHandler(Rotactl::usageError);
        cmd.setExecutionExceptionHandler((e, c, parsed) -> failure(e, c));
        return cmd;
    }

    /** {@code rotactl --version}: as {@code rotactl version}; without a command: a usage error. */
    @Override
    public Integer call() throws Exception {
        if (version) {
            return withClient(spec, (client, printer) -> VersionCommand.print(client, printer, timeoutText()));
        }
        throw new CommandLine.ParameterException(spec.commandLine(),
                "no command given: use put, get, del, txn, watch, lease, endpoint, member, lock, elect, once, jobs, check, user, role, auth or version");
    }

    /** How a signal stops the command (for lock and once, which run a COMMAND and clean up after it). */
    StopSignal stop() {
        return stop;
    }

    /** stdin, for commands that read it. */
    InputStream in() {
        return in;
    }

    /**
     * Runs {@code body} with a client for the configured endpoints and a printer for the chosen format,
     * then closes the client. A {@link RotaException} becomes a {@link CommandFailure} saying what to do.
     */
    int withClient(CommandSpec command, ClientBody body) throws Exception {
        stop.json(writeOut == Printer.Format.JSON);
        EndpointSource source = endpointSource(command);
        List<String> members = source.endpoints();
        Printer printer = writeOut.on(command.commandLine().getOut(), hex);
        Duration attempt = commandTimeout.compareTo(MAX_ATTEMPT) < 0 ? commandTimeout : MAX_ATTEMPT;
        TlsOptions tls = tls(command, source);
        RotaClient.Builder builder = RotaClient.builder().endpoints(members).callTimeout(commandTimeout)
                .attemptTimeout(attempt).dialTimeout(dialTimeout).tls(tls);
        if (user != null && !user.isEmpty()) {
            int colon = user.indexOf(':');
            String name = colon < 0 ? user : user.substring(0, colon);
            if (colon >= 0 || password != null) {
                Passwords.warnIfVisible(command.commandLine().getErr());
            }
            char[] pw = colon >= 0 ? user.substring(colon + 1).toCharArray()
                    : passwordFile != null ? Passwords.fromFile(passwordFile, "--password-file")
                    : password != null ? password.toCharArray() : Passwords.prompt(name);
            builder.credentials(name, pw);
        }
        try (RotaClient client = builder.build()) {
            try {
                return body.run(client, printer);
            } catch (RotaException e) {
                if (e.getCause() instanceof InterruptedException || Thread.currentThread().isInterrupted()) {
                    // Stopped while waiting for an answer: say so, never "the cluster is down".
                    stop.beginCleanup();
                    throw CommandFailure.stopped("stopped (SIG" + stop.forwardedSignal() + ") before the cluster "
                            + "answered; a write in flight may or may not have been applied", stop.forwardedSignal());
                }
                if (e.code() == RotaException.Code.INVALID_ARGUMENT || e.code() == RotaException.Code.REQUEST_TOO_LARGE) {
                    throw CommandFailure.badValue(e.code().name(), describe(e, client, source));
                }
                throw new CommandFailure(e.code().name(), describe(e, client, source));
            } catch (IllegalArgumentException e) {
                // The SDK checks its arguments before sending: a bad value, as for a usage error.
                throw CommandFailure.badValue("invalid value: " + e.getMessage() + "; see '"
                        + command.qualifiedName() + " --help'");
            } finally {
                stop.beginCleanup();   // closing the client is not cut short by a late signal
            }
        }
    }

    /** The body of a command that talks to the cluster. */
    @FunctionalInterface
    interface ClientBody {
        int run(RotaClient client, Printer printer) throws Exception;
    }

    /** The endpoints and where they came from (see {@link EndpointSource}); a bad one is a usage error. */
    EndpointSource endpointSource(CommandSpec command) {
        try {
            return EndpointSource.resolve(endpoints, env, Path.of(""));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(command.commandLine(), e.getMessage());
        }
    }

    /**
     * The TLS settings: {@code --cacert/--cert/--key} (or their variables); else, when the endpoints came from
     * scripts/cluster.sh's state file, the files it recorded; null for plaintext. A file that cannot be used is
     * a usage error naming the flag.
     */
    TlsOptions tls(CommandSpec command, EndpointSource source) {
        Path ca = cacert;
        Path c = cert;
        Path k = key;
        if (ca == null && c == null && k == null && !source.tls().isEmpty()) {
            ca = pathOrNull(source.tls().get("ROTA_CACERT"));
            c = pathOrNull(source.tls().get("ROTA_CERT"));
            k = pathOrNull(source.tls().get("ROTA_KEY"));
        }
        if (ca == null && c == null && k == null) {
            return null;
        }
        if ((c == null) != (k == null)) {
            throw new CommandLine.ParameterException(command.commandLine(), (c == null ? "--key" : "--cert")
                    + " needs " + (c == null ? "--cert" : "--key") + ": a client certificate goes with its key");
        }
        try {
            TlsOptions.Builder b = TlsOptions.builder().trustedCaFile(ca);
            return (c == null ? b : b.clientCertificate(c, k)).build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(command.commandLine(), "TLS (--cacert/--cert/--key): "
                    + e.getMessage());
        }
    }

    private static Path pathOrNull(String value) {
        return value == null || value.isBlank() ? null : Path.of(value);
    }

    /** A key or value argument as bytes: UTF-8, or hex digits with {@code --hex} (a bad one: a usage error). */
    byte[] bytes(CommandSpec command, String text, String what) {
        try {
            return Bytes.parse(text, hex, what);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(command.commandLine(), e.getMessage());
        }
    }

    /**
     * A note on stderr while a command runs (progress, whom a lock waits for, what a reset did): the human
     * {@code message} as is, or under {@code -w json} one object: {@code {"note":KIND, ...fields, "message":...}}
     * with the fields {@code json} already holds (design HS66).
     *
     * @param json the note's object, begun with {@link #note(String)}
     */
    void note(CommandSpec command, Json json, String message) {
        PrintWriter err = command.commandLine().getErr();
        err.println(writeOut == Printer.Format.JSON ? json.field("message", message).toString() : message);
        err.flush();
    }

    /** A note's JSON object, its first field {@code "note": kind}; {@link #note(CommandSpec, Json, String)} ends it. */
    static Json note(String kind) {
        return new Json().field("note", kind);
    }

    /** The output format ({@code -w}). */
    Printer.Format writeOutFormat() {
        return writeOut;
    }

    /** Whether keys and values are hex ({@code --hex}). */
    boolean hex() {
        return hex;
    }

    /** The command timeout. */
    Duration commandTimeout() {
        return commandTimeout;
    }

    /** The command timeout, as users write it. */
    String timeoutText() {
        return Conversions.format(commandTimeout);
    }

    /** What went wrong and what to do, for a failure the command did not explain itself. */
    private String describe(RotaException e, RotaClient client, EndpointSource source) {
        return switch (e.code()) {
            case TIMEOUT, UNAVAILABLE, NOT_LEADER -> anyAnswers(client, source.endpoints())
                    ? e.getMessage() + "; the cluster may have no leader or no majority: check 'rotactl endpoint status'"
                    : unreachable(e, source);
            case COMPACTED -> e.compactRevision() > 0
                    ? "the revision asked for is older than the history the cluster keeps (compacted at revision "
                            + e.compactRevision() + "): get with --rev " + e.compactRevision() + " or later, watch with --rev "
                            + (e.compactRevision() + 1) + " or later"
                    : e.getMessage();
            case LEASE_NOT_FOUND -> e.getMessage() + "; the lease was never granted, was revoked or expired"
                    + " (see 'rotactl lease list')";
            case REQUEST_TOO_LARGE -> e.getMessage();   // the member's message names the limit and its setting
            case SESSION_EXPIRED -> e.getMessage() + "; run the command again";
            case INVALID_ARGUMENT -> "invalid request: " + e.getMessage();
            case MEMBERSHIP_REFUSED -> "membership change refused (" + e.membershipRefusal() + "): " + e.getMessage();
            case NO_SPACE -> e.getMessage() + " (see 'rotactl alarm list')";

            case PERMISSION_DENIED -> e.getMessage() + "; ask an administrator for a role with that permission"
                    + " ('rotactl user get NAME' shows the roles), or use --user root for administration";
            case AUTH_FAILED -> e.getMessage() + (e.retryAfterMs() > 0 ? "" : "; check --user NAME:PASSWORD");
            case INVALID_AUTH_TOKEN -> e.getMessage() + (user == null ? "; give --user NAME[:PASSWORD] (or ROTA_USER)" : "");
            case AUTH_NOT_ENABLED -> e.getMessage();
        };
    }

    /**
     * No member answered: the cause the client found at once (unknown host, refused, not a client port), else the
     * wait; and where the endpoints came from, so the user knows which setting to fix.
     */
    private String unreachable(RotaException e, EndpointSource source) {
        String next = "; is the cluster running (scripts/cluster.sh start), and are these its members' client ports?";
        // Only a TIMEOUT was waited for; anything else (a refused connect on a call that goes to one member,
        // such as snapshot save, never reaches the retrier's classification) failed at once with its cause.
        if (e.code() != RotaException.Code.TIMEOUT || e.getMessage().contains("no member reachable")) {
            return "cannot reach the cluster at " + source.describe() + ": " + e.getMessage() + next;
        }
        return "no member of " + source.describe() + " answered within " + timeoutText() + next;
    }

    /** Whether any member answers a Status call within {@link #PROBE}. */
    private static boolean anyAnswers(RotaClient client, List<String> members) {
        CompletableFuture<Boolean> any = new CompletableFuture<>();
        CompletableFuture<?>[] calls = members.stream()
                .map(m -> client.cluster().statusAsync(m).thenAccept(s -> any.complete(true)))
                .toArray(CompletableFuture[]::new);
        CompletableFuture.allOf(calls).whenComplete((v, x) -> any.complete(false));
        try {
            return any.get(PROBE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * A usage error: one line naming the mistake and where help is; exit code 2. Under {@code -w json}:
     * {@code {"error":"USAGE","message":...}}.
     */
    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        String message = e.getMessage() + "; see '" + cmd.getCommandSpec().qualifiedName() + " --help'";
        if (json(cmd, args)) {
            err.println(error(CommandFailure.USAGE, message));
        } else {
            err.println("Error: " + message);
            CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
        }
        err.flush();
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    /**
     * A failed command: {@code Error: ...} on stderr, or under {@code -w json} {@code {"error":CODE,"message":...}};
     * exit code 1 (2 for a refused value, 128 + N when stopped by signal N), the same in both formats.
     */
    private static int failure(Exception e, CommandLine cmd) {
        PrintWriter err = cmd.getErr();
        boolean json = json(cmd, new String[0]);
        if (e instanceof CommandFailure f) {
            err.println(json ? error(f.code(), f.getMessage()) : "Error: " + f.getMessage());
            err.flush();
            return f.exitCode();
        }
        String message = "unexpected " + e + "; please report it with the command that caused it";
        err.println(json ? error("INTERNAL", message) : "Error: " + message);
        err.flush();
        return 1;
    }

    /** An error as {@code -w json} prints it on stderr. */
    static String error(String code, String message) {
        return new Json().field("error", code).field("message", message).toString();
    }

    /**
     * Whether errors are to be JSON: {@code -w json} as parsed (or from ROTA_WRITE_OUT); for a usage error found
     * before {@code -w} was parsed, a {@code -w json} (or {@code --write-out=json}) among the arguments.
     */
    private static boolean json(CommandLine cmd, String[] args) {
        Object root = cmd.getCommandSpec().root().userObject();
        if (root instanceof Rotactl r && r.writeOut == Printer.Format.JSON) {
            return true;
        }
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--")) {
                return false;
            }
            String next = i + 1 < args.length ? args[i + 1] : "";
            if (((a.equals("-w") || a.equals("--write-out")) && next.equalsIgnoreCase("json"))
                    || a.equalsIgnoreCase("-wjson") || a.equalsIgnoreCase("-w=json")
                    || a.equalsIgnoreCase("--write-out=json")) {
                return true;
            }
        }
        return false;
    }
}
