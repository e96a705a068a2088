package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.AuthDisableRequest;
import io.rota.etcd.api.AuthDisableResponse;
import io.rota.etcd.api.AuthEnableRequest;
import io.rota.etcd.api.AuthEnableResponse;
import io.rota.etcd.api.AuthGrpc;
import io.rota.etcd.api.AuthRoleAddRequest;
import io.rota.etcd.api.AuthRoleAddResponse;
import io.rota.etcd.api.AuthRoleDeleteRequest;
import io.rota.etcd.api.AuthRoleDeleteResponse;
import io.rota.etcd.api.AuthRoleGetRequest;
import io.rota.etcd.api.AuthRoleGetResponse;
import io.rota.etcd.api.AuthRoleGrantPermissionRequest;
import io.rota.etcd.api.AuthRoleGrantPermissionResponse;
import io.rota.etcd.api.AuthRoleListRequest;
import io.rota.etcd.api.AuthRoleListResponse;
import io.rota.etcd.api.AuthRoleRevokePermissionRequest;
import io.rota.etcd.api.AuthRoleRevokePermissionResponse;
import io.rota.etcd.api.AuthStatusRequest;
import io.rota.etcd.api.AuthStatusResponse;
import io.rota.etcd.api.AuthUserAddRequest;
import io.rota.etcd.api.AuthUserAddResponse;
import io.rota.etcd.api.AuthUserChangePasswordRequest;
import io.rota.etcd.api.AuthUserChangePasswordResponse;
import io.rota.etcd.api.AuthUserDeleteRequest;
import io.rota.etcd.api.AuthUserDeleteResponse;
import io.rota.etcd.api.AuthUserGetRequest;
import io.rota.etcd.api.AuthUserGetResponse;
import io.rota.etcd.api.AuthUserGrantRoleRequest;
import io.rota.etcd.api.AuthUserGrantRoleResponse;
import io.rota.etcd.api.AuthUserListRequest;
import io.rota.etcd.api.AuthUserListResponse;
import io.rota.etcd.api.AuthUserRevokeRoleRequest;
import io.rota.etcd.api.AuthUserRevokeRoleResponse;
import io.rota.etcd.api.AuthenticateRequest;
import io.rota.etcd.api.AuthenticateResponse;
import io.rota.etcd.api.Permission;
import io.rota.etcd.api.ResponseHeader;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthResponse;
import io.rota.proto.AuthRole;
import io.rota.proto.AuthUser;
import io.rota.proto.Frame;
import io.rota.server.auth.AuthException;
import io.rota.server.auth.AuthState;

import java.util.function.Function;

/**
 * etcd's Auth service over Rota's native users and roles: each call becomes the native {@link AuthRequest}
 * and takes the native path (the caller must be root while auth is enabled; a change is proposed by the
 * leader, which hashes passwords with bcrypt on its auth worker; reads are linearizable). Authenticate is
 * answered by this member, as the native port does: it checks the password against the replicated hash and
 * returns the native HMAC token, which etcd clients then send in the metadata key {@code token} and every
 * member verifies. Refusals use etcd's messages (rpctypes), which clients and scripts match on.
 */
final class AuthService extends AuthGrpc.AuthImplBase {

    static final String ROLE_EMPTY = "etcdserver: role name is empty";

    private final Calls calls;

    AuthService(Calls calls) {
        this.calls = calls;
    }

    @Override
    public void authenticate(AuthenticateRequest request, StreamObserver<AuthenticateResponse> out) {
        if (request.getName().isEmpty()) {
            out.onError(EtcdErrors.invalid(EtcdCallers.USER_EMPTY));
            return;
        }
        // The login limiter counts failures per user name and per client address (the host, whatever its port).
        calls.router.gate().authenticate(request.getName(), request.getPassword(), EtcdCallers.Caller.current().remote())
                .whenCompleteAsync((r, e) -> {
                    if (e == null) {
                        out.onNext(AuthenticateResponse.newBuilder().setHeader(ResponseHeader.newBuilder()
                                .setClusterId(calls.clusterId)).setToken(r.getToken()).build());
                        out.onCompleted();
                        return;
                    }
                    Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                            ? e.getCause() : e;
                    out.onError(cause instanceof AuthException a ? EtcdErrors.of(a.error()) : EtcdErrors.internal(cause));
                }, calls.responders);
    }

    @Override
    public void authEnable(AuthEnableRequest request, StreamObserver<AuthEnableResponse> out) {
        call(AuthRequest.newBuilder().setEnable(io.rota.proto.AuthEnableRequest.getDefaultInstance()),
                r -> AuthEnableResponse.newBuilder().setHeader(header(r)).build(), out);
    }

    @Override
    public void authDisable(AuthDisableRequest request, StreamObserver<AuthDisableResponse> out) {
        call(AuthRequest.newBuilder().setDisable(io.rota.proto.AuthDisableRequest.getDefaultInstance()),
                r -> AuthDisableResponse.newBuilder().setHeader(header(r)).build(), out);
    }

    @Override
    public void authStatus(AuthStatusRequest request, StreamObserver<AuthStatusResponse> out) {
        call(AuthRequest.newBuilder().setStatus(io.rota.proto.AuthStatusRequest.getDefaultInstance()),
                r -> AuthStatusResponse.newBuilder().setHeader(header(r)).setEnabled(r.getEnabled())
                        .setAuthRevision(r.getAuthRevision()).build(), out);
    }

    @Override
    public void userAdd(AuthUserAddRequest request, StreamObserver<AuthUserAddResponse> out) {
        if (request.getName().isEmpty()) {
            out.onError(EtcdErrors.invalid(EtcdCallers.USER_EMPTY));
        } else if (request.getOptions().getNoPassword()) {
            out.onError(EtcdErrors.invalid("etcdserver: Rota's users need a password (no_password is not supported;"
                    + " a client certificate whose CN names a user with a password also logs it in)"));
        } else if (!request.getHashedPassword().isEmpty()) {
            out.onError(EtcdErrors.invalid("etcdserver: Rota's leader hashes passwords: send the password, not"
                    + " hashedPassword"));
        } else {
            call(AuthRequest.newBuilder().setUserAdd(io.rota.proto.AuthUserAddRequest.newBuilder()
                            .setName(request.getName()).setPassword(request.getPassword())),
                    r -> AuthUserAddResponse.newBuilder().setHeader(header(r)).build(), out);
        }
    }

    @Override
    public void userGet(AuthUserGetRequest request, StreamObserver<AuthUserGetResponse> out) {
        call(AuthRequest.newBuilder().setUserGet(io.rota.proto.AuthUserGetRequest.newBuilder().setName(request.getName())),
                r -> AuthUserGetResponse.newBuilder().setHeader(header(r))
                        .addAllRoles(r.getUsersCount() == 0 ? java.util.List.of() : r.getUsers(0).getRolesList()).build(),
                out);
    }

    @Override
    public void userList(AuthUserListRequest request, StreamObserver<AuthUserListResponse> out) {
        call(AuthRequest.newBuilder().setUserList(io.rota.proto.AuthUserListRequest.getDefaultInstance()), r -> {
            AuthUserListResponse.Builder b = AuthUserListResponse.newBuilder().setHeader(header(r));
            r.getUsersList().stream().map(AuthUser::getName).forEach(b::addUsers);
            return b.build();
        }, out);
    }

    @Override
    public void userDelete(AuthUserDeleteRequest request, StreamObserver<AuthUserDeleteResponse> out) {
        if (request.getName().isEmpty()) {
            out.onError(EtcdErrors.invalid(EtcdCallers.USER_EMPTY));
            return;
        }
        call(AuthRequest.newBuilder().setUserDelete(io.rota.proto.AuthUserDeleteRequest.newBuilder()
                .setName(request.getName())), r -> AuthUserDeleteResponse.newBuilder().setHeader(header(r)).build(), out);
    }

    @Override
    public void userChangePassword(AuthUserChangePasswordRequest request,
                                   StreamObserver<AuthUserChangePasswordResponse> out) {
        if (request.getName().isEmpty()) {
            out.onError(EtcdErrors.invalid(EtcdCallers.USER_EMPTY));
        } else if (!request.getHashedPassword().isEmpty()) {
            out.onError(EtcdErrors.invalid("etcdserver: Rota's leader hashes passwords: send the password, not"
                    + " hashedPassword"));
        } else {
            call(AuthRequest.newBuilder().setUserChangePassword(io.rota.proto.AuthUserChangePasswordRequest.newBuilder()
                            .setName(request.getName()).setPassword(request.getPassword())),
                    r -> AuthUserChangePasswordResponse.newBuilder().setHeader(header(r)).build(), out);
        }
    }

    @Override
    public void userGrantRole(AuthUserGrantRoleRequest request, StreamObserver<AuthUserGrantRoleResponse> out) {
        if (request.getUser().isEmpty()) {
            out.onError(EtcdErrors.invalid(EtcdCallers.USER_EMPTY));
            return;
        }
        call(AuthRequest.newBuilder().setUserGrantRole(io.rota.proto.AuthUserGrantRoleRequest.newBuilder()
                        .setUser(request.getUser()).setRole(request.getRole())),
                r -> AuthUserGrantRoleResponse.newBuilder().setHeader(header(r)).build(), out);
    }

    @Override
    public void userRevokeRole(AuthUserRevokeRoleRequest request, StreamObserver<AuthUserRevokeRoleResponse> out) {
        if (request.getName().isEmpty()) {
            out.onError(EtcdErrors.invalid(EtcdCallers.USER_EMPTY));
            return;
        }
        call(AuthRequest.newBuilder().setUserRevokeRole(io.rota.proto.AuthUserRevokeRoleRequest.newBuilder()
                        .setName(request.getName()).setRole(request.getRole())),
                r -> AuthUserRevokeRoleResponse.newBuilder().setHeader(header(r)).build(), out);
    }

    @Override
    public void roleAdd(AuthRoleAddRequest request, StreamObserver<AuthRoleAddResponse> out) {
        if (request.getName().isEmpty()) {
            out.onError(EtcdErrors.invalid(ROLE_EMPTY));
            return;
        }
        call(AuthRequest.newBuilder().setRoleAdd(io.rota.proto.AuthRoleAddRequest.newBuilder().setName(request.getName())),
                r -> AuthRoleAddResponse.newBuilder().setHeader(header(r)).build(), out);
    }

    /** The root role holds every key, shown as etcd shows it: READWRITE from the empty key on. */
    @Override
    public void roleGet(AuthRoleGetRequest request, StreamObserver<AuthRoleGetResponse> out) {
        call(AuthRequest.newBuilder().setRoleGet(io.rota.proto.AuthRoleGetRequest.newBuilder().setRole(request.getRole())),
                r -> {
                    AuthRoleGetResponse.Builder b = AuthRoleGetResponse.newBuilder().setHeader(header(r));
                    if (request.getRole().equals(AuthState.ROOT)) {
                        b.addPerm(Permission.newBuilder().setPermType(Permission.Type.READWRITE)
                                .setRangeEnd(ByteString.copyFrom(new byte[] {0})));
                    } else if (r.getRolesCount() > 0) {
                        for (io.rota.proto.Permission p : r.getRoles(0).getPermissionsList()) {
                            b.addPerm(EtcdCodec.recode(p, Permission.getDefaultInstance()));
                        }
                    }
                    return b.build();
                }, out);
    }

    @Override
    public void roleList(AuthRoleListRequest request, StreamObserver<AuthRoleListResponse> out) {
        call(AuthRequest.newBuilder().setRoleList(io.rota.proto.AuthRoleListRequest.getDefaultInstance()), r -> {
            AuthRoleListResponse.Builder b = AuthRoleListResponse.newBuilder().setHeader(header(r));
            r.getRolesList().stream().map(AuthRole::getName).sorted().forEach(b::addRoles);
            return b.build();
        }, out);
    }

    @Override
    public void roleDelete(AuthRoleDeleteRequest request, StreamObserver<AuthRoleDeleteResponse> out) {
        if (request.getRole().isEmpty()) {
            out.onError(EtcdErrors.invalid(ROLE_EMPTY));
            return;
        }
        call(AuthRequest.newBuilder().setRoleDelete(io.rota.proto.AuthRoleDeleteRequest.newBuilder()
                .setRole(request.getRole())), r -> AuthRoleDeleteResponse.newBuilder().setHeader(header(r)).build(), out);
    }

    @Override
    public void roleGrantPermission(AuthRoleGrantPermissionRequest request,
                                    StreamObserver<AuthRoleGrantPermissionResponse> out) {
        if (request.getName().isEmpty()) {
            out.onError(EtcdErrors.invalid(ROLE_EMPTY));
            return;
        }
        // authpb.Permission and Rota's Permission have the same fields and numbers.
        call(AuthRequest.newBuilder().setRoleGrantPermission(io.rota.proto.AuthRoleGrantPermissionRequest.newBuilder()
                        .setName(request.getName())
                        .setPerm(EtcdCodec.recode(request.getPerm(), io.rota.proto.Permission.getDefaultInstance()))),
                r -> AuthRoleGrantPermissionResponse.newBuilder().setHeader(header(r)).build(), out);
    }

    @Override
    public void roleRevokePermission(AuthRoleRevokePermissionRequest request,
                                     StreamObserver<AuthRoleRevokePermissionResponse> out) {
        if (request.getRole().isEmpty()) {
            out.onError(EtcdErrors.invalid(ROLE_EMPTY));
            return;
        }
        call(AuthRequest.newBuilder().setRoleRevokePermission(io.rota.proto.AuthRoleRevokePermissionRequest.newBuilder()
                        .setRole(request.getRole()).setKey(request.getKey()).setRangeEnd(request.getRangeEnd())),
                r -> AuthRoleRevokePermissionResponse.newBuilder().setHeader(header(r)).build(), out);
    }

    private ResponseHeader header(AuthResponse r) {
        return EtcdCodec.header(r.getHeader(), calls.clusterId);
    }

    /**
     * One native auth call through {@link Calls#unary} (so the caller is checked); {@link EtcdErrors} answers the
     * auth store's refusals in etcd's words, by their reason.
     */
    private <R> void call(AuthRequest.Builder request, Function<AuthResponse, R> answer, StreamObserver<R> out) {
        calls.unary(() -> Frame.newBuilder().setAuthRequest(request).build(), f -> answer.apply(f.getAuthResponse()),
                out);
    }
}
