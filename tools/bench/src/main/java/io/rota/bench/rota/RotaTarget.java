package io.rota.bench.rota;

import io.rota.bench.driver.Target;
import io.rota.bench.driver.Versions;
import io.rota.client.GetOptions;
import io.rota.client.RotaClient;
import io.rota.client.TlsOptions;
import io.rota.client.Watch;
import io.rota.client.WatchOptions;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;

/**
 * Rota's driver: the SDK with its defaults ({@link RotaClient}) and the lock recipe
 * ({@link io.rota.client.recipes.Lock}), as an application would use them; over TLS when given
 * {@link #tls} (the SDK's {@link TlsOptions}, as an application would set them).
 */
public final class RotaTarget implements Target {

    private static final GetOptions SERIALIZABLE = GetOptions.builder().serializable().build();
    private static final Duration LOCK_WAIT = Duration.ofSeconds(30);

    private String endpoints;
    /** Null: plaintext. */
    private TlsOptions tls;
    private RotaClient rota;
    private byte[][] keys;

    /** Used by DriverMain by reflection. */
    public RotaTarget() {
    }

    @Override
    public void tls(Path caCert, Path cert, Path key) {
        TlsOptions.Builder b = TlsOptions.builder().trustedCaFile(caCert);
        tls = (cert == null ? b : b.clientCertificate(cert, key)).build();
    }

    @Override
    public void open(String endpoints) {
        this.endpoints = endpoints;
        this.rota = connect();
    }

    private RotaClient connect() {
        return RotaClient.builder().endpoints(endpoints).tls(tls).build();
    }

    @Override
    public String clientLibrary() {
        return "rota-client " + Versions.of("/rota-bench.properties", "rota.version");
    }

    @Override
    public void prepare(int count, byte[] value) {
        keys = new byte[count][];
        for (int i = 0; i < count; i++) {
            keys[i] = ("bench/k" + i).getBytes(StandardCharsets.UTF_8);
            rota.kv().put(keys[i], value);
        }
    }

    @Override
    public CompletionStage<?> write(int key, byte[] value) {
        return rota.kv().putAsync(keys[key], value, 0);
    }

    @Override
    public CompletionStage<?> read(int key, boolean linearizable) {
        return linearizable ? rota.kv().getAsync(keys[key]) : rota.kv().getAsync(keys[key], SERIALIZABLE);
    }

    @Override
    public AutoCloseable watch(int watchers, int connections, LongAdder events) {
        List<RotaClient> clients = new ArrayList<>();
        List<Watch> watches = new ArrayList<>();
        Runnable closeAll = () -> {
            watches.forEach(Watch::close);
            clients.forEach(RotaClient::close);
        };
        try {
            for (int c = 0; c < connections; c++) {
                clients.add(connect());
            }
            for (int i = 0; i < watchers; i++) {
                watches.add(clients.get(i % connections).watches().watch(keys[i % keys.length],
                        WatchOptions.key(), event -> events.increment()));
            }
            return closeAll::run;
        } catch (RuntimeException e) {
            closeAll.run();
            throw e;
        }
    }

    @Override
    public LockClient newLockClient() {
        RotaClient own = connect();
        return new LockClient() {
            private final Map<String, Lock> locks = new HashMap<>();
            private LockHandle held;

            @Override
            public void lock(String name) throws InterruptedException {
                held = locks.computeIfAbsent(name, n -> Lock.of(own, n)).acquire(LOCK_WAIT);
            }

            @Override
            public void unlock() {
                held.close();
                held = null;
            }

            @Override
            public void close() {
                own.close();
            }
        };
    }

    @Override
    public void close() {
        rota.close();
    }
}
