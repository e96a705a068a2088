package io.rota.shaded.it;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rota.client.RotaClient;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * An application as a team on Spring Boot 3.5 would have it: its own Netty (whatever the test puts on the
 * class path) and the shaded SDK, and nothing of the unshaded one. It uses its Netty, then the SDK against a
 * real cluster (put/get and a lock with its fencing token), and prints one line per check. Run by
 * {@link ShadedClientProcessTest} in a JVM of its own; exits non-zero on any failure.
 */
public final class ShadedApp {

    private ShadedApp() {
    }

    public static void main(String[] args) throws Exception {
        String endpoints = args[0];
        // The application's Netty, used directly: it must be the one on the class path, not the shaded copy.
        ByteBuf own = Unpooled.copiedBuffer("the application's own Netty", StandardCharsets.UTF_8);
        System.out.println("app netty=" + io.netty.util.Version.identify().get("netty-common").artifactVersion()
                + " buffer=" + own.toString(StandardCharsets.UTF_8));
        own.release();
        System.out.println("sdk from=" + RotaClient.class.getProtectionDomain().getCodeSource().getLocation());
        try (RotaClient rota = RotaClient.builder().endpoints(endpoints).callTimeout(Duration.ofSeconds(20)).build()) {
            rota.kv().put("shaded/greeting", "hello from the shaded SDK");
            System.out.println("get=" + rota.kv().get("shaded/greeting").first().orElseThrow().valueString());
            try (LockHandle held = Lock.of(rota, "shaded-smoke").acquire(Duration.ofSeconds(20))) {
                System.out.println("lock token=" + held.fencingToken() + " held=" + held.isHeld());
            }
            System.out.println("state=" + rota.connectionState());
        }
        System.out.println("OK");
    }
}
