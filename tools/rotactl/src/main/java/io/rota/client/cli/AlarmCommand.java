package io.rota.client.cli;

import io.rota.client.Alarm;
import io.rota.client.RotaClient;
import picocli.CommandLine.Command;

import java.util.List;

/**
 * {@code rotactl alarm list|disarm}, as etcdctl's (issue 18). NOSPACE is armed by the cluster when its space
 * quota (--quota-backend-bytes) is used up; while armed, writes that add data fail with NO_SPACE.
 */
@Command(name = "alarm", description = "Alarms: list the armed ones, disarm them.",
        subcommands = {AlarmCommand.ListCommand.class, AlarmCommand.DisarmCommand.class})
final class AlarmCommand extends CommandGroup {

    AlarmCommand() {
        super("name an alarm command: list, disarm");
    }

    /** {@code alarm list}. */
    @Command(name = "list", description = "Lists the armed alarms (none: no output in the simple format).")
    static final class ListCommand extends ClientCommand {
        @Override
        int run(RotaClient client, Printer printer) {
            printer.alarms(null, client.maintenance().alarms());
            return 0;
        }
    }

    /** {@code alarm disarm}. */
    @Command(name = "disarm", description = {"Disarms every alarm. Free space first (rotactl compaction REV, delete"
            + " keys): while the state is still over the quota, the leader arms NOSPACE again within a heartbeat."})
    static final class DisarmCommand extends ClientCommand {
        @Override
        int run(RotaClient client, Printer printer) {
            List<Alarm> before = client.maintenance().alarms();
            List<Alarm> after = client.maintenance().disarmAlarms();
            String done = before.isEmpty() ? "No alarm was armed." : "Disarmed " + before.size() + " alarm(s).";
            printer.alarms(done, after);
            return 0;
        }
    }
}
