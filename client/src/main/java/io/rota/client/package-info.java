/**
 * The Rota Java client SDK: {@code RotaClient}, the key-value, lease and watch APIs, and their typed
 * errors; leader discovery, safe retries and lease keep-alive live behind this API.
 */
package io.rota.client;
