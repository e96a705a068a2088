package io.rota.client.recipes;

/**
 * An election's leader as stored.
 *
 * @param election the election's name
 * @param key      the leader's key, {@code <prefix>/<name>/<session-hex>-<seq-hex>}
 * @param value    the value it campaigned with or last proclaimed
 * @param epoch    the key's create_revision: grows with every new leader, so it is the leader's fencing
 *                 token (a proclaim keeps it)
 * @param revision the key's mod revision: grows with every proclaim
 */
public record Leader(String election, String key, String value, long epoch, long revision) {
}
