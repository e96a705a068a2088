package io.rota.shedlock;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a lock's key holds: until when it is locked (the holder's clock, as ShedLock's storage providers
 * record {@code lock_until}), and when and by whom it was locked. One
 * {@code name=value} per line, as the recipes' records, so {@code rotactl get shedlock/<name>} shows it.
 *
 * @param lockUntil the instant the lock becomes free again (lockAtMostFor while held, lockAtLeastFor once released)
 * @param lockedAt  when the holder took it
 * @param lockedBy  the holder's host name
 */
record LockRecord(Instant lockUntil, Instant lockedAt, String lockedBy) {

    String encode() {
        return "lockUntil=" + lockUntil.toEpochMilli() + "\nlockedAt=" + lockedAt + "\nlockedBy="
                + lockedBy.replace('\n', ' ') + "\n";
    }

    /** The record in {@code text}; an unreadable one counts as expired (the lock is free), never as held forever. */
    static LockRecord decode(String text) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                fields.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        try {
            return new LockRecord(Instant.ofEpochMilli(Long.parseLong(fields.getOrDefault("lockUntil", "0"))),
                    Instant.parse(fields.getOrDefault("lockedAt", Instant.EPOCH.toString())),
                    fields.getOrDefault("lockedBy", ""));
        } catch (RuntimeException unreadable) {
            return new LockRecord(Instant.EPOCH, Instant.EPOCH, "");
        }
    }

    /** Whether the lock is held at {@code now}. */
    boolean heldAt(Instant now) {
        return lockUntil.isAfter(now);
    }
}
