package io.github.distlock.testsupport;

import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

/**
 * Splits a byte stream into whole RESP frames (retained slices of the received bytes,
 * untouched), so the handler after it sees one command or one reply per message, however
 * TCP cut the stream.
 */
final class RespFrameDecoder extends ByteToMessageDecoder {

    private final boolean clientRequests;

    /**
     * @param clientRequests true for the client-to-Redis direction, where inline commands
     * are allowed too
     */
    RespFrameDecoder(boolean clientRequests) {
        this.clientRequests = clientRequests;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int start = in.readerIndex();
        int end = clientRequests ? RespFrameScanner.endOfCommand(in, start) : RespFrameScanner.endOfValue(in, start);
        if (end >= 0) {
            out.add(in.readRetainedSlice(end - start));
        }
    }

}
