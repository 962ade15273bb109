package io.github.distlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.DecoderException;
import org.junit.jupiter.api.Test;

/**
 * Frame boundaries of RESP2 and RESP3 values, however the stream is cut, without a
 * server.
 */
class RespFrameScannerTest {

    /**
     * One value of every RESP2 and RESP3 type, nested ones included; a bulk string may
     * contain CRLF.
     */
    private static final List<String> VALUES = List.of("+OK\r\n", "-ERR wrong\r\n", ":42\r\n", "$5\r\nhe\r\nl\r\n",
            "$-1\r\n", "*2\r\n$1\r\na\r\n*-1\r\n", "*-1\r\n", "_\r\n", ",3.14\r\n", "#t\r\n",
            "!21\r\nSYNTAX invalid syntax\r\n", "=15\r\ntxt:Some string\r\n",
            "(3492890328409238509324850943850943825024385\r\n", "%2\r\n+first\r\n:1\r\n+second\r\n*1\r\n#f\r\n",
            "~3\r\n+orange\r\n+apple\r\n_\r\n", ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
            "|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.1923\r\n*1\r\n:2039123\r\n",
            "*2\r\n|1\r\n+ttl\r\n:3600\r\n$1\r\nv\r\n:7\r\n"); // an attribute on a nested
                                                               // value

    @Test
    void everyResp2AndResp3ValueIsOneFrameAndNoProperPrefixIsComplete() {
        for (String value : VALUES) {
            byte[] bytes = value.getBytes(StandardCharsets.US_ASCII);
            for (int cut = 0; cut < bytes.length; cut++) {
                assertThat(RespFrameScanner.endOfValue(Unpooled.wrappedBuffer(bytes, 0, cut), 0))
                    .as("first %d bytes of %s", cut, value.replace("\r\n", "\\r\\n"))
                    .isEqualTo(-1);
            }
            assertThat(RespFrameScanner.endOfValue(Unpooled.wrappedBuffer(bytes), 0)).as(value).isEqualTo(bytes.length);
        }
    }

    @Test
    void framesFollowingEachOtherAreFoundOneByOne() {
        ByteBuf stream = Unpooled.copiedBuffer(String.join("", VALUES), StandardCharsets.US_ASCII);
        int index = 0;
        for (String value : VALUES) {
            int end = RespFrameScanner.endOfValue(stream, index);
            assertThat(stream.toString(index, end - index, StandardCharsets.US_ASCII)).isEqualTo(value);
            index = end;
        }
        assertThat(index).isEqualTo(stream.writerIndex());
    }

    @Test
    void valueTypeLooksThroughAnAttributeSoAPushIsRecognised() {
        assertThat(RespFrameScanner.valueType(ascii(">2\r\n+a\r\n+b\r\n"))).isEqualTo((byte) '>');
        assertThat(RespFrameScanner.valueType(ascii("|1\r\n+k\r\n+v\r\n>1\r\n+a\r\n"))).isEqualTo((byte) '>');
        assertThat(RespFrameScanner.valueType(ascii("|1\r\n+k\r\n+v\r\n:1\r\n"))).isEqualTo((byte) ':');
    }

    @Test
    void commandsAreParsedFromBulkStringArraysAndInlineLines() {
        ByteBuf multibulk = ascii("*5\r\n$3\r\nset\r\n$8\r\nlock:{a}\r\n$5\r\nto\r\nk\r\n$2\r\nNX\r\n$0\r\n\r\n");
        assertThat(RespFrameScanner.endOfCommand(multibulk, 0)).isEqualTo(multibulk.writerIndex());
        RedisCommand set = RespFrameScanner.parseCommand(multibulk);
        assertThat(set.name()).isEqualTo("SET");
        assertThat(set.argument(1)).isEqualTo("lock:{a}");
        assertThat(set.argv()).containsExactly("set", "lock:{a}", "to\r\nk", "NX", "");
        assertThat(set.argument(9)).isNull();

        ByteBuf inline = ascii("get  \tlock:{a}\r\nPING\r\n");
        int end = RespFrameScanner.endOfCommand(inline, 0);
        assertThat(RespFrameScanner.parseCommand(inline.slice(0, end)).argv()).containsExactly("get", "lock:{a}");
        assertThat(RespFrameScanner.endOfCommand(inline, end)).isEqualTo(inline.writerIndex());
        assertThat(RespFrameScanner.endOfCommand(ascii("PIN"), 0)).isEqualTo(-1);
    }

    @Test
    void emptyRequestsAreNotCommandsBecauseRedisSkipsThemWithoutAReply() {
        assertThat(RespFrameScanner.parseCommand(ascii("*0\r\n"))).isNull();
        assertThat(RespFrameScanner.parseCommand(ascii("\r\n"))).isNull();
        assertThat(RespFrameScanner.parseCommand(ascii("  \n"))).isNull();
    }

    @Test
    void bytesThatAreNotRespAreRejectedInsteadOfForwardedOutOfStep() {
        assertThatThrownBy(() -> RespFrameScanner.endOfValue(ascii("hello\r\n"), 0))
            .isInstanceOf(DecoderException.class)
            .hasMessageContaining("type byte");
        assertThatThrownBy(() -> RespFrameScanner.endOfValue(ascii("$?\r\n;4\r\nHell\r\n;0\r\n"), 0))
            .isInstanceOf(DecoderException.class)
            .hasMessageContaining("streamed");
        assertThatThrownBy(() -> RespFrameScanner.endOfValue(ascii("$2\r\nabXY"), 0))
            .isInstanceOf(DecoderException.class)
            .hasMessageContaining("CRLF");
    }

    private static ByteBuf ascii(String text) {
        return Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII);
    }

}
