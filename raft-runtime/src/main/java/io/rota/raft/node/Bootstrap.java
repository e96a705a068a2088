package io.rota.raft.node;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Ready;
import io.rota.raft.storage.LogStore;

import java.util.List;
import java.util.Optional;

/**
 * The two writes a server makes to its own log before its node starts, outside the replicated protocol:
 * the bootstrap of a new cluster and the forced single-voter configuration of disaster recovery.
 *
 * <p><b>Bootstrap in the log</b> (docs/design.md MF4). A new cluster's first configuration is the log's
 * first entry — index 1, term 1, {@code CONFIGURATION} — written identically by every bootstrapping member,
 * so Log Matching (§5.3) holds for it like for any entry a leader sent. From then on a member takes its
 * configuration from its data (snapshot, then log; §4.1), never again from its options, which only a
 * member with an empty log uses. hashicorp/raft's {@code BootstrapCluster} and etcd's bootstrap write the
 * initial configuration into the log the same way.
 *
 * <p><b>Forcing a new cluster</b> (docs/design.md MF10). When a majority is gone for good, one member's data
 * can be made a cluster of one: a {@code CONFIGURATION} entry naming it the sole voter is appended after its
 * last entry in a term above every term it has seen. No leader of that term can exist anywhere, since only
 * this member will ever hold that configuration; so it elects itself and its first commit commits the entry
 * — and with it every entry before it, including ones the old cluster never committed (etcd's
 * {@code --force-new-cluster} has the same caveat). This breaks Raft's safety on purpose, for an operator
 * who has decided the missing members are never coming back.
 */
public final class Bootstrap {

    private Bootstrap() {
    }

    /**
     * Writes {@code initial} as entry 1 (term 1) with a hard state of term 1, if the log is empty: a member
     * bootstrapping a new cluster, before its node starts. A store that holds anything — an entry, a snapshot
     * — is left as it is (its configuration comes from its data, or, for a log written before this entry
     * existed, from the options as before).
     *
     * @return whether the entry was written
     */
    public static boolean writeInitialConfiguration(LogStore store, Configuration initial) {
        PersistentState state = store.load();
        if (!isEmpty(state)) {
            return false;
        }
        HardState hs = state.hardState();
        store.persist(ready(new HardState(Math.max(1, hs.currentTerm()), hs.votedFor(), 0),
                Entry.configuration(1, 1, initial)));
        return true;
    }

    /**
     * Whether {@code state} holds no entry of anyone's but possibly its own bootstrap entry: what a member
     * that has never heard from a leader finds on its disk (the peer handshake's "fresh", docs/design.md M12).
     */
    public static boolean holdsAtMostTheInitialConfiguration(PersistentState state) {
        if (state.snapshot() != null || state.compactedIndex() != 0) {
            return false;
        }
        List<Entry> entries = state.entries();
        return entries.isEmpty() || (entries.size() == 1 && entries.get(0).index() == 1
                && entries.get(0).term() == 1 && entries.get(0).type() == Entry.Type.CONFIGURATION);
    }

    /**
     * The configuration this store's data puts in force (§4.1: the latest configuration entry, else the
     * snapshot's), or empty if the data names none (an empty log, or one written before the bootstrap entry).
     */
    public static Optional<Configuration> configurationInData(PersistentState state) {
        List<Entry> entries = state.entries();
        for (int i = entries.size() - 1; i >= 0; i--) {
            if (entries.get(i).type() == Entry.Type.CONFIGURATION) {
                return Optional.of(Configuration.decode(entries.get(i).data()));
            }
        }
        return state.snapshot() == null ? Optional.empty()
                : Optional.of(state.snapshot().metadata().configuration());
    }

    /**
     * Makes member {@code self} the sole voter of its data (see the class comment): appends a configuration
     * entry {voters=[self]} after the last entry, in term max(currentTerm, last log term) + 1, and sets the
     * hard state's term to it (no vote). Does nothing if the data already puts exactly that configuration in
     * force — a second start with the flag left on must not rewrite again.
     *
     * @param fallback the configuration in force when the data names none (the options' bootstrap)
     * @return the entry appended, or empty if the data was already single-voter
     * @throws IllegalStateException if the store is empty: there is nothing to recover
     */
    public static Optional<Entry> forceSingleVoter(LogStore store, long self, Configuration fallback) {
        PersistentState state = store.load();
        if (isEmpty(state)) {
            throw new IllegalStateException("the data dir holds no log or snapshot: there is nothing to recover");
        }
        Configuration sole = Configuration.of(self);
        if (configurationInData(state).orElse(fallback).equals(sole)) {
            return Optional.empty();
        }
        long lastIndex = state.compactedIndex() + state.entries().size();
        long lastTerm = state.entries().isEmpty() ? state.compactedTerm()
                : state.entries().get(state.entries().size() - 1).term();
        if (state.snapshot() != null && state.snapshot().index() > lastIndex) {
            lastIndex = state.snapshot().index();
            lastTerm = state.snapshot().metadata().lastIncludedTerm();
        }
        long term = Math.max(state.hardState().currentTerm(), lastTerm) + 1;
        Entry entry = Entry.configuration(lastIndex + 1, term, sole);
        store.persist(ready(new HardState(term, RaftNode.NONE, state.hardState().commitIndex()), entry));
        return Optional.of(entry);
    }

    private static boolean isEmpty(PersistentState state) {
        return state.snapshot() == null && state.compactedIndex() == 0 && state.entries().isEmpty();
    }

    private static Ready ready(HardState hardState, Entry entry) {
        return new Ready(null, hardState, null, List.of(entry), List.of(), List.of(), List.of(), List.of(), true,
                List.of());
    }
}
