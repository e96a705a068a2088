package io.rota.chaos.nemesis;

import java.util.List;
import java.util.Random;

/**
 * Each fault is drawn at random from kill, pause, partition and — when the members run with fault injection
 * ({@link Faults#clocks()}) — clock; heal repairs that one.
 */
public final class MixedNemesis implements Nemesis {

    private final List<Nemesis> choices;
    private Nemesis current;

    /**
     * A mixed nemesis.
     *
     * @param faults the cluster and its network
     */
    public MixedNemesis(Faults faults) {
        List<Nemesis> all = new java.util.ArrayList<>(List.of(new KillNemesis(faults), new PauseNemesis(faults),
                new PartitionNemesis(faults)));
        if (faults.clocks() != null) {
            all.add(new ClockNemesis(faults.clocks(), faults.cluster()::leader));
        }
        this.choices = List.copyOf(all);
    }

    @Override
    public String name() {
        return "mixed";
    }

    @Override
    public String fault(Random random) {
        current = choices.get(random.nextInt(choices.size()));
        return current.fault(random);
    }

    @Override
    public String heal() {
        if (current == null) {
            return "nothing to heal";
        }
        String s = current.heal();
        current = null;
        return s;
    }
}
