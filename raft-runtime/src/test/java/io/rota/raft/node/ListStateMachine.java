package io.rota.raft.node;

import io.rota.raft.core.Entry;
import io.rota.raft.core.StateMachine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A test state machine: the list of applied commands. Each command's result is its position in the
 * list, so a command applied twice would show up twice. Touched only on the driver thread; tests read it
 * through {@link RaftDriver#read}. Open for tests that need to watch its snapshots.
 */
class ListStateMachine implements StateMachine<Long> {

    private final List<String> commands = new ArrayList<>();

    @Override
    public List<Long> apply(List<Entry> committed) {
        List<Long> results = new ArrayList<>(committed.size());
        for (Entry e : committed) {
            if (e.type() != Entry.Type.COMMAND) {
                results.add(null);
            } else {
                commands.add(new String(e.data(), StandardCharsets.UTF_8));
                results.add((long) commands.size());
            }
        }
        return results;
    }

    /** An immutable copy of the list (references only); joined into bytes on the snapshot thread. */
    @Override
    public Capture capture() {
        List<String> image = List.copyOf(commands);
        return out -> out.write(String.join("\n", image).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void restore(java.io.InputStream image) throws java.io.IOException {
        byte[] snapshot = image.readAllBytes();
        commands.clear();
        if (snapshot.length > 0) {
            commands.addAll(Arrays.asList(new String(snapshot, StandardCharsets.UTF_8).split("\n", -1)));
        }
    }

    List<String> commands() {
        return List.copyOf(commands);
    }
}
