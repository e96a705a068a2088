package io.rota.server.etcd;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The pairs {@link EtcdCodec#recode} translates by their bytes have the same wire format: every field of
 * etcd's message (but the header, translated apart) has Rota's number, type and cardinality, and so has every
 * field of Rota's. If either protocol changes such a field, this fails before a client decodes garbage.
 */
class EtcdWireTest {

    static Stream<Descriptor[]> recodedPairs() {
        return Stream.of(
                pair(io.rota.etcd.api.KeyValue.getDescriptor(), io.rota.proto.KeyValue.getDescriptor()),
                pair(io.rota.etcd.api.Event.getDescriptor(), io.rota.proto.Event.getDescriptor()),
                pair(io.rota.etcd.api.PutRequest.getDescriptor(), io.rota.proto.PutRequest.getDescriptor()),
                pair(io.rota.etcd.api.PutResponse.getDescriptor(), io.rota.proto.PutResponse.getDescriptor()),
                pair(io.rota.etcd.api.DeleteRangeRequest.getDescriptor(), io.rota.proto.DeleteRangeRequest.getDescriptor()),
                pair(io.rota.etcd.api.DeleteRangeResponse.getDescriptor(),
                        io.rota.proto.DeleteRangeResponse.getDescriptor()),
                pair(io.rota.etcd.api.RangeResponse.getDescriptor(), io.rota.proto.RangeResponse.getDescriptor()),
                pair(io.rota.etcd.api.Compare.getDescriptor(), io.rota.proto.Compare.getDescriptor()),
                pair(io.rota.etcd.api.LeaseGrantRequest.getDescriptor(), io.rota.proto.LeaseGrantRequest.getDescriptor()),
                pair(io.rota.etcd.api.LeaseGrantResponse.getDescriptor(), io.rota.proto.LeaseGrantResponse.getDescriptor()),
                pair(io.rota.etcd.api.LeaseRevokeResponse.getDescriptor(), io.rota.proto.LeaseRevokeResponse.getDescriptor()),
                pair(io.rota.etcd.api.LeaseKeepAliveResponse.getDescriptor(),
                        io.rota.proto.LeaseKeepAliveResponse.getDescriptor()),
                pair(io.rota.etcd.api.LeaseTimeToLiveResponse.getDescriptor(),
                        io.rota.proto.LeaseTimeToLiveResponse.getDescriptor()),
                pair(io.rota.etcd.api.LeaseLeasesResponse.getDescriptor(), io.rota.proto.LeaseLeasesResponse.getDescriptor()),
                pair(io.rota.etcd.api.HashKVResponse.getDescriptor(), io.rota.proto.HashKvResponse.getDescriptor()));
    }

    private static Descriptor[] pair(Descriptor etcd, Descriptor rota) {
        return new Descriptor[] {etcd, rota};
    }

    @ParameterizedTest
    @MethodSource("recodedPairs")
    void sameFieldsSameNumbers(Descriptor etcd, Descriptor rota) {
        assertSubset(etcd, rota);
        assertSubset(rota, etcd);
    }

    /** Every field of {@code a} but the header (and etcd's LeaseGrantResponse.error, never set) is in {@code b}. */
    private static void assertSubset(Descriptor a, Descriptor b) {
        for (FieldDescriptor f : a.getFields()) {
            if (f.getName().equals("header") || a == io.rota.etcd.api.LeaseGrantResponse.getDescriptor()
                    && f.getName().equals("error")) {
                continue;
            }
            FieldDescriptor g = b.findFieldByNumber(f.getNumber());
            assertNotNull(g, a.getFullName() + "." + f.getName() + " (" + f.getNumber() + ") is not in " + b.getFullName());
            assertEquals(f.getType(), g.getType(), f.getFullName() + " vs " + g.getFullName());
            assertEquals(f.isRepeated(), g.isRepeated(), f.getFullName() + " vs " + g.getFullName());
            if (f.getType() == FieldDescriptor.Type.MESSAGE && !f.getMessageType().getName().equals("ResponseHeader")) {
                assertEquals(f.getMessageType().getName(), g.getMessageType().getName(), f.getFullName());
            }
        }
    }
}
