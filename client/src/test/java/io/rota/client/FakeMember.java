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

    final List<Frame> received = new CopyOnWriteArrayList<>();
    private final ServerSocket server;
    private final Function<Frame, Frame.Builder> answer;

    FakeMember(Function<Frame, Frame.Builder> answer) throws IOException {
        this.answer = answer;
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "fake-member");
        t.setDaemon(true);
        t.start();
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
                Frame.Builder response = answer.apply(request);
                if (response != null) {
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
