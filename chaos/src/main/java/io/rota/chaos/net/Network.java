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
 * Client traffic is not proxied (clients reach every member; a follower's forwarding to the leader uses the
 * client port too), so a partition here is a partition of Raft.
 */
public final class Network implements AutoCloseable {

    private final int size;
    private final int[][] listenPort;
    private final FaultProxy[][] proxies;
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
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < size; j++) {
                if (i != j) {
                    listenPort[i][j] = freePort.getAsInt();
                }
            }
        }
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

    /** The proxy i→j carries i's frames to j up, and j's frames to i down. */
    private void apply() {
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < size; j++) {
                if (proxies[i][j] != null) {
                    proxies[i][j].setForwarding(!blocked[i][j], !blocked[j][i]);
                }
            }
        }
    }

    /** Closes every proxy. */
    @Override
    public synchronized void close() {
        for (FaultProxy[] row : proxies) {
            for (FaultProxy p : row) {
                if (p != null) {
                    p.close();
                }
            }
        }
    }
}
