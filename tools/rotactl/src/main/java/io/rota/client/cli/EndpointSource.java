package io.rota.client.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Which members rotactl talks to, and where that came from — said whenever they cannot be reached, so a user
 * whose cluster runs elsewhere sees which setting to fix. In order: {@code --endpoints}; {@code ROTA_ENDPOINTS};
 * {@code ROTA_BASE_PORT} (scripts/cluster.sh's base: client ports base + 1..3); the state file that
 * {@code scripts/cluster.sh start} writes into its data dir ({@code $ROTA_CLUSTER_DIR/cluster.env}, else
 * {@code ./data/cluster.env}), so a cluster moved to other ports is found from another shell without the
 * variable; else scripts/cluster.sh's default ports 7001-7003.
 *
 * @param endpoints the validated {@code host:port} list
 * @param source    where it came from, as users name it: {@code --endpoints}, {@code ROTA_ENDPOINTS},
 *                  {@code ROTA_BASE_PORT=8000}, the state file's path, or {@code the default}
 * @param tls       the TLS files the state file records beside the endpoints ({@code ROTA_CACERT},
 *                  {@code ROTA_CERT}, {@code ROTA_KEY}: a cluster started with {@code --tls}) by variable name;
 *                  empty for every other source
 */
record EndpointSource(List<String> endpoints, String source, Map<String, String> tls) {

    /** The state file's name in scripts/cluster.sh's data dir. */
    static final String STATE_FILE = "cluster.env";

    /** The variables of the state file that name TLS files. */
    static final List<String> TLS_VARIABLES = List.of("ROTA_CACERT", "ROTA_CERT", "ROTA_KEY");

    EndpointSource {
        endpoints = List.copyOf(endpoints);
        tls = Map.copyOf(tls);
    }

    EndpointSource(List<String> endpoints, String source) {
        this(endpoints, source, Map.of());
    }

    /**
     * The endpoints to use.
     *
     * @param option     the {@code --endpoints} value, or null
     * @param env        the environment ({@code ROTA_ENDPOINTS}, {@code ROTA_BASE_PORT}, {@code ROTA_CLUSTER_DIR})
     * @param workingDir where {@code ./data} is looked for when {@code ROTA_CLUSTER_DIR} is unset
     * @return the endpoints and their source
     * @throws IllegalArgumentException naming the bad entry and its source
     */
    static EndpointSource resolve(String option, Map<String, String> env, Path workingDir) {
        if (option != null) {
            return new EndpointSource(Endpoints.parse(option, "--endpoints"), "--endpoints");
        }
        String fromEnv = env.get("ROTA_ENDPOINTS");
        if (fromEnv != null && !fromEnv.isBlank()) {
            return new EndpointSource(Endpoints.parse(fromEnv, "ROTA_ENDPOINTS"), "ROTA_ENDPOINTS");
        }
        String base = env.get("ROTA_BASE_PORT");
        if (base != null && !base.isBlank()) {
            return new EndpointSource(Endpoints.local(base), "ROTA_BASE_PORT=" + base.trim());
        }
        Optional<EndpointSource> state = fromStateFile(env, workingDir);
        return state.orElseGet(() -> new EndpointSource(Endpoints.local(null), "the default"));
    }

    /** The endpoints scripts/cluster.sh recorded in its data dir, if it did. */
    private static Optional<EndpointSource> fromStateFile(Map<String, String> env, Path workingDir) {
        String dir = env.get("ROTA_CLUSTER_DIR");
        Path file = (dir != null && !dir.isBlank() ? Path.of(dir) : workingDir.resolve("data")).resolve(STATE_FILE);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        requireTrusted(file);
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        String shown = file.toString();
        Map<String, String> tls = new java.util.HashMap<>();
        for (String l : lines) {
            int eq = l.indexOf('=');
            if (eq > 0 && TLS_VARIABLES.contains(l.substring(0, eq)) && eq < l.length() - 1) {
                tls.put(l.substring(0, eq), l.substring(eq + 1).trim());
            }
        }
        return lines.stream().filter(l -> l.startsWith("ROTA_ENDPOINTS=")).findFirst()
                .map(l -> new EndpointSource(Endpoints.parse(l.substring("ROTA_ENDPOINTS=".length()), shown),
                        shown + " (written by scripts/cluster.sh)", tls));
    }

    /**
     * Issue 33: the state file decides where rotactl sends a password, so one that another user could have
     * written (not ours, or writable by group or others — a ./data/cluster.env in a shared directory) is
     * refused, as ssh refuses a config file others may write. scripts/cluster.sh writes it 0644, as its owner.
     */
    static void requireTrusted(Path file) {
        try {
            if (!file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                return;
            }
            var owner = Files.getOwner(file);
            var me = file.getFileSystem().getUserPrincipalLookupService()
                    .lookupPrincipalByName(System.getProperty("user.name"));
            var mode = Files.getPosixFilePermissions(file);
            boolean othersMayWrite = mode.contains(java.nio.file.attribute.PosixFilePermission.GROUP_WRITE)
                    || mode.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE);
            if (!owner.equals(me) || othersMayWrite) {
                throw new IllegalArgumentException("refusing " + file + ": it is " + (owner.equals(me) ? "" : "owned"
                        + " by " + owner.getName() + (othersMayWrite ? " and " : "")) + (othersMayWrite ? "writable by "
                        + java.nio.file.attribute.PosixFilePermissions.toString(mode) + " (group or others)" : "")
                        + ", so someone else may have chosen the endpoints your password would go to; give --endpoints"
                        + " (or ROTA_ENDPOINTS), or fix the file (chown; chmod go-w)");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot check the owner of " + file, e);
        }
    }

    /** What to tell a user who cannot reach these endpoints about where they came from. */
    String describe() {
        return String.join(",", endpoints) + " (from " + source + ")";
    }
}
