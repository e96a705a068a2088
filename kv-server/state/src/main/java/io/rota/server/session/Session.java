package io.rota.server.session;

import com.google.protobuf.ByteString;
import io.rota.proto.CommandResult;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One client session (Raft thesis §6.3): the responses to the client's latest sequences, so a retried
 * request is answered from memory instead of being applied twice.
 *
 * <p>The session belongs to the caller that registered it and carries a secret (issue 31): only a request
 * of that caller with that secret is the session's ({@link #belongsTo}).
 *
 * <p>What it remembers is bounded in count (the window) and in bytes: when either overflows, the oldest
 * responses are forgotten and every sequence up to them is refused from then on (its response is unknown,
 * and applying it again could apply it twice).
 */
public final class Session {

    private final long clientId;
    /** The caller that registered the session (Command.caller); "" for one registered before issue 31. */
    private final String owner;
    /** 128 random bits from the registering leader; empty for a session registered before issue 31. */
    private final ByteString secret;
    private final int window;
    private final long maxBytes;
    private final TreeMap<Long, CommandResult> responses = new TreeMap<>();
    /** The serialized size of {@link #responses}. */
    private long rememberedBytes;
    private long lastActiveMs;
    private long forgottenThrough;

    Session(long clientId, String owner, ByteString secret, int window, long maxBytes, long lastActiveMs) {
        this.clientId = clientId;
        this.owner = owner;
        this.secret = secret;
        this.window = window;
        this.maxBytes = maxBytes;
        this.lastActiveMs = lastActiveMs;
    }

    public long clientId() {
        return clientId;
    }

    public String owner() {
        return owner;
    }

    public ByteString secret() {
        return secret;
    }

    /**
     * Whether a request of {@code caller} carrying {@code secret} is this session's. A session without a
     * secret (registered before issue 31) belongs to no one: a newer request finds it expired.
     */
    public boolean belongsTo(String caller, ByteString secret) {
        return !this.secret.isEmpty() && this.secret.equals(secret) && owner.equals(caller);
    }

    public long lastActiveMs() {
        return lastActiveMs;
    }

    void touch(long nowMs) {
        lastActiveMs = nowMs;
    }

    /** The remembered response to {@code sequence}, if it was applied and is still in the window. */
    public Optional<CommandResult> remembered(long sequence) {
        return Optional.ofNullable(responses.get(sequence));
    }

    /** True if {@code sequence} may have been applied but its response is no longer remembered. */
    public boolean forgotten(long sequence) {
        return sequence <= forgottenThrough && !responses.containsKey(sequence);
    }

    /** Remembers {@code result}; the oldest responses go while over the window or the byte bound. */
    void remember(long sequence, CommandResult result) {
        CommandResult previous = responses.put(sequence, result);
        rememberedBytes += result.getSerializedSize() - (previous == null ? 0 : previous.getSerializedSize());
        while (responses.size() > window || (rememberedBytes > maxBytes && !responses.isEmpty())) {
            forgetOldest();
        }
    }

    private void forgetOldest() {
        Map.Entry<Long, CommandResult> oldest = responses.pollFirstEntry();
        rememberedBytes -= oldest.getValue().getSerializedSize();
        forgottenThrough = Math.max(forgottenThrough, oldest.getKey());
    }

    /** Forgets every remembered response (the table is over its total byte bound). */
    void forgetAll() {
        while (!responses.isEmpty()) {
            forgetOldest();
        }
    }

    /**
     * The client will never retry a sequence below {@code firstIncomplete} (thesis §6.3): their responses
     * are dropped, and a late copy of any of them is refused rather than applied after the client moved on.
     */
    void discardBelow(long firstIncomplete) {
        while (!responses.isEmpty() && responses.firstKey() < firstIncomplete) {
            forgetOldest();
        }
        forgottenThrough = Math.max(forgottenThrough, firstIncomplete - 1);
    }

    public long forgottenThrough() {
        return forgottenThrough;
    }

    /** The serialized bytes of the remembered responses. */
    public long rememberedBytes() {
        return rememberedBytes;
    }

    /** Sequence → response, ascending. */
    public Map<Long, CommandResult> responses() {
        return Collections.unmodifiableMap(responses);
    }

    void restore(long forgottenThrough, Map<Long, CommandResult> remembered) {
        this.forgottenThrough = forgottenThrough;
        remembered.forEach(this::remember);
    }
}
