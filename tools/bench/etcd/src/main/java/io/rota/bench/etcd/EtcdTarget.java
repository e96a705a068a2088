package io.rota.bench.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import io.rota.bench.driver.Target;
import io.rota.bench.driver.Versions;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * etcd's driver: jetcd with its defaults; reads are etcd's default (linearizable) Range or a serializable
 * one; the lock is etcd's v3lock service ({@code Lock.lock(name, lease)}) with one kept-alive lease per lock
 * client, as etcd's concurrency.Session gives each process.
 */
public final class EtcdTarget implements Target {

    /** The lock client's session lease, seconds (etcd's concurrency.Session default is 60; Rota's lock 10). */
    private static final long SESSION_TTL_S = 10;
    private static final GetOption SERIALIZABLE = GetOption.builder().withSerializable(true).build();

    private String[] endpoints;
    private Client client;
    private KV kv;
    private ByteSequence[] keys;

    /** Used by DriverMain by reflection. */
    public EtcdTarget() {
    }

    @Override
    public void open(String endpoints) {
        String[] hosts = endpoints.split(",");
        this.endpoints = new String[hosts.length];
        for (int i = 0; i < hosts.length; i++) {
            this.endpoints[i] = "http://" + hosts[i].trim();
        }
        client = Client.builder().endpoints(this.endpoints).build();
        kv = client.getKVClient();
    }

    @Override
    public String clientLibrary() {
        return "jetcd-core " + Versions.of("/rota-bench-etcd.properties", "jetcd.version");
    }

    @Override
    public void prepare(int count, byte[] value) throws Exception {
        keys = new ByteSequence[count];
        for (int i = 0; i < count; i++) {
            keys[i] = ByteSequence.from("bench/k" + i, StandardCharsets.UTF_8);
            kv.put(keys[i], ByteSequence.from(value)).get(30, TimeUnit.SECONDS);
        }
    }

    @Override
    public CompletionStage<?> write(int key, byte[] value) {
        return kv.put(keys[key], ByteSequence.from(value));
    }

    @Override
    public CompletionStage<?> read(int key, boolean linearizable) {
        return linearizable ? kv.get(keys[key]) : kv.get(keys[key], SERIALIZABLE);
    }

    @Override
    public LockClient newLockClient() throws Exception {
        Client own = Client.builder().endpoints(endpoints).build();
        long lease = own.getLeaseClient().grant(SESSION_TTL_S).get(30, TimeUnit.SECONDS).getID();
        CloseableClient keepAlive = own.getLeaseClient().keepAlive(lease, new StreamObserver<>() {
            @Override
            public void onNext(LeaseKeepAliveResponse value) {
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        });
        return new LockClient() {
            private ByteSequence held;

            @Override
            public void lock(String name) throws Exception {
                CompletableFuture<io.etcd.jetcd.lock.LockResponse> f =
                        own.getLockClient().lock(ByteSequence.from(name, StandardCharsets.UTF_8), lease);
                held = f.get(30, TimeUnit.SECONDS).getKey();
            }

            @Override
            public void unlock() throws Exception {
                own.getLockClient().unlock(held).get(30, TimeUnit.SECONDS);
                held = null;
            }

            @Override
            public void close() {
                keepAlive.close();
                own.close();
            }
        };
    }

    @Override
    public void close() {
        client.close();
    }
}
