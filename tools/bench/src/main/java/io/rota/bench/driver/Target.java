package io.rota.bench.driver;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;

/**
 * One system under test, as the bench's workloads see it: a client of a three-member cluster that writes,
 * reads and hands out lock sessions. Each system's driver implements it with that system's own client
 * library (Rota's SDK, jetcd, Curator) and runs in a JVM of its own (design.md B1).
 *
 * <p>Implementations have a public no-argument constructor; {@link #open(String)} connects.
 */
public interface Target extends AutoCloseable {

    /**
     * Connects to the cluster.
     *
     * @param endpoints comma-separated {@code host:port} client addresses of the members
     * @throws Exception if the cluster cannot be reached
     */
    void open(String endpoints) throws Exception;

    /**
     * Speaks TLS to the cluster with these files; called before {@link #open} when the driver is given
     * {@code --cacert}. Only Rota's driver has TLS options (scripts/bench.sh tls measures what TLS costs).
     *
     * @param caCert the CA the members' certificates chain to (PEM)
     * @param cert   the client certificate (PEM), or null for none
     * @param key    its private key (PEM), or null
     */
    default void tls(java.nio.file.Path caCert, java.nio.file.Path cert, java.nio.file.Path key) {
        throw new UnsupportedOperationException(clientLibrary() + ": this driver has no TLS options");
    }

    /**
     * The client library and its version, for the report (e.g. {@code jetcd-core 0.8.5}).
     *
     * @return a short description
     */
    String clientLibrary();

    /**
     * Creates keys {@code 0 .. keys-1} with {@code value}, so that later writes and reads find them (ZooKeeper's
     * setData needs an existing node).
     *
     * @param keys  how many keys
     * @param value their first value
     * @throws Exception if the cluster refuses
     */
    void prepare(int keys, byte[] value) throws Exception;

    /**
     * Writes {@code value} to key number {@code key}; completes when the write is acknowledged (durable on a
     * quorum).
     *
     * @param key   the key's number, below {@link #prepare}'s count
     * @param value the value
     * @return completes with anything on success, exceptionally on failure
     */
    CompletionStage<?> write(int key, byte[] value);

    /**
     * Reads key number {@code key}.
     *
     * @param key          the key's number
     * @param linearizable true: a read that sees every write acknowledged before it started (etcd's default
     *                     Range, ZooKeeper's sync + getData, Rota's default get); false: a serializable read
     *                     served by whichever member the client talks to
     * @return completes with anything on success
     */
    CompletionStage<?> read(int key, boolean linearizable);

    /**
     * Opens one lock client: its own connection and session, as a separate process would have.
     *
     * @return the client; the caller closes it
     * @throws Exception if it cannot connect
     */
    LockClient newLockClient() throws Exception;

    /**
     * Opens {@code watchers} watches, each on one of the keys {@link #prepare} made (watch {@code i} on key
     * {@code i % keys}), spread over {@code connections} connections of their own, each counting the events it
     * receives into {@code events}. Only Rota's driver has it: it measures what serving watchers costs the
     * writes ({@code DriverMain}'s write-1-watched and write-64-watched; docs/performance.md).
     *
     * @param watchers    how many watches
     * @param connections how many client connections carry them
     * @param events      counts every event delivered
     * @return closes the watches and their connections
     * @throws Exception if a watch cannot be opened
     */
    default AutoCloseable watch(int watchers, int connections, LongAdder events)
            throws Exception {
        throw new UnsupportedOperationException(clientLibrary() + ": this driver has no watch workload");
    }

    /** Closes the connection (no checked exception: every library's close is unchecked). */
    @Override
    void close();

    /** One lock user, with its own session. Used by one thread at a time. */
    interface LockClient extends AutoCloseable {

        /**
         * Blocks until this client holds lock {@code name} (the system's own lock recipe).
         *
         * @param name the lock's name
         * @throws Exception if the lock cannot be taken
         */
        void lock(String name) throws Exception;

        /**
         * Releases the lock taken by the last {@link #lock}.
         *
         * @throws Exception if the release fails
         */
        void unlock() throws Exception;

        /** Closes this client's connection and session. */
        @Override
        void close();
    }
}
