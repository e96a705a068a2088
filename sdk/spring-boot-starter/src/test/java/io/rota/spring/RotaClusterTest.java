package io.rota.spring;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rota.client.RotaClient;
import io.rota.client.recipes.FenceGuard;
import io.rota.client.recipes.JobContext;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.JobState;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter against a real three-member cluster (in this JVM): two application contexts (two instances of
 * one application) run a {@code @SingletonJob} every 300 ms; each fire time runs once, with growing fencing
 * tokens, the run history records it, the meters count it, and the health indicator is UP.
 */
@Tag("cluster")
class RotaClusterTest {

    static InJvmCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = new InJvmCluster();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Every run of every instance, by fire time (shared by the two contexts of the test). */
    static final Map<Instant, List<String>> RUNS = new ConcurrentHashMap<>();
    static final FenceGuard RESOURCE = new FenceGuard();

    /** The application's job: one annotated method, fenced at the "resource". */
    static class Ticker {
        @SingletonJob(name = "spring-ticker", fixedRate = "300ms")
        void tick(JobContext ctx) {
            RESOURCE.check(ctx.fencingToken());
            RUNS.computeIfAbsent(ctx.fireTime(), f -> new CopyOnWriteArrayList<>()).add(ctx.instanceId());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class App {
        @Bean
        Ticker ticker() {
            return new Ticker();
        }

        @Bean
        SimpleMeterRegistry registry(RotaMetrics metrics) {
            SimpleMeterRegistry r = new SimpleMeterRegistry();
            metrics.bindTo(r);   // what Boot's metrics auto-configuration does with every MeterBinder
            return r;
        }
    }

    ApplicationContextRunner instance(String id) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RotaAutoConfiguration.class,
                        RotaHealthAutoConfiguration.class, RotaBoot3HealthAutoConfiguration.class))
                .withUserConfiguration(App.class)
                .withPropertyValues("rota.endpoints=" + cluster.endpoints(), "rota.instance-id=" + id,
                        "rota.jobs.lock-ttl=2s", "rota.jobs.poll-interval=100ms");
    }

    @Test
    @DisplayName("two instances: each fire time of the @SingletonJob runs once, fenced, recorded, counted; health UP")
    void twoInstancesRunEachFireTimeOnce() {
        instance("spring-a").run(a -> instance("spring-b").run(b -> {
            assertThat(a).hasNotFailed();
            assertThat(b).hasNotFailed();
            RotaClient rota = a.getBean(RotaClient.class);
            Await.until(Duration.ofSeconds(30), () -> done(rota) >= 6, "six DONE runs of spring-ticker");

            // Running jobs keep the JVM up, as @Scheduled's threads do (an app without a web server would exit).
            assertThat(keepAliveThreads()).hasSize(2).allMatch(t -> !t.isDaemon());
            ((ConfigurableApplicationContext) a).stop();   // stops the jobs: no run is half-way when we look
            ((ConfigurableApplicationContext) b).stop();
            Await.until(Duration.ofSeconds(10), () -> keepAliveThreads().isEmpty(), "the keep-alive threads end");
            List<JobRun> history = io.rota.client.recipes.SingletonJob.history(rota, "spring-ticker");
            for (Map.Entry<Instant, List<String>> e : RUNS.entrySet()) {
                assertThat(e.getValue()).as("runs of fire time " + e.getKey()).hasSize(1);
            }
            assertThat(history.stream().filter(r -> r.state() == JobState.DONE).map(JobRun::fireTime))
                    .doesNotHaveDuplicates();
            assertThat(history.stream().map(JobRun::instanceId)).allMatch(i -> i.startsWith("spring-"));

            double doneA = runs(a), doneB = runs(b);
            assertThat(doneA + doneB).isEqualTo(RUNS.size());
            assertThat(a.getBean(SimpleMeterRegistry.class).get("rota.client.calls").timers()).isNotEmpty();

            Health.Seen h = Health.of(a);
            assertThat(h.status()).isEqualTo("UP");
            assertThat(h.details().keySet()).extracting(Object::toString).contains("leaderId", "raftTerm", "connectionState");
        }));
    }

    static List<Thread> keepAliveThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("rota-singleton-jobs") && t.isAlive()).toList();
    }

    static long done(RotaClient rota) {
        return io.rota.client.recipes.SingletonJob.history(rota, "spring-ticker").stream()
                .filter(r -> r.state() == JobState.DONE).count();
    }

    static double runs(org.springframework.context.ApplicationContext ctx) {
        var timer = ctx.getBean(SimpleMeterRegistry.class).find("rota.job.runs").tag("outcome", "done").timer();
        return timer == null ? 0 : timer.count();
    }
}
