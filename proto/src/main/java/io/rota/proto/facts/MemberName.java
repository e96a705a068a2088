package io.rota.proto.facts;

/**
 * A member's name ({@code --name}, {@code member add NAME}): 1–63 letters, digits, '_', '.' or '-', as a DNS
 * label allows and etcd's names usually are. The one check of the fact (issue 30): rotactl, the etcd door,
 * the leader's admission and apply ask it alike.
 */
public final class MemberName {

    public static final int MAX_LENGTH = 63;

    private MemberName() {
    }

    /**
     * Returns {@code name} when it is a member name.
     *
     * @throws BadValueException with a one-line message naming {@code field} and what is wrong
     */
    public static String check(String field, String name) {
        if (name == null || name.isEmpty()) {
            throw new BadValueException(field + " is empty; a member name is letters, digits, '_', '.' or '-'");
        }
        if (name.length() > MAX_LENGTH) {
            throw new BadValueException(field + " is " + name.length() + " characters long, over " + MAX_LENGTH);
        }
        if (!name.chars().allMatch(c -> c < 0x80 && (Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == '-'))) {
            throw new BadValueException(field + " '" + name + "' has a character other than letters, digits, '_', '.'"
                    + " or '-'");
        }
        return name;
    }
}
