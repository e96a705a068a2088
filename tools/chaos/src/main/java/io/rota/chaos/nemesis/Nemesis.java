package io.rota.chaos.nemesis;

import java.util.Random;

/**
 * Something that breaks a cluster and then repairs it. The {@link NemesisSchedule} alternates the two on a
 * seeded random schedule. Implementations are driven from one thread only.
 */
public interface Nemesis {

    /**
     * The nemesis's name, as given to {@code --nemesis}.
     *
     * @return e.g. "kill"
     */
    String name();

    /**
     * Injects one fault.
     *
     * @param random the run's seeded randomness
     * @return what was done, for the history and the progress line (e.g. "kill -9 n2 (leader)")
     */
    String fault(Random random);

    /**
     * Repairs whatever {@link #fault} did (a no-op if nothing is broken).
     *
     * @return what was done, for the history
     */
    String heal();
}
