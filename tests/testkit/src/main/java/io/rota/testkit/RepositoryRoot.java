package io.rota.testkit;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The repository's root directory, for tests that run its scripts or read its docs: the nearest directory at or
 * above the working directory that holds {@code mvnw}. A module's tests run in the module's directory, which may
 * sit one level down ({@code kv-server}) or two ({@code tests/system-tests}); walking up keeps them free of
 * {@code ../} chains that break when a module moves (design HS62).
 */
public final class RepositoryRoot {

    private RepositoryRoot() {
    }

    /**
     * @return the absolute, normalized root: the nearest directory at or above {@code user.dir} holding {@code mvnw}
     * @throws IllegalStateException when no directory above the working directory holds it
     */
    public static Path find() {
        Path start = Path.of(System.getProperty("user.dir")).toAbsolutePath().normalize();
        for (Path p = start; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("mvnw"))) {
                return p;
            }
        }
        throw new IllegalStateException("no directory at or above " + start + " holds mvnw");
    }

    /**
     * @param first a path relative to the root, such as {@code "scripts"}
     * @param more the rest of it, such as {@code "cluster.sh"}
     * @return that path, resolved against {@link #find()}
     */
    public static Path resolve(String first, String... more) {
        return find().resolve(Path.of(first, more));
    }
}
