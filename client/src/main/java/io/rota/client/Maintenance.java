package io.rota.client;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;
import io.rota.proto.AlarmRequest;
import io.rota.proto.CompactionRequest;
import io.rota.proto.Frame;
import io.rota.proto.SnapshotFile;
import io.rota.proto.SnapshotInfo;
import io.rota.proto.SnapshotRequest;
import io.rota.proto.SnapshotResponse;
import io.rota.proto.StoreSnapshot;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;

/**
 * The maintenance API (etcd's Maintenance service): backups, alarms and compaction. Obtain it from
 * {@link RotaClient#maintenance()}.
 * <ul>
 *   <li>{@link #snapshot} streams a consistent image of one member's state into a backup file; {@link #verify}
 *       checks one; {@code rota snapshot restore} builds a new cluster from it (docs/operations.md).</li>
 *   <li>{@link #alarms} lists the armed alarms; {@link #disarmAlarms} disarms them. NOSPACE is armed by the
 *       cluster when its space quota is used up: writes that add data fail with
 *       {@link RotaException.Code#NO_SPACE} until space is freed and the alarm disarmed.</li>
 *   <li>{@link #compact} forgets the revision history at and below a revision: reads and watches of older
 *       revisions then fail with {@link RotaException.Code#COMPACTED}.</li>
 * </ul>
 */
public final class Maintenance {

    private final Calls calls;
    private final ConnectionPool pool;

    Maintenance(Calls calls, ConnectionPool pool) {
        this.calls = calls;
        this.pool = pool;
    }

    /**
     * Streams a snapshot of the member at {@code endpoint} into {@code out}, in the backup file format (a
     * {@code SnapshotFile} message written as it arrives). The member takes it at a linearizable point: it
     * holds every write acknowledged before the call. The SHA-256 of the image is checked before the future
     * completes; on any failure the bytes written so far are not a valid file (write to a temporary file and
     * rename it on success, as rotactl does).
     *
     * <p>Chunks are written to {@code out} on the client's I/O thread as they arrive, so a slow {@code out}
     * slows the stream (the member sends one chunk at a time) and the client's other calls wait meanwhile: use a
     * client of its own for big backups.
     *
     * @param endpoint the member's client address, {@code host:port}
     * @param out      where the file goes; not closed
     * @param progress told the image bytes received so far, after each chunk
     * @return what the file holds; fails with the member's error (UNAVAILABLE: it is already streaming one),
     *         UNAVAILABLE on a lost connection, or INVALID_ARGUMENT if the received image fails its checksum
     */
    public CompletableFuture<SnapshotSummary> snapshotAsync(String endpoint, OutputStream out, LongConsumer progress) {
        CompletableFuture<SnapshotSummary> result = new CompletableFuture<>();
        // A stream is not retried, so it cannot log in when refused: a client with credentials but no token yet
        // logs in first, through a status call that the retrier renews the token for (issue 33).
        CompletableFuture<?> loggedIn = pool.tokens().hasCredentials() && pool.tokens().current().isEmpty()
                ? calls.execute(Frame.newBuilder().setStatusRequest(io.rota.proto.StatusRequest.getDefaultInstance()),
                        false)
                : CompletableFuture.completedFuture(null);
        loggedIn.whenComplete((ignored, failed) -> {
            if (failed != null) {
                result.completeExceptionally(Errors.unwrap(failed));
            } else {
                stream(endpoint, out, progress, result);
            }
        });
        return result;
    }

    private void stream(String endpoint, OutputStream out, LongConsumer progress,
                        CompletableFuture<SnapshotSummary> result) {
        pool.connection(endpoint).whenComplete((c, e) -> {
            if (e != null) {
                result.completeExceptionally(Errors.of(e, endpoint, endpoint + " did not answer"));
                return;
            }
            Receiver receiver = new Receiver(out, progress, result);
            long[] callId = new long[1];
            callId[0] = c.stream(Frame.newBuilder().setSnapshotRequest(SnapshotRequest.getDefaultInstance()),
                    new Connection.Stream(receiver::onFrame, result::completeExceptionally));
            result.whenComplete((s, x) -> c.endStream(callId[0]));
        });
    }

    /**
     * {@link #snapshotAsync} and waits.
     *
     * @throws RotaException as {@link #snapshotAsync} fails
     */
    public SnapshotSummary snapshot(String endpoint, OutputStream out, LongConsumer progress) {
        return Errors.await(snapshotAsync(endpoint, out, progress));
    }

    /**
     * Reads a backup file and checks it: it parses, the image's SHA-256 is the one recorded, and the image's
     * revision and applied entry are those of its header.
     *
     * @param in the file; read to its end, not closed
     * @return what it holds
     * @throws RotaException INVALID_ARGUMENT naming what is wrong (not a backup file, truncated, checksum mismatch)
     * @throws IOException   if {@code in} cannot be read
     */
    public static SnapshotSummary verify(InputStream in) throws IOException {
        SnapshotFile file;
        try {
            file = SnapshotFile.parseFrom(in);
        } catch (InvalidProtocolBufferException e) {
            throw corrupt("it does not parse as a Rota backup file (" + e.getMessage() + "); truncated or not a backup");
        }
        SnapshotInfo info = file.getInfo();
        if (!file.hasInfo() || info.getImageBytes() != file.getImage().size()) {
            throw corrupt("its image is " + file.getImage().size() + " bytes, its header says "
                    + info.getImageBytes() + ": truncated or not a backup");
        }
        if (!MessageDigest.isEqual(sha256().digest(file.getImage().toByteArray()), info.getImageSha256().toByteArray())) {
            throw corrupt("the image's SHA-256 differs from the one recorded when it was taken: the file is damaged");
        }
        StoreSnapshot image;
        try {
            image = StoreSnapshot.parseFrom(file.getImage());
        } catch (InvalidProtocolBufferException e) {
            throw corrupt("the image does not parse (" + e.getMessage() + ")");
        }
        if (image.getRevision() != info.getRevision() || image.getAppliedIndex() != info.getAppliedIndex()
                || image.getAppliedTerm() != info.getAppliedTerm()) {
            throw corrupt("the header (revision " + info.getRevision() + ", entry " + info.getAppliedIndex() + ") does"
                    + " not match the image (revision " + image.getRevision() + ", entry " + image.getAppliedIndex() + ")");
        }
        return SnapshotSummary.of(info);
    }

    /**
     * The armed alarms, read at a linearizable point.
     *
     * @return the alarms, by member; empty when none is armed
     */
    public CompletableFuture<List<Alarm>> alarmsAsync() {
        return calls.execute(Frame.newBuilder().setAlarmRequest(AlarmRequest.newBuilder()
                        .setAction(AlarmRequest.AlarmAction.GET)), false)
                .thenApply(f -> f.getAlarmResponse().getAlarmsList().stream().map(Alarm::of).toList());
    }

    /** {@link #alarmsAsync} and waits. */
    public List<Alarm> alarms() {
        return Errors.await(alarmsAsync());
    }

    /**
     * Disarms every alarm (replicated). Free space first: while the state is still over its quota the leader
     * arms NOSPACE again within a heartbeat.
     *
     * @return the alarms still armed after the call (normally none)
     */
    public CompletableFuture<List<Alarm>> disarmAlarmsAsync() {
        return calls.execute(Frame.newBuilder().setAlarmRequest(AlarmRequest.newBuilder()
                        .setAction(AlarmRequest.AlarmAction.DEACTIVATE)), true)
                .thenApply(f -> f.getAlarmResponse().getAlarmsList().stream().map(Alarm::of).toList());
    }

    /** {@link #disarmAlarmsAsync} and waits. */
    public List<Alarm> disarmAlarms() {
        return Errors.await(disarmAlarmsAsync());
    }

    /**
     * Compacts the revision history at {@code revision} (replicated): reads and watches of revisions below it
     * fail with COMPACTED from then on; the current keys are untouched.
     *
     * @param revision at most the current revision, above the current compact revision
     * @return the compact revision; fails COMPACTED if the history is already compacted at or past it,
     *         INVALID_ARGUMENT for a future revision
     */
    public CompletableFuture<Long> compactAsync(long revision) {
        return calls.execute(Frame.newBuilder().setCompactionRequest(CompactionRequest.newBuilder()
                .setRevision(revision)), true).thenApply(f -> f.getCompactionResponse().getCompactRevision());
    }

    /** {@link #compactAsync} and waits. */
    public long compact(long revision) {
        return Errors.await(compactAsync(revision));
    }

    private static RotaException corrupt(String why) {
        return new RotaException(RotaException.Code.INVALID_ARGUMENT, "not a valid backup: " + why);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /**
     * Writes one snapshot stream as a {@code SnapshotFile} message, field by field: the info (field 1), then the
     * image (field 2) whose length the info gives, chunk by chunk. Runs on the connection's event loop.
     */
    private static final class Receiver {
        private final CodedOutputStream out;
        private final LongConsumer progress;
        private final CompletableFuture<SnapshotSummary> result;
        private final MessageDigest digest = sha256();
        private SnapshotInfo info;
        private long received;

        Receiver(OutputStream out, LongConsumer progress, CompletableFuture<SnapshotSummary> result) {
            this.out = CodedOutputStream.newInstance(out, 64 * 1024);
            this.progress = progress;
            this.result = result;
        }

        void onFrame(Frame frame) {
            if (result.isDone()) {
                return;
            }
            if (frame.hasError()) {
                result.completeExceptionally(Errors.of(frame.getError()));
                return;
            }
            try {
                accept(frame.getSnapshotResponse());
            } catch (IOException e) {
                result.completeExceptionally(new RotaException(RotaException.Code.UNAVAILABLE,
                        "cannot write the snapshot: " + e.getMessage(), e));
            } catch (RotaException e) {
                result.completeExceptionally(e);
            }
        }

        private void accept(SnapshotResponse r) throws IOException {
            if (r.hasInfo()) {
                info = r.getInfo();
                out.writeTag(SnapshotFile.INFO_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
                out.writeUInt32NoTag(info.getSerializedSize());
                info.writeTo(out);
                out.writeTag(SnapshotFile.IMAGE_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
                out.writeUInt32NoTag(Math.toIntExact(info.getImageBytes()));
                return;
            }
            if (info == null) {
                throw corrupt("the member sent data before the snapshot's header");
            }
            if (!r.getChunk().isEmpty()) {
                received += r.getChunk().size();
                if (received > info.getImageBytes()) {
                    throw corrupt("the member sent more than the " + info.getImageBytes() + " bytes it announced");
                }
                out.writeRawBytes(r.getChunk());
                digest.update(r.getChunk().asReadOnlyByteBuffer());
                progress.accept(received);
            }
            if (r.getDone()) {
                out.flush();
                if (received != info.getImageBytes()
                        || !MessageDigest.isEqual(digest.digest(), info.getImageSha256().toByteArray())) {
                    throw corrupt("the image received (" + received + " bytes) fails its SHA-256 check");
                }
                result.complete(SnapshotSummary.of(info));
            }
        }
    }
}
