package io.rota.client;

import io.rota.proto.Frame;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** A scripted member on 127.0.0.1: answers each request frame with {@code answer} (null: no answer). */
final class FakeMember implements AutoCloseable {

    /** What a member sends back for one request: any number of frames, in order (none: no answer). */
    interface Script {
        List<Frame.Builder> answer(Frame request);
    }

    final List<Frame> received = new CopyOnWriteArrayList<>();
    private final ServerSocket server;
    private final Script script;

    FakeMember(Function<Frame, Frame.Builder> answer) throws IOException {
        this((Script) f -> {
            Frame.Builder one = answer.apply(f);
            return one == null ? List.of() : List.of(one);
        });
    }

    private FakeMember(Script script) throws IOException {
        this.script = script;
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "fake-member");
        t.setDaemon(true);
        t.start();
    }

    /** A member that may answer a request with several frames (a watch's stream). */
    static FakeMember streaming(Script script) throws IOException {
        return new FakeMember(script);
    }

    String endpoint() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    private void accept() {
        try {
            while (true) {
                Socket s = server.accept();
                Thread t = new Thread(() -> serve(s), "fake-member-conn");
                t.setDaemon(true);
                t.start();
            }
        } catch (IOException closed) {
            // closed
        }
    }

    private void serve(Socket s) {
        try (s; DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
             DataOutputStream out = new DataOutputStream(s.getOutputStream())) {
            while (true) {
                byte[] payload = new byte[in.readInt()];
                in.readFully(payload);
                Frame request = Frame.parseFrom(payload);
                received.add(request);
                for (Frame.Builder response : script.answer(request)) {
                    byte[] bytes = response.setCallId(request.getCallId()).build().toByteArray();
                    synchronized (out) {
                        out.writeInt(bytes.length);
                        out.write(bytes);
                        out.flush();
                    }
                }
            }
        } catch (IOException e) {
            // the client went away
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
