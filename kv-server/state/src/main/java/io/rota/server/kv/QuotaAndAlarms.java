package io.rota.server.kv;

import io.rota.proto.AlarmCommand;
import io.rota.proto.AlarmMember;
import io.rota.proto.AlarmResponse;
import io.rota.proto.AlarmType;
import io.rota.proto.Command;
import io.rota.proto.Error;
import io.rota.proto.StoreSnapshot;

import java.util.TreeMap;

/**
 * The space quota and the alarms (issue 18): the armed alarms, replicated, and the NOSPACE rule — while that
 * alarm is armed, a command that grows the state is refused. Driver thread only.
 */
final class QuotaAndAlarms {

    /** Armed alarms (issue 18), sorted by member id, then type; NOSPACE among them refuses growing writes. */
    private final TreeMap<AlarmKey, AlarmMember> alarms = new TreeMap<>();
    /** Cached "a NOSPACE alarm is armed": the one branch the quota costs a write. */
    private boolean noSpace;
    private final KvStore store;

    QuotaAndAlarms(KvStore store) {
        this.store = store;
    }

    /** NO_SPACE if NOSPACE is armed and {@code cmd} grows the state. */
    void requireSpaceFor(Command cmd) {
        if (noSpace && growsState(cmd)) {
            throw noSpaceError();
        }
    }

    /**
     * Whether {@code cmd} is refused while NOSPACE is armed: what makes the state bigger — a put, a txn with a
     * put in any branch, a lease grant (etcd's quota applies to the same three). Deletes, revokes,
     * keep-alives, compaction, sessions and membership still work, so an operator can free space.
     */
    private static boolean growsState(Command cmd) {
        return switch (cmd.getOpCase()) {
            case PUT, LEASE_GRANT -> true;
            case TXN -> TxnTree.hasPut(cmd.getTxn());
            default -> false;
        };
    }

    private StoreException noSpaceError() {
        return new StoreException(Error.Code.NO_SPACE, "the cluster's space quota is used up (NOSPACE alarm; "
                + store.accountedBytes() + " bytes accounted): writes that add data are refused. Free space — "
                + "'rotactl compaction REV' to drop old history, delete keys — then 'rotactl alarm disarm'");
    }

    /** Arm or disarm an alarm. Arming twice, or disarming what is not armed, changes nothing (retries are safe). */
    AlarmResponse alarm(AlarmCommand req) {
        switch (req.getAction()) {
            case ACTIVATE -> {
                if (req.getMemberId() == 0 || req.getAlarm() == AlarmType.ALARM_NONE) {
                    throw StoreException.invalid("an alarm is armed for one member and one type");
                }
                if (req.getAlarm() == AlarmType.UNRECOGNIZED) {
                    // A type a newer member knows: refused here alike on every member of this version.
                    throw StoreException.invalid("unknown alarm type " + req.getAlarmValue());
                }
                alarms.put(new AlarmKey(req.getMemberId(), req.getAlarmValue()),
                        AlarmMember.newBuilder().setMemberId(req.getMemberId()).setAlarm(req.getAlarm()).build());
            }
            case DEACTIVATE -> alarms.values().removeIf(a -> (req.getMemberId() == 0 || a.getMemberId() == req.getMemberId())
                    && (req.getAlarm() == AlarmType.ALARM_NONE || a.getAlarm() == req.getAlarm()));
            default -> throw StoreException.invalid("an alarm command arms or disarms, got " + req.getAction());
        }
        noSpace = nospaceArmed();
        return alarms();
    }

    private boolean nospaceArmed() {
        return alarms.values().stream().anyMatch(a -> a.getAlarm() == AlarmType.NOSPACE);
    }

    /** The armed alarms, for AlarmRequest GET (read side) and every alarm command's answer. */
    AlarmResponse alarms() {
        return AlarmResponse.newBuilder().setHeader(store.header()).addAllAlarms(alarms.values()).build();
    }

    /** Whether NOSPACE is armed. */
    boolean noSpace() {
        return noSpace;
    }

    /** The armed alarms, into a snapshot image. */
    void writeTo(StoreSnapshot.Builder image) {
        image.addAllAlarms(alarms.values());
    }

    /** The armed alarms from a snapshot image. */
    void restore(StoreSnapshot image) {
        alarms.clear();
        image.getAlarmsList().forEach(a -> alarms.put(new AlarmKey(a.getMemberId(), a.getAlarmValue()), a));
        noSpace = nospaceArmed();
    }

    /** An alarm's place in {@link #alarms}: every (member id, type) apart (a shifted id dropped its top bits). */
    private record AlarmKey(long memberId, int type) implements Comparable<AlarmKey> {
        @Override
        public int compareTo(AlarmKey o) {
            int byMember = Long.compareUnsigned(memberId, o.memberId);
            return byMember != 0 ? byMember : Integer.compare(type, o.type);
        }
    }
}
