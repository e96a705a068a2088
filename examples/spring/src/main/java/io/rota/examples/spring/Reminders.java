package io.rota.examples.spring;

import io.rota.client.RotaClient;
import io.rota.client.recipes.JobContext;
import io.rota.client.recipes.Once;
import io.rota.client.recipes.OnceOptions;
import io.rota.client.recipes.OnceRecord;
import io.rota.client.recipes.OnceState;
import io.rota.spring.RotaProperties;
import io.rota.spring.SingletonJob;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The daily learning reminder: one method, run once per fire time across every instance of the application.
 * Three layers make "exactly one reminder per student per day" hold through crashes and pauses:
 * <ol>
 *   <li>{@link SingletonJob @SingletonJob}: one instance runs each fire time, with a fencing token; a dead or
 *       paused runner's fire time is taken over by another instance with a higher token;</li>
 *   <li>a once-record per student and fire time skips students an interrupted run already reached;</li>
 *   <li>every send carries the token and an idempotency key: the mail server refuses stale tokens and
 *       delivers a key once.</li>
 * </ol>
 */
@Component
public class Reminders {

    private static final Logger LOG = LoggerFactory.getLogger(Reminders.class);

    private final MailServer mail;
    private final Once once;
    private final int students;
    private final String instance;

    /**
     * The job's collaborators.
     *
     * @param rota     the client (the starter's bean)
     * @param rotaProps the starter's settings (instance id, lock TTL)
     * @param mail     the mail server
     * @param students how many students (1..N)
     * @param prefix   where the once-records live
     */
    public Reminders(RotaClient rota, RotaProperties rotaProps, MailServer mail,
                     @Value("${reminder.students}") int students, @Value("${reminder.prefix}") String prefix) {
        this.mail = mail;
        this.students = students;
        this.instance = rotaProps.instanceId();
        // A claim lives as long as a job runner's lease: a dead claimer's students are free when its run is.
        this.once = Once.of(rota, OnceOptions.defaults().withPrefix(prefix + "/once")
                .withClaimTtl(rotaProps.jobs().lockTtl()).withOwner(instance));
    }

    /**
     * Sends the reminders of one fire time.
     *
     * @param ctx the run: its fire time and fencing token
     * @throws Exception to record the run FAILED (another fire time is not affected)
     */
    @SingletonJob(name = "daily-learning-reminder", cron = "${reminder.cron}", fixedRate = "${reminder.fixed-rate}",
            zone = "${reminder.zone}")
    public void sendAll(JobContext ctx) throws Exception {
        String day = ctx.fireTime().toString();
        long token = ctx.fencingToken();
        LOG.info("running {} with fencing token {}", day, token);
        mail.event("start", day, token, instance);
        List<Integer> heldElsewhere = new ArrayList<>();
        for (int s = 1; s <= students; s++) {
            if (!remind(ctx, day, s)) {
                heldElsewhere.add(s);
            }
        }
        // Claimed by a runner that may have died just after claiming: its claim lapses with its lease.
        // Not done is not done: come back until each is DONE or ours.
        while (!heldElsewhere.isEmpty()) {
            TimeUnit.MILLISECONDS.sleep(100);
            heldElsewhere.removeIf(s -> {
                try {
                    return remind(ctx, day, s);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        mail.event("end", day, token, instance);
        LOG.info("done {}", day);
    }

    /** One student: false if another runner's claim is still open on it. */
    private boolean remind(JobContext ctx, String day, int student) throws Exception {
        if (ctx.isCancelled()) {
            throw new IllegalStateException("lost the job's lock; another instance takes over");
        }
        String key = "reminder/" + day + "/student-" + student;
        try (OnceRecord record = once.record(key)) {
            if (!record.claim()) {
                return record.status().map(st -> st.state() != OnceState.CLAIMED).orElse(false);
            }
            MailServer.Result r = mail.send(day, student, ctx.fencingToken(), key, instance);
            if (r == MailServer.Result.STALE_TOKEN) {
                throw new IllegalStateException("the mail server refused token " + ctx.fencingToken()
                        + ": a newer runner has taken over");
            }
            record.complete(r.name());
            return true;
        }
    }

    /** Tells the demo's books this instance is up (its jobs have started); a missing server is only logged. */
    @EventListener(ApplicationReadyEvent.class)
    public void ready() throws InterruptedException {
        try {
            mail.event("ready", "-", 0, instance);
        } catch (IOException e) {
            LOG.warn("the mail server at reminder.sink is not reachable ({}); runs will fail until it is: start the"
                    + " demo's mail server or set --reminder.sink=URL", e.toString());
        }
    }
}
