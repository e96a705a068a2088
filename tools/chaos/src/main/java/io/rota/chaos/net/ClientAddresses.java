package io.rota.chaos.net;

import com.google.protobuf.InvalidProtocolBufferException;
import io.rota.proto.Frame;
import io.rota.proto.Member;
import io.rota.proto.StatusResponse;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Rewrites the members' own client addresses in answers to a client into the proxies that client must use:
 * a NOT_LEADER error's leader endpoint and a status answer's member list. Without it a client sent to "the
 * leader at 127.0.0.1:port" would dial the member directly, around the proxy a partition cut.
 */
final class ClientAddresses implements UnaryOperator<byte[]> {

    private final Map<String, String> proxyOf;
    private final byte[] marker;

    /**
     * @param proxyOf a member's own client address ("127.0.0.1:port") → the proxy address to use instead
     */
    ClientAddresses(Map<String, String> proxyOf) {
        this.proxyOf = Map.copyOf(proxyOf);
        this.marker = "127.0.0.1:".getBytes(StandardCharsets.US_ASCII);
    }

    /** The frame, rewritten if it names a member's address; the same bytes otherwise (most frames). */
    @Override
    public byte[] apply(byte[] bytes) {
        if (!contains(bytes, marker)) {
            return bytes;
        }
        Frame frame;
        try {
            frame = Frame.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            return bytes;   // not ours to judge: the client will reject it as it would without the proxy
        }
        if (frame.hasError() && proxyOf.containsKey(frame.getError().getLeaderEndpoint())) {
            Frame.Builder b = frame.toBuilder();
            b.getErrorBuilder().setLeaderEndpoint(proxyOf.get(frame.getError().getLeaderEndpoint()));
            return b.build().toByteArray();
        }
        if (frame.hasStatusResponse()) {
            StatusResponse.Builder status = frame.getStatusResponse().toBuilder();
            for (Member.Builder m : status.getMembersBuilderList()) {
                m.setClientAddress(proxyOf.getOrDefault(m.getClientAddress(), m.getClientAddress()));
            }
            return frame.toBuilder().setStatusResponse(status).build().toByteArray();
        }
        return bytes;
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
