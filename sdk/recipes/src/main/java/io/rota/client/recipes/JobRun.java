package io.rota.client.recipes;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One attempt at one fire time, as recorded in {@code <prefix>/<job>/runs/<fire-ms>/<token>}.
 *
 * @param job        the job's name
 * @param fireTime   the scheduled time
 * @param token      the fencing token the attempt ran under (its lock holder key's create_revision; 0 for
 *                   SKIPPED)
 * @param instanceId the instance that made the attempt
 * @param state      the attempt's state
 * @param start      when the task started, on the instance's clock (null if it did not)
 * @param end        when it ended (null while CLAIMED or RUNNING)
 * @param outcome    a short result: "ok", the exception of a failure, why it was abandoned or skipped
 */
public record JobRun(String job, Instant fireTime, long token, String instanceId, JobState state, Instant start,
                     Instant end, String outcome) {

    String encode() {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("state", state.name());
        f.put("fire", fireTime.toString());
        f.put("token", Long.toString(token));
        f.put("instance", instanceId);
        f.put("start", start == null ? null : start.toString());
        f.put("end", end == null ? null : end.toString());
        f.put("outcome", outcome);
        return Fields.encode(f);
    }

    static JobRun decode(String job, String text) {
        Map<String, String> f = Fields.decode(text);
        return new JobRun(job, Instant.parse(f.get("fire")), Long.parseLong(f.getOrDefault("token", "0")),
                f.getOrDefault("instance", ""), JobState.valueOf(f.get("state")), instant(f.get("start")),
                instant(f.get("end")), f.getOrDefault("outcome", ""));
    }

    JobRun with(JobState newState, Instant newEnd, String newOutcome) {
        return new JobRun(job, fireTime, token, instanceId, newState, start, newEnd, newOutcome);
    }

    private static Instant instant(String s) {
        return s == null ? null : Instant.parse(s);
    }
}
