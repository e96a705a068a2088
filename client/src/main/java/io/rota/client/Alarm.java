package io.rota.client;

/**
 * An armed alarm (etcd's AlarmMember): which member's check raised it, and its type.
 *
 * @param memberId the member whose check raised it (the leader at that time)
 * @param type     the alarm, e.g. {@code NOSPACE}: the space quota is used up and writes that add data are refused
 */
public record Alarm(long memberId, String type) {

    static Alarm of(io.rota.proto.AlarmMember m) {
        return new Alarm(m.getMemberId(), m.getAlarm().name());
    }
}
