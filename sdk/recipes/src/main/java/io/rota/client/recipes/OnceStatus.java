package io.rota.client.recipes;

import java.util.Map;

/**
 * A once-record as stored.
 *
 * @param key      the caller's key (without the prefix)
 * @param state    the state
 * @param owner    who claimed it last ({@link OnceOptions#owner()})
 * @param result   the result of DONE or the reason of FAILED (empty while CLAIMED)
 * @param atMillis when the state was written, Unix milliseconds on the writer's clock (informational)
 * @param revision the record's mod revision
 */
public record OnceStatus(String key, OnceState state, String owner, String result, long atMillis, long revision) {

    static OnceStatus decode(String key, String text, long revision) {
        Map<String, String> f = Fields.decode(text);
        return new OnceStatus(key, OnceState.valueOf(f.getOrDefault("state", "CLAIMED")), f.getOrDefault("owner", ""),
                f.getOrDefault("result", ""), Long.parseLong(f.getOrDefault("at", "0")), revision);
    }
}
