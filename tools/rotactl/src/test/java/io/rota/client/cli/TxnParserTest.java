package io.rota.client.cli;

import io.rota.client.CompareOp;
import io.rota.client.cli.TxnParser.Comparison;
import io.rota.client.cli.TxnParser.ParsedTxn;
import io.rota.client.cli.TxnParser.Request;
import io.rota.client.cli.TxnParser.SyntaxError;
import io.rota.client.cli.TxnParser.Target;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** etcdctl's non-interactive txn syntax: what it accepts, and errors that name the line. */
class TxnParserTest {

    @Test
    void parsesComparesThenSuccessThenFailure() throws SyntaxError {
        ParsedTxn t = TxnParser.parse("""
                value("config/mode") = "fast"
                mod("job/owner") > "0"
                create("a") != "3"
                version("b") < 2

                put job/owner "app 1"
                get config/mode

                del job/owner
                delete 'a "b"'
                """);
        assertEquals(List.of(
                new Comparison(Target.VALUE, "config/mode", CompareOp.EQUAL, "fast"),
                new Comparison(Target.MOD, "job/owner", CompareOp.GREATER, "0"),
                new Comparison(Target.CREATE, "a", CompareOp.NOT_EQUAL, "3"),
                new Comparison(Target.VERSION, "b", CompareOp.LESS, "2")), t.compares());
        assertEquals(List.of(new Request("put", "job/owner", "app 1"), new Request("get", "config/mode", null)),
                t.success());
        assertEquals(List.of(new Request("del", "job/owner", null), new Request("del", "a \"b\"", null)), t.failure());
    }

    @Test
    void shortTargetNamesEscapesAndNoCompares() throws SyntaxError {
        ParsedTxn t = TxnParser.parse("""
                val("k") == "a \\"quoted\\" \\\\ line\\n"
                ver("k") = "1"
                c("k") = "0"
                m("k") = "7"
                """);
        assertEquals("a \"quoted\" \\ line\n", t.compares().get(0).value());
        assertEquals(List.of(Target.VALUE, Target.VERSION, Target.CREATE, Target.MOD),
                t.compares().stream().map(Comparison::target).toList());

        ParsedTxn noCompares = TxnParser.parse("\nput k v\n");
        assertTrue(noCompares.compares().isEmpty());
        assertEquals(List.of(new Request("put", "k", "v")), noCompares.success());
        assertTrue(noCompares.failure().isEmpty());
    }

    @Test
    void aKeyWithParenthesesAndAValueWithSpaces() throws SyntaxError {
        Comparison c = TxnParser.comparison("value(\"f(x)\") = \"a b ) c\"", 1);
        assertEquals(new Comparison(Target.VALUE, "f(x)", CompareOp.EQUAL, "a b ) c"), c);
    }

    @Test
    void stopsAfterTheFailureSectionAndPromptsInteractively() throws SyntaxError {
        StringWriter prompts = new StringWriter();
        ParsedTxn t = TxnParser.parse(new StringReader("value(\"k\") = \"v\"\n\nput k w\n\nget k\n\nignored garbage\n"),
                new PrintWriter(prompts));
        assertEquals(1, t.failure().size());
        assertEquals("compares:\nsuccess requests (get, put, del):\nfailure requests (get, put, del):\n",
                prompts.toString().replace(System.lineSeparator(), "\n"));
    }

    @Test
    void errorsNameTheLine() {
        assertError("value(\"k\") = \"v\"\n\nput k\n", "txn line 3: put takes KEY VALUE");
        assertError("value(\"k\") = v\n", "txn line 1: the value must be quoted");
        assertError("mod(\"k\") > \"x\"\n", "txn line 1: mod compares with a non-negative number, got 'x'");
        assertError("\n\nfrob k\n", "txn line 3: unknown request 'frob'");
        assertError("size(\"k\") = \"1\"\n", "txn line 1: unknown comparison target 'size'");
        assertError("lease(\"k\") = \"1\"\n", "txn line 1: lease(...) comparisons are not supported");
        assertError("value(k) = \"v\"\n", "txn line 1: the key must be one double-quoted string");
        assertError("value(\"k\") = \"v\n", "txn line 1: unterminated double quote");
        assertError("version(\"k\") = \"1\"\nput k v\n", "txn line 2: expected a comparison, got a request 'put k v'");
        assertError("\nput k v\nvalue(\"k\") = \"v\"\n", "txn line 3: a comparison");
        assertError("\nput k v --lease 5\n", "txn line 2: options such as '--lease' are not supported");
        assertError("\nget a b\n", "txn line 2: get takes one KEY");
        assertError("value(\"k\") = \"a\\q\"\n", "txn line 1: unknown escape '\\q'");
        assertError("garbage\n", "txn line 1: malformed comparison 'garbage'");
    }

    @Test
    void boundsTheInput() {
        assertError("\n" + "get k\n".repeat(TxnParser.MAX_LINES), "txn line " + (TxnParser.MAX_LINES + 1) + ": too long");
    }

    private static void assertError(String text, String expectedStart) {
        SyntaxError e = assertThrows(SyntaxError.class, () -> TxnParser.parse(text), text);
        assertTrue(e.getMessage().startsWith(expectedStart), e.getMessage());
    }
}
