package io.rota.server.watch;

import io.rota.server.auth.AuthState;

/**
 * Who created a watch and under which auth state the door checked it: when the member applies an auth change,
 * a watch whose state is older is canceled unless its user is root under the new one (issue 33, design SD14).
 *
 * @param user         the user the door named (null: auth was off, or nobody was named)
 * @param authRevision the auth revision the create was checked at, or {@link #AUTH_OFF}
 */
public record WatchAuth(String user, long authRevision) {

    /** The create was not checked: auth was off. */
    public static final long AUTH_OFF = -1;
    /** A watch made with auth off (or by the member itself, before it knows better). */
    public static final WatchAuth NONE = new WatchAuth(null, AUTH_OFF);

    /** The watch of {@code user} checked against {@code seen} ({@code seen} null or disabled: auth off). */
    public static WatchAuth of(String user, AuthState seen) {
        return seen == null || !seen.enabled() ? NONE : new WatchAuth(user, seen.revision());
    }

    /** Whether the watch may go on under {@code now}: auth off, the state it was checked at, or root now. */
    boolean stillAllowed(AuthState now) {
        return !now.enabled() || (authRevision != AUTH_OFF && authRevision == now.revision())
                || (user != null && now.isRoot(user));
    }
}
