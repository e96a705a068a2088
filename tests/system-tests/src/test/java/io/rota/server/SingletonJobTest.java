package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.recipes.FenceGuard;
import io.rota.client.recipes.FireSchedule;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.JobState;
import io.rota.client.recipes.JobTask;
import io.rota.client.recipes.MissedRunPolicy;
import io.rota.client.recipes.SingletonJob;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SingletonJob against three in-JVM servers, with compressed schedules (fire times every few hundred ms). */
@Tag("cluster")
class SingletonJobTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    static final Duration WAIT = Duration.ofSeconds(30);

    static RotaClient client() {
        return CLUSTER.connect();
    }

    static SingletonJob.Builder job(RotaClient rota, String name, Duration period, String instance, JobTask task) {
        return SingletonJob.builder(rota, name, FireSchedule.fixedRate(period), task).instanceId(instance)
                .lockTtl(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(100));
    }

    static long count(List<JobRun> runs, JobState state) {
        return runs.stream().filter(r -> r.state() == state).count();
    }

    /** Every fire time in the history has at most one DONE and at most one settling attempt. */
    static Map<Instant, List<JobRun>> byFire(List<JobRun> history) {
        Map<Instant, List<JobRun>> byFire = new TreeMap<>(history.stream().collect(Collectors.groupingBy(JobRun::fireTime)));
        for (Map.Entry<Instant, List<JobRun>> e : byFire.entrySet()) {
            assertTrue(count(e.getValue(), JobState.DONE) <= 1, "two DONE for " + e.getKey() + ": " + e.getValue());
            assertTrue(e.getValue().stream().filter(r -> r.state().settlesFireTime()).count() <= 1,
                    "settled twice: " + e.getValue());
        }
        return byFire;
    }

    @Test
    @DisplayName("three instances, a fire time every 400 ms: each fire time runs once, with increasing tokens")
    void threeInstancesRunEachFireTimeOnce() {
        String name = "every-400ms";
        Map<Instant, List<String>> executions = new ConcurrentHashMap<>();
        FenceGuard resource = new FenceGuard();
        List<RotaClient> rotas = new ArrayList<>();
        List<SingletonJob> jobs = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                RotaClient rota = client();
                rotas.add(rota);
                jobs.add(job(rota, name, Duration.ofMillis(400), "app-" + i, ctx -> {
                    executions.computeIfAbsent(ctx.fireTime(), f -> new CopyOnWriteArrayList<>()).add(ctx.instanceId());
                    resource.check(ctx.fencingToken());
                }).start());
            }
            Await.until(WAIT, () -> count(SingletonJob.history(rotas.get(0), name), JobState.DONE) >= 6,
                    "six fire times done");
        } finally {
            jobs.forEach(SingletonJob::close);
        }
        try (RotaClient rota = client()) {
            List<JobRun> history = SingletonJob.history(rota, name);
            Map<Instant, List<JobRun>> byFire = byFire(history);
            long previousToken = 0;
            for (Map.Entry<Instant, List<JobRun>> e : byFire.entrySet()) {
                JobRun done = e.getValue().stream().filter(r -> r.state() == JobState.DONE).findFirst().orElse(null);
                if (done != null) {
                    assertEquals(List.of(done.instanceId()), executions.get(e.getKey()), "ran once: " + e);
                    assertTrue(done.token() > previousToken, "tokens grow with fire times: " + history);
                    assertTrue(done.start() != null && done.end() != null && "ok".equals(done.outcome()));
                    previousToken = done.token();
                }
            }
            for (Map.Entry<Instant, List<String>> e : executions.entrySet()) {
                assertEquals(1, e.getValue().size(), "fire time " + e.getKey() + " ran on " + e.getValue());
            }
        } finally {
            rotas.forEach(RotaClient::close);
        }
    }

    @Test
    @DisplayName("the instance running a fire time dies mid-run: the run is ABANDONED and re-run elsewhere, one DONE")
    void deadRunnerIsAbandonedAndRerun() {
        String name = "takeover";
        Map<String, RotaClient> clients = new ConcurrentHashMap<>();
        AtomicReference<Instant> blockedFire = new AtomicReference<>();
        AtomicReference<String> blockedOn = new AtomicReference<>();
        CountDownLatch never = new CountDownLatch(1);
        List<SingletonJob> jobs = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                RotaClient rota = client();
                String instance = "app-" + i;
                clients.put(instance, rota);
                jobs.add(job(rota, name, Duration.ofSeconds(1), instance, ctx -> {
                    if (blockedFire.compareAndSet(null, ctx.fireTime())) {
                        blockedOn.set(ctx.instanceId());
                        never.await();   // a long run, until the lock is lost
                    }
                }).start());
            }
            Await.until(WAIT, () -> blockedOn.get() != null, "a run started");
            Instant fire = blockedFire.get();
            String victim = blockedOn.get();
            clients.get(victim).close();   // the runner's process dies: no release, no record
            Await.until(WAIT, () -> SingletonJob.history(clients.get(other(victim)), name).stream()
                    .anyMatch(r -> r.fireTime().equals(fire) && r.state() == JobState.DONE), "the fire time re-run");
            List<JobRun> attempts = SingletonJob.history(clients.get(other(victim)), name).stream()
                    .filter(r -> r.fireTime().equals(fire)).toList();
            assertEquals(2, attempts.size(), attempts.toString());
            assertEquals(JobState.ABANDONED, attempts.get(0).state());
            assertEquals(victim, attempts.get(0).instanceId());
            assertEquals(JobState.DONE, attempts.get(1).state());
            assertNotEquals(victim, attempts.get(1).instanceId());
            assertTrue(attempts.get(1).token() > attempts.get(0).token());
            byFire(SingletonJob.history(clients.get(other(victim)), name));
        } finally {
            jobs.forEach(SingletonJob::close);
            clients.values().forEach(RotaClient::close);
        }
    }

    private static String other(String instance) {
        return instance.equals("app-0") ? "app-1" : "app-0";
    }

    @Test
    @DisplayName("missed fire times: RUN_ALL runs each, RUN_ONCE runs the latest and skips the rest, SKIP skips them all")
    void missedRunPolicies() {
        Duration period = Duration.ofMillis(300);
        for (MissedRunPolicy policy : MissedRunPolicy.values()) {
            String name = "missed-" + policy;
            try (RotaClient rota = client()) {
                try (SingletonJob first = job(rota, name, period, "early", ctx -> { }).start()) {
                    Await.until(WAIT, () -> count(SingletonJob.history(rota, name), JobState.DONE) >= 1, "a first run");
                }
                Instant last = SingletonJob.history(rota, name).get(SingletonJob.history(rota, name).size() - 1).fireTime();
                // Every instance was down for 6 periods: the next instance's clock shows the gap at once.
                Clock later = Clock.offset(Clock.systemUTC(), period.multipliedBy(6));
                try (SingletonJob second = job(rota, name, period, "late", ctx -> { }).clock(later)
                        .missedRunPolicy(policy).misfireGrace(Duration.ofMillis(100)).start()) {
                    Await.until(WAIT, () -> SingletonJob.history(rota, name).stream()
                            .filter(r -> r.instanceId().equals("late") && r.state() == JobState.DONE).count() >= 2,
                            policy + ": two runs by the late instance");
                }
                List<JobRun> history = SingletonJob.history(rota, name);
                Map<Instant, List<JobRun>> byFire = byFire(history);
                List<JobRun> gap = history.stream().filter(r -> r.fireTime().isAfter(last)).toList();
                long skipped = count(gap, JobState.SKIPPED);
                switch (policy) {
                    case RUN_ALL -> assertEquals(0, skipped, history.toString());
                    case RUN_ONCE, SKIP -> assertTrue(skipped >= 5, policy + " skipped " + skipped + ": " + history);
                }
                // No fire time after the last early run is missing from the history: each is DONE or SKIPPED.
                Instant f = last;
                Instant end = history.get(history.size() - 1).fireTime();
                while (f.isBefore(end)) {
                    f = f.plus(period);
                    assertTrue(byFire.containsKey(f), policy + ": no record for " + f + ": " + history);
                }
                if (policy == MissedRunPolicy.RUN_ONCE) {
                    JobRun firstLate = gap.stream().filter(r -> r.state() == JobState.DONE).findFirst().orElseThrow();
                    assertTrue(gap.stream().filter(r -> r.state() == JobState.SKIPPED)
                            .allMatch(r -> r.fireTime().isBefore(firstLate.fireTime())), "only older ones skipped");
                }
            }
        }
    }

    @Test
    @DisplayName("a task that throws is recorded FAILED with the exception, and its fire time is not run again")
    void failuresAreRecorded() {
        String name = "failing";
        Map<Instant, Integer> attempts = new ConcurrentHashMap<>();
        try (RotaClient rota = client()) {
            try (SingletonJob job = job(rota, name, Duration.ofMillis(300), "app", ctx -> {
                attempts.merge(ctx.fireTime(), 1, Integer::sum);
                throw new IllegalStateException("mail server down");
            }).start()) {
                Await.until(WAIT, () -> count(SingletonJob.history(rota, name), JobState.FAILED) >= 3, "three failures");
            }
            List<JobRun> history = SingletonJob.history(rota, name);
            byFire(history);
            JobRun failed = history.stream().filter(r -> r.state() == JobState.FAILED).findFirst().orElseThrow();
            assertTrue(failed.outcome().contains("mail server down"), failed.outcome());
            assertFalse(attempts.values().stream().anyMatch(n -> n > 1), "a FAILED fire time was re-run: " + attempts);
        }
    }
}
