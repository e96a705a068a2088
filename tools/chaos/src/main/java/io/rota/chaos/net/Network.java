package io.rota.chaos.net;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.IntUnaryOperator;

/**
 * The peer network of an N-member cluster as a grid of {@link FaultProxy}s, one per directed pair: member i
 * dials member j at {@link #address(int, int)}. (The peer transport keeps one connection per pair, dialled by
 * one side and used both ways, so whichever side dials, a pair's traffic crosses the proxy i→j or j→i.)
 *
 * <p>Faults are stated per direction of traffic: {@link #block(int, int)} stops every frame that member
 * {@code from} sends to member {@code to}. Blocking both directions of a pair cuts its connections.
 *
 * <p>Clients cross proxies too. Each client process lives beside a member, its <i>home</i> (Jepsen's clients
 * run on the nodes), and reaches member j through the proxy home→j ({@link #clientEndpoints(int)}); the
 * proxy home→home is never cut. The same blocked matrix governs them: a partition that cuts member a from
 * member b also cuts a's clients from b (and one-way: a's clients' requests to b are dropped, or b's answers).
 * Their answers are rewritten to name proxies rather than members ({@link ClientAddresses}), so a leader
 * hint cannot lead a client around its partition. A follower forwarding a write to the leader dials the
 * leader's own client port, which is not proxied.
 */
public final class Network implements AutoCloseable {

    private final int size;
    private final int[][] listenPort;
    private final FaultProxy[][] proxies;
    private final int[][] clientListenPort;
    private final FaultProxy[][] clientProxies;
    /** blocked[from][to]: frames from member {@code from} to member {@code to} are dropped. */
    private final boolean[][] blocked;

    /**
     * Chooses the proxies' ports; nothing listens until {@link #start}.
     *
     * @param size     the number of members
     * @param freePort a source of free local ports
     */
    public Network(int size, java.util.function.IntSupplier freePort) {
        this.size = size;
        this.listenPort = new int[size][size];
        this.proxies = new FaultProxy[size][size];
        this.blocked = new boolean[size][size];
        this.clientListenPort = new int[size][size];
        this.clientProxies = new FaultProxy[size][size];
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < size; j++) {
                if (i != j) {
                    listenPort[i][j] = freePort.getAsInt();
                }
                clientListenPort[i][j] = freePort.getAsInt();
            }
        }
    }

    /**
     * The client addresses a client living beside member {@code home} dials, one per member, comma-separated
     * (valid once {@link #startClients} ran).
     *
     * @param home the member the client lives beside
     * @return {@code 127.0.0.1:port,...} of the proxies home→0, home→1, ...
     */
    public String clientEndpoints(int home) {
        StringBuilder s = new StringBuilder();
        for (int j = 0; j < size; j++) {
            s.append(j == 0 ? "" : ",").append("127.0.0.1:").append(clientListenPort[home][j]);
        }
        return s.toString();
    }

    /**
     * Starts the client proxies, forwarding to the members' client ports.
     *
     * @param clientPort member index → its client port (members advertise {@code 127.0.0.1:<port>})
     */
    public synchronized void startClients(IntUnaryOperator clientPort) {
        for (int h = 0; h < size; h++) {
            java.util.Map<String, String> proxyOf = new java.util.HashMap<>();
            for (int j = 0; j < size; j++) {
                proxyOf.put("127.0.0.1:" + clientPort.applyAsInt(j), "127.0.0.1:" + clientListenPort[h][j]);
            }
            ClientAddresses rewrite = new ClientAddresses(proxyOf);
            for (int j = 0; j < size; j++) {
                int target = j;
                clientProxies[h][j] = new FaultProxy("c" + (h + 1) + "->n" + (j + 1), clientListenPort[h][j],
                        () -> clientPort.applyAsInt(target), rewrite);
            }
        }
        apply();
    }

    /**
     * The address member {@code i} dials for member {@code j}.
     *
     * @param i the dialling member
     * @param j the dialled member
     * @return {@code 127.0.0.1:port} of the proxy i→j
     */
    public String address(int i, int j) {
        return "127.0.0.1:" + listenPort[i][j];
    }

    /**
     * Starts every proxy, forwarding to the members' real peer ports.
     *
     * @param peerPort member index → its real peer port
     */
    public synchronized void start(IntUnaryOperator peerPort) {
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < size; j++) {
                if (i != j) {
                    int target = j;
                    proxies[i][j] = new FaultProxy("n" + (i + 1) + "->n" + (j + 1), listenPort[i][j],
                            () -> peerPort.applyAsInt(target));
                }
            }
        }
    }

    /**
     * Drops every frame member {@code from} sends to member {@code to} (one direction only).
     *
     * @param from the sender
     * @param to   the receiver
     */
    public synchronized void block(int from, int to) {
        blocked[from][to] = true;
        apply();
    }

    /**
     * Cuts both directions between every member of {@code side} and every member outside it.
     *
     * @param side one side of the partition
     */
    public synchronized void isolate(Collection<Integer> side) {
        for (int a = 0; a < size; a++) {
            for (int b = 0; b < size; b++) {
                if (a != b && side.contains(a) != side.contains(b)) {
                    blocked[a][b] = true;
                }
            }
        }
        apply();
    }

    /**
     * Cuts both directions between {@code a} and {@code b} only.
     *
     * @param a a member
     * @param b another member
     */
    public synchronized void cut(int a, int b) {
        blocked[a][b] = true;
        blocked[b][a] = true;
        apply();
    }

    /** Removes every fault: all frames flow again. */
    public synchronized void heal() {
        for (boolean[] row : blocked) {
            java.util.Arrays.fill(row, false);
        }
        apply();
    }

    /**
     * The blocked directions, for logs: {@code ["n1->n2", ...]}.
     *
     * @return one entry per blocked direction
     */
    public synchronized List<String> faults() {
        List<String> out = new ArrayList<>();
        for (int a = 0; a < size; a++) {
            for (int b = 0; b < size; b++) {
                if (blocked[a][b]) {
                    out.add("n" + (a + 1) + "->n" + (b + 1));
                }
            }
        }
        return out;
    }

    /** The proxy i→j carries i's frames (or i's clients' requests) to j up, and j's frames to i down. */
    private void apply() {
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < size; j++) {
                if (proxies[i][j] != null) {
                    proxies[i][j].setForwarding(!blocked[i][j], !blocked[j][i]);
                }
                if (clientProxies[i][j] != null && i != j) {
                    clientProxies[i][j].setForwarding(!blocked[i][j], !blocked[j][i]);
                }
            }
        }
    }

    /** Closes every proxy. */
    @Override
    public synchronized void close() {
        for (FaultProxy[] row : clientProxies) {
            for (FaultProxy p : row) {
                if (p != null) {
                    p.close();
                }
            }
        }
        for (FaultProxy[] row : proxies) {
            for (FaultProxy p : row) {
                if (p != null) {
                    p.close();
                }
            }
        }
    }
}
