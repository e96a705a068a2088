package io.rota.chaos.workload;

import io.rota.chaos.checker.CheckResult;
import io.rota.chaos.checker.KeyResult;
import io.rota.chaos.checker.LinearizabilityChecker;
import io.rota.chaos.checker.LostWrites;
import io.rota.chaos.checker.Operation;
import io.rota.chaos.checker.Operations;
import io.rota.chaos.checker.Verdict;
import io.rota.chaos.history.Event;
import io.rota.client.CompareOp;
import io.rota.client.KeyValue;
import io.rota.client.Op;
import io.rota.client.RotaClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The register workload: N client processes, each with its own {@link RotaClient}, do random reads (40 %),
 * writes (30 %) and compare-and-sets (30 %) on a handful of keys. Every written value is unique
 * ({@code v<n>}), so a value seen again after being overwritten is detectable. A cas is
 * {@code txn().ifValue(key, EQUAL, expected).then(put(key, new))} (expected absent:
 * {@code ifVersion(key, EQUAL, 0)}), expecting the last value any client saw for that key.
 *
 * <p>Outcomes: an operation that failed is indeterminate (info) unless the error proves it was not applied
 * ({@link Outcomes}: only REQUEST_TOO_LARGE does), and its process is replaced by a new process id, as in
 * Jepsen: the old one may still be "running" it. That holds for reads too (a read that timed out has an
 * unknown outcome; the checker ignores it either way).
 *
 * <p>After the faults are healed, {@link #finish} reads every key once more (process ids from
 * {@link #FINAL_PROCESS}); the checker sees these reads, and {@link LostWrites} counts acknowledged writes
 * they contradict.
 */
public final class RegisterWorkload implements Workload {

    /** Process ids of the final reads start here. */
    public static final int FINAL_PROCESS = 1_000_000;
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration FINAL_READ_TIMEOUT = Duration.ofSeconds(120);
    /** A client that fell behind its schedule catches up on at most this much (slow answers, not stalls). */
    private static final Duration MAX_CATCH_UP = Duration.ofSeconds(1);

    private final int keyCount;
    private final Counters counters = new Counters();
    private final AtomicLong values = new AtomicLong();
    /** The last value any client saw per key: the expected value of the next cas. */
    private final Map<String, String> lastSeen = new ConcurrentHashMap<>();
    private final List<Thread> threads = new ArrayList<>();
    private final List<RotaClient> clients = new ArrayList<>();
    private volatile boolean stopping;
    private WorkloadContext context;

    /**
     * A register workload.
     *
     * @param keys how many keys ({@code k0 .. k<keys-1>})
     */
    public RegisterWorkload(int keys) {
        if (keys < 1) {
            throw new IllegalArgumentException("at least one key");
        }
        this.keyCount = keys;
    }

    @Override
    public String name() {
        return "register";
    }

    @Override
    public Counters counters() {
        return counters;
    }

    @Override
    public void start(WorkloadContext context) {
        this.context = context;
        long intervalNanos = (long) (TimeUnit.SECONDS.toNanos(1) * context.clients() / context.rate());
        for (int c = 0; c < context.clients(); c++) {
            RotaClient client = context.newClient(c, CALL_TIMEOUT, ATTEMPT_TIMEOUT);
            clients.add(client);
            int first = c;
            Random random = new Random(context.seed() * 31 + c);
            Thread t = new Thread(() -> runClient(client, first, random, intervalNanos), "register-client-" + c);
            threads.add(t);
            t.start();
        }
    }

    private void runClient(RotaClient client, int firstProcess, Random random, long intervalNanos) {
        int process = firstProcess;
        long next = System.nanoTime();
        while (!stopping) {
            String key = "k" + random.nextInt(keyCount);
            int dice = random.nextInt(10);
            boolean indeterminate;
            if (dice < 4) {
                indeterminate = read(client, process, key);
            } else if (dice < 7) {
                indeterminate = write(client, process, key);
            } else {
                indeterminate = cas(client, process, key);
            }
            if (indeterminate) {
                process += context.clients();   // the old process may still be "running" that operation
            }
            next += (long) (intervalNanos * (0.5 + random.nextDouble()));
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            } else if (wait < -MAX_CATCH_UP.toNanos()) {
                // behind by more than a second (a stall): forget the rest, no burst afterwards
                next = System.nanoTime() - MAX_CATCH_UP.toNanos();
            }
        }
    }

    /** Returns whether the outcome was indeterminate. */
    private boolean read(RotaClient client, int process, String key) {
        invoke(process, "read", key, null);
        try {
            String v = client.kv().get(key).first().map(KeyValue::valueString).orElse(null);
            complete(process, Event.Type.OK, "read", key, v, null);
            if (v != null) {
                lastSeen.put(key, v);
            }
            return false;
        } catch (RuntimeException e) {
            return failed(process, "read", key, null, e);
        }
    }

    private boolean write(RotaClient client, int process, String key) {
        String v = "v" + values.incrementAndGet();
        invoke(process, "write", key, v);
        try {
            client.kv().put(key, v);
            complete(process, Event.Type.OK, "write", key, v, null);
            lastSeen.put(key, v);
            return false;
        } catch (RuntimeException e) {
            return failed(process, "write", key, v, e);
        }
    }

    private boolean cas(RotaClient client, int process, String key) {
        String expected = lastSeen.get(key);
        String v = "v" + values.incrementAndGet();
        List<String> pair = Arrays.asList(expected, v);
        invoke(process, "cas", key, pair);
        try {
            var txn = client.kv().txn();
            txn = expected == null ? txn.ifVersion(key, CompareOp.EQUAL, 0) : txn.ifValue(key, CompareOp.EQUAL, expected);
            boolean ok = txn.then(Op.put(key, v)).commit().succeeded();
            complete(process, Event.Type.OK, "cas", key, pair, ok);
            if (ok) {
                lastSeen.put(key, v);
            }
            return false;
        } catch (RuntimeException e) {
            return failed(process, "cas", key, pair, e);
        }
    }

    /** Records a failed operation; true if indeterminate. */
    private boolean failed(int process, String f, String key, Object value, RuntimeException e) {
        boolean indeterminate = !Outcomes.certainlyNotApplied(e);
        complete(process, indeterminate ? Event.Type.INFO : Event.Type.FAIL, f, key, value, null);
        return indeterminate;
    }

    private void invoke(int process, String f, String key, Object value) {
        context.history().record(process, Event.Type.INVOKE, f, key, value, null);
    }

    private void complete(int process, Event.Type type, String f, String key, Object value, Boolean result) {
        context.history().record(process, type, f, key, value, result);
        switch (type) {
            case OK -> counters.ok();
            case FAIL -> counters.failed();
            default -> counters.info();
        }
    }

    @Override
    public void stop() {
        stopping = true;
        WorkloadContext.joinAll(threads, CALL_TIMEOUT.multipliedBy(3));
        if (Thread.currentThread().isInterrupted()) {
            return;
        }
        clients.forEach(RotaClient::close);
    }

    @Override
    public void finish() {
        try (RotaClient client = RotaClient.builder().endpoints(context.endpoints()).callTimeout(FINAL_READ_TIMEOUT)
                .build()) {
            for (int k = 0; k < keyCount; k++) {
                String key = "k" + k;
                int process = FINAL_PROCESS + k;
                invoke(process, "read", key, null);
                try {
                    String v = client.kv().get(key).first().map(KeyValue::valueString).orElse(null);
                    complete(process, Event.Type.OK, "read", key, v, null);
                } catch (RuntimeException e) {
                    failed(process, "read", key, null, e);
                }
            }
        }
    }

    @Override
    public WorkloadResult check(List<Event> history) {
        return checkHistory(history);
    }

    /**
     * Checks a register history: linearizability per key, and acknowledged writes the final reads contradict.
     *
     * @param history the events
     * @return the verdict and report
     */
    public static WorkloadResult checkHistory(List<Event> history) {
        List<Operation> ops = Operations.of(history);
        CheckResult result = new LinearizabilityChecker().check(ops);
        List<Operation> finalReads = ops.stream()
                .filter(o -> o.process() >= FINAL_PROCESS && o.fn() == Operation.Fn.READ
                        && o.outcome() == Operation.Outcome.OK).toList();
        LostWrites lost = LostWrites.count(ops, finalReads);
        StringBuilder report = new StringBuilder();
        report.append("keys checked: ").append(result.keys().size()).append(", final reads: ").append(finalReads.size())
                .append('\n');
        for (KeyResult k : result.keys()) {
            report.append(k.describe());
        }
        report.append(lost.describe());
        Verdict verdict = result.verdict();
        if (lost.total() > 0 && verdict == Verdict.YES) {
            verdict = Verdict.NO;   // cannot happen if the checker is right; say so loudly if it does
        }
        return new WorkloadResult(verdict, lost.total(), report.toString());
    }
}
