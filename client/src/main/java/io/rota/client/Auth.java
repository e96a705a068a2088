package io.rota.client;

import com.google.protobuf.ByteString;
import io.rota.proto.AuthDisableRequest;
import io.rota.proto.AuthEnableRequest;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthResponse;
import io.rota.proto.AuthRole;
import io.rota.proto.AuthRoleAddRequest;
import io.rota.proto.AuthRoleDeleteRequest;
import io.rota.proto.AuthRoleGetRequest;
import io.rota.proto.AuthRoleGrantPermissionRequest;
import io.rota.proto.AuthRoleListRequest;
import io.rota.proto.AuthRoleRevokePermissionRequest;
import io.rota.proto.AuthStatusRequest;
import io.rota.proto.AuthUser;
import io.rota.proto.AuthUserAddRequest;
import io.rota.proto.AuthUserChangePasswordRequest;
import io.rota.proto.AuthUserDeleteRequest;
import io.rota.proto.AuthUserGetRequest;
import io.rota.proto.AuthUserGrantRoleRequest;
import io.rota.proto.AuthUserListRequest;
import io.rota.proto.AuthUserRevokeRoleRequest;
import io.rota.proto.Frame;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Users, roles and permissions, in etcd's model: a user has a password and roles; a role has READ, WRITE or
 * READWRITE permissions on keys, key ranges {@code [key, rangeEnd)} or prefixes; the user {@code root} with
 * the built-in role {@code root} may do anything, and must exist before {@link #enable()}. Once auth is on,
 * every call needs a user ({@link RotaClient.Builder#credentials}) and these calls need root.
 *
 * <p>Passwords travel to the cluster as given (use TLS on the client port); the leader stores only a salted
 * bcrypt hash. Every change bumps the auth revision, which makes tokens issued before it stale: clients with
 * credentials log in again by themselves.
 */
public final class Auth {

    /** What a permission allows. */
    public enum PermissionType {
        READ, WRITE, READWRITE
    }

    /**
     * One permission of a role.
     *
     * @param type     what it allows
     * @param key      the key, or the start of the range
     * @param rangeEnd empty for the single key; else the end of {@code [key, rangeEnd)} ({0}: every key &ge; key)
     */
    public record Permission(PermissionType type, byte[] key, byte[] rangeEnd) {
        public Permission {
            Objects.requireNonNull(type, "type");
            key = Objects.requireNonNull(key, "key").clone();
            rangeEnd = Objects.requireNonNull(rangeEnd, "rangeEnd").clone();
        }

        /** A permission on every key that starts with {@code prefix}. */
        public static Permission prefix(PermissionType type, String prefix) {
            byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
            return new Permission(type, p, Kv.prefixEnd(p));
        }

        /** A permission on the single key {@code key}. */
        public static Permission key(PermissionType type, String key) {
            return new Permission(type, key.getBytes(StandardCharsets.UTF_8), new byte[0]);
        }

        @Override
        public String toString() {
            String k = new String(key, StandardCharsets.UTF_8);
            if (rangeEnd.length == 0) {
                return type + " " + k;
            }
            if (java.util.Arrays.equals(rangeEnd, Kv.prefixEnd(key))) {
                return type + " " + k + " (prefix)";
            }
            String end = rangeEnd.length == 1 && rangeEnd[0] == 0 ? "<every key after>" : new String(rangeEnd, StandardCharsets.UTF_8);
            return type + " [" + k + ", " + end + ")";
        }
    }

    /**
     * A user as the cluster knows it.
     *
     * @param name  its name
     * @param roles its roles, sorted
     */
    public record User(String name, List<String> roles) {
    }

    /**
     * Whether auth is on, and the auth revision (+1 per user or role change).
     *
     * @param enabled  whether calls need a user
     * @param revision the auth revision
     */
    public record Status(boolean enabled, long revision) {
    }

    private final Calls calls;

    Auth(Calls calls) {
        this.calls = calls;
    }

    /**
     * Adds a user (no roles yet).
     *
     * @param name     1 to 128 characters, no spaces or ':'
     * @param password 1 to 72 bytes (UTF-8)
     * @throws RotaException INVALID_ARGUMENT if the user exists, PERMISSION_DENIED without root
     */
    public void addUser(String name, char[] password) {
        call(AuthRequest.newBuilder().setUserAdd(AuthUserAddRequest.newBuilder().setName(name)
                .setPassword(new String(password))));
    }

    /** Deletes a user (root cannot be deleted while auth is on). */
    public void deleteUser(String name) {
        call(AuthRequest.newBuilder().setUserDelete(AuthUserDeleteRequest.newBuilder().setName(name)));
    }

    /** Sets a user's password (tokens issued before are stale afterwards, as after any change). */
    public void changePassword(String name, char[] password) {
        call(AuthRequest.newBuilder().setUserChangePassword(AuthUserChangePasswordRequest.newBuilder().setName(name)
                .setPassword(new String(password))));
    }

    /** Gives {@code user} the role {@code role} (which must exist, or be {@code root}). */
    public void grantRole(String user, String role) {
        call(AuthRequest.newBuilder().setUserGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser(user).setRole(role)));
    }

    /** Takes {@code role} from {@code user}. */
    public void revokeRole(String user, String role) {
        call(AuthRequest.newBuilder().setUserRevokeRole(AuthUserRevokeRoleRequest.newBuilder().setName(user).setRole(role)));
    }

    /** One user; INVALID_ARGUMENT if it does not exist. */
    public User getUser(String name) {
        return user(call(AuthRequest.newBuilder().setUserGet(AuthUserGetRequest.newBuilder().setName(name)))
                .getUsers(0));
    }

    /** Every user, sorted by name. */
    public List<User> listUsers() {
        List<User> out = new ArrayList<>();
        call(AuthRequest.newBuilder().setUserList(AuthUserListRequest.getDefaultInstance())).getUsersList()
                .forEach(u -> out.add(user(u)));
        return out;
    }

    /** Adds a role without permissions. */
    public void addRole(String name) {
        call(AuthRequest.newBuilder().setRoleAdd(AuthRoleAddRequest.newBuilder().setName(name)));
    }

    /** Deletes a role and takes it from every user. */
    public void deleteRole(String name) {
        call(AuthRequest.newBuilder().setRoleDelete(AuthRoleDeleteRequest.newBuilder().setRole(name)));
    }

    /** A role's permissions, in the order granted. */
    public List<Permission> getRole(String name) {
        return permissions(call(AuthRequest.newBuilder().setRoleGet(AuthRoleGetRequest.newBuilder().setRole(name)))
                .getRoles(0));
    }

    /** Every role name, sorted ({@code root} first). */
    public List<String> listRoles() {
        List<String> out = new ArrayList<>();
        call(AuthRequest.newBuilder().setRoleList(AuthRoleListRequest.getDefaultInstance())).getRolesList()
                .forEach(r -> out.add(r.getName()));
        return out;
    }

    /** Grants {@code permission} to {@code role}; a grant on the same key/range replaces its type. */
    public void grantPermission(String role, Permission permission) {
        call(AuthRequest.newBuilder().setRoleGrantPermission(AuthRoleGrantPermissionRequest.newBuilder().setName(role)
                .setPerm(io.rota.proto.Permission.newBuilder()
                        .setPermType(io.rota.proto.Permission.Type.valueOf(permission.type().name()))
                        .setKey(ByteString.copyFrom(permission.key()))
                        .setRangeEnd(ByteString.copyFrom(permission.rangeEnd())))));
    }

    /** Revokes the permission of {@code role} on exactly {@code key} / {@code rangeEnd} (empty: the single key). */
    public void revokePermission(String role, byte[] key, byte[] rangeEnd) {
        call(AuthRequest.newBuilder().setRoleRevokePermission(AuthRoleRevokePermissionRequest.newBuilder().setRole(role)
                .setKey(ByteString.copyFrom(key)).setRangeEnd(ByteString.copyFrom(rangeEnd))));
    }

    /** Turns auth on: needs the user root with the role root; from then on every call needs a user. */
    public void enable() {
        call(AuthRequest.newBuilder().setEnable(AuthEnableRequest.getDefaultInstance()));
    }

    /** Turns auth off (root only): calls need no user any more. */
    public void disable() {
        call(AuthRequest.newBuilder().setDisable(AuthDisableRequest.getDefaultInstance()));
    }

    /** Whether auth is on, and the auth revision. */
    public Status status() {
        AuthResponse r = call(AuthRequest.newBuilder().setStatus(AuthStatusRequest.getDefaultInstance()));
        return new Status(r.getEnabled(), r.getAuthRevision());
    }

    /** Any auth call, asynchronously: the answer's AuthResponse. */
    private CompletableFuture<AuthResponse> callAsync(AuthRequest.Builder request) {
        return calls.execute(Frame.newBuilder().setAuthRequest(request), false).thenApply(Frame::getAuthResponse);
    }

    private AuthResponse call(AuthRequest.Builder request) {
        return Errors.await(callAsync(request));
    }

    private static User user(AuthUser u) {
        return new User(u.getName(), List.copyOf(u.getRolesList()));
    }

    private static List<Permission> permissions(AuthRole role) {
        List<Permission> out = new ArrayList<>();
        for (io.rota.proto.Permission p : role.getPermissionsList()) {
            out.add(new Permission(PermissionType.valueOf(p.getPermType().name()), p.getKey().toByteArray(),
                    p.getRangeEnd().toByteArray()));
        }
        return out;
    }
}
