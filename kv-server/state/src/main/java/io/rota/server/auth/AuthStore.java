package io.rota.server.auth;

import com.google.protobuf.ByteString;
import io.rota.proto.AuthCommand;
import io.rota.proto.AuthImage;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthResponse;
import io.rota.proto.AuthRole;
import io.rota.proto.AuthUser;
import io.rota.proto.Error;
import io.rota.proto.Permission;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The replicated auth state: users (bcrypt hash, roles), roles (permissions), the enabled flag, the token
 * key and the auth revision. Part of the coordination state machine: {@link #apply} runs on the Raft
 * driver's thread for each committed {@link AuthCommand} and is a pure function of the command (hashes and
 * the token key come in it, chosen by the proposer). Every change bumps the revision by one; a refused
 * command (a typed {@link AuthException}) changes nothing.
 *
 * <p>After each change the store publishes a new immutable {@link AuthState}; request threads read only
 * that ({@link #state()}: one volatile read — the whole cost on the write path while auth is disabled).
 */
public final class AuthStore {

    private static final int TOKEN_KEY_BYTES = 32;
    private static final int MAX_NAME_LENGTH = 128;

    private volatile AuthState state = AuthState.INITIAL;

    /** The current state (any thread). */
    public AuthState state() {
        return state;
    }

    /** Apply one committed change (driver thread). */
    public AuthResponse apply(AuthCommand cmd) throws AuthException {
        AuthState s = state;
        TreeMap<String, AuthState.User> users = new TreeMap<>(s.users());
        TreeMap<String, AuthRole> roles = new TreeMap<>(s.roles());
        boolean enabled = s.enabled();
        byte[] key = s.tokenKey();
        switch (cmd.getChangeCase()) {
            case USER_ADD -> {
                String name = checkName("user", cmd.getUserAdd().getName());
                if (users.containsKey(name)) {
                    throw invalid(Error.Reason.USER_EXISTS, "user '" + name + "' already exists");
                }
                users.put(name, new AuthState.User(name, checkHash(cmd.getUserAdd().getPasswordHash()), List.of()));
            }
            case USER_DELETE -> {
                String name = cmd.getUserDelete().getName();
                requireUser(users, name);
                if (enabled && name.equals(AuthState.ROOT)) {
                    throw invalid(Error.Reason.ROOT_PROTECTED,
                            "cannot delete user root while auth is enabled; disable auth first");
                }
                users.remove(name);
            }
            case USER_CHANGE_PASSWORD -> {
                AuthState.User u = requireUser(users, cmd.getUserChangePassword().getName());
                users.put(u.name(), new AuthState.User(u.name(), checkHash(cmd.getUserChangePassword().getPasswordHash()),
                        u.roles()));
            }
            case USER_GRANT_ROLE -> {
                AuthState.User u = requireUser(users, cmd.getUserGrantRole().getUser());
                String role = cmd.getUserGrantRole().getRole();
                if (!role.equals(AuthState.ROOT) && !roles.containsKey(role)) {
                    throw invalid(Error.Reason.ROLE_NOT_FOUND,
                            "role '" + role + "' does not exist; add it first (role add " + role + ")");
                }
                if (u.roles().contains(role)) {
                    throw invalid("user '" + u.name() + "' already has role '" + role + "'");
                }
                List<String> granted = new ArrayList<>(u.roles());
                granted.add(role);
                granted.sort(null);
                users.put(u.name(), new AuthState.User(u.name(), u.passwordHash(), List.copyOf(granted)));
            }
            case USER_REVOKE_ROLE -> {
                AuthState.User u = requireUser(users, cmd.getUserRevokeRole().getName());
                String role = cmd.getUserRevokeRole().getRole();
                if (!u.roles().contains(role)) {
                    throw invalid(Error.Reason.ROLE_NOT_GRANTED,
                            "user '" + u.name() + "' does not have role '" + role + "'");
                }
                if (enabled && u.name().equals(AuthState.ROOT) && role.equals(AuthState.ROOT)) {
                    throw invalid(Error.Reason.ROOT_PROTECTED,
                            "cannot revoke role root from user root while auth is enabled; disable auth first");
                }
                List<String> left = new ArrayList<>(u.roles());
                left.remove(role);
                users.put(u.name(), new AuthState.User(u.name(), u.passwordHash(), List.copyOf(left)));
            }
            case ROLE_ADD -> {
                String name = checkName("role", cmd.getRoleAdd().getName());
                if (name.equals(AuthState.ROOT) || roles.containsKey(name)) {
                    throw invalid(Error.Reason.ROLE_EXISTS, "role '" + name + "' already exists");
                }
                roles.put(name, AuthRole.newBuilder().setName(name).build());
            }
            case ROLE_DELETE -> {
                String name = cmd.getRoleDelete().getRole();
                if (name.equals(AuthState.ROOT)) {
                    throw invalid("the root role is built in and cannot be deleted");
                }
                requireRole(roles, name);
                roles.remove(name);
                for (AuthState.User u : List.copyOf(users.values())) {
                    if (u.roles().contains(name)) {
                        List<String> left = new ArrayList<>(u.roles());
                        left.remove(name);
                        users.put(u.name(), new AuthState.User(u.name(), u.passwordHash(), List.copyOf(left)));
                    }
                }
            }
            case ROLE_GRANT_PERMISSION -> {
                AuthRole role = requireRole(roles, cmd.getRoleGrantPermission().getName());
                Permission perm = cmd.getRoleGrantPermission().getPerm();
                if (perm.getKey().isEmpty()) {
                    throw invalid("a permission needs a key (or a prefix)");
                }
                if (perm.getPermType() == Permission.Type.UNRECOGNIZED) {
                    throw invalid("unknown permission type");
                }
                AuthRole.Builder b = role.toBuilder().clearPermissions();
                boolean replaced = false;
                for (Permission p : role.getPermissionsList()) {
                    if (sameRange(p, perm.getKey(), perm.getRangeEnd())) {
                        b.addPermissions(perm);   // a second grant of the same range replaces its type, as etcd
                        replaced = true;
                    } else {
                        b.addPermissions(p);
                    }
                }
                if (!replaced) {
                    b.addPermissions(perm);
                }
                roles.put(role.getName(), b.build());
            }
            case ROLE_REVOKE_PERMISSION -> {
                var req = cmd.getRoleRevokePermission();
                AuthRole role = requireRole(roles, req.getRole());
                AuthRole.Builder b = role.toBuilder().clearPermissions();
                for (Permission p : role.getPermissionsList()) {
                    if (!sameRange(p, req.getKey(), req.getRangeEnd())) {
                        b.addPermissions(p);
                    }
                }
                if (b.getPermissionsCount() == role.getPermissionsCount()) {
                    throw invalid(Error.Reason.PERMISSION_NOT_GRANTED,
                            "role '" + role.getName() + "' has no permission on exactly that key/range");
                }
                roles.put(role.getName(), b.build());
            }
            case ENABLE -> {
                if (enabled) {
                    return response(s);   // already on: nothing changes, tokens stay valid
                }
                AuthState.User root = users.get(AuthState.ROOT);
                if (root == null || !root.roles().contains(AuthState.ROOT)) {
                    throw invalid(Error.Reason.ROOT_USER_MISSING,
                            "auth needs a user 'root' with the role 'root' before it can be enabled"
                            + " (user add root; user grant-role root root)");
                }
                if (cmd.getTokenKey().size() != TOKEN_KEY_BYTES) {
                    throw invalid("auth enable carries no token key");
                }
                enabled = true;
                key = cmd.getTokenKey().toByteArray();
            }
            case DISABLE -> {
                if (!enabled) {
                    return response(s);
                }
                enabled = false;
            }
            case ROTATE_TOKEN_KEY -> {
                // Issue 33: a restored cluster's auth state comes without its key (no backup holds it); the leader
                // proposes a new one. Every earlier token is refused from now on: the revision moves as well.
                if (!enabled) {
                    throw invalid("auth is not enabled: there are no tokens to sign");
                }
                if (cmd.getTokenKey().size() != TOKEN_KEY_BYTES) {
                    throw invalid("a token key rotation carries no key");
                }
                key = cmd.getTokenKey().toByteArray();
            }
            case CHANGE_NOT_SET -> throw invalid("auth command without a change");
        }
        AuthState next = new AuthState(enabled, s.revision() + 1, users, roles, key);
        state = next;
        return response(next);
    }

    /** Answer a read-only auth call (user/role get and list, status) from the current state. */
    public AuthResponse query(AuthRequest req) throws AuthException {
        AuthState s = state;
        AuthResponse.Builder out = response(s).toBuilder();
        switch (req.getRequestCase()) {
            case USER_GET -> out.addUsers(user(requireUser(s.users(), req.getUserGet().getName())));
            case USER_LIST -> s.users().values().forEach(u -> out.addUsers(user(u)));
            case ROLE_GET -> {
                String name = req.getRoleGet().getRole();
                out.addRoles(name.equals(AuthState.ROOT) ? AuthRole.newBuilder().setName(name).build()
                        : requireRole(s.roles(), name));
            }
            case ROLE_LIST -> {
                out.addRoles(AuthRole.newBuilder().setName(AuthState.ROOT));
                s.roles().values().forEach(out::addRoles);
            }
            case STATUS -> { }
            default -> throw invalid("not a read-only auth call: " + req.getRequestCase());
        }
        return out.build();
    }

    /**
     * The state for a snapshot: users and roles sorted by name. The token key is in it (a member that installs
     * a snapshot must check the cluster's tokens); a backup clears it ({@link #withoutTokenKey}).
     */
    public AuthImage image() {
        AuthState s = state;
        AuthImage.Builder b = AuthImage.newBuilder().setEnabled(s.enabled()).setRevision(s.revision())
                .setTokenKey(ByteString.copyFrom(s.tokenKey()));
        for (AuthState.User u : s.users().values()) {
            b.addUsers(AuthImage.UserImage.newBuilder().setName(u.name()).setPasswordHash(u.passwordHash())
                    .addAllRoles(u.roles()));
        }
        b.addAllRoles(s.roles().values());
        return b.build();
    }

    /** Replace the state with a snapshot's (driver thread). */
    /** {@code image} as a backup holds it (issue 33): without the token key, so no reader can mint tokens. */
    public static AuthImage withoutTokenKey(AuthImage image) {
        return image.toBuilder().clearTokenKey().build();
    }

    public void restore(AuthImage image) {
        TreeMap<String, AuthState.User> users = new TreeMap<>();
        for (AuthImage.UserImage u : image.getUsersList()) {
            users.put(u.getName(), new AuthState.User(u.getName(), u.getPasswordHash(), List.copyOf(u.getRolesList())));
        }
        TreeMap<String, AuthRole> roles = new TreeMap<>();
        image.getRolesList().forEach(r -> roles.put(r.getName(), r));
        state = new AuthState(image.getEnabled(), image.getRevision(), users, roles, image.getTokenKey().toByteArray());
    }

    private static boolean sameRange(Permission p, ByteString key, ByteString rangeEnd) {
        return p.getKey().equals(key) && p.getRangeEnd().equals(rangeEnd);
    }

    private static AuthResponse response(AuthState s) {
        return AuthResponse.newBuilder().setAuthRevision(s.revision()).setEnabled(s.enabled()).build();
    }

    private static AuthUser user(AuthState.User u) {
        return AuthUser.newBuilder().setName(u.name()).addAllRoles(u.roles()).build();
    }

    private static AuthState.User requireUser(java.util.Map<String, AuthState.User> users, String name)
            throws AuthException {
        AuthState.User u = users.get(name);
        if (u == null) {
            throw invalid(Error.Reason.USER_NOT_FOUND, "user '" + name + "' does not exist");
        }
        return u;
    }

    private static AuthRole requireRole(java.util.Map<String, AuthRole> roles, String name) throws AuthException {
        AuthRole r = roles.get(name);
        if (r == null) {
            throw invalid(Error.Reason.ROLE_NOT_FOUND, "role '" + name + "' does not exist");
        }
        return r;
    }

    private static String checkName(String what, String name) throws AuthException {
        if (name.isEmpty() || name.length() > MAX_NAME_LENGTH || name.chars().anyMatch(c -> c <= ' ' || c == ':')) {
            throw invalid("a " + what + " name needs 1-" + MAX_NAME_LENGTH + " characters without spaces,"
                    + " control characters or ':' (got '" + name + "')");
        }
        return name;
    }

    private static String checkHash(String hash) throws AuthException {
        if (!hash.startsWith("$2")) {
            throw invalid("the command carries no password hash");
        }
        return hash;
    }

    private static AuthException invalid(String message) {
        return invalid(Error.Reason.REASON_UNSPECIFIED, message);
    }

    /** INVALID_ARGUMENT of a case a door tells apart: {@code reason} says which, the message is for humans. */
    private static AuthException invalid(Error.Reason reason, String message) {
        return new AuthException(Error.newBuilder().setCode(Error.Code.INVALID_ARGUMENT).setReason(reason)
                .setMessage(message).build());
    }
}
