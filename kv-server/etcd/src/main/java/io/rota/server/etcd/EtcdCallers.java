package io.rota.server.etcd;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.rota.raft.transport.LogLimiter;
import io.rota.raft.transport.TlsContexts;
import io.rota.server.authgate.AuthGate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import java.net.SocketAddress;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;

/**
 * Who is calling on the etcd port, as the native port's ClientHandler knows it from its channel: the auth
 * token etcd clients send in the gRPC metadata key {@code token} (what they got from Auth.Authenticate), the
 * common name of the TLS client certificate (etcd's rule: with {@code --client-cert-auth} a certificate's CN
 * names the user), and the remote address (the per-connection login limiter's key). The interceptor puts a
 * {@link Caller} in the gRPC {@link Context} of every call; {@link Calls#route} hands it to the same
 * {@link AuthGate} the native port uses before the request reaches the router.
 *
 * <p>While auth is enabled, a call that names no user at all (no token, no certificate) is refused here, for
 * every service, with etcd's {@code etcdserver: user name is empty}; Authenticate itself always passes. The
 * permission check of a call with a token or a certificate is the gate's, per request (design.md Y20).
 */
final class EtcdCallers implements ServerInterceptor {

    private static final Logger log = LoggerFactory.getLogger(EtcdCallers.class);
    /** Any client can cause refusals at will: their log lines are bounded. */
    private static final LogLimiter refusals = new LogLimiter(log, 10);

    /** etcd's metadata key for the auth token (clientv3 and jetcd send it on every call after a login). */
    static final Metadata.Key<String> TOKEN = Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER);
    /** etcd's answer to a call without a user while auth is enabled (rpctypes.ErrGRPCUserEmpty). */
    static final String USER_EMPTY = "etcdserver: user name is empty";
    static final Context.Key<Caller> CALLER = Context.key("rota.etcd.caller");

    private static final String AUTHENTICATE = "etcdserverpb.Auth/Authenticate";

    /**
     * One call's identity.
     *
     * @param token    the metadata token, empty without one
     * @param certUser the TLS client certificate's common name, or null
     * @param remote   the client's address, for log lines and the login limiter
     */
    record Caller(String token, String certUser, String remote) {
        static final Caller NOBODY = new Caller("", null, "unknown");

        boolean anonymous() {
            return token.isEmpty() && certUser == null;
        }

        /** The caller of the call running on this thread (gRPC attaches the context to every callback). */
        static Caller current() {
            Caller c = CALLER.get();
            return c == null ? NOBODY : c;
        }
    }

    private final AuthGate gate;

    EtcdCallers(AuthGate gate) {
        this.gate = gate;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                       ServerCallHandler<Q, A> next) {
        String token = headers.get(TOKEN);
        SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        Caller caller = new Caller(token == null ? "" : token, commonName(call.getAttributes().get(
                Grpc.TRANSPORT_ATTR_SSL_SESSION)), String.valueOf(remote));
        if (caller.anonymous() && gate.enabled() && !AUTHENTICATE.equals(call.getMethodDescriptor().getFullMethodName())) {
            refusals.info("{}: refused etcd call {}: auth is enabled and the call names no user (no token, no"
                    + " client certificate)", caller.remote(), call.getMethodDescriptor().getFullMethodName());
            call.close(Status.INVALID_ARGUMENT.withDescription(USER_EMPTY), new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        return Contexts.interceptCall(Context.current().withValue(CALLER, caller), call, headers, next);
    }

    /** The client certificate's CN on a TLS connection that presented one, else null. */
    private static String commonName(SSLSession session) {
        if (session == null) {
            return null;
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain.length == 0 ? null : TlsContexts.commonName((X509Certificate) chain[0]);
        } catch (SSLPeerUnverifiedException noClientCertificate) {
            return null;
        }
    }
}
