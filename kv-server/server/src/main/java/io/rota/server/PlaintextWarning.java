package io.rota.server;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code rota server} says loudly at start when a port listens beyond loopback without TLS (issue 33 item
 * 7): anyone on that network reads and writes its traffic. One line per port, naming the port and the flags
 * that fix it; a WARN in the log and a line on stderr (design SD15).
 */
final class PlaintextWarning {

    private PlaintextWarning() {
    }

    /** One warning per port of {@code config} that listens on a non-loopback address without TLS. */
    static List<String> of(ServerConfig config) {
        List<String> warnings = new ArrayList<>();
        boolean clientTls = config.tls().certFile() != null;
        boolean peerTls = config.tls().peerCertFile() != null;
        warn(warnings, "client", "--listen-client", config.listenClient(), clientTls,
                "--cert-file, --key-file (and --client-cert-auth with --trusted-ca-file)");
        warn(warnings, "peer", "--listen-peer", config.listenPeer(), peerTls,
                "--peer-cert-file, --peer-key-file, --peer-trusted-ca-file");
        warn(warnings, "etcd", "--listen-etcd", config.listenEtcd(), clientTls,
                "--cert-file and --key-file (the etcd port uses the client port's TLS)");
        warn(warnings, "HTTP", "--http", config.http(), clientTls,
                "--cert-file and --key-file (the HTTP port serves HTTPS with them), or bind --http to 127.0.0.1");
        return warnings;
    }

    private static void warn(List<String> warnings, String port, String flag, InetSocketAddress address,
                             boolean tls, String fix) {
        if (address == null || tls || (address.getAddress() != null && address.getAddress().isLoopbackAddress())) {
            return;
        }
        warnings.add("PLAINTEXT: the " + port + " port listens on " + ServerConfig.format(address) + " (" + flag
                + "), beyond this machine, without TLS: anyone on that network can read and change its traffic."
                + " Turn TLS on with " + fix + " (docs/security.md), or bind it to 127.0.0.1");
    }
}
