package io.rota.chaos.checker;

import io.rota.chaos.history.Event;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns a history's events into the checker's operations: each client process's invocation is paired with
 * the completion that follows it. An ok becomes an acknowledged operation, an info (or an invocation the
 * run ended without an answer to) an indeterminate one, a fail nothing (it certainly did not happen).
 * Nemesis events are skipped.
 */
public final class Operations {

    private Operations() {
    }

    /**
     * The checker's operations.
     *
     * @param events a history, in time order per process
     * @return the acknowledged and indeterminate operations
     * @throws IllegalArgumentException if a process completes an operation it did not invoke, or invokes
     *                                  twice without completing
     */
    public static List<Operation> of(List<Event> events) {
        Map<Integer, Event> pending = new HashMap<>();
        List<Operation> ops = new ArrayList<>();
        for (Event e : events) {
            if (e.isNemesis()) {
                continue;
            }
            if (e.type() == Event.Type.INVOKE) {
                Event previous = pending.put(e.process(), e);
                if (previous != null) {
                    throw new IllegalArgumentException("process " + e.process() + " invoked twice without a completion"
                            + " (at " + previous.time() + " and " + e.time() + ")");
                }
                continue;
            }
            Event invoke = pending.remove(e.process());
            if (invoke == null || !invoke.f().equals(e.f()) || !invoke.key().equals(e.key())) {
                throw new IllegalArgumentException("process " + e.process() + " completed " + e.f() + " " + e.key()
                        + " at " + e.time() + " without invoking it");
            }
            if (e.type() != Event.Type.FAIL) {
                ops.add(operation(ops.size(), invoke, e));
            }
        }
        for (Event invoke : pending.values()) {
            ops.add(operation(ops.size(), invoke, null));
        }
        return ops;
    }

    /** Pairs an invocation with its completion ({@code null}: none, i.e. indeterminate). */
    private static Operation operation(int id, Event invoke, Event completion) {
        long complete = completion == null || completion.type() == Event.Type.INFO ? Long.MAX_VALUE : completion.time();
        return switch (invoke.f()) {
            case "read" -> complete == Long.MAX_VALUE
                    ? new Operation(id, invoke.process(), Operation.Fn.READ, invoke.key(), null, null,
                    Operation.Outcome.INFO, false, invoke.time(), complete)
                    : Operation.read(id, invoke.process(), invoke.key(), (String) completion.value(), invoke.time(), complete);
            case "write" -> Operation.write(id, invoke.process(), invoke.key(), (String) invoke.value(), invoke.time(),
                    complete);
            case "cas" -> {
                List<?> pair = (List<?>) invoke.value();
                boolean succeeded = completion != null && Boolean.TRUE.equals(completion.result());
                yield Operation.cas(id, invoke.process(), invoke.key(), (String) pair.get(0), (String) pair.get(1),
                        succeeded, invoke.time(), complete);
            }
            default -> throw new IllegalArgumentException("unknown operation \"" + invoke.f() + "\" of process "
                    + invoke.process());
        };
    }
}
