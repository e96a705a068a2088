package io.rota.bench.zookeeper;

import io.rota.bench.driver.Target;
import io.rota.bench.driver.Versions;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * ZooKeeper's driver: Curator with a 0-wait retry policy; writes and reads through Curator's ZooKeeper
 * handle, asynchronously (ZooKeeper's own pipelined API). A linearizable read is {@code sync} then
 * {@code getData}, sent back to back (one session's requests are answered in order, so the read sees the
 * sync); a serializable read is {@code getData} alone. The lock is Curator's InterProcessMutex, one Curator
 * client (one session) per lock client.
 */
public final class ZooKeeperTarget implements Target {

    private static final int SESSION_TIMEOUT_MS = 10_000;
    private static final int CONNECT_TIMEOUT_MS = 10_000;
    private static final String ROOT = "/bench";

    private String endpoints;
    private CuratorFramework curator;
    private String[] paths;

    /** Used by DriverMain by reflection. */
    public ZooKeeperTarget() {
    }

    @Override
    public void open(String endpoints) throws Exception {
        this.endpoints = endpoints;
        curator = connect();
    }

    private CuratorFramework connect() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(endpoints, SESSION_TIMEOUT_MS, CONNECT_TIMEOUT_MS,
                new RetryNTimes(100, 10));
        c.start();
        if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("ZooKeeper at " + endpoints + " did not connect in 30 s");
        }
        return c;
    }

    @Override
    public String clientLibrary() {
        return "curator-recipes " + Versions.of("/rota-bench-zookeeper.properties", "curator.version")
                + " (zookeeper client " + org.apache.zookeeper.Version.getFullVersion().split("[ -]")[0] + ")";
    }

    @Override
    public void prepare(int count, byte[] value) throws Exception {
        paths = new String[count];
        for (int i = 0; i < count; i++) {
            paths[i] = ROOT + "/k" + i;
            try {
                curator.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(paths[i], value);
            } catch (KeeperException.NodeExistsException e) {
                curator.setData().forPath(paths[i], value);
            }
        }
    }

    private ZooKeeper zk() {
        try {
            return curator.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new IllegalStateException("no ZooKeeper connection", e);
        }
    }

    @Override
    public CompletionStage<?> write(int key, byte[] value) {
        CompletableFuture<Object> done = new CompletableFuture<>();
        zk().setData(paths[key], value, -1, (rc, path, ctx, stat) -> complete(done, rc, path), null);
        return done;
    }

    @Override
    public CompletionStage<?> read(int key, boolean linearizable) {
        CompletableFuture<Object> done = new CompletableFuture<>();
        ZooKeeper zk = zk();
        if (linearizable) {
            zk.sync(paths[key], (rc, path, ctx) -> {
                if (rc != KeeperException.Code.OK.intValue()) {
                    complete(done, rc, path);
                }
            }, null);
        }
        zk.getData(paths[key], false, (rc, path, ctx, data, stat) -> complete(done, rc, path), null);
        return done;
    }

    private static void complete(CompletableFuture<Object> done, int rc, String path) {
        if (rc == KeeperException.Code.OK.intValue()) {
            done.complete(path);
        } else {
            done.completeExceptionally(KeeperException.create(KeeperException.Code.get(rc), path));
        }
    }

    @Override
    public LockClient newLockClient() throws Exception {
        CuratorFramework own = connect();
        return new LockClient() {
            private final Map<String, InterProcessMutex> locks = new HashMap<>();
            private InterProcessMutex held;

            @Override
            public void lock(String name) throws Exception {
                InterProcessMutex m = locks.computeIfAbsent(name, n -> new InterProcessMutex(own, ROOT + "-locks/" + n));
                if (!m.acquire(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("lock " + name + " not acquired in 30 s");
                }
                held = m;
            }

            @Override
            public void unlock() throws Exception {
                held.release();
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
        curator.close();
    }
}
