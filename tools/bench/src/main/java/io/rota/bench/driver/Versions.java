package io.rota.bench.driver;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** Reads the client library versions that Maven wrote into a driver jar's properties file at build time. */
public final class Versions {

    private Versions() {
    }

    /**
     * One property of a class-path properties file.
     *
     * @param resource the file, e.g. {@code /rota-bench-etcd.properties}
     * @param key      the property
     * @return its value, or "unknown" if the file or the key is missing
     */
    public static String of(String resource, String key) {
        try (InputStream in = Versions.class.getResourceAsStream(resource)) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty(key, "unknown");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
