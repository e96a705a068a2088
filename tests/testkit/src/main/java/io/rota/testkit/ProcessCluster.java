package io.rota.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * A cluster of real {@code java -jar rota-server.jar server ...} processes on 127.0.0.1, for the
 * failsafe tests ({@code *ProcessTest}) and the chaos harness. Members are {@code n1..nN}; index i is
 * {@code n(i+1)}. Each member has a client port, a peer port and an HTTP port, all chosen by
 * {@link Ports#freePort()}. Processes are stopped by PID in {@link #close()}.
 *
 * <p>{@code peerAddress} lets a test route member i's connections to member j through something else
 * (a fault-injecting proxy): it returns the {@code host:port} member i should dial for member j. By
 * default it is j's own peer address.
 *
 * <p>It uses no Rota class: it runs the packaged jar ({@link #jar()}) and reads /health and /status over
 * HTTP, so the test kit needs no server module and any module's tests (and the chaos harness) can use it.
 * A member started with {@code --cert-file} serves HTTPS on its HTTP port: it is read over HTTPS, trusting
 * the member's CA files and presenting the member's own certificate as the client's.
 *
 * <p>A member process that exits while the test did not stop it ({@link #kill}, {@link #terminate},
 * {@link #close}) nor said it may ({@link #expectExit}) <em>exited on its own</em>: a crash, a fail-stop, a
 * refusal. Every such exit is kept, even after the member was started again, and {@link #close()} fails with
 * them, so no process test passes over a member that stopped itself. A harness that reports them itself takes
 * them first ({@link #takeSelfExits()}).
 */
public final class ProcessCluster implements AutoCloseable {

    /** Each member's heap: 256m, or {@code -Drota.process.xmx} (the big-snapshot proof holds GiBs of keys). */
    private static final String MEMBER_XMX = System.getProperty("rota.process.xmx", "256m");
    /** How long a member may take to answer /health: 60 s, or {@code -Drota.process.startSeconds} on a loaded machine. */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(Long.getLong("rota.process.startSeconds", 60));
    /** How much of a member's log a self-exit shows: its last lines, from at most its last 16 KiB. */
    private static final int SELF_EXIT_LOG_LINES = 20;
    private static final int SELF_EXIT_LOG_BYTES = 16 * 1024;

    private final Path jar;
    private final Path dir;
    private volatile int size;
    private volatile int[] clientPort;
    private volatile int[] peerPort;
    private volatile int[] httpPort;
    private final List<String> extraArgs;
    private final BiFunction<Integer, Integer, String> peerAddress;
    /**
     * Whether members dial each other through {@link #peerAddress} (proxies): each member's --initial-cluster
     * then names the others at different addresses, so the id a new cluster derives from it (issue 32) would
     * differ per member, and they are all given one --cluster-id instead, as an operator whose members see
     * each other at different addresses must.
     */
    private final boolean routed;
    private volatile Process[] processes;
    /** Every process started, in start order: whether it was asked to stop, or may stop itself. */
    private final List<Run> runs = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Per member: the --initial-cluster and extra flags it was last started with explicitly, or null. */
    private List<String>[] startOverride;
    /** Per member: flags of its own (its TLS certificate files, say), after the cluster's. */
    private volatile java.util.function.IntFunction<List<String>> memberArgs = i -> List.of();
    /** Members with the JDK's full JIT instead of the tests' C1 only (design.md P13): for clusters that measure. */
    private volatile boolean fullJit;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /**
     * Starts {@code size} members with the server's default timings and waits until each is healthy.
     *
     * @param dir       a temporary directory: data dirs and one log file per member go there
     * @param size      the number of members
     * @param extraArgs extra server flags for every member (e.g. {@code --election-ms 500})
     * @return the running cluster
     */
    public static ProcessCluster start(Path dir, int size, String... extraArgs) {
        return start(dir, size, null, extraArgs);
    }

    /**
     * As {@link #start(Path, int, String...)}, with member i dialling member j at {@code peerAddress(i, j)}.
     *
     * @param peerAddress the address member i uses for member j, or null for j's own peer address
     */
    public static ProcessCluster start(Path dir, int size, BiFunction<Integer, Integer, String> peerAddress,
                                       String... extraArgs) {
        ProcessCluster c = prepare(dir, size, peerAddress, extraArgs);
        c.startAll();
        return c;
    }

    /**
     * As {@link #start(Path, int, BiFunction, String...)} without starting anything: the ports are chosen, so
     * whatever {@code peerAddress} routes through (a proxy) can be pointed at {@link #peerPort} first. Then
     * call {@link #startAll()}.
     *
     * @param dir         a temporary directory: data dirs and one log file per member go there
     * @param size        the number of members
     * @param peerAddress the address member i uses for member j, or null for j's own peer address
     * @param extraArgs   extra server flags for every member
     * @return the cluster, no member running yet
     */
    public static ProcessCluster prepare(Path dir, int size, BiFunction<Integer, Integer, String> peerAddress,
                                         String... extraArgs) {
        return new ProcessCluster(dir, size, peerAddress, List.of(extraArgs));
    }

    /**
     * Flags of each member's own, added after the flags every member gets (set before {@link #startAll()}):
     * e.g. {@code --peer-cert-file} naming member i's certificate.
     *
     * @param memberArgs member index to its flags
     * @return this cluster
     */
    public ProcessCluster memberArgs(java.util.function.IntFunction<List<String>> memberArgs) {
        this.memberArgs = java.util.Objects.requireNonNull(memberArgs, "memberArgs");
        return this;
    }

    /**
     * Members started from now on run the JDK's full JIT, as a production member does, instead of the tests'
     * C1 only (design.md P13): for a cluster whose figures are the point (set before {@link #startAll()}).
     *
     * @return this cluster
     */
    public ProcessCluster fullJit() {
        this.fullJit = true;
        return this;
    }

    /** Starts every member and waits until each is healthy; on failure kills them all and rethrows. */
    public void startAll() {
        try {
            for (int i = 0; i < size; i++) {
                startMember(i);
            }
            for (int i = 0; i < size; i++) {
                awaitHealthy(i);
            }
        } catch (RuntimeException | Error e) {
            try {
                close();
            } catch (AssertionError selfExits) {   // a member that died while starting: part of the story
                e.addSuppressed(selfExits);
            }
            throw e;
        }
    }

    /** The packaged server jar (set by failsafe as {@code rota.jar}); tests assume it exists. */
    public static Path jar() {
        return Path.of(System.getProperty("rota.jar", "target/rota-server.jar")).toAbsolutePath();
    }

    private ProcessCluster(Path dir, int size, BiFunction<Integer, Integer, String> peerAddress, List<String> extraArgs) {
        this.jar = jar();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("needs the packaged " + jar + ": run ./mvnw -B verify");
        }
        try {
            this.dir = Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.size = size;
        this.extraArgs = extraArgs;
        this.clientPort = new int[size];
        this.peerPort = new int[size];
        this.httpPort = new int[size];
        for (int i = 0; i < size; i++) {
            clientPort[i] = Ports.freePort();
            peerPort[i] = Ports.freePort();
            httpPort[i] = Ports.freePort();
        }
        this.peerAddress = peerAddress != null ? peerAddress : (i, j) -> "127.0.0.1:" + peerPort[j];
        this.routed = peerAddress != null;
        this.processes = new Process[size];
        this.startOverride = newOverrides(size);
    }

    @SuppressWarnings("unchecked")
    private static List<String>[] newOverrides(int n) {
        return (List<String>[]) new List[n];
    }

    /**
     * Makes room for one more member (issue 13: `member add`), with its own free ports; it does not start.
     * Start it with {@link #startMember(int, String, String...)}, which gives its --initial-cluster.
     *
     * @return the new member's index (its name is {@link #name}(index))
     */
    public synchronized int addMember() {
        int i = size;
        size++;
        clientPort = java.util.Arrays.copyOf(clientPort, size);
        peerPort = java.util.Arrays.copyOf(peerPort, size);
        httpPort = java.util.Arrays.copyOf(httpPort, size);
        processes = java.util.Arrays.copyOf(processes, size);
        startOverride = java.util.Arrays.copyOf(startOverride, size);
        clientPort[i] = Ports.freePort();
        peerPort[i] = Ports.freePort();
        httpPort[i] = Ports.freePort();
        return i;
    }

    /**
     * Starts member {@code i} with this {@code --initial-cluster} and these extra flags (after the cluster's
     * own), e.g. {@code --initial-cluster-state existing}; a later {@link #startMember(int)} repeats them.
     */
    public synchronized void startMember(int i, String initialCluster, String... memberArgs) {
        List<String> override = new ArrayList<>();
        override.add(initialCluster);
        override.addAll(List.of(memberArgs));
        startOverride[i] = override;
        startMember(i);
    }

    /** Member i's data directory. */
    public Path dataDir(int i) {
        return dir.resolve(name(i));
    }

    /**
     * The cluster's id as member 0 recorded it in its data dir's {@code member.identity} (a new cluster's is
     * derived from its --initial-cluster, issue 32): what a test that speaks the peer protocol must claim.
     */
    public String clusterId() {
        java.util.Properties identity = new java.util.Properties();
        try (var in = Files.newBufferedReader(dataDir(0).resolve("member.identity"))) {
            identity.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return identity.getProperty("cluster-id");
    }

    /** Deletes member {@code i}'s data directory (a dead disk); the member must not be running. */
    public void deleteDataDir(int i) {
        if (isAlive(i)) {
            throw new IllegalStateException(name(i) + " is running");
        }
        Path data = dataDir(i);
        if (!Files.exists(data)) {
            return;
        }
        try (java.util.stream.Stream<Path> paths = Files.walk(data)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops member {@code i} with SIGTERM (a graceful stop) and waits up to {@code timeout} for it to exit. */
    public void terminate(int i, Duration timeout) {
        stopAsked(i);
        signal(i, "TERM");
        awaitExit(i, timeout);
    }

    /**
     * Member {@code i}'s current process may stop by itself — a refused member, a removed one that its peers
     * refuse — so its exit is not counted as {@linkplain #selfExits() exited on its own}. Call it before the
     * test does what makes it stop, or at least before {@link #close()}. A later start of the member is
     * watched again.
     *
     * @throws IllegalStateException if the member was never started
     */
    public void expectExit(int i) {
        Process p = processes[i];
        if (p == null) {
            throw new IllegalStateException(name(i) + " was never started");
        }
        run(p).exitExpected = true;
    }

    /**
     * The member processes that exited on their own so far and were not {@linkplain #takeSelfExits() taken}, in
     * start order: neither stopped through this cluster nor {@linkplain #expectExit expected}. A member started
     * again since is listed all the same.
     */
    public List<SelfExit> selfExits() {
        return selfExited().stream().map(this::selfExit).toList();
    }

    /**
     * {@link #selfExits()}, which {@link #close()} then no longer fails with: for a harness that counts and
     * reports them itself (the chaos runs).
     */
    public synchronized List<SelfExit> takeSelfExits() {
        List<Run> exited = selfExited();
        exited.forEach(r -> r.reported = true);
        return exited.stream().map(this::selfExit).toList();
    }

    private List<Run> selfExited() {
        return runs.stream().filter(r -> !r.stopAsked && !r.exitExpected && !r.reported && !r.process.isAlive())
                .toList();
    }

    private SelfExit selfExit(Run r) {
        return new SelfExit(name(r.member), r.process.pid(), r.process.exitValue(), logTail(r, SELF_EXIT_LOG_LINES));
    }

    /**
     * A member process that exited on its own.
     *
     * @param name    the member's name
     * @param pid     the process's pid
     * @param status  its exit status (128 + the signal's number when a signal killed it)
     * @param logTail the last lines it wrote
     */
    public record SelfExit(String name, long pid, int status, String logTail) {

        /** {@code member n2 (pid 1234) exited on its own with status 1:}, then its last log lines. */
        @Override
        public String toString() {
            return "member " + name + " (pid " + pid + ") exited on its own with status " + status
                    + (logTail.isEmpty() ? ": it wrote nothing" : ":\n" + logTail);
        }
    }

    /**
     * Waits up to {@code timeout} for member {@code i}'s process to exit; its exit code. A member the test
     * expects to stop by itself is declared first ({@link #expectExit}), or {@link #close()} counts it.
     */
    public int awaitExit(int i, Duration timeout) {
        Process p = processes[i];
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(name(i) + " did not exit within " + timeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return p.exitValue();
    }

    /** Starts (or restarts, on its existing data dir) member {@code i}; does not wait for it. */
    public synchronized void startMember(int i) {
        if (processes[i] != null && processes[i].isAlive()) {
            throw new IllegalStateException(name(i) + " is already running");
        }
        StringBuilder cluster = new StringBuilder();
        if (startOverride[i] != null) {
            cluster.append(startOverride[i].get(0));
        } else {
            for (int j = 0; j < size; j++) {
                cluster.append(j == 0 ? "" : ",").append(name(j)).append('=')
                        .append(j == i ? "127.0.0.1:" + peerPort[j] : peerAddress.apply(i, j));
            }
        }
        List<String> cmd = new ArrayList<>(List.of(javaBin(), "-Xmx" + MEMBER_XMX, "-XX:+UseSerialGC"));
        cmd.addAll(MemberJvm.options(jar, javaBin(), fullJit));   // C1 only and a class-data archive: start-up, not speed
        cmd.addAll(List.of("-jar", jar.toString(), "server", "--name", name(i), "--data-dir", dir.resolve(name(i)).toString(),
                "--listen-client", "127.0.0.1:" + clientPort[i], "--listen-peer", "127.0.0.1:" + peerPort[i],
                "--http", "127.0.0.1:" + httpPort[i], "--initial-cluster", cluster.toString()));
        cmd.addAll(extraArgs);
        if (routed && startOverride[i] == null && !extraArgs.contains("--cluster-id")) {
            cmd.addAll(List.of("--cluster-id", "routed-" + dir.getFileName()));
        }
        cmd.addAll(memberArgs.apply(i));
        if (startOverride[i] != null) {
            cmd.addAll(startOverride[i].subList(1, startOverride[i].size()));
        }
        try {
            // Where this process's output starts in the log that every run of the member appends to.
            long logStart = Files.exists(logFile(i)) ? Files.size(logFile(i)) : 0;
            processes[i] = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile(i).toFile())).start();
            runs.add(new Run(i, processes[i], logStart));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until member {@code i} answers /health with 200. */
    public void awaitHealthy(int i) {
        try {
            Await.until(START_TIMEOUT, () -> httpGet(i, "/health").status() == 200, name(i) + " healthy");
        } catch (AssertionError notHealthy) {
            // The test's temporary directory goes with it: say here why the member never became healthy.
            Reply last = httpGet(i, "/health");
            throw new AssertionError(notHealthy.getMessage() + "; last /health: " + last.status() + " "
                    + last.body().strip() + "; the end of " + logFile(i).getFileName() + ":\n" + logTail(i, 60),
                    notHealthy);
        }
    }

    /** The last {@code lines} lines of member i's log (empty if it has none). */
    public String logTail(int i, int lines) {
        try {
            List<String> all = Files.exists(logFile(i)) ? Files.readAllLines(logFile(i)) : List.of();
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | java.io.UncheckedIOException e) {
            return "(cannot read " + logFile(i) + ": " + e + ")";
        }
    }

    /** Kills member {@code i} with SIGKILL and waits for it to be gone. */
    public synchronized void kill(int i) {
        Process p = processes[i];
        if (p == null) {
            return;
        }
        stopAsked(i);
        resume(i); // a stopped process still dies of SIGKILL, but be explicit
        p.destroyForcibly();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(name(i) + " (pid " + p.pid() + ") did not die of SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Pauses member {@code i} with SIGSTOP (a long GC pause, seen from outside). */
    public void pause(int i) {
        signal(i, "STOP");
    }

    /** Resumes a paused member with SIGCONT. */
    public void resume(int i) {
        signal(i, "CONT");
    }

    private void signal(int i, String signal) {
        Process p = processes[i];
        if (p == null || !p.isAlive()) {
            return;
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + p.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Whether member {@code i}'s process is alive (paused counts as alive). */
    public boolean isAlive(int i) {
        return processes[i] != null && processes[i].isAlive();
    }

    /** The PID of member {@code i}'s current process. */
    public long pid(int i) {
        return processes[i].pid();
    }

    /**
     * The index of the member whose /status says it is the leader, or -1 if none answers so right now.
     * Members that do not answer (dead, paused) are skipped.
     */
    public int leader() {
        for (int i = 0; i < size; i++) {
            if (isAlive(i) && httpGet(i, "/status").body().contains("\"role\":\"leader\"")) {
                return i;
            }
        }
        return -1;
    }

    /** Waits until some member reports itself leader and returns its index. */
    public int awaitLeader() {
        int[] found = {-1};
        Await.until(START_TIMEOUT, () -> (found[0] = leader()) >= 0, "a leader");
        return found[0];
    }

    /** {@code 127.0.0.1:port,...} of every member's client port, in member order. */
    public String endpoints() {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < size; i++) {
            s.append(i == 0 ? "" : ",").append(endpoint(i));
        }
        return s.toString();
    }

    /** {@code 127.0.0.1:port} of member {@code i}'s client port. */
    public String endpoint(int i) {
        return "127.0.0.1:" + clientPort[i];
    }

    /** Member i's client port. */
    public int clientPort(int i) {
        return clientPort[i];
    }

    /** Member i's own peer port (where it listens for Raft peers). */
    public int peerPort(int i) {
        return peerPort[i];
    }

    /** Member i's HTTP port (/health, /status, /metrics). */
    public int httpPort(int i) {
        return httpPort[i];
    }

    /** The number of members. */
    public int size() {
        return size;
    }

    /** The member's name, {@code n(i+1)}. */
    public static String name(int i) {
        return "n" + (i + 1);
    }

    /** Member i's log file (stdout and stderr of every run of it). */
    public Path logFile(int i) {
        return dir.resolve(name(i) + ".log");
    }

    /** An HTTP answer; status 0 when the member did not answer (not started, paused or dead). */
    public record Reply(int status, String body) {
    }

    /** HTTP Basic credentials {@link #httpGet} sends, or null: with auth enabled, /status needs a root user. */
    private volatile String httpAuthorization;

    /**
     * Sends {@code user}'s password with every {@link #httpGet} from now on (HTTP Basic): once a test enables
     * auth, pages beyond /health and /metrics answer root only, and {@link #leader} reads /status.
     */
    public ProcessCluster httpCredentials(String user, String password) {
        httpAuthorization = basicAuthorization(user, password);
        return this;
    }

    /** The {@code Authorization} header value of HTTP Basic for {@code user} (the HTTP port's root rule, issue 33). */
    public static String basicAuthorization(String user, String password) {
        return "Basic " + java.util.Base64.getEncoder().encodeToString(
                (user + ":" + password).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** GET {@code path} on member i's HTTP port with a 2 s timeout. */
    public Reply httpGet(int i, String path) {
        List<String> args = new ArrayList<>(extraArgs);
        args.addAll(memberArgs.apply(i));
        if (startOverride[i] != null) {
            args.addAll(startOverride[i].subList(1, startOverride[i].size()));
        }
        String cert = flag(args, "--cert-file");
        if (cert == null) {
            return get(HTTP, "http://127.0.0.1:" + httpPort[i] + path, httpAuthorization);
        }
        return get(https(cert, flag(args, "--key-file"), flag(args, "--trusted-ca-file"),
                flag(args, "--peer-trusted-ca-file")), "https://127.0.0.1:" + httpPort[i] + path, httpAuthorization);
    }

    private static String flag(List<String> args, String name) {
        int at = args.lastIndexOf(name);
        return at < 0 || at + 1 >= args.size() ? null : args.get(at + 1);
    }

    /** HTTPS clients by their files (one per member): trusting the CA files, presenting cert and key. */
    private final java.util.Map<List<String>, HttpClient> httpsClients = new java.util.concurrent.ConcurrentHashMap<>();

    private HttpClient https(String cert, String key, String ca, String peerCa) {
        List<String> files = java.util.Arrays.asList(cert, key, ca, peerCa);
        return httpsClients.computeIfAbsent(files, f -> {
            try {
                java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
                trust.load(null, null);
                int n = 0;
                for (String file : new String[] {ca, peerCa, cert}) {
                    if (file != null) {
                        for (java.security.cert.Certificate c : certificates(file)) {
                            trust.setCertificateEntry("trusted-" + n++, c);
                        }
                    }
                }
                javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(
                        javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(trust);
                java.security.KeyStore identity = java.security.KeyStore.getInstance("PKCS12");
                identity.load(null, null);
                char[] none = new char[0];
                identity.setKeyEntry("member", privateKey(key), none,
                        certificates(cert).toArray(new java.security.cert.Certificate[0]));
                javax.net.ssl.KeyManagerFactory kmf = javax.net.ssl.KeyManagerFactory.getInstance(
                        javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(identity, none);
                javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
                context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
                return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).sslContext(context).build();
            } catch (IOException | java.security.GeneralSecurityException e) {
                throw new IllegalStateException("cannot read the member's TLS files " + f + ": " + e, e);
            }
        });
    }

    private static java.util.Collection<? extends java.security.cert.Certificate> certificates(String file)
            throws IOException, java.security.GeneralSecurityException {
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(Path.of(file))) {
            return java.security.cert.CertificateFactory.getInstance("X.509").generateCertificates(in);
        }
    }

    /** An unencrypted PKCS#8 PEM key (what the server reads too), EC or RSA. */
    private static java.security.PrivateKey privateKey(String file)
            throws IOException, java.security.GeneralSecurityException {
        String pem = java.nio.file.Files.readString(Path.of(file));
        String body = pem.replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").replaceAll("\\s", "");
        java.security.spec.PKCS8EncodedKeySpec spec = new java.security.spec.PKCS8EncodedKeySpec(
                java.util.Base64.getDecoder().decode(body));
        try {
            return java.security.KeyFactory.getInstance("EC").generatePrivate(spec);
        } catch (java.security.spec.InvalidKeySpecException notEc) {
            return java.security.KeyFactory.getInstance("RSA").generatePrivate(spec);
        }
    }

    /**
     * GET {@code path} on a member's HTTP port on 127.0.0.1 with a 2 s timeout; status 0 (and the error as the
     * body) when nothing answered — not started yet, or dead. For tests that start members themselves.
     */
    public static Reply httpGetOnPort(int port, String path) {
        return get(HTTP, "http://127.0.0.1:" + port + path, null);
    }

    /** @param authorization the Authorization header to send, or null for none */
    private static Reply get(HttpClient client, String url, String authorization) {
        try {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2));
            if (authorization != null) {
                request.header("Authorization", authorization);
            }
            HttpResponse<String> r = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body());
        } catch (IOException e) {
            return new Reply(0, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Kills every member (SIGKILL, after SIGCONT for paused ones) and waits for them; then fails if a member
     * process exited on its own ({@link #selfExits()}; once: a second close does not fail again for them).
     *
     * @throws AssertionError naming each member process that exited on its own, with its status and last lines
     */
    @Override
    public synchronized void close() {
        for (int i = 0; i < size; i++) {
            if (processes[i] != null && processes[i].isAlive()) {
                kill(i);
            }
        }
        List<SelfExit> exits = takeSelfExits();
        if (!exits.isEmpty()) {
            throw new AssertionError(exits.size() + " member process(es) exited on their own (a crash, a"
                    + " fail-stop or a refusal; a test that makes one stop calls expectExit first; logs in " + dir
                    + "):\n" + String.join("\n", exits.stream().map(SelfExit::toString).toList()));
        }
    }

    /** The test stops member {@code i}'s current process: its exit is not its own (if it is still running). */
    private void stopAsked(int i) {
        Process p = processes[i];
        if (p != null && p.isAlive()) {
            run(p).stopAsked = true;
        }
    }

    private Run run(Process p) {
        for (Run r : runs) {
            if (r.process == p) {
                return r;
            }
        }
        throw new IllegalStateException("no run of pid " + p.pid());
    }

    /** The last {@code lines} lines that run {@code r} wrote: its part of the member's log. */
    private String logTail(Run r, int lines) {
        Path log = logFile(r.member);
        List<Run> started = List.copyOf(runs);
        List<Run> later = started.subList(started.indexOf(r) + 1, started.size());
        long end = later.stream().filter(o -> o.member == r.member).mapToLong(o -> o.logStart).findFirst()
                .orElse(Long.MAX_VALUE);   // the member's next run starts where this one's output ends
        try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(log.toFile(), "r")) {
            end = Math.min(end, file.length());
            long start = Math.max(r.logStart, end - SELF_EXIT_LOG_BYTES);   // the end is what tells why
            byte[] bytes = new byte[(int) (end - start)];
            file.seek(start);
            file.readFully(bytes);
            List<String> written = new String(bytes, java.nio.charset.StandardCharsets.UTF_8).lines().toList();
            return String.join("\n", written.subList(Math.max(0, written.size() - lines), written.size()));
        } catch (IOException e) {
            return "(cannot read " + log + ": " + e + ")";
        }
    }

    /** One process of a member, as started. */
    private static final class Run {
        final int member;
        final Process process;
        /** Where its output begins in the member's log. */
        final long logStart;
        /** Stopped through this cluster (kill, terminate, close). */
        volatile boolean stopAsked;
        /** The test said it may stop itself ({@link #expectExit}). */
        volatile boolean exitExpected;
        /** Its self-exit was taken by {@link #takeSelfExits()} (or reported by close). */
        volatile boolean reported;

        Run(int member, Process process, long logStart) {
            this.member = member;
            this.process = process;
            this.logStart = logStart;
        }
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
