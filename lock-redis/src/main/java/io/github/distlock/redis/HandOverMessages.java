package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.distlock.LockKeys;
import io.github.distlock.core.LockWaiters;

/**
 * Reads a hand-over message, {@code <waiter id>:<fencing token>:<proof>} as release.lua
 * publishes it, and passes it to {@link LockWaiters}. One reader for every subscription
 * (the global channel and the sharded per-slot channels), so both accept exactly the same
 * messages.
 */
final class HandOverMessages {

    private static final Log logger = LogFactory.getLog(HandOverMessages.class);

    private HandOverMessages() {
    }

    /**
     * Wakes the waiter a message on {@code channel} names, if it is one of ours and the
     * proof holds; ignores anything else.
     */
    static void deliver(String channel, byte[] message, LockWaiters waiters) {
        String body = new String(message, StandardCharsets.US_ASCII);
        int first = body.indexOf(':');
        int second = body.indexOf(':', first + 1);
        if (first < 0 || second < 0) {
            ignore(channel, body);
            return;
        }
        String fencingText = body.substring(first + 1, second);
        String proof = body.substring(second + 1);
        long fencingToken;
        try {
            fencingToken = Long.parseLong(fencingText);
        }
        catch (NumberFormatException ex) {
            ignore(channel, body);
            return;
        }
        // The proof is SHA-1(token:fencing token), as release.lua makes it: only a script
        // that knew
        // the waiter's token can have sent this.
        waiters.handedOver(body.substring(0, first), fencingToken,
                token -> LockWaiters.sha1Hex(token + ':' + fencingText).equals(proof));
    }

    private static void ignore(String channel, String body) {
        // Not ours: someone else publishes on this channel. The waiter will poll.
        if (logger.isDebugEnabled()) {
            logger.debug("Ignoring unexpected message on lock release channel '" + channel + "': "
                    + LockKeys.printable(body));
        }
    }

}
