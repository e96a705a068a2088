package io.rota.examples.docs;

import io.rota.client.RotaClient;
import io.rota.client.recipes.JobContext;
import io.rota.client.recipes.LockHandle;
import io.rota.raft.core.Configuration;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What the docs' Java snippets take as given: a connected client, the application's mailer and logger,
 * and the like. Every compiled snippet extends this class, so a snippet may use these names without
 * declaring them, exactly as a reader would in an application that already has them. Keep it to names
 * the docs actually use; a snippet that needs anything else declares it.
 */
@SuppressWarnings("unused")
abstract class DocSnippetContext {

    /** An application's mail client: the protected resource of the lock and job examples. */
    interface Mailer {
        void send(List<String> batch, long fencingToken);

        void send(String reminder);
    }

    /** An application's reminder service, run by the singleton job. */
    interface Reminders {
        void sendAll(Instant fireTime, long fencingToken);
    }

    /** An SLF4J-shaped logger. */
    interface Log {
        void info(String message, Object... args);

        void warn(String message, Object... args);
    }

    RotaClient rota;
    RotaClient client;
    String endpoints;
    String hostname;
    Mailer mailer;
    List<String> batch;
    String reminder;
    Reminders reminders;
    Log log;
    LockHandle held;
    java.sql.Connection connection;
    long accountId;
    long newBalance;
    long fromRevision;

    // raft-core's configuration examples (docs/runtime.md)
    long id;
    Configuration configuration;
    Map<Long, String> addresses;
    Path dataDir;

    abstract void send();

    abstract void sendReminders(long fencingToken);

    abstract void stopLeading();

    abstract void sendReminders(JobContext ctx);
}
