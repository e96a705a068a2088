package io.rota.client.cli;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * rotactl without a cluster: usage errors exit with 2 and one {@code Error:} line naming the mistake and
 * the help; help exits with 0; an unreachable cluster exits with 1 and says so. Streams, stdin and the
 * environment are the test's own.
 */
class RotactlCommandLineTest {

    /** What one run printed and returned. */
    record Run(int exitCode, String out, String err) {
    }

    @Test
    void usageErrorsExitWith2AndNameTheMistake() {
        assertUsage(run(""), "Error: no command given: use put, get, del, txn, watch, lease, endpoint, member, lock, elect, once, jobs,"
                + " check, user, role, auth or version;"
                + " see 'rotactl --help'");
        assertUsage(run("", "gett", "k"), "Error: Unmatched arguments from index 0: 'gett', 'k'; see 'rotactl --help'");
        assertUsage(run("", "put"), "Error: Missing required parameter: 'KEY'; see 'rotactl put --help'");
        assertUsage(run("", "get", "k", "-w", "yaml"), "Error: Invalid value for option '--write-out': expected one of");
        assertUsage(run("", "get", "k", "--command-timeout", "5"),
                "Error: Invalid value for option '--command-timeout': invalid duration '5': use e.g. 5s, 500ms or 1m");
        assertUsage(run("", "lease", "revoke", "zz"), "Error: Invalid value for positional parameter at index 0 (ID): "
                + "invalid lease ID 'zz': expected the hexadecimal ID that 'rotactl lease grant' printed");
        assertUsage(run("", "lease"), "Error: name a lease command: grant, revoke, keep-alive, timetolive or list;"
                + " see 'rotactl lease --help'");
        assertUsage(run("", "get", "k", "--endpoints", "localhost"),
                "Error: --endpoints 'localhost': it has no port; give HOST:PORT; see 'rotactl get --help'");
        assertUsage(run("", "get", "k", "--keys-only", "--count-only"),
                "Error: --keys-only, --print-value-only and --count-only exclude each other");
        assertUsage(run("", "get", ""), "Error: the key is empty; to get every key use: get \"\" --prefix");
        assertUsage(run("", "lease", "grant", "0"), "Error: TTL must be a positive number of seconds (got 0)");
        assertUsage(run("", "watch", "k", "--rev", "-1"), "Error: --rev must not be negative");
    }

    @Test
    @DisplayName("issue 30: member add/update check an address and a name as the cluster does, before talking to it")
    void memberCommandsRefuseWhatTheClusterWouldRefuse() {
        assertUsage(run("", "member", "add", "n4", "--peer-urls", "n4:71010"),
                "Error: --peer-urls 'n4:71010': port 71010 is out of range 1–65535; see 'rotactl member add --help'");
        // Issue 32, item 7: a scheme is refused, not stripped (rota peers do not speak http).
        assertUsage(run("", "member", "add", "n4", "--peer-urls", "http://10.0.0.99:2380"),
                "Error: --peer-urls 'http://10.0.0.99:2380': --peer-urls takes HOST:PORT; rota peers do not speak http"
                        + " (give e.g. 10.0.0.99:2380); see 'rotactl member add --help'");
        assertUsage(run("", "member", "update", "4", "--peer", "https://n4:7104"),
                "Error: --peer 'https://n4:7104': --peer takes HOST:PORT; rota peers do not speak http");
        assertUsage(run("", "member", "add", "n 4", "--peer-urls", "n4:7104"),
                "Error: NAME 'n 4' has a character other than letters, digits");
        assertUsage(run("", "member", "add", "n4", "--peer-urls", "n4:7104", "--client-urls", "n4:"),
                "Error: --client-urls 'n4:': the port is missing");
        assertUsage(run("", "member", "update", "4", "--peer", "[zz]:7104"),
                "Error: --peer '[zz]:7104': '[zz]' is not an IPv6 address");
    }

    @Test
    void recipeCommandsRejectBadArgumentsBeforeTalkingToTheCluster() {
        assertUsage(run("", "lock"), "Error: Missing required parameter: 'NAME'; see 'rotactl lock --help'");
        assertUsage(run("", "lock", ""), "Error: the lock name is empty; see 'rotactl lock --help'");
        assertUsage(run("", "lock", "db", "--ttl", "0"), "Error: --ttl must be at least 1 second (got 0)");
        assertUsage(run("", "lock", "db", "--timeout", "30"),
                "Error: Invalid value for option '--timeout': invalid duration '30': use e.g. 5s, 500ms or 1m");
        assertUsage(run("", "lock", "db", "-c", "true"), "Error: Unknown option: '-c'");
        assertUsage(run("", "elect", "sched"), "Error: PROPOSAL is required to campaign (or use --listen to observe);"
                + " see 'rotactl elect --help'");
        assertUsage(run("", "elect", "sched", "app-1", "--listen"), "Error: --listen observes without campaigning");
        assertUsage(run("", "elect", "sched", "a", "b"), "Error: Unmatched argument at index 3: 'b'");
        assertUsage(run("", "once", "r/1"), "Error: COMMAND is missing: once KEY -- COMMAND ARGS... (or once KEY --status,"
                + " once KEY --reset)");
        assertUsage(run("", "once", "r/1", "--status", "--", "true"), "Error: --status prints the record and runs nothing");
        assertUsage(run("", "once", "r/1", "--reset", "--", "true"), "Error: --reset deletes the record and runs nothing");
        assertUsage(run("", "once", "r/1", "--reset", "--status"), "Error: --status and --reset do not go together");
        assertUsage(run("", "once", "r/1", "--retry-failed", "--status"), "Error: --retry-failed needs a COMMAND");
        assertUsage(run("", "once", "", "--", "true"), "Error: the once-record key is empty");
        assertUsage(run("", "jobs"), "Error: name a jobs command: list, history; see 'rotactl jobs --help'");
        assertUsage(run("", "jobs", "history", "mail", "--prefix", ""), "Error: --prefix is empty: give the prefix the "
                + "application's SingletonJob uses (default rota/jobs)");
        assertUsage(run("", "jobs", "list", "--prefix", "/"), "Error: --prefix is empty: give the prefix the "
                + "application's SingletonJob uses (default rota/jobs)");
        assertUsage(run("", "jobs", "history"), "Error: Missing required parameter: 'NAME'");
        assertUsage(run("", "jobs", "history", "mail", "--limit", "-1"), "Error: --limit must not be negative (got -1)");
    }

    @Test
    void theCommandAfterTheDoubleDashKeepsItsOwnOptions() throws IOException {
        // Everything after '--' is COMMAND: rotactl's own options there are not rotactl's; the run then fails
        // only because no member answers (exit 1), not on usage.
        int port = closedPort();
        Run r = run("", "--endpoints", "127.0.0.1:" + port, "--command-timeout", "30s",
                "lock", "db", "--", "sh", "-c", "exit 3", "--endpoints", "x");
        assertEquals(1, r.exitCode(), r.toString());
        assertEquals(refused(port, "--endpoints"), r.err());
    }

    /**
     * The exit-code table of docs/rotactl.md: a usage error or a bad value exits with 2 on every command, before
     * any member is asked (the endpoint here refuses connections, which would be exit 1); a cluster that cannot
     * be reached exits with 1.
     */
    @Test
    void everyCommandsBadValuesExitWith2AndTheClusterErrorsWith1() throws IOException {
        String endpoint = "127.0.0.1:" + closedPort();
        String[][] badValues = {
            {"put", "", "v"}, {"put", "k", "v", "--lease", "zz"}, {"get", ""}, {"get", "k", "--rev", "-1"},
            {"get", "k", "--limit", "-1"}, {"del", ""}, {"watch", ""}, {"watch", "k", "--rev", "-1"},
            {"lease", "grant", "0"}, {"lease", "grant", "99999999999"}, {"lease", "grant", "x"},
            {"lease", "revoke", "zz"}, {"lease", "keep-alive", "0"}, {"lease", "timetolive", "-5"},
            {"member", "add", "n4", "--peer-urls", "a:1,b:2"}, {"member", "remove", "x"}, {"move-leader", "x"},
            {"lock", ""}, {"lock", "db", "--ttl", "0"}, {"lock", "db", "--timeout", "0s"}, {"elect", "", "v"},
            {"once", "", "--", "true"}, {"jobs", "history", ""}, {"jobs", "history", "j", "--limit", "-1"},
            {"get", "k", "--command-timeout", "0ms"}, {"get", "k", "-w", "yaml"},
            {"compaction", "0"}, {"compaction", "x"}, {"snapshot", "save"}, {"snapshot", "status"}, {"alarm"},
        };
        for (String[] args : badValues) {
            Run r = run(Map.of("ROTA_ENDPOINTS", endpoint), "", args);
            assertEquals(2, r.exitCode(), String.join(" ", args) + ": " + r);
            assertTrue(r.err().startsWith("Error: "), String.join(" ", args) + ": " + r.err());
            assertEquals("", r.out(), String.join(" ", args));
        }
        Run unreachable = run(Map.of("ROTA_ENDPOINTS", endpoint), "", "put", "k", "v");
        assertEquals(1, unreachable.exitCode(), unreachable.toString());
    }

    @Test
    @DisplayName("issue 34: under -w json an error is one JSON object on stderr, with the same exit code")
    void errorsAreJsonUnderWriteOutJson() throws IOException {
        Run usage = run("", "get", "k", "--limit", "-1", "-w", "json");
        assertEquals(2, usage.exitCode(), usage.toString());
        assertTrue(usage.err().startsWith("{\"error\":\"USAGE\",\"message\":\"--limit must not be negative"), usage.err());
        assertEquals(1, usage.err().lines().count(), usage.err());
        assertEquals("", usage.out());
        // Found before -w was parsed: the arguments still say json.
        Run early = run("", "gett", "k", "-w", "json");
        assertEquals(2, early.exitCode(), early.toString());
        assertTrue(early.err().startsWith("{\"error\":\"USAGE\",\"message\":\"Unmatched arguments"), early.err());
        assertTrue(run(Map.of("ROTA_WRITE_OUT", "json"), "", "lease", "grant", "0").err()
                .startsWith("{\"error\":\"USAGE\",\"message\":\"TTL must be a positive"));
        assertUsage(run("", "member", "add", "n4", "--peer-urls", "127.0.0.1:7104", "--promote-when-caught-up"),
                "Error: --promote-when-caught-up needs --learner");
        String endpoint = "127.0.0.1:" + closedPort();
        Run unreachable = run(Map.of("ROTA_ENDPOINTS", endpoint), "", "put", "k", "v", "-w", "json");
        assertEquals(1, unreachable.exitCode(), unreachable.toString());
        assertTrue(unreachable.err().startsWith("{\"error\":\"UNAVAILABLE\",\"message\":\"cannot reach the cluster at "
                + endpoint), unreachable.err());
        assertTrue(unreachable.err().endsWith("\"}\n"), unreachable.err());
        Run snapshot = run("", "snapshot", "status", "/nonexistent/backup.db", "-w", "json");
        assertEquals(2, snapshot.exitCode(), snapshot.toString());
        assertTrue(snapshot.err().startsWith("{\"error\":\"INVALID_ARGUMENT\",\"message\":\"no such file: "),
                snapshot.err());
    }

    @Test
    void badTxnSyntaxIsAUsageErrorNamingTheLine() {
        Run r = run("value(\"k\") = \"v\"\n\nput k\n", "txn");
        assertUsage(r, "Error: txn line 3: put takes KEY VALUE (quote a value with spaces), got 'put k'; see 'rotactl txn --help'");
    }

    @Test
    void globalOptionsWorkBeforeAndAfterTheCommand() throws IOException {
        int port = closedPort();
        // A refused endpoint fails at once: the long command timeout is never waited for.
        Run before = run("", "--endpoints", "127.0.0.1:" + port, "--command-timeout", "30s", "get", "k");
        Run after = run("", "get", "k", "--endpoints", "127.0.0.1:" + port, "--command-timeout", "30s");
        for (Run r : new Run[] {before, after}) {
            assertEquals(1, r.exitCode(), r.toString());
            assertEquals(refused(port, "--endpoints"), r.err());
            assertEquals("", r.out());
        }
    }

    @Test
    void theEnvironmentNamesTheEndpoints() throws IOException {
        int port = closedPort();
        Run r = run(Map.of("ROTA_ENDPOINTS", "127.0.0.1:" + port), "", "del", "k", "--command-timeout", "30s");
        assertEquals(1, r.exitCode(), r.toString());
        assertEquals(refused(port, "ROTA_ENDPOINTS"), r.err(), "at once, with the cause and where the endpoint came from");
    }

    @Test
    void helpExitsWith0AndDescribesEveryCommand() {
        Run r = run("", "--help");
        assertEquals(0, r.exitCode());
        for (String command : new String[] {"put", "get", "del", "txn", "watch", "lease", "endpoint", "member",
                "lock", "elect", "once", "jobs", "ROTA_ENDPOINTS", "Exit codes"}) {
            assertTrue(r.out().contains(command), command + " in\n" + r.out());
        }
        Run txn = run("", "txn", "--help");
        assertEquals(0, txn.exitCode());
        assertTrue(txn.out().contains("value(\"KEY\") = \"VALUE\""), txn.out());
        Run keepAlive = run("", "help", "lease");
        assertEquals(0, keepAlive.exitCode());
        assertTrue(keepAlive.out().contains("keep-alive"), keepAlive.out());
    }

    @Test
    void everyGlobalOptionHasItsEnvironmentVariableAndTheFlagWins() throws IOException {
        String nobody = "127.0.0.1:" + closedPort();
        // --endpoints has ROTA_ENDPOINTS through Endpoints; every other global option through EnvDefaults.
        picocli.CommandLine cmd = Rotactl.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()),
                new ByteArrayInputStream(new byte[0]), Map.of());
        for (picocli.CommandLine.Model.OptionSpec o : cmd.getCommandSpec().options()) {
            if (o.scopeType() == picocli.CommandLine.ScopeType.INHERIT && !o.longestName().equals("--endpoints")) {
                assertTrue(EnvDefaults.GLOBALS.contains(o.longestName()), o.longestName() + " has no ROTA_ variable");
            }
        }
        assertEquals("ROTA_DIAL_TIMEOUT", EnvDefaults.variable("--dial-timeout"));

        Run json = run(Map.of("ROTA_WRITE_OUT", "json", "ROTA_ENDPOINTS", nobody), "", "version");
        assertEquals(0, json.exitCode(), json.toString());
        assertTrue(json.out().startsWith("{\"rotactl\":\"" + VersionCommand.VERSION + "\",\"members\":[{\"endpoint\":\""
                + nobody + "\",\"error\":"), json.out());
        Run flagWins = run(Map.of("ROTA_WRITE_OUT", "json", "ROTA_ENDPOINTS", nobody), "", "--version", "-w", "simple");
        assertEquals(0, flagWins.exitCode(), flagWins.toString());
        assertTrue(flagWins.out().startsWith("rotactl version: " + VersionCommand.VERSION + "\n" + nobody + ": no answer ("),
                flagWins.out());

        assertUsage(run(Map.of("ROTA_HEX", "true"), "", "get", "zz"), "Error: KEY 'zz' is not hex: with --hex give two"
                + " hex digits per byte, e.g. 6b6579 or \\x6b\\x65\\x79 for \"key\"");
        assertUsage(run(Map.of("ROTA_COMMAND_TIMEOUT", "5"), "", "get", "k"), "Error: environment variable "
                + "ROTA_COMMAND_TIMEOUT='5' (the default for --command-timeout): invalid duration '5': use e.g. 5s, 500ms"
                + " or 1m; fix or unset it");
        assertUsage(run(Map.of("ROTA_DIAL_TIMEOUT", "soon"), "", "get", "k"), "Error: environment variable "
                + "ROTA_DIAL_TIMEOUT='soon'");
        assertUsage(run(Map.of("ROTA_WRITE_OUT", "yaml"), "", "get", "k"), "Error: environment variable "
                + "ROTA_WRITE_OUT='yaml' (the default for --write-out): expected simple, json or table; fix or unset it");
        assertUsage(run(Map.of("ROTA_HEX", "yes"), "", "get", "k"), "Error: environment variable ROTA_HEX='yes'"
                + " (the default for --hex): expected true or false");
    }

    @Test
    void newGetWatchAndCheckArgumentsAreCheckedBeforeTalkingToTheCluster() {
        assertUsage(run("", "get", "b", "a"), "Error: END must sort after KEY: the range [KEY, END) would be empty");
        assertUsage(run("", "get", "a", "b", "--prefix"), "Error: --prefix, --from-key and a range END exclude each other");
        assertUsage(run("", "get", "a", "--sort-by", "SIZE"), "Error: Invalid value for option '--sort-by': expected one of"
                + " [KEY, CREATE, MODIFY, VERSION, VALUE]");
        assertUsage(run("", "get", "a", "--order", "UP"), "Error: Invalid value for option '--order'");
        assertUsage(run("", "get", "6k", "--hex"), "Error: KEY '6k' is not hex");
        assertUsage(run("", "put", "6b", "zz", "--hex"), "Error: VALUE 'zz' is not hex");
        assertUsage(run("", "check", "perf", "--load", "xxl"), "Error: Invalid value for option '--load'");
        assertUsage(run("", "check"), "Error: name a check: perf");
        assertUsage(run("", "endpoint", "hashkv", "--rev", "-1"), "Error: --rev must not be negative");
        assertUsage(run("", "get", "k", "--limit", "-1"), "Error: --limit must not be negative (got -1); 0 means no limit");
        assertUsage(run("", "get", "k", "--rev", "-2"), "Error: --rev must not be negative (got -2)");
    }

    /**
     * snapshot's files are bad values checked before any member is asked (exit 2), and a refused member is named
     * as unreachable at once, never as "no member answered within" a timeout nobody waited for.
     */
    @Test
    void snapshotFilesAreCheckedFirstAndARefusedMemberIsNamedAtOnce(@TempDir Path dir) throws IOException {
        String endpoint = "127.0.0.1:" + closedPort();
        Map<String, String> env = Map.of("ROTA_ENDPOINTS", endpoint);
        Path missingDir = dir.resolve("missing");
        assertUsage(run(env, "", "snapshot", "save", missingDir.resolve("backup.db").toString()), "Error: cannot write "
                + missingDir.resolve("backup.db") + ": the directory " + missingDir + " does not exist; create it or"
                + " give another FILE");
        assertUsage(run(env, "", "snapshot", "status", dir.resolve("none.db").toString()), "Error: no such file: "
                + dir.resolve("none.db") + "; give the path of a backup that 'rotactl snapshot save' wrote");

        Run refused = run(env, "", "snapshot", "save", dir.resolve("backup.db").toString(), "--command-timeout", "20s");
        assertEquals(1, refused.exitCode(), refused.toString());
        assertTrue(refused.err().startsWith("Error: cannot reach the cluster at " + endpoint + " (from ROTA_ENDPOINTS):"
                + " UNAVAILABLE: "), refused.err());
        assertTrue(refused.err().contains("refused"), refused.err());
        assertFalse(Files.exists(dir.resolve("backup.db.part")), "nothing left behind");
    }

    @Test
    void aBadFileInATlsVariableNamesTheVariable(@TempDir Path dir) {
        Path ca = dir.resolve("no-ca.pem");
        assertUsage(run(Map.of("ROTA_CACERT", ca.toString()), "", "get", "k"), "Error: environment variable ROTA_CACERT='"
                + ca + "' (the default for --cacert): no readable file there; fix or unset it");
        assertUsage(run(Map.of("ROTA_KEY", ca.toString()), "", "get", "k"), "Error: environment variable ROTA_KEY='");
    }

    private static void assertUsage(Run r, String errStart) {
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().startsWith(errStart), r.err());
        assertEquals(1, r.err().lines().filter(l -> l.startsWith("Error:")).count(), r.err());
        assertEquals("", r.out());
    }

    private static Run run(String stdin, String... args) {
        return run(Map.of(), stdin, args);
    }

    private static Run run(Map<String, String> env, String stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Rotactl.commandLine(new PrintWriter(out), new PrintWriter(err),
                new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), env).execute(args);
        return new Run(code, out.toString().replace(System.lineSeparator(), "\n"),
                err.toString().replace(System.lineSeparator(), "\n"));
    }

    /** What rotactl says when the only endpoint refuses connections: at once, UNAVAILABLE, naming the source. */
    private static String refused(int port, String source) {
        String endpoint = "127.0.0.1:" + port;
        return "Error: cannot reach the cluster at " + endpoint + " (from " + source + "): UNAVAILABLE: no member "
                + "reachable, nothing was sent to a member (" + endpoint + ": connection refused: nothing listens there);"
                + " is the cluster running (scripts/cluster.sh start), and are these its members' client ports?\n";
    }

    /** A port nobody listens on: bound, then closed. */
    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
