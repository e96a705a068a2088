package io.rota.server.api;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.AttributeKey;
import io.rota.raft.transport.LogLimiter;
import io.rota.raft.transport.TlsContexts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLPeerUnverifiedException;
import java.nio.channels.ClosedChannelException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;

/**
 * Sits behind the client port's {@code SslHandler}: when the TLS handshake succeeds it records the verified
 * client certificate's subject CN in the channel attribute {@link #COMMON_NAME} (etcd's rule: with client
 * certificate authentication, the CN names the user), then leaves the pipeline. A failed handshake — no
 * client certificate when one is required, one from another CA, a plaintext client — is logged (bounded:
 * anyone who reaches the port can cause it) and the SslHandler closes the connection. One per channel.
 */
final class ClientTls extends ChannelInboundHandlerAdapter {

    /**
     * The verified client certificate's CN; absent without client certificate authentication. The
     * authentication layer reads it by this name.
     */
    static final AttributeKey<String> COMMON_NAME = AttributeKey.valueOf("rota.tls.commonName");

    private static final Logger log = LoggerFactory.getLogger(ClientTls.class);
    private static final LogLimiter refusals = new LogLimiter(log, 5);

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof SslHandshakeCompletionEvent) {
            SslHandshakeCompletionEvent done = (SslHandshakeCompletionEvent) evt;
            if (done.isSuccess()) {
                String cn = commonName(ctx);
                if (cn != null) {
                    ctx.channel().attr(COMMON_NAME).set(cn);
                }
                ctx.pipeline().remove(this);
            } else if (!(done.cause() instanceof ClosedChannelException)) {
                refusals.warn("Refusing client {}: TLS handshake failed: {}{}", ctx.channel().remoteAddress(),
                        done.cause().getMessage(), done.cause() instanceof io.netty.handler.ssl.NotSslRecordException
                                ? " (it spoke plaintext to this TLS port)" : "");
            }
        }
        super.userEventTriggered(ctx, evt);
    }

    private static String commonName(ChannelHandlerContext ctx) {
        SslHandler tls = ctx.pipeline().get(SslHandler.class);
        try {
            Certificate[] chain = tls.engine().getSession().getPeerCertificates();
            return chain.length == 0 ? null : TlsContexts.commonName((X509Certificate) chain[0]);
        } catch (SSLPeerUnverifiedException noClientCertificate) {
            return null;
        }
    }
}
