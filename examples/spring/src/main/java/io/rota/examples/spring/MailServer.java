package io.rota.examples.spring;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The mail server as the application sees it: {@code POST /send} with the run's fencing token and an
 * idempotency key (the server refuses a stale token with 409, and delivers a key once), and
 * {@code POST /run} to say who is up and who runs which fire time (the demo's books).
 */
@Component
public class MailServer {

    /** What one send came to. */
    public enum Result { SENT, ALREADY_DELIVERED, STALE_TOKEN }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final String url;

    /**
     * The server at {@code reminder.sink}.
     *
     * @param url its base URL
     */
    public MailServer(@Value("${reminder.sink}") String url) {
        this.url = url;
    }

    /**
     * Sends one reminder.
     *
     * @param day     the run's label (its fire time)
     * @param student the student
     * @param token   the run's fencing token
     * @param key     the idempotency key
     * @param from    this instance
     * @return what the server did
     * @throws IOException on any other answer
     * @throws InterruptedException if interrupted (the run was cancelled)
     */
    public Result send(String day, int student, long token, String key, String from)
            throws IOException, InterruptedException {
        HttpResponse<String> r = post("/send?day=" + enc(day) + "&student=" + student + "&token=" + token
                + "&key=" + enc(key) + "&instance=" + enc(from));
        if (r.statusCode() == 409) {
            return Result.STALE_TOKEN;
        }
        if (r.statusCode() != 200) {
            throw new IOException("mail server answered " + r.statusCode() + ": " + r.body());
        }
        return r.body().equals("already-delivered") ? Result.ALREADY_DELIVERED : Result.SENT;
    }

    /**
     * Tells the server's books about a run: {@code ready}, {@code start}, {@code end}.
     *
     * @param event the event
     * @param day   the run's label, "-" for ready
     * @param token the run's token, 0 for ready
     * @param from  this instance
     * @throws IOException if the server cannot be reached
     * @throws InterruptedException if interrupted
     */
    public void event(String event, String day, long token, String from) throws IOException, InterruptedException {
        post("/run?event=" + event + "&day=" + enc(day) + "&token=" + token + "&instance=" + enc(from)
                + "&pid=" + ProcessHandle.current().pid());
    }

    private HttpResponse<String> post(String pathAndQuery) throws IOException, InterruptedException {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(url + pathAndQuery)).timeout(Duration.ofSeconds(10))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IOException("mail server " + url + " unreachable: " + e, e);   // the run's outcome says where
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
