package io.rota.chaos.net;

import java.util.function.IntSupplier;

/**
 * Fixed client addresses for a cluster whose members come and go (the membership nemesis). A
 * {@code RotaClient}'s endpoints are fixed when it is built, but the members are not: so each client is given
 * the addresses of {@code n} slots, one {@link FaultProxy} each, and a slot forwards every new connection to
 * the member that occupies it now. When a member joins it takes a free slot; when it is removed its slot is
 * emptied (a connection to an empty slot is closed at once, and the client's retry moves on to the next
 * address, as it does from a dead member). So a client always dials every member that exists at that moment,
 * and none that was removed. No fault is injected here: every slot forwards both ways all the time.
 *
 * <p>A member's answers are not rewritten: a leader hint names the leader's own client address, which the
 * client dials directly (nothing is partitioned in a membership run, so nothing is bypassed).
 */
public final class MemberSlots implements AutoCloseable {

    /** Port 0: connecting to it fails at once, as to a stopped member. */
    private static final int EMPTY = 0;

    private final FaultProxy[] proxies;
    private final int[] listenPort;
    private final int[] target;

    /**
     * Opens {@code n} empty slots.
     *
     * @param n        the number of slots (the most members that exist at once)
     * @param freePort a source of free local ports
     */
    public MemberSlots(int n, IntSupplier freePort) {
        this.proxies = new FaultProxy[n];
        this.listenPort = new int[n];
        this.target = new int[n];
        for (int s = 0; s < n; s++) {
            int slot = s;
            listenPort[s] = freePort.getAsInt();
            proxies[s] = new FaultProxy("slot" + (s + 1), listenPort[s], () -> targetOf(slot));
        }
    }

    private synchronized int targetOf(int slot) {
        return target[slot];
    }

    /**
     * Puts a member in a free slot.
     *
     * @param clientPort the member's own client port
     * @return the slot, or -1 if every slot is taken
     */
    public synchronized int assign(int clientPort) {
        for (int s = 0; s < target.length; s++) {
            if (target[s] == EMPTY) {
                target[s] = clientPort;
                return s;
            }
        }
        return -1;
    }

    /**
     * Empties the slot that forwards to this member, if any (it was removed). Connections already open stay
     * until the member's process stops.
     *
     * @param clientPort the removed member's client port
     */
    public synchronized void release(int clientPort) {
        for (int s = 0; s < target.length; s++) {
            if (target[s] == clientPort) {
                target[s] = EMPTY;
            }
        }
    }

    /**
     * Every slot's address, starting at slot {@code first % n} (so the clients spread over the members).
     *
     * @param first the slot to list first
     * @return {@code 127.0.0.1:port,...}
     */
    public String endpoints(int first) {
        StringBuilder s = new StringBuilder();
        for (int k = 0; k < listenPort.length; k++) {
            s.append(k == 0 ? "" : ",").append("127.0.0.1:").append(listenPort[(first + k) % listenPort.length]);
        }
        return s.toString();
    }

    /** Closes every slot. */
    @Override
    public void close() {
        for (FaultProxy p : proxies) {
            p.close();
        }
    }
}
