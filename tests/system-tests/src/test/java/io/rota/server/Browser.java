package io.rota.server;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real headless Chromium, driven by ChromeDriver over the W3C WebDriver protocol (plain HTTP and JSON: no
 * Selenium). Debian's {@code chromium} and {@code chromium-driver} packages provide both; {@link #find}
 * says where, or why not. Scripts run in the page must return a string (JSON.stringify for more).
 */
final class Browser implements AutoCloseable {

    /** Where the two programs are, or the reason they cannot be used. */
    record Install(Path chromium, Path chromedriver, String problem) {
    }

    private static final Pattern SESSION = Pattern.compile("\"sessionId\"\\s*:\\s*\"([^\"]+)\"");
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Process driver;
    private final String base;
    private final String session;

    /** Looks on the PATH and in Debian's places; ROTA_CHROMIUM and ROTA_CHROMEDRIVER override. */
    static Install find() {
        Optional<Path> chromium = locate("ROTA_CHROMIUM", "chromium", "chromium-browser", "google-chrome");
        Optional<Path> chromedriver = locate("ROTA_CHROMEDRIVER", "chromedriver");
        if (chromium.isEmpty() || chromedriver.isEmpty()) {
            return new Install(null, null, "no " + (chromium.isEmpty() ? "chromium" : "chromedriver") + " found on the PATH"
                    + " (install Debian's: apt-get install -y chromium chromium-driver; .ci/run does this itself)");
        }
        return new Install(chromium.get(), chromedriver.get(), null);
    }

    private static Optional<Path> locate(String env, String... names) {
        String override = System.getenv(env);
        if (override != null && Files.isExecutable(Path.of(override))) {
            return Optional.of(Path.of(override));
        }
        List<String> dirs = Stream.concat(Stream.of(System.getenv().getOrDefault("PATH", "").split(":")),
                Stream.of("/usr/bin", "/usr/lib/chromium")).toList();
        for (String name : names) {
            for (String dir : dirs) {
                Path p = Path.of(dir.isEmpty() ? "." : dir, name);
                if (Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        return Optional.empty();
    }

    /** Starts ChromeDriver on {@code port} and a headless browser session of {@code width} × {@code height}. */
    Browser(Install install, int port, int width, int height) throws IOException, InterruptedException {
        driver = new ProcessBuilder(install.chromedriver().toString(), "--port=" + port)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        base = "http://127.0.0.1:" + port;
        String created = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        String capabilities = "{\"capabilities\":{\"alwaysMatch\":{\"browserName\":\"chrome\",\"goog:chromeOptions\":{"
                + "\"binary\":" + quote(install.chromium().toString()) + ",\"args\":[\"--headless=new\",\"--no-sandbox\","
                + "\"--disable-gpu\",\"--disable-dev-shm-usage\",\"--hide-scrollbars\",\"--window-size=" + width + ","
                + height + "\"]}}}}";
        IOException last = null;
        while (created == null && System.nanoTime() < deadline) {
            try {
                created = call("POST", "/session", capabilities);
            } catch (IOException e) {   // ChromeDriver not listening yet
                last = e;
                driver.waitFor(100, TimeUnit.MILLISECONDS);
            }
        }
        if (created == null) {
            driver.destroyForcibly();
            throw new IOException("ChromeDriver did not start a session", last);
        }
        Matcher m = SESSION.matcher(created);
        if (!m.find()) {
            driver.destroyForcibly();
            throw new IOException("no session in ChromeDriver's answer: " + created);
        }
        session = "/session/" + m.group(1);
    }

    void open(String url) throws IOException, InterruptedException {
        call("POST", session + "/url", "{\"url\":" + quote(url) + "}");
    }

    /** Runs {@code script} (a function body) in the page; it must return a string, or null. */
    String eval(String script) throws IOException, InterruptedException {
        return stringValue(call("POST", session + "/execute/sync", "{\"script\":" + quote(script) + ",\"args\":[]}"));
    }

    /**
     * Clicks the first element matching the CSS {@code selector}, as a person would (hit-testing included).
     * An element the page replaced between finding and clicking it is found again, a few times.
     */
    void click(String selector) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                clickOnce(selector);
                return;
            } catch (IllegalStateException e) {
                if (attempt == 5 || !e.getMessage().contains("stale element")) {
                    throw e;
                }
            }
        }
    }

    private void clickOnce(String selector) throws IOException, InterruptedException {
        String found = call("POST", session + "/element", "{\"using\":\"css selector\",\"value\":" + quote(selector) + "}");
        Matcher m = Pattern.compile("\"element-[^\"]+\"\\s*:\\s*\"([^\"]+)\"").matcher(found);
        if (!m.find()) {
            throw new IOException("no element " + selector + ": " + found);
        }
        call("POST", session + "/element/" + m.group(1) + "/click", "{}");
    }

    /** A PNG of the page as shown. */
    byte[] screenshot() throws IOException, InterruptedException {
        return Base64.getDecoder().decode(stringValue(call("GET", session + "/screenshot", null)));
    }

    private String call(String method, String path, String body) throws IOException, InterruptedException {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json");
        r = body == null ? r.GET() : r.method(method, HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> response = http.send(r.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("WebDriver " + method + " " + path + " answered " + response.statusCode()
                    + ": " + response.body());
        }
        return response.body();
    }

    /** The string at {@code "value"} of a WebDriver answer (null for JSON null). */
    static String stringValue(String answer) {
        int at = answer.indexOf("\"value\"");
        int i = answer.indexOf(':', at) + 1;
        while (Character.isWhitespace(answer.charAt(i))) {
            i++;
        }
        if (answer.startsWith("null", i)) {
            return null;
        }
        if (answer.charAt(i) != '"') {
            throw new IllegalStateException("not a string value: " + answer);
        }
        StringBuilder out = new StringBuilder();
        for (i++; answer.charAt(i) != '"'; i++) {
            char c = answer.charAt(i);
            if (c == '\\') {
                char e = answer.charAt(++i);
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(answer.substring(i + 1, i + 5), 16));
                        i += 4;
                    }
                    default -> out.append(e);
                }
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    @Override
    public void close() {
        try {
            call("DELETE", session, "");
        } catch (IOException | RuntimeException e) {
            // the browser may be gone already; the driver is stopped below either way
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        driver.destroy();
        try {
            if (!driver.waitFor(5, TimeUnit.SECONDS)) {
                driver.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            driver.destroyForcibly();
        }
    }
}
