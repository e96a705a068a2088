package io.rota.chaos.nemesis;

import org.junit.jupiter.api.Test;

import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The membership nemesis's rules without processes: thousands of random steps, each carried out operation
 * by operation as {@link MembershipNemesis} does (with some operations refused and skipped), and after every
 * single operation 3..5 voters, never more than one dead member or one learner, a majority of the voters
 * alive, and no id or process index used twice.
 */
class MembershipPlanTest {

    private static MembershipPlan threeVoters() {
        return new MembershipPlan(Map.of(0, 1L, 1, 2L, 2, 3L));
    }

    /** Carries out random steps the way the nemesis does; {@code skipOneIn} refuses an operation for good. */
    private static Map<MembershipPlan.Kind, Integer> walk(long seed, int steps, int skipOneIn) {
        Random random = new Random(seed);
        MembershipPlan plan = threeVoters();
        Map<MembershipPlan.Kind, Integer> kinds = new EnumMap<>(MembershipPlan.Kind.class);
        Set<Long> ids = new HashSet<>(List.of(1L, 2L, 3L));
        long nextId = 4;
        int nextIndex = 3;
        for (int s = 0; s < steps; s++) {
            List<MembershipPlan.Member> before = plan.members();
            int leader = random.nextInt(4) == 0 ? -1 : before.get(random.nextInt(before.size())).index();
            if (leader >= 0 && plan.isDead(leader)) {
                leader = -1;   // a dead member is nobody's leader
            }
            boolean leftOver = before.stream().anyMatch(m -> !m.voter() || plan.isDead(m.index()));
            MembershipPlan.Step step = plan.next(random, leader);
            kinds.merge(step.kind(), 1, Integer::sum);
            if (step.kind() != MembershipPlan.Kind.GROW && !leftOver) {
                assertTrue(plan.isMember(step.target()) && plan.member(step.target()).voter(), "targets a voter");
                assertEquals(step.target() == leader, step.leader());
            }
            int newcomer = -1;
            for (MembershipPlan.Op op : plan.operations(step)) {
                boolean refused = skipOneIn > 0 && random.nextInt(skipOneIn) == 0;
                switch (op) {
                    case KILL_AND_WIPE:
                        plan.killed(step.target());
                        break;
                    case REMOVE:
                        if (plan.canRemove(step.target()) && !refused) {
                            plan.removed(step.target());
                        }
                        break;
                    case ADD_LEARNER:
                        if (plan.canAdd() && !refused) {
                            newcomer = nextIndex++;
                            assertFalse(plan.indexUsed(newcomer));
                            plan.added(newcomer, nextId);
                            assertTrue(ids.add(nextId++), "a fresh id");
                        }
                        break;
                    default:
                        if (newcomer >= 0 && plan.isMember(newcomer)) {
                            if (refused) {
                                // never caught up: removed again, unless that is refused too (left over)
                                if (random.nextInt(skipOneIn) != 0) {
                                    plan.removed(newcomer);
                                }
                            } else {
                                plan.promoted(newcomer);
                            }
                        }
                        break;
                }
                assertSafe(plan, seed, s);
            }
        }
        return kinds;
    }

    private static void assertSafe(MembershipPlan plan, long seed, int step) {
        String where = "seed " + seed + " step " + step + ": " + plan.members();
        int voters = plan.voters();
        long dead = plan.members().stream().filter(m -> plan.isDead(m.index())).count();
        assertTrue(voters >= MembershipPlan.MIN_VOTERS && voters <= MembershipPlan.MAX_VOTERS, where);
        assertTrue(dead <= 1, "one dead member at most: " + where);
        long liveVoters = plan.members().stream().filter(m -> m.voter() && !plan.isDead(m.index())).count();
        assertTrue(liveVoters > voters / 2, "a majority of the voters is alive: " + where);
        assertTrue(plan.members().size() <= MembershipPlan.MAX_MEMBERS, where);
        assertTrue(plan.members().stream().filter(m -> !m.voter()).count() <= 1, "one learner at most: " + where);
    }

    @Test
    void votersStayWithinThreeToFiveAndAMajorityIsAlwaysAlive() {
        for (long seed = 0; seed < 200; seed++) {
            Map<MembershipPlan.Kind, Integer> kinds = walk(seed, 200, 0);
            assertEquals(3, kinds.size(), "grow, shrink and replace all happen: " + kinds);
        }
    }

    @Test
    void refusedOperationsLeaveAPendingDeadMemberThatIsFixedFirst() {
        for (long seed = 0; seed < 200; seed++) {
            walk(seed, 200, 4);
        }
    }

    @Test
    void aReplacementAtThreeVotersAddsTheNewcomerBeforeRemovingTheDeadMember() {
        MembershipPlan plan = threeVoters();
        MembershipPlan.Step replace = new MembershipPlan.Step(MembershipPlan.Kind.REPLACE, 1, false);
        assertEquals(List.of(MembershipPlan.Op.KILL_AND_WIPE, MembershipPlan.Op.ADD_LEARNER,
                MembershipPlan.Op.PROMOTE, MembershipPlan.Op.REMOVE), plan.operations(replace));
        plan.added(3, 4);
        plan.promoted(3);
        assertEquals(List.of(MembershipPlan.Op.KILL_AND_WIPE, MembershipPlan.Op.REMOVE,
                MembershipPlan.Op.ADD_LEARNER, MembershipPlan.Op.PROMOTE), plan.operations(replace));
    }

    @Test
    void aPendingDeadMemberIsRemovedOrOutgrownBeforeAnyOtherStep() {
        MembershipPlan plan = threeVoters();
        plan.killed(2);
        assertFalse(plan.canRemove(2), "three voters: removing the dead one would leave two");
        Random random = new Random(1);
        for (int i = 0; i < 20; i++) {
            assertEquals(MembershipPlan.Kind.GROW, plan.next(random, 0).kind());
        }
        plan.added(3, 4);
        plan.promoted(3);
        for (int i = 0; i < 20; i++) {
            assertEquals(new MembershipPlan.Step(MembershipPlan.Kind.SHRINK, 2, false), plan.next(random, 0));
        }
        plan.removed(2);
        assertFalse(plan.isDead(2));
    }

    @Test
    void theLeaderIsTheTargetAboutHalfTheTime() {
        MembershipPlan plan = threeVoters();
        plan.added(3, 4);
        plan.promoted(3);
        Random random = new Random(3);
        int leader = 0;
        int targets = 0;
        int steps = 0;
        for (int i = 0; i < 4000; i++) {
            MembershipPlan.Step step = plan.next(random, 1);
            if (step.kind() != MembershipPlan.Kind.GROW) {
                steps++;
                targets += step.leader() ? 1 : 0;
                leader += step.target() == 1 ? 1 : 0;
            }
        }
        assertEquals(targets, leader);
        double share = (double) targets / steps;
        assertTrue(share > 0.55 && share < 0.70, "1/2 + 1/2 * 1/4 of the removals target the leader: " + share);
    }

    @Test
    void idsAndProcessIndexesAreNeverReused() {
        MembershipPlan plan = threeVoters();
        plan.removed(2);
        IllegalStateException id = assertThrows(IllegalStateException.class, () -> plan.added(3, 3));
        assertTrue(id.getMessage().contains("member id 3 was used before"), id.getMessage());
        IllegalStateException index = assertThrows(IllegalStateException.class, () -> plan.added(2, 9));
        assertTrue(index.getMessage().contains("n3 was used before"), index.getMessage());
        assertTrue(plan.indexUsed(2));
        assertEquals(Set.of(1L, 2L, 3L), plan.usedIds(), "a refused add uses nothing up");
    }

    @Test
    void aStartWithTooFewVotersIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new MembershipPlan(Map.of(0, 1L, 1, 2L)));
    }
}
