package io.rota.raft.transport;

/**
 * Which TLS implementation a port uses. {@link #OPENSSL} needs netty-tcnative-boringssl-static on the class
 * path (the server ships it); where it cannot load, {@link TlsContexts} falls back to {@link #JDK} and logs why.
 */
public enum TlsProvider {
    /** The JDK's SSLEngine: always there. */
    JDK,
    /** BoringSSL through netty-tcnative: less CPU per record, a native library per platform. */
    OPENSSL
}
