package io.rota.spring;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rota.client.RotaClient;
import io.rota.client.recipes.JobContext;
import io.rota.testkit.Await;
import io.rota.testkit.Ports;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The auto-configuration without a cluster (the client connects on its first call): beans, properties,
 * the right Boot line's health indicator, metrics wiring, and @SingletonJob checks. Runs on Boot 4.0 here
 * and on Boot 3.5 in spring-boot-starter-boot3-test.
 */
class RotaAutoConfigurationTest {

    /** An address where nothing listens: calls to it fail fast with "connection refused". */
    static final String NOBODY = "127.0.0.1:" + Ports.freePort();

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RotaAutoConfiguration.class, RotaHealthAutoConfiguration.class,
                    RotaBoot3HealthAutoConfiguration.class));

    @Test
    @DisplayName("without rota.endpoints nothing is configured (the starter may sit on the classpath unused)")
    void inactiveWithoutEndpoints() {
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).doesNotHaveBean(RotaClient.class);
            assertThat(ctx).doesNotHaveBean("rotaHealthIndicator");
        });
    }

    @Test
    @DisplayName("rota.endpoints gives a RotaClient bean with those members, closed when the context closes")
    void clientFromProperties() {
        AtomicReference<RotaClient> seen = new AtomicReference<>();
        runner.withPropertyValues("rota.endpoints=127.0.0.1:2379, 127.0.0.1:2380", "rota.call-timeout=4s")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    RotaClient rota = ctx.getBean(RotaClient.class);
                    assertThat(rota.endpoints()).containsExactly("127.0.0.1:2379", "127.0.0.1:2380");
                    RotaProperties p = ctx.getBean(RotaProperties.class);
                    assertThat(p.callTimeout()).isEqualTo(Duration.ofSeconds(4));
                    assertThat(p.attemptTimeout()).isEqualTo(RotaProperties.DEFAULT_ATTEMPT_TIMEOUT);
                    assertThat(p.jobs().prefix()).isEqualTo("rota/jobs");
                    assertThat(p.instanceId()).endsWith("-" + ProcessHandle.current().pid());
                    seen.set(rota);
                });
        assertThat(seen.get().whenClosed()).isDone();
    }

    @Test
    @DisplayName("rota.endpoints as a YAML list works as well as a comma-separated string")
    void endpointsAsList() {
        runner.withPropertyValues("rota.endpoints[0]=127.0.0.1:2379", "rota.endpoints[1]=127.0.0.1:2380").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(RotaClient.class).endpoints()).containsExactly("127.0.0.1:2379", "127.0.0.1:2380");
        });
    }

    @Test
    @DisplayName("a bad value fails the start with the property's name")
    void badPropertyNamed() {
        runner.withPropertyValues("rota.endpoints=" + NOBODY, "rota.jobs.lock-ttl=0s").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("rota.jobs.lock-ttl must be positive");
        });
    }

    @Test
    @DisplayName("an application's own RotaClient bean wins")
    void ownClientWins() {
        runner.withPropertyValues("rota.endpoints=" + NOBODY).withUserConfiguration(OwnClient.class).run(ctx -> {
            assertThat(ctx).hasSingleBean(RotaClient.class);
            assertThat(ctx.getBean(RotaClient.class).endpoints()).containsExactly("127.0.0.1:1");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClient {
        @Bean(destroyMethod = "close")
        RotaClient mine() {
            return RotaClient.connect("127.0.0.1:1");
        }
    }

    @Test
    @DisplayName("health: the indicator of the running Boot line; DOWN with the reason when no member answers")
    void healthDownWhenUnreachable() {
        runner.withPropertyValues("rota.endpoints=" + NOBODY, "rota.health-timeout=1s").run(ctx -> {
            Health.Seen h = Health.of(ctx);
            assertThat(h.status()).isEqualTo("DOWN");
            assertThat(h.details().get("reason").toString()).startsWith("no member answered: " + NOBODY);
        });
    }

    @Test
    @DisplayName("metrics: calls, their outcome and retries are counted through the SDK's listener")
    void metricsCountCalls() throws Exception {
        // A member that accepts the connection and never answers: each attempt times out and is retried, and
        // the call ends in TIMEOUT. (A refused port fails at once as UNAVAILABLE, with no retry to count.)
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
        runner.withPropertyValues("rota.endpoints=127.0.0.1:" + silent.getLocalPort(), "rota.call-timeout=3s",
                        "rota.attempt-timeout=300ms")
                .run(ctx -> {
                    SimpleMeterRegistry registry = new SimpleMeterRegistry();
                    ctx.getBean(RotaMetrics.class).bindTo(registry);
                    assertThrows(RuntimeException.class, () -> ctx.getBean(RotaClient.class).kv().get("k"));
                    // The listener runs on the client's thread, just after the caller saw the failure. Wait for
                    // the count, not for the timer: register() shows the timer before record() counts the call.
                    Await.until(Duration.ofSeconds(5), () -> registry.find("rota.client.calls").timers().stream()
                            .mapToLong(Timer::count).sum() > 0, "the call counted");
                    assertThat(registry.get("rota.client.calls").tag("operation", "range").tag("outcome", "timeout")
                            .timer().count()).isEqualTo(1);
                    assertThat(registry.get("rota.client.retries").tag("operation", "range").counter().count())
                            .isGreaterThanOrEqualTo(1);
                    assertThat(registry.get("rota.client.leader.changes").counter().count()).isZero();
                });
        }
    }

    @Test
    @DisplayName("@SingletonJob methods are found and checked; each gets its name and schedule")
    void jobsFound() {
        runner.withPropertyValues("rota.endpoints=" + NOBODY, "reminder.zone=Europe/Berlin")
                .withUserConfiguration(GoodJobs.class).run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    List<SingletonJobRegistrar.Definition> defs = ctx.getBean(SingletonJobRegistrar.class).definitions();
                    // A name not given is "<bean name>.<method>" (the runner names the bean after its class).
                    assertThat(defs).extracting(SingletonJobRegistrar.Definition::name)
                            .containsExactlyInAnyOrder("reminders", "rotaAutoConfigurationTest.GoodJobs.tidy", "weekly");
                    assertThat(defs).extracting(SingletonJobRegistrar.Definition::when).containsExactlyInAnyOrder(
                            "cron \"0 0 8 * * MON-FRI\" in Europe/Berlin", "every PT10S", "daily at 06:30 UTC");
                });
    }

    static class GoodJobs {
        @SingletonJob(name = "reminders", cron = "0 0 8 * * MON-FRI", zone = "${reminder.zone}")
        void remind(JobContext ctx) {
        }

        @SingletonJob(fixedRate = "10s")
        void tidy() {
        }

        @SingletonJob(name = "weekly", daily = "06:30")
        public void weekly() {
        }
    }

    @Test
    @DisplayName("a bad @SingletonJob fails the start naming the method and what to change")
    void badJobsRefused() {
        failsWith(TwoSchedules.class, "set exactly one of cron, fixedRate, daily (found 2)");
        failsWith(BadCron.class, "bad cron hour field \"25\"");
        failsWith(BadParameter.class, "the method takes no parameter or one JobContext");
        failsWith(SameName.class, "@SingletonJob name \"twice\" is used twice");
    }

    void failsWith(Class<?> config, String message) {
        runner.withPropertyValues("rota.endpoints=" + NOBODY).withUserConfiguration(config).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining(message);
        });
    }

    static class TwoSchedules {
        @SingletonJob(cron = "0 8 * * *", fixedRate = "1m")
        void job() {
        }
    }

    static class BadCron {
        @SingletonJob(cron = "0 25 * * *")
        void job() {
        }
    }

    static class BadParameter {
        @SingletonJob(fixedRate = "1m")
        void job(String what) {
        }
    }

    static class SameName {
        @SingletonJob(name = "twice", fixedRate = "1m")
        void one() {
        }

        @SingletonJob(name = "twice", fixedRate = "2m")
        void two() {
        }
    }
}
