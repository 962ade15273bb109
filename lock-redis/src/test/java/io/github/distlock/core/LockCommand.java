package io.github.distlock.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Set;

import io.github.distlock.redis.LettuceLockBackend;
import io.github.distlock.testsupport.RedisCommand;
import io.github.distlock.testsupport.RedisCommandMatcher;

/**
 * The lock commands as a {@link io.github.distlock.testsupport.RedisFaultProxy} sees
 * them, so a fault can hit exactly one of them for one key. A script is recognised by its
 * text: the digest of {@code EVALSHA} is the SHA-1 of the script, with or without the
 * fencing-token functions in front of it, and {@code EVAL} carries the text itself.
 * (Their shapes do not tell them apart: fence.lua and cancel.lua both take four keys and
 * two arguments.)
 */
enum LockCommand {

    /** The bare first attempt: {@code SET key token NX PX ttl GET}. */
    BARE_ACQUIRE(null),
    /** acquire.lua. */
    ACQUIRE_SCRIPT("acquire.lua"),
    /** release.lua. */
    RELEASE_SCRIPT("release.lua"),
    /** cancel.lua: a waiter stops waiting. */
    CANCEL_SCRIPT("cancel.lua"),
    /** fence.lua: the fencing token on demand. */
    FENCE_SCRIPT("fence.lua"),
    /** renew.lua: matches a batch that renews the key among others. */
    RENEW_SCRIPT("renew.lua");

    private final String source;

    private final Set<String> digests;

    LockCommand(String script) {
        this.source = script == null ? null : source(script);
        this.digests = script == null ? Set.of()
                : Set.of(LockWaiters.sha1Hex(source), LockWaiters.sha1Hex(Prelude.SOURCE + source));
    }

    /** This command on the lock key {@code redisKey}, e.g. {@code lock:{order:42}}. */
    RedisCommandMatcher on(String redisKey) {
        return RedisCommandMatcher.anyCommand().matching(command -> is(command, redisKey));
    }

    /** Whether {@code command} is this command on {@code redisKey}. */
    boolean is(RedisCommand command, String redisKey) {
        return switch (command.name()) {
            case "SET" -> this == BARE_ACQUIRE && redisKey.equals(command.argument(1));
            case "EVALSHA" -> digests.contains(command.argument(1)) && hasKey(command, redisKey);
            case "EVAL" -> source != null && command.argument(1) != null && command.argument(1).endsWith(source)
                    && hasKey(command, redisKey);
            default -> false;
        };
    }

    /**
     * The first argument after the keys: the token, for every lock command but the
     * renewal.
     */
    static String token(RedisCommand command) {
        if (command.name().equals("SET")) {
            return command.argument(2);
        }
        return command.argument(3 + keyCount(command));
    }

    private static boolean hasKey(RedisCommand command, String redisKey) {
        int keys = keyCount(command);
        return keys > 0 && command.argv().subList(3, Math.min(command.argv().size(), 3 + keys)).contains(redisKey);
    }

    private static int keyCount(RedisCommand command) {
        try {
            return Integer.parseInt(command.argument(2));
        }
        catch (NumberFormatException ex) {
            return 0;
        }
    }

    /**
     * The fencing-token functions that most scripts are sent behind (an enum constant may
     * not read a static field).
     */
    private static final class Prelude {

        static final String SOURCE = source("fencing.lua");

    }

    private static String source(String script) {
        try (InputStream in = LettuceLockBackend.class.getResourceAsStream(script)) {
            if (in == null) {
                throw new IllegalStateException(script + " is not on the classpath next to LettuceLockBackend");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

}
