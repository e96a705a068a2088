package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.AlarmRequest;
import io.rota.etcd.api.AlarmResponse;
import io.rota.etcd.api.DefragmentRequest;
import io.rota.etcd.api.DefragmentResponse;
import io.rota.etcd.api.HashKVRequest;
import io.rota.etcd.api.HashKVResponse;
import io.rota.etcd.api.HashRequest;
import io.rota.etcd.api.HashResponse;
import io.rota.etcd.api.MaintenanceGrpc;
import io.rota.etcd.api.MoveLeaderRequest;
import io.rota.etcd.api.MoveLeaderResponse;
import io.rota.etcd.api.ResponseHeader;
import io.rota.etcd.api.SnapshotRequest;
import io.rota.etcd.api.SnapshotResponse;
import io.rota.etcd.api.StatusRequest;
import io.rota.etcd.api.StatusResponse;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.HashKvRequest;
import io.rota.proto.SnapshotFile;
import io.rota.proto.SnapshotInfo;
import io.rota.server.api.SnapshotStream;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;

/**
 * etcd's Maintenance service from Rota's own: Status (with the quota's accounted size as dbSize and the armed
 * alarms as errors), Alarm GET/DEACTIVATE on the replicated alarms, HashKV and Hash, MoveLeader, and Snapshot,
 * which streams the member's consistent image — the same one {@code rotactl snapshot save} writes, in the same
 * file format, so a file saved with {@code etcdctl snapshot save} is a Rota backup. Defragment has nothing to
 * do (RocksDB compacts its files by itself).
 */
final class MaintenanceService extends MaintenanceGrpc.MaintenanceImplBase {

    /**
     * The etcd API level Rota speaks, reported as Status's version: etcd clients read it as the server's
     * etcd version (Rota's own version is in the native status and in /status).
     */
    static final String ETCD_API_VERSION = "3.4.0";

    private final Calls calls;

    MaintenanceService(Calls calls) {
        this.calls = calls;
    }

    @Override
    public void status(StatusRequest request, StreamObserver<StatusResponse> out) {
        calls.unary(() -> Frame.newBuilder().setStatusRequest(io.rota.proto.StatusRequest.getDefaultInstance()).build(),
                f -> {
                    io.rota.proto.StatusResponse s = f.getStatusResponse();
                    // dbSize: the size the space quota accounts and compares with --quota-backend-bytes.
                    return StatusResponse.newBuilder().setHeader(EtcdCodec.header(s.getHeader(), calls.clusterId))
                            .setVersion(ETCD_API_VERSION).setDbSize(s.getDbSize()).setDbSizeInUse(s.getDbSize())
                            .setLeader(s.getLeader()).setRaftIndex(s.getRaftIndex())
                            .setRaftTerm(s.getRaftTerm()).setRaftAppliedIndex(s.getRaftAppliedIndex())
                            .addAllErrors(s.getErrorsList()).build();
                }, out);
    }

    @Override
    public void hashKV(HashKVRequest request, StreamObserver<HashKVResponse> out) {
        calls.unary(() -> hashKv(request.getRevision()),
                f -> EtcdCodec.recode(f.getHashKvResponse(), HashKVResponse.getDefaultInstance(), calls.clusterId), out);
    }

    /**
     * etcd hashes its whole backend file; Rota has no such file, so Hash is HashKV at the member's current
     * revision: members at the same revision answer the same hash.
     */
    @Override
    public void hash(HashRequest request, StreamObserver<HashResponse> out) {
        calls.unary(() -> hashKv(0), f -> HashResponse.newBuilder()
                .setHeader(EtcdCodec.header(f.getHashKvResponse().getHeader(), calls.clusterId))
                .setHash(f.getHashKvResponse().getHash()).build(), out);
    }

    private static Frame hashKv(long revision) {
        return Frame.newBuilder().setHashKvRequest(HashKvRequest.newBuilder().setRevision(revision)).build();
    }

    @Override
    public void moveLeader(MoveLeaderRequest request, StreamObserver<MoveLeaderResponse> out) {
        calls.unary(() -> Frame.newBuilder().setMoveLeaderRequest(io.rota.proto.MoveLeaderRequest.newBuilder()
                        .setTargetId(request.getTargetID())).build(),
                f -> MoveLeaderResponse.newBuilder().setHeader(EtcdCodec.header(f.getMoveLeaderResponse().getHeader(),
                        calls.clusterId)).build(), out);
    }

    /**
     * GET lists the armed alarms (a linearizable read); DEACTIVATE disarms (replicated: every member serves
     * writes again). ACTIVATE is refused as Rota's own protocol refuses it: members raise alarms themselves.
     */
    @Override
    public void alarm(AlarmRequest request, StreamObserver<AlarmResponse> out) {
        calls.unary(() -> Frame.newBuilder().setAlarmRequest(EtcdCodec.recode(request,
                        io.rota.proto.AlarmRequest.getDefaultInstance())).build(),
                f -> EtcdCodec.recode(f.getAlarmResponse(), AlarmResponse.getDefaultInstance(), calls.clusterId), out);
    }

    @Override
    public void defragment(DefragmentRequest request, StreamObserver<DefragmentResponse> out) {
        out.onNext(DefragmentResponse.newBuilder().setHeader(ResponseHeader.newBuilder().setClusterId(calls.clusterId))
                .build());
        out.onCompleted();
    }

    /**
     * This member's snapshot, from Rota's snapshot stream, as etcd's blobs: the bytes of a
     * {@link SnapshotFile} (the format of {@code rotactl snapshot save}), with remaining_bytes counting down
     * to 0 on the last blob. The file ends as etcd's do, which etcdctl checks before it keeps the file: its
     * size is 32 more than a multiple of 512 and its last 32 bytes are the SHA-256 of all before them — here
     * the SnapshotFile's etcd_padding and etcd_sha256 fields, which Rota's readers ignore.
     */
    @Override
    public void snapshot(SnapshotRequest request, StreamObserver<SnapshotResponse> responses) {
        // The whole state leaves the member: while auth is enabled only root may, as on the native port.
        io.grpc.StatusRuntimeException refused = calls.refusal(Frame.newBuilder().setSnapshotRequest(
                io.rota.proto.SnapshotRequest.getDefaultInstance()).build(), EtcdCallers.Caller.current());
        if (refused != null) {
            responses.onError(refused);
            return;
        }
        calls.router.snapshot(new EtcdSnapshotSink((ServerCallStreamObserver<SnapshotResponse>) responses));
    }

    /** Rota's snapshot responses as etcd's blobs, written when gRPC's flow control says the stream is ready. */
    private final class EtcdSnapshotSink implements SnapshotStream.Sink {
        private final ServerCallStreamObserver<SnapshotResponse> out;
        /** Completed by the stream's on-ready handler: the next blob may be written. */
        private final AtomicReference<CompletableFuture<Void>> waiting = new AtomicReference<>();
        private long remaining;
        /** SHA-256 of every byte sent, for etcd's trailing checksum. */
        private final MessageDigest sent = sha256();
        /** The bytes of etcd_padding's field before the checksum field, sized when the info arrives. */
        private ByteString trailer;

        EtcdSnapshotSink(ServerCallStreamObserver<SnapshotResponse> out) {
            this.out = out;
            out.setOnReadyHandler(this::wake);
            // A client that goes away ends the stream at the next blob (SnapshotStream checks isOpen).
            out.setOnCancelHandler(this::wake);
        }

        private void wake() {
            CompletableFuture<Void> w = waiting.getAndSet(null);
            if (w != null) {
                w.complete(null);
            }
        }

        @Override
        public CompletionStage<?> send(io.rota.proto.SnapshotResponse r) {
            if (out.isCancelled()) {
                return CompletableFuture.completedFuture(null);
            }
            if (r.getDone()) {
                sent.update(trailer.asReadOnlyByteBuffer());
                out.onNext(SnapshotResponse.newBuilder().setHeader(EtcdCodec.header(r.getHeader(), calls.clusterId))
                        .setBlob(trailer.concat(ByteString.copyFrom(sent.digest()))).build());
                out.onCompleted();
                return CompletableFuture.completedFuture(null);
            }
            ByteString blob = r.hasInfo() ? fileHeader(r.getInfo()) : r.getChunk();
            if (r.hasInfo()) {
                trailer = trailer(blob.size() + r.getInfo().getImageBytes());
                remaining = blob.size() + r.getInfo().getImageBytes() + trailer.size() + SHA256_BYTES;
            }
            remaining -= blob.size();
            sent.update(blob.asReadOnlyByteBuffer());
            out.onNext(SnapshotResponse.newBuilder().setHeader(EtcdCodec.header(r.getHeader(), calls.clusterId))
                    .setRemainingBytes(remaining).setBlob(blob).build());
            CompletableFuture<Void> ready = new CompletableFuture<>();
            waiting.set(ready);
            // Ready already (or made ready between the two lines): no on-ready call will come for this blob.
            if (out.isReady() && waiting.compareAndSet(ready, null) || out.isCancelled()) {
                ready.complete(null);
            }
            return ready;
        }

        @Override
        public boolean isOpen() {
            return !out.isCancelled();
        }

        @Override
        public void fail(Error error) {
            out.onError(EtcdErrors.of(error));
        }

        @Override
        public String describe() {
            return "an etcd client";
        }
    }

    static final int SHA256_BYTES = 32;
    /** etcd's snapshot files are a whole number of these, plus the checksum. */
    static final int ETCD_ALIGNMENT = 512;

    /**
     * What follows {@code fileBytes} bytes of a SnapshotFile, up to the checksum itself: the etcd_padding
     * field, zeros sized so that the file ends 32 bytes past a multiple of 512, then etcd_sha256's tag and
     * length.
     */
    static ByteString trailer(long fileBytes) {
        int checksumField = CodedOutputStream.computeTagSize(SnapshotFile.ETCD_SHA256_FIELD_NUMBER)
                + CodedOutputStream.computeUInt32SizeNoTag(SHA256_BYTES);
        for (int zeros = 0; ; zeros++) {
            long size = fileBytes + CodedOutputStream.computeBytesSize(SnapshotFile.ETCD_PADDING_FIELD_NUMBER,
                    ByteString.EMPTY) - 1 + CodedOutputStream.computeUInt32SizeNoTag(zeros) + zeros + checksumField;
            if (size % ETCD_ALIGNMENT == 0) {
                ByteString.Output bytes = ByteString.newOutput();
                try {
                    CodedOutputStream o = CodedOutputStream.newInstance(bytes);
                    o.writeBytes(SnapshotFile.ETCD_PADDING_FIELD_NUMBER, ByteString.copyFrom(new byte[zeros]));
                    o.writeTag(SnapshotFile.ETCD_SHA256_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
                    o.writeUInt32NoTag(SHA256_BYTES);
                    o.flush();
                } catch (java.io.IOException e) {
                    throw new IllegalStateException("writing to memory cannot fail", e);
                }
                return bytes.toByteString();
            }
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** The start of a {@link SnapshotFile}: its info field, then the image field's tag and length. */
    static ByteString fileHeader(SnapshotInfo info) {
        ByteString.Output bytes = ByteString.newOutput();
        try {
            CodedOutputStream o = CodedOutputStream.newInstance(bytes);
            o.writeMessage(SnapshotFile.INFO_FIELD_NUMBER, info);
            o.writeTag(SnapshotFile.IMAGE_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
            o.writeUInt64NoTag(info.getImageBytes());
            o.flush();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("writing to memory cannot fail", e);
        }
        return bytes.toByteString();
    }
}
