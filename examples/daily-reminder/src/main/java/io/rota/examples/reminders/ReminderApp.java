package io.rota.examples.reminders;

import io.rota.client.RotaClient;
import io.rota.client.recipes.FireSchedule;
import io.rota.client.recipes.JobContext;
import io.rota.client.recipes.Once;
import io.rota.client.recipes.OnceOptions;
import io.rota.client.recipes.OnceRecord;
import io.rota.client.recipes.OnceState;
import io.rota.client.recipes.SingletonJob;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One app server of the online-course company. Every instance schedules the same job, "send today's
 * learning reminders" at 08:00; Rota makes each day's run happen once cluster-wide:
 * <ol>
 *   <li>{@link SingletonJob} claims the day's run and runs it under the job's lock, with a fencing token;
 *       if this instance dies or pauses past its lease, another instance takes the run over.</li>
 *   <li>Per student, a once-record {@code reminder/<day>/<student>} ("this user already got today's
 *       reminder") skips students a previous, interrupted run already handled.</li>
 *   <li>Every send carries the fencing token and an idempotency key; the mail server rejects stale
 *       tokens and delivers a key once ({@link MailSink}).</li>
 * </ol>
 * With {@code --plain-cron} it is the same app without Rota: at 08:00 of the first day it sends every
 * student a reminder, as each of several servers with the same crontab line would, and exits.
 */
@Command(name = "reminder-app", mixinStandardHelpOptions = true,
        description = "An app server that schedules the daily learning-reminder job (the demo's app).")
public final class ReminderApp implements Callable<Integer> {

    static final String JOB = "daily-learning-reminder";

    @Option(names = "--endpoints", required = true, description = "Rota client endpoints, host:port,...")
    String endpoints;
    @Option(names = "--instance", required = true, description = "This instance's id, e.g. app-1.")
    String instance;
    @Option(names = "--sink", required = true, description = "The mail server's URL.")
    String sink;
    @Option(names = "--students", defaultValue = "100", description = "Students 1..N (default: ${DEFAULT-VALUE}).")
    int students;
    @Option(names = "--prefix", defaultValue = "demo", description = "Key prefix of this demo run (default: ${DEFAULT-VALUE}).")
    String prefix;
    @Option(names = "--lock-ttl-ms", defaultValue = "4000", description = "TTL of the runner's lease (default: ${DEFAULT-VALUE}).")
    long lockTtlMs;
    @Option(names = "--plain-cron", description = "No Rota: send the first day's reminders at 08:00 and exit "
            + "(the uncoordinated app servers the demo opens with).")
    boolean plainCron;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** Runs an app server until it is killed. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new ReminderApp()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (plainCron) {
            return plainCron();
        }
        try (RotaClient rota = RotaClient.connect(endpoints)) {
            rota.kv().get(prefix + "/ready-check"); // reach the cluster before saying "ready"
            long pid = ProcessHandle.current().pid();
            post("/run?event=ready&day=-&token=0&instance=" + enc(instance) + "&pid=" + pid);
            CompressedClock clock = sharedClock();
            Once once = Once.of(rota, OnceOptions.defaults().withPrefix(prefix + "/once")
                    .withClaimTtl(Duration.ofMillis(Math.max(1_000, lockTtlMs))).withOwner(instance));
            SingletonJob job = SingletonJob.builder(rota, JOB, FireSchedule.daily(LocalTime.of(8, 0), ZoneOffset.UTC),
                            ctx -> {
                                try {
                                    sendReminders(ctx, once);
                                } catch (Exception | Error e) {
                                    log("run of " + ctx.fireTime() + " ended: " + e);
                                    runEvent("stopped", ctx.fireTime().atZone(ZoneOffset.UTC).toLocalDate().toString(),
                                            ctx.fencingToken(), e instanceof InterruptedException
                                                    ? "the SDK cancelled the run: its lease's safe-until had passed"
                                                    : e.getMessage());
                                    throw e;
                                }
                            })
                    .instanceId(instance).clock(clock).prefix(prefix + "/jobs")
                    .lockTtl(Duration.ofMillis(lockTtlMs)).pollInterval(Duration.ofMillis(100)).start();
            log("started; scheduling '" + JOB + "' daily at 08:00 (simulated time now " + clock.instant() + ")");
            CountDownLatch forever = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                job.close();
                forever.countDown();
            }));
            forever.await();
        }
        return 0;
    }

    /**
     * The uncoordinated app server: waits for 08:00 of the first day on the shared clock, then sends every
     * student a reminder, with nothing to tell it that another server does the same.
     */
    private int plainCron() throws Exception {
        long pid = ProcessHandle.current().pid();
        post("/run?event=ready&day=-&token=0&instance=" + enc(instance) + "&pid=" + pid);
        CompressedClock clock = sharedClock();
        Instant eight = clock.instant().atZone(ZoneOffset.UTC).toLocalDate().atTime(LocalTime.of(8, 0))
                .toInstant(ZoneOffset.UTC);
        if (eight.isBefore(clock.instant())) {
            eight = eight.plus(Duration.ofDays(1));
        }
        // Simulated time runs faster: wait the real share of the simulated delay (the demo, not a cron).
        long simMs = Duration.between(clock.instant(), eight).toMillis();
        TimeUnit.MILLISECONDS.sleep((long) (simMs / clock.speed()));
        LocalDate day = eight.atZone(ZoneOffset.UTC).toLocalDate();
        log("cron: 08:00, sending " + day + "'s reminders to " + students + " students");
        post("/run?event=start&day=" + day + "&token=0&instance=" + enc(instance) + "&pid=" + pid);
        for (int s = 1; s <= students; s++) {
            post("/send?day=" + day + "&student=" + s + "&instance=" + enc(instance));
        }
        post("/run?event=end&day=" + day + "&token=0&instance=" + enc(instance) + "&pid=" + pid);
        return 0;
    }

    /** The job: one reminder per student, skipping those already done, fenced and idempotent. */
    private void sendReminders(JobContext ctx, Once once) throws Exception {
        LocalDate day = ctx.fireTime().atZone(ZoneOffset.UTC).toLocalDate();
        long token = ctx.fencingToken();
        long pid = ProcessHandle.current().pid();
        log("running " + day + " with fencing token " + token);
        post("/run?event=start&day=" + day + "&token=" + token + "&instance=" + enc(instance) + "&pid=" + pid);
        int sent = 0;
        List<Integer> heldElsewhere = new ArrayList<>();
        for (int s = 1; s <= students; s++) {
            switch (remind(ctx, once, day, token, s)) {
                case SENT -> sent++;
                case HELD_ELSEWHERE -> heldElsewhere.add(s);
                case DONE_BEFORE -> { }
            }
        }
        // A record another runner claimed is not done: that runner may have died (kill -9) after claiming,
        // and its claim lives until its lease ends — possibly after our lock was granted. Skipping it would
        // lose that student's reminder, so come back until the claim is DONE or lapses and we send it.
        while (!heldElsewhere.isEmpty()) {
            TimeUnit.MILLISECONDS.sleep(100);
            for (Iterator<Integer> it = heldElsewhere.iterator(); it.hasNext(); ) {
                Outcome o = remind(ctx, once, day, token, it.next());
                if (o != Outcome.HELD_ELSEWHERE) {
                    it.remove();
                    sent += o == Outcome.SENT ? 1 : 0;
                }
            }
        }
        post("/run?event=end&day=" + day + "&token=" + token + "&instance=" + enc(instance) + "&pid=" + pid);
        log("done " + day + ": " + sent + " reminders sent by this run");
    }

    /** What one attempt at one student's reminder came to. */
    private enum Outcome { SENT, DONE_BEFORE, HELD_ELSEWHERE }

    private Outcome remind(JobContext ctx, Once once, LocalDate day, long token, int s) throws Exception {
        if (ctx.isCancelled()) {
            throw new IllegalStateException("lost the job's lock; another instance takes over");
        }
        String key = "reminder/" + day + "/student-" + s;
        try (OnceRecord record = once.record(key)) {
            if (!record.claim()) {
                boolean done = record.status().map(st -> st.state() != OnceState.CLAIMED).orElse(false);
                return done ? Outcome.DONE_BEFORE : Outcome.HELD_ELSEWHERE;
            }
            HttpResponse<String> r = post("/send?day=" + day + "&student=" + s + "&token=" + token
                    + "&key=" + enc(key) + "&instance=" + enc(instance));
            if (r.statusCode() == 409) {
                log("mail server rejected token " + token + ": " + r.body());
                throw new IllegalStateException("fenced off by the mail server: " + r.body());
            }
            if (r.statusCode() != 200) {
                throw new IOException("mail server answered " + r.statusCode() + ": " + r.body());
            }
            if (!record.complete(r.body())) {
                log(key + ": delivered (" + r.body() + "), but the claim had expired meanwhile (" + record.lostReason()
                        + "); a later run may repeat it, and the mail server's idempotency key absorbs the repeat");
            }
            return Outcome.SENT;
        }
    }

    /** The demo's compressed clock, from the origin the driver publishes once every app server is ready. */
    private CompressedClock sharedClock() throws IOException, InterruptedException {
        while (true) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(sink + "/clock"))
                    .timeout(Duration.ofSeconds(70)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200) {
                String[] f = r.body().trim().split(" ");
                return new CompressedClock(Long.parseLong(f[0]), Instant.parse(f[1]), Double.parseDouble(f[2]));
            }
        }
    }

    /** Tells the mail server (and so the demo driver) about this run; best effort, never fails the run. */
    private void runEvent(String event, String day, long token, String detail) {
        boolean interrupted = Thread.interrupted();   // an SDK cancel must not swallow the report
        try {
            post("/run?event=" + event + "&day=" + day + "&token=" + token + "&instance=" + enc(instance)
                    + "&pid=" + ProcessHandle.current().pid() + "&detail=" + enc(detail == null ? "" : detail));
        } catch (IOException | InterruptedException e) {
            log("could not report '" + event + "' to the mail server: " + e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private HttpResponse<String> post(String pathAndQuery) throws IOException, InterruptedException {
        // Generous: the demo's mail server holds one send back while its sender is frozen (DemoDriver.freeze).
        HttpRequest req = HttpRequest.newBuilder(URI.create(sink + pathAndQuery)).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        return http.send(req, HttpResponse.BodyHandlers.ofString());
    }

    private void log(String line) {
        System.out.println(Instant.now() + " " + instance + " (pid " + ProcessHandle.current().pid() + "): " + line);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
