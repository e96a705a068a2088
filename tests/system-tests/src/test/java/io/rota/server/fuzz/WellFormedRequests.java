package io.rota.server.fuzz;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Well-formed but wrong requests of any protobuf type, made by walking the message's descriptor: every field
 * the generator reaches gets a boundary value chosen by its name and type from a seeded {@link Random} — the
 * same seed gives the same requests. It knows nothing of a particular API: the vocabulary below is by field
 * name, so it serves Rota's client protocol ({@code rota.v1.Frame}'s request bodies), etcd's API
 * ({@code etcdserverpb}, v3lock, v3election) and whatever comes next, administration included.
 *
 * <p>What a field gets, by its name (case and underscores ignored):
 * <ul>
 *   <li>{@code *address*}: host:port strings an operator mistypes — {@code n4:71010}, {@code :0}, {@code h:},
 *       {@code h:-1}, {@code h:65536}, {@code h:00080}, {@code [::1]:7000}, unicode hosts, commas, spaces — or a
 *       valid-looking one (a name under {@code .invalid}, or one of the cluster's own addresses: duplicates);</li>
 *   <li>{@code *urls}: lists of such addresses as URLs ({@code http://n4:71010}, no scheme, two URLs, none);</li>
 *   <li>{@code name}, {@code user}, {@code role}: member, user and role names — empty, very long, control
 *       characters, unicode, {@code /}, commas, the cluster's own names (duplicates);</li>
 *   <li>{@code key}, {@code range_end}, {@code prefix}: keys under {@link #PREFIX} (unicode, {@code \0}, huge
 *       ones over the key limit, empty); a read or a compare may name any key;</li>
 *   <li>ids ({@code id}, {@code member_id}, {@code target_id}, ...): 0, 1..members (real), a little above
 *       (unknown, added, removed), huge, negative; lease, watch and client ids likewise;</li>
 *   <li>other numbers: 0, ±1, extremes, a little past the current state; enums: known values and unknown
 *       numbers; bools: either; repeated fields: none, one, several, duplicates; oneofs: one member or none;
 *       nested messages (a txn inside a txn's op) down to {@link #maxDepth}, sometimes past the server's
 *       limit of 32.</li>
 * </ul>
 * Values are real-looking some of the time (a JSON document, a name like {@code n4}, a port like 2380), since
 * a request that is wrong in one field only reaches deeper than one wrong everywhere.
 *
 * <p>The generator promises nothing about what a request does: a test that must keep some data or the
 * cluster's quorum shapes or refuses what it sends (see WellFormedFuzzProcessTest's guard), and reads
 * {@link #writeKey}'s promise: a write message's key is under {@link #PREFIX} or empty.
 */
public final class WellFormedRequests {

    /** Every key a generated write names is under this prefix or empty. */
    public static final String PREFIX = "wf/";
    private static final int KEY_SPACE = 500;
    /** Server defaults (Limits.defaults, ServerConfig): the key and value limits, the request limit. */
    private static final int MAX_KEY = 8 * 1024;
    private static final int MAX_VALUE = 1024 * 1024;
    private static final int MAX_REQUEST = 1_572_864;
    /** ServerConfig.FRAME_ENVELOPE_BYTES: a frame may be this much over the request limit. */
    private static final int ENVELOPE = 4_096;
    private static final long[] EXTREMES = {0, 1, -1, 2, Long.MAX_VALUE, Long.MIN_VALUE, Integer.MAX_VALUE,
            Integer.MIN_VALUE, Long.MAX_VALUE - 1, 1L << 40, -(1L << 40), 4_294_967_295L, 4_294_967_296L};
    /** host:port strings that are not a usable address: each is a mistake an operator can type. */
    static final String[] BAD_ADDRESSES = {"n4:71010", ":0", "h:", "h:-1", "h:65536", "h:99999999999", ":",
            "h", "n4", "h:0", "h:port", "h:80:81", "h: 80", " h:80", "h :80", "h:80 ", "h,i:80", "h:80,i:81",
            "::1:7000", "[::1]", "[::1", "[::1]:", "[::1]:70000", "http://h:80", "h:+80", "h:0x50", "h:8 0",
            "\u0000:80", "h\n:80", "h\t:80", "[]:80", "h:-0", "h:2147483648", "h:-2147483649"};
    /** host:port strings that parse: a member added here never comes up (RFC 6761 reserves .invalid). */
    static final String[] VALID_LOOKING = {"n4.invalid:2380", "new-member.invalid:7000", "[::1]:7000",
            "h.invalid:00080", "h\u00e9\u00f1.invalid:2380", "\u043d\u043e\u0434.invalid:2380", "127.0.0.1:1",
            "xn--bcher-kva.invalid:65535", "localhost:2380", "a.invalid:1"};
    private static final String[] SCHEMES = {"http://", "https://", "", "unix://", "HTTP://", "http:/", "ftp://"};
    private static final String[] NAMES = {"", "n4", "n 4", "n,4", "n4\n", "\u0000", "n/4", "n=4", "\u043d4",
            "\ud83d\ude80", "-", ".", "..", "root", "n4=127.0.0.1:2380", "a".repeat(256), "x".repeat(10_000),
            "N4", " n4", "n4 ", "\u202en4", "n\u00e94"};
    private static final String[] VALUES = {"", "v", "{\"host\":\"n4\",\"port\":2380}", "\u00e9t\u00e9", "\u0000",
            "\ud83d\ude80", "null", "true", "-1", "9223372036854775808"};

    private final Random random;
    private final int members;
    private final List<String> ownAddresses = new ArrayList<>();
    private final List<String> ownNames = new ArrayList<>();
    private int maxDepth = 6;

    /**
     * @param random  the seeded source of every choice
     * @param members the cluster size: ids 1..members are real members
     */
    public WellFormedRequests(Random random, int members) {
        this.random = random;
        this.members = members;
    }

    /**
     * Adds the cluster's own addresses and names, which requests then sometimes repeat (a duplicate URL, a
     * second member named like the first).
     *
     * @return this generator
     */
    public WellFormedRequests knowing(List<String> addresses, List<String> names) {
        ownAddresses.addAll(addresses);
        ownNames.addAll(names);
        return this;
    }

    /** The nesting depth past which messages are left empty (a txn in a txn ... is cut there), default 6. */
    public WellFormedRequests maxDepth(int depth) {
        this.maxDepth = depth;
        return this;
    }

    /** The random source, for callers that choose among request types with it (the same stream). */
    public Random random() {
        return random;
    }

    /**
     * A message of {@code prototype}'s type with every reachable field filled with a boundary value.
     *
     * @param <T> the message type
     */
    @SuppressWarnings("unchecked")
    public <T extends Message> T next(T prototype) {
        Message.Builder b = prototype.newBuilderForType();
        fill(b, 0);
        return (T) b.build();
    }

    /**
     * {@code builder} with one member of its oneof {@code oneof} set to a generated message (the request body
     * of an envelope such as Rota's Frame), choosing among {@code choices}, field names of that oneof.
     *
     * @return the chosen field's name
     */
    public String fillOneof(Message.Builder builder, String oneof, List<String> choices) {
        Descriptor d = builder.getDescriptorForType();
        FieldDescriptor f = d.findFieldByName(choices.get(random.nextInt(choices.size())));
        if (f == null || f.getContainingOneof() == null || !f.getContainingOneof().getName().equals(oneof)) {
            throw new IllegalArgumentException("not a member of " + oneof + ": " + f);
        }
        Message.Builder body = builder.newBuilderForField(f);
        fill(body, 1);
        builder.setField(f, body.build());
        return f.getName();
    }

    private void fill(Message.Builder b, int depth) {
        Descriptor d = b.getDescriptorForType();
        // One member of each oneof (or none, one time in eight): the others stay unset.
        List<FieldDescriptor> chosen = new ArrayList<>();
        for (OneofDescriptor o : d.getRealOneofs()) {
            if (random.nextInt(8) != 0) {
                chosen.add(o.getField(random.nextInt(o.getFieldCount())));
            }
        }
        for (FieldDescriptor f : d.getFields()) {
            if (f.getRealContainingOneof() != null && !chosen.contains(f)) {
                continue;
            }
            if (f.getRealContainingOneof() == null && random.nextInt(5) == 0) {
                continue;   // left at its default: one wrong field in a request otherwise right reaches further
            }
            if (f.isMapField()) {
                continue;
            }
            if (f.isRepeated()) {
                int n = repeatCount(f, depth);
                Object first = null;
                for (int i = 0; i < n; i++) {
                    // Duplicates: the same element again (a URL twice, a key twice in one txn).
                    Object v = first != null && random.nextInt(4) == 0 ? first : value(b, f, depth);
                    first = first == null ? v : first;
                    b.addRepeatedField(f, v);
                }
            } else {
                b.setField(f, value(b, f, depth));
            }
        }
    }

    private int repeatCount(FieldDescriptor f, int depth) {
        if (depth >= maxDepth) {
            return 0;
        }
        int roll = random.nextInt(100);
        if (f.getType() == FieldDescriptor.Type.MESSAGE && depth > 1) {
            return roll < 50 ? 0 : 1;   // nested txns: deep rather than wide
        }
        if (roll < 25) {
            return 0;
        }
        if (roll < 70) {
            return 1;
        }
        if (roll < 97) {
            return 2 + random.nextInt(4);
        }
        return f.getType() == FieldDescriptor.Type.MESSAGE ? 129 + random.nextInt(20) : 20 + random.nextInt(200);
    }

    private Object value(Message.Builder parent, FieldDescriptor f, int depth) {
        String name = f.getName().toLowerCase(Locale.ROOT).replace("_", "");
        String owner = parent.getDescriptorForType().getName();
        return switch (f.getJavaType()) {
            case MESSAGE -> {
                Message.Builder child = parent.newBuilderForField(f);
                if (depth < maxDepth || random.nextInt(4) == 0 && depth < 40) {
                    fill(child, depth + 1);
                }
                yield child.build();
            }
            case ENUM -> enumValue(f.getEnumType());
            case BOOLEAN -> random.nextBoolean();
            case STRING -> string(name, owner);
            case BYTE_STRING -> bytes(name, owner);
            case INT, LONG -> {
                long v = number(name, owner);
                yield f.getJavaType() == FieldDescriptor.JavaType.INT ? (Object) (int) v : (Object) v;
            }
            case FLOAT -> (float) number(name, owner);
            case DOUBLE -> (double) number(name, owner);
        };
    }

    private Object enumValue(EnumDescriptor e) {
        if (random.nextInt(6) == 0) {
            int unknown = random.nextBoolean() ? e.getValues().size() + random.nextInt(5) : -1 - random.nextInt(3);
            return e.findValueByNumberCreatingIfUnknown(unknown);
        }
        return e.getValues().get(random.nextInt(e.getValues().size()));
    }

    private String string(String name, String owner) {
        if (name.contains("address")) {
            return address();
        }
        if (name.endsWith("urls") || name.endsWith("url")) {
            return url();
        }
        if (name.equals("name") || name.equals("user") || name.equals("role")) {
            return name();
        }
        if (name.contains("password")) {
            return random.nextInt(3) == 0 ? name() : text(random.nextInt(4) == 0 ? 73 + random.nextInt(5000) : 8);
        }
        if (name.contains("token")) {
            return random.nextBoolean() ? "" : text(random.nextInt(100));
        }
        return random.nextInt(3) == 0 ? name() : text(random.nextInt(40));
    }

    private ByteString bytes(String name, String owner) {
        if (name.equals("key") || name.equals("rangeend") || name.equals("prefix")
                || (name.equals("name") && (owner.equals("LockRequest") || owner.equals("CampaignRequest")
                || owner.equals("LeaderRequest") || owner.equals("LeaderKey")))) {
            boolean write = WRITES.contains(owner) && !name.equals("rangeend");
            return write ? writeKey() : name.equals("rangeend") ? rangeEnd() : anyKey();
        }
        if (name.equals("value") || name.equals("data") || name.equals("chunk")) {
            return value();
        }
        if (name.equals("name")) {
            return ByteString.copyFromUtf8(name());
        }
        return ByteString.copyFrom(randomBytes(random.nextInt(32)));
    }

    /** Messages whose key is written (or deleted): their keys stay under {@link #PREFIX} or are empty. */
    private static final java.util.Set<String> WRITES = java.util.Set.of("PutRequest", "DeleteRangeRequest",
            "UnlockRequest", "LockRequest", "CampaignRequest", "LeaderKey", "ProclaimRequest", "ResignRequest");

    private long number(String name, String owner) {
        boolean memberId = owner.startsWith("Member") || owner.startsWith("MoveLeader") || owner.startsWith("Alarm")
                || owner.equals("PublishMemberRequest") || owner.equals("Member") || name.equals("memberid")
                || name.equals("targetid");
        if (memberId && (name.equals("id") || name.endsWith("id"))) {
            return memberId();
        }
        if (name.equals("id") || name.endsWith("id") || name.equals("lease")) {
            return random.nextInt(3) == 0 ? 1 + random.nextInt(100) : extreme();   // small ids: some exist
        }
        if (name.contains("revision") || name.equals("version") || name.equals("rev")) {
            return random.nextInt(3) == 0 ? random.nextInt(2_000) : extreme();
        }
        if (name.equals("ttl")) {
            return random.nextInt(3) == 0 ? random.nextInt(120) - 10 : extreme();
        }
        if (name.equals("limit")) {
            return random.nextInt(3) == 0 ? random.nextInt(10) : extreme();
        }
        return random.nextInt(4) == 0 ? random.nextInt(10) : extreme();
    }

    /** 0, a real member, one a little above (added, removed or unknown), or an absurd id. */
    public long memberId() {
        int roll = random.nextInt(10);
        if (roll < 2) {
            return 0;
        }
        if (roll < 5) {
            return 1 + random.nextInt(members);
        }
        if (roll < 8) {
            return members + 1 + random.nextInt(20);
        }
        return extreme();
    }

    /** A host:port an operator might type: mostly wrong, sometimes valid-looking, sometimes the cluster's own. */
    public String address() {
        int roll = random.nextInt(100);
        if (roll < 60) {
            return BAD_ADDRESSES[random.nextInt(BAD_ADDRESSES.length)];
        }
        if (roll < 65) {
            return "";
        }
        if (roll < 70) {
            return text(1 + random.nextInt(30));
        }
        if (roll < 75 && !ownAddresses.isEmpty()) {
            return ownAddresses.get(random.nextInt(ownAddresses.size()));
        }
        if (roll < 77) {
            return "h".repeat(300 + random.nextInt(5000)) + ":2380";
        }
        return VALID_LOOKING[random.nextInt(VALID_LOOKING.length)];
    }

    /** An address as a URL: with a scheme or without, the scheme wrong or right. */
    public String url() {
        String a = address();
        return random.nextInt(8) == 0 ? a : SCHEMES[random.nextInt(SCHEMES.length)] + a;
    }

    /** A member, user or role name: empty, long, control characters, unicode, or the cluster's own. */
    public String name() {
        if (!ownNames.isEmpty() && random.nextInt(6) == 0) {
            return ownNames.get(random.nextInt(ownNames.size()));
        }
        return random.nextInt(5) == 0 ? text(random.nextInt(20)) : NAMES[random.nextInt(NAMES.length)];
    }

    /** A key a write may name: under {@link #PREFIX} (unicode, control characters, over the limit), or empty. */
    public ByteString writeKey() {
        int roll = random.nextInt(100);
        ByteString prefix = ByteString.copyFromUtf8(PREFIX);
        if (roll < 5) {
            return ByteString.EMPTY;
        }
        if (roll < 7) {
            return prefix.concat(ByteString.copyFrom(randomBytes(MAX_KEY + random.nextInt(3) - 1)));
        }
        if (roll < 15) {
            String[] odd = {"\u043a\u043b\u044e\u0447", "\ud83d\ude80", "\u0000", "a\u0000b", "/", "//", " ", "\u00e9",
                    "..", "%2F", "\uFEFF"};
            return prefix.concat(ByteString.copyFromUtf8(odd[random.nextInt(odd.length)]));
        }
        if (roll < 20) {
            return prefix.concat(ByteString.copyFrom(randomBytes(1 + random.nextInt(16))));
        }
        return prefix.concat(ByteString.copyFromUtf8(Integer.toString(random.nextInt(KEY_SPACE))));
    }

    /** A key a read, watch or compare may name: anything, including the test's own and the empty key. */
    public ByteString anyKey() {
        int roll = random.nextInt(100);
        if (roll < 10) {
            return ByteString.EMPTY;
        }
        if (roll < 15) {
            return ByteString.copyFrom(new byte[] {0});
        }
        if (roll < 25) {
            return ByteString.copyFrom(randomBytes(1 + random.nextInt(16)));
        }
        return writeKey();
    }

    /** A range end: none, {@code \0} (to the end), one before the key, the prefix's end, or any key. */
    public ByteString rangeEnd() {
        return switch (random.nextInt(6)) {
            case 0 -> ByteString.EMPTY;
            case 1 -> ByteString.copyFrom(new byte[] {0});
            case 2 -> ByteString.copyFromUtf8("a");
            case 3 -> ByteString.copyFromUtf8("wf0");
            default -> anyKey();
        };
    }

    /** A value: empty, short, real-looking, unicode, or just over the value or request limit (refused). */
    public ByteString value() {
        int roll = random.nextInt(1000);
        if (roll < 2) {
            return ByteString.copyFrom(new byte[MAX_VALUE + 1]);
        }
        if (roll < 3) {
            return ByteString.copyFrom(new byte[MAX_REQUEST + ENVELOPE + 1]);   // past what the decoder takes
        }
        if (roll < 30) {
            return ByteString.copyFrom(randomBytes(1024 + random.nextInt(32 * 1024)));
        }
        if (roll < 500) {
            return ByteString.copyFromUtf8(VALUES[random.nextInt(VALUES.length)]);
        }
        return ByteString.copyFrom(randomBytes(random.nextInt(65)));
    }

    private long extreme() {
        return random.nextBoolean() ? EXTREMES[random.nextInt(EXTREMES.length)] : random.nextLong();
    }

    /** Printable ASCII and, one time in four, unicode (accents, Cyrillic, an emoji's surrogate pair). */
    public String text(int n) {
        StringBuilder s = new StringBuilder(n);
        boolean unicode = random.nextInt(4) == 0;
        for (int i = 0; i < n; i++) {
            if (unicode && random.nextInt(3) == 0) {
                s.append(random.nextBoolean() ? (char) (0xC0 + random.nextInt(0x180)) : (char) (0x400 + random.nextInt(0x50)));
            } else {
                s.append((char) (32 + random.nextInt(95)));
            }
        }
        return s.toString();
    }

    public byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /**
     * Whether {@code hostPort} looks like a usable address to a careful reader: a non-empty host without
     * spaces, commas or control characters (a bracketed IPv6 literal, or a name), a colon, and a decimal port
     * in 1..65535 (leading zeros allowed, as the JDK allows them). A test uses it to keep mistakes that a
     * server could take for a real address away from a real member; the server may refuse more.
     */
    public static boolean validLooking(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            return false;
        }
        String host = hostPort.substring(0, colon);
        String port = hostPort.substring(colon + 1);
        if (!port.chars().allMatch(Character::isDigit) || port.length() > 9) {
            return false;
        }
        int p = Integer.parseInt(port);
        if (p < 1 || p > 65535) {
            return false;
        }
        if (host.startsWith("[")) {
            return host.endsWith("]") && host.length() > 2 && host.indexOf(':') > 0;
        }
        return host.codePoints().noneMatch(c -> c <= ' ' || c == ',' || c == ':' || c == '/' || c == '['
                || c == ']' || c == 0x7F || Character.isISOControl(c) || Character.isWhitespace(c));
    }

    /**
     * Whether {@code hostPort} could be taken for an address by a lenient parser: {@link #validLooking} or
     * anything with a digit after its last colon. A test sends only addresses this says no to where an
     * accepted address would do harm (the peer address of a real member).
     */
    public static boolean plausible(String hostPort) {
        if (validLooking(hostPort)) {
            return true;
        }
        String t = hostPort.strip();
        int colon = t.lastIndexOf(':');
        if (colon < 0) {
            return false;
        }
        String port = t.substring(colon + 1).strip();
        try {
            int p = port.startsWith("+") ? Integer.parseInt(port.substring(1)) : Integer.parseInt(port);
            return p >= 1 && p <= 65535 && colon > 0;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    static String utf8(ByteString b) {
        return new String(b.toByteArray(), StandardCharsets.UTF_8);
    }
}
