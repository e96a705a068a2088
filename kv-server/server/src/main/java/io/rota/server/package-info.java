/**
 * The {@code rota server} entry point: the picocli main, configuration, and the wiring of the Raft
 * node, storage, transport and the coordination state machine (no business logic lives here).
 */
package io.rota.server;
