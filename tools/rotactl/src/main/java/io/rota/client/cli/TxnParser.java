package io.rota.client.cli;

import io.rota.client.CompareOp;
import io.rota.client.Op;
import io.rota.client.Txn;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a transaction in etcdctl's non-interactive {@code txn} syntax: comparisons, a blank line, the
 * requests run when all of them hold, a blank line, the requests run otherwise.
 * <pre>
 * value("config/mode") = "fast"
 * mod("job/owner") &gt; "0"
 *
 * put job/owner "app-1"
 * get config/mode
 *
 * del job/owner
 * </pre>
 * A comparison is {@code TARGET("KEY") OP "VALUE"}: TARGET {@code value} ({@code val}), {@code version}
 * ({@code ver}), {@code create} ({@code c}) or {@code mod} ({@code m}); OP {@code =}, {@code !=}, {@code <}
 * or {@code >}; revisions and versions may also be written unquoted. A request is {@code put KEY VALUE},
 * {@code get KEY} or {@code del KEY}; a word with spaces or quotes is written in double quotes with Go
 * escapes ({@code \"}, {@code \\}, {@code \n}, {@code \t}) or in single quotes taken literally. Errors name
 * the line.
 */
final class TxnParser {

    /** Bounds what is read from stdin; the server refuses more than 128 operations per transaction anyway. */
    static final int MAX_LINES = 1_000;

    private static final Pattern COMPARE =
            Pattern.compile("(\\w+)\\(\\s*(\"(?:[^\"\\\\]|\\\\.)*\"|[^)]*?)\\s*\\)\\s*(==|!=|=|<|>)\\s*(.*)");

    /** A parsed transaction; {@link #applyTo} turns it into an SDK {@link Txn}. */
    record ParsedTxn(List<Comparison> compares, List<Request> success, List<Request> failure) {

        /** Adds the comparisons and both branches to {@code txn}. */
        Txn applyTo(Txn txn) {
            for (Comparison c : compares) {
                switch (c.target()) {
                    case VALUE -> txn.ifValue(c.key(), c.op(), c.value());
                    case VERSION -> txn.ifVersion(c.key(), c.op(), Long.parseLong(c.value()));
                    case CREATE -> txn.ifCreateRevision(c.key(), c.op(), Long.parseLong(c.value()));
                    case MOD -> txn.ifModRevision(c.key(), c.op(), Long.parseLong(c.value()));
                }
            }
            return txn.then(ops(success)).orElse(ops(failure));
        }

        private static Op[] ops(List<Request> requests) {
            return requests.stream().map(Request::op).toArray(Op[]::new);
        }
    }

    /** What a comparison looks at. */
    enum Target {
        VALUE, VERSION, CREATE, MOD
    }

    /** One comparison: {@code target(key) op value}; value is the decimal number for all but VALUE. */
    record Comparison(Target target, String key, CompareOp op, String value) {
    }

    /** One request of a branch. */
    record Request(String verb, String key, String value) {

        Op op() {
            return switch (verb) {
                case "put" -> Op.put(key, value);
                case "get" -> Op.get(key);
                default -> Op.delete(key);
            };
        }
    }

    /** Bad input: the message names the line and what is expected there. */
    static final class SyntaxError extends Exception {
        private static final long serialVersionUID = 1L;

        SyntaxError(int line, String message) {
            super("txn line " + line + ": " + message);
        }
    }

    private TxnParser() {
    }

    /** Parses a whole transaction text. */
    static ParsedTxn parse(String text) throws SyntaxError {
        return parse(new StringReader(text), null);
    }

    /**
     * Parses a transaction from {@code in} until its end or the blank line after the failure requests.
     *
     * @param in     the text
     * @param prompt where to ask for each section (interactive use), or null for none
     * @return the transaction
     * @throws SyntaxError naming the line of the first mistake
     */
    static ParsedTxn parse(Reader in, PrintWriter prompt) throws SyntaxError {
        BufferedReader reader = new BufferedReader(in);
        List<Comparison> compares = new ArrayList<>();
        List<Request> success = new ArrayList<>();
        List<Request> failure = new ArrayList<>();
        String[] prompts = {"compares:", "success requests (get, put, del):", "failure requests (get, put, del):"};
        int section = 0;
        int lineNo = 0;
        ask(prompt, prompts[0]);
        String line;
        while ((line = readLine(reader)) != null) {
            lineNo++;
            if (lineNo > MAX_LINES) {
                throw new SyntaxError(lineNo, "too long: a transaction has at most " + MAX_LINES + " lines");
            }
            if (line.isBlank()) {
                section++;
                if (section == 3) {
                    break;
                }
                ask(prompt, prompts[section]);
                continue;
            }
            switch (section) {
                case 0 -> compares.add(comparison(line.strip(), lineNo));
                case 1 -> success.add(request(line.strip(), lineNo));
                default -> failure.add(request(line.strip(), lineNo));
            }
        }
        return new ParsedTxn(List.copyOf(compares), List.copyOf(success), List.copyOf(failure));
    }

    private static void ask(PrintWriter prompt, String text) {
        if (prompt != null) {
            prompt.println(text);
            prompt.flush();
        }
    }

    private static String readLine(BufferedReader reader) {
        try {
            return reader.readLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Comparison comparison(String line, int lineNo) throws SyntaxError {
        Matcher m = COMPARE.matcher(line);
        if (!m.matches()) {
            if (line.startsWith("put ") || line.startsWith("get ") || line.startsWith("del ")) {
                throw new SyntaxError(lineNo, "expected a comparison, got a request '" + line
                        + "'; end the comparisons with a blank line first (with no comparison, start with a blank line)");
            }
            throw new SyntaxError(lineNo, "malformed comparison '" + line
                    + "'; expected TARGET(\"KEY\") OP \"VALUE\", e.g. value(\"k\") = \"v\" or mod(\"k\") > \"0\"");
        }
        Target target = switch (m.group(1).toLowerCase(Locale.ROOT)) {
            case "value", "val" -> Target.VALUE;
            case "version", "ver" -> Target.VERSION;
            case "create", "c" -> Target.CREATE;
            case "mod", "m" -> Target.MOD;
            case "lease" -> throw new SyntaxError(lineNo, "lease(...) comparisons are not supported by rotactl yet;"
                    + " compare value, version, create or mod");
            default -> throw new SyntaxError(lineNo, "unknown comparison target '" + m.group(1)
                    + "'; use value, version, create or mod");
        };
        List<String> keyWords = words(m.group(2).strip(), lineNo);
        if (keyWords.size() != 1 || !m.group(2).strip().startsWith("\"")) {
            throw new SyntaxError(lineNo, "the key must be one double-quoted string, e.g. " + m.group(1) + "(\"k\")");
        }
        CompareOp op = switch (m.group(3)) {
            case "=", "==" -> CompareOp.EQUAL;
            case "!=" -> CompareOp.NOT_EQUAL;
            case "<" -> CompareOp.LESS;
            default -> CompareOp.GREATER;
        };
        String rawValue = m.group(4).strip();
        List<String> valueWords = words(rawValue, lineNo);
        if (valueWords.size() != 1) {
            throw new SyntaxError(lineNo, "expected one value after '" + m.group(3) + "', e.g. \"v\"; got '" + rawValue + "'");
        }
        String value = valueWords.get(0);
        if (target == Target.VALUE) {
            if (!rawValue.startsWith("\"") && !rawValue.startsWith("'")) {
                throw new SyntaxError(lineNo, "the value must be quoted, e.g. value(\"k\") = \"" + value + "\"");
            }
        } else {
            try {
                if (Long.parseLong(value) < 0) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new SyntaxError(lineNo, m.group(1) + " compares with a non-negative number, got '" + value + "'");
            }
        }
        return new Comparison(target, keyWords.get(0), op, value);
    }

    static Request request(String line, int lineNo) throws SyntaxError {
        List<String> w = words(line, lineNo);
        String verb = w.get(0).toLowerCase(Locale.ROOT);
        for (String word : w.subList(1, w.size())) {
            if (word.startsWith("--")) {
                throw new SyntaxError(lineNo, "options such as '" + word + "' are not supported inside a txn;"
                        + " write put KEY VALUE, get KEY or del KEY");
            }
        }
        switch (verb) {
            case "put" -> {
                if (w.size() != 3) {
                    throw new SyntaxError(lineNo, "put takes KEY VALUE (quote a value with spaces), got '" + line + "'");
                }
                return new Request("put", nonEmptyKey(w.get(1), lineNo), w.get(2));
            }
            case "get", "del", "delete" -> {
                if (w.size() != 2) {
                    throw new SyntaxError(lineNo, verb + " takes one KEY, got '" + line + "'");
                }
                return new Request(verb.equals("get") ? "get" : "del", nonEmptyKey(w.get(1), lineNo), null);
            }
            default -> {
                if (COMPARE.matcher(line).matches()) {
                    throw new SyntaxError(lineNo, "a comparison '" + line + "' after the blank line that ended the"
                            + " comparisons; put all comparisons first");
                }
                throw new SyntaxError(lineNo, "unknown request '" + w.get(0) + "'; use put KEY VALUE, get KEY or del KEY");
            }
        }
    }

    private static String nonEmptyKey(String key, int lineNo) throws SyntaxError {
        if (key.isEmpty()) {
            throw new SyntaxError(lineNo, "empty key");
        }
        return key;
    }

    /** Splits a line into words: bare, "double-quoted with Go escapes", or 'single-quoted literally'. */
    static List<String> words(String line, int lineNo) throws SyntaxError {
        List<String> out = new ArrayList<>();
        int i = 0;
        int n = line.length();
        while (i < n) {
            char c = line.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
                continue;
            }
            StringBuilder word = new StringBuilder();
            if (c == '"') {
                i++;
                boolean closed = false;
                while (i < n) {
                    char d = line.charAt(i++);
                    if (d == '"') {
                        closed = true;
                        break;
                    }
                    if (d == '\\') {
                        if (i >= n) {
                            break;
                        }
                        char e = line.charAt(i++);
                        switch (e) {
                            case 'n' -> word.append('\n');
                            case 't' -> word.append('\t');
                            case 'r' -> word.append('\r');
                            case '"', '\\', '\'' -> word.append(e);
                            default -> throw new SyntaxError(lineNo, "unknown escape '\\" + e
                                    + "' in a double-quoted string (use \\\", \\\\, \\n, \\t or \\r)");
                        }
                    } else {
                        word.append(d);
                    }
                }
                if (!closed) {
                    throw new SyntaxError(lineNo, "unterminated double quote in '" + line + "'");
                }
            } else if (c == '\'') {
                int end = line.indexOf('\'', i + 1);
                if (end < 0) {
                    throw new SyntaxError(lineNo, "unterminated single quote in '" + line + "'");
                }
                word.append(line, i + 1, end);
                i = end + 1;
            } else {
                while (i < n && !Character.isWhitespace(line.charAt(i))) {
                    word.append(line.charAt(i++));
                }
            }
            out.add(word.toString());
        }
        return out;
    }
}
