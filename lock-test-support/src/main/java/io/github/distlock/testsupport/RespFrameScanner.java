package io.github.distlock.testsupport;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.DecoderException;

/**
 * Finds where one RESP value ends in a byte stream, without building it, so that
 * {@link RedisFaultProxy} can forward every frame byte for byte and still act per command
 * and per reply.
 *
 * <p>
 * Understands RESP2 ({@code + - : $ *}) and RESP3 ({@code _ , # ! = ( % ~ > |}). An
 * attribute ({@code |}) belongs to the value that follows it, so both form one frame.
 * Streamed strings and aggregates ({@code $?}, {@code *?}) are rejected: Redis never
 * sends them. Client requests are arrays of bulk strings or inline commands (one line of
 * words, as typed in telnet).
 *
 * <p>
 * All methods read absolute indexes and leave the buffer's reader index alone.
 */
final class RespFrameScanner {

    private RespFrameScanner() {
    }

    /**
     * The index just past the value that starts at {@code index}, or -1 when the buffer
     * does not hold all of it yet.
     * @throws DecoderException when the bytes are not RESP
     */
    static int endOfValue(ByteBuf buf, int index) {
        if (index >= buf.writerIndex()) {
            return -1;
        }
        byte type = buf.getByte(index);
        int lineEnd = endOfLine(buf, index + 1);
        if (lineEnd < 0) {
            return -1;
        }
        int next = lineEnd + 2;
        switch (type) {
            case '+', '-', ':', '_', ',', '#', '(':
                return next;
            case '$', '!', '=': {
                long length = parseLength(buf, index, lineEnd);
                if (length < 0) {
                    return next; // RESP2 null bulk string
                }
                long end = next + length + 2;
                if (end > buf.writerIndex()) {
                    return -1;
                }
                if (buf.getByte((int) end - 2) != '\r' || buf.getByte((int) end - 1) != '\n') {
                    throw new DecoderException("bulk string of " + length + " bytes not followed by CRLF");
                }
                return (int) end;
            }
            case '*', '~', '>':
                return endOfElements(buf, next, parseLength(buf, index, lineEnd));
            case '%':
                return endOfElements(buf, next, 2 * parseLength(buf, index, lineEnd));
            case '|': {
                // The attribute map is metadata about the value right after it: one frame
                // for both.
                int afterAttribute = endOfElements(buf, next, 2 * parseLength(buf, index, lineEnd));
                return afterAttribute < 0 ? -1 : endOfValue(buf, afterAttribute);
            }
            default:
                throw new DecoderException("not a RESP value: type byte 0x" + Integer.toHexString(type & 0xff)
                        + " at stream offset " + index);
        }
    }

    /**
     * The index just past the client request that starts at {@code index} (an array of
     * bulk strings, or an inline command ending with LF), or -1 when incomplete.
     */
    static int endOfCommand(ByteBuf buf, int index) {
        if (index >= buf.writerIndex()) {
            return -1;
        }
        if (buf.getByte(index) == '*') {
            return endOfValue(buf, index);
        }
        int lf = buf.indexOf(index, buf.writerIndex(), (byte) '\n');
        return lf < 0 ? -1 : lf + 1;
    }

    /**
     * The type byte of a complete value, looking through a leading attribute, e.g.
     * {@code '>'} for a push message.
     */
    static byte valueType(ByteBuf frame) {
        int index = frame.readerIndex();
        while (frame.getByte(index) == '|') {
            int lineEnd = endOfLine(frame, index + 1);
            index = endOfElements(frame, lineEnd + 2, 2 * parseLength(frame, index, lineEnd));
        }
        return frame.getByte(index);
    }

    /**
     * The words of one complete client request, or null for an empty one ({@code *0}, a
     * blank line), which Redis skips without a reply. Inline commands are split on spaces
     * and tabs; Redis's quoting rules are not applied.
     */
    static RedisCommand parseCommand(ByteBuf frame) {
        int index = frame.readerIndex();
        List<String> words = new ArrayList<>();
        if (frame.getByte(index) == '*') {
            int lineEnd = endOfLine(frame, index + 1);
            long count = parseLength(frame, index, lineEnd);
            index = lineEnd + 2;
            for (long i = 0; i < count; i++) {
                int end = endOfValue(frame, index);
                if (frame.getByte(index) == '$') {
                    int dataStart = endOfLine(frame, index + 1) + 2;
                    words.add(frame.toString(dataStart, end - 2 - dataStart, StandardCharsets.UTF_8));
                }
                else {
                    // Redis answers a protocol error and closes; keep the slot so
                    // argument positions stay right.
                    words.add(frame.toString(index, end - index, StandardCharsets.UTF_8).strip());
                }
                index = end;
            }
        }
        else {
            String line = frame.toString(StandardCharsets.UTF_8).strip();
            for (String word : line.split("[ \t]+")) {
                if (!word.isEmpty()) {
                    words.add(word);
                }
            }
        }
        return words.isEmpty() ? null : new RedisCommand(words);
    }

    private static int endOfElements(ByteBuf buf, int index, long count) {
        for (long i = 0; i < count && index >= 0; i++) {
            index = endOfValue(buf, index);
        }
        return index;
    }

    /**
     * The index of the CR of the CRLF ending the line that starts at {@code from}, or -1
     * when incomplete.
     */
    private static int endOfLine(ByteBuf buf, int from) {
        int cr = buf.indexOf(from, buf.writerIndex(), (byte) '\r');
        if (cr < 0 || cr + 1 >= buf.writerIndex()) {
            return -1;
        }
        if (buf.getByte(cr + 1) != '\n') {
            throw new DecoderException("CR not followed by LF at stream offset " + cr);
        }
        return cr;
    }

    /** The number after the type byte of a length line; negative for RESP2 nulls. */
    private static long parseLength(ByteBuf buf, int typeIndex, int lineEnd) {
        String digits = buf.toString(typeIndex + 1, lineEnd - typeIndex - 1, StandardCharsets.US_ASCII);
        try {
            return Long.parseLong(digits);
        }
        catch (NumberFormatException e) {
            throw new DecoderException("bad length '" + digits + "' after type byte '" + (char) buf.getByte(typeIndex)
                    + "' (streamed RESP3 values are not supported)", e);
        }
    }

}
