package io.rota.server;

import com.google.protobuf.ByteString;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RegisterSessionResponse;
import io.rota.proto.SessionRef;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchRequest;

/** Request frames for the tests, and a check that an answer is not an error. */
public final class Requests {

    private Requests() {
    }

    public static ByteString bytes(String s) {
        return ByteString.copyFromUtf8(s);
    }

    public static Frame.Builder put(String key, String value) {
        return Frame.newBuilder().setPutRequest(PutRequest.newBuilder().setKey(bytes(key)).setValue(bytes(value)));
    }

    public static Frame.Builder put(String key, String value, long lease) {
        return Frame.newBuilder().setPutRequest(PutRequest.newBuilder().setKey(bytes(key)).setValue(bytes(value))
                .setLease(lease));
    }

    /** {@code f} as {@code sequence} of the session {@code registered} answered (its id and secret). */
    public static Frame.Builder inSession(Frame.Builder f, RegisterSessionResponse registered, long sequence) {
        return f.setSession(SessionRef.newBuilder().setClientId(registered.getClientId())
                .setSecret(registered.getSecret()).setSequence(sequence));
    }

    public static Frame.Builder get(String key) {
        return Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(bytes(key)));
    }

    public static Frame.Builder grant(long ttlSeconds) {
        return Frame.newBuilder().setLeaseGrantRequest(LeaseGrantRequest.newBuilder().setTTL(ttlSeconds));
    }

    public static Frame.Builder keepAlive(long lease) {
        return Frame.newBuilder().setLeaseKeepAliveRequest(LeaseKeepAliveRequest.newBuilder().setID(lease));
    }

    public static Frame.Builder watchPrefix(String prefix, long startRevision) {
        byte[] end = prefix.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        end[end.length - 1]++;
        return Frame.newBuilder().setWatchRequest(WatchRequest.newBuilder().setCreateRequest(
                WatchCreateRequest.newBuilder().setKey(bytes(prefix)).setRangeEnd(ByteString.copyFrom(end))
                        .setStartRevision(startRevision)));
    }

    /** The answer, which must not be an error. */
    public static Frame ok(Frame answer) {
        if (answer.hasError()) {
            Error e = answer.getError();
            throw new AssertionError("error " + e.getCode() + ": " + e.getMessage());
        }
        return answer;
    }
}
