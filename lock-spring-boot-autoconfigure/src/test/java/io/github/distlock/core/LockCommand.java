package io.github.distlock.core;

import java.util.Set;

import io.github.distlock.testsupport.RedisCommand;
import io.github.distlock.testsupport.RedisCommandMatcher;

/**
 * The lock commands as a {@link io.github.distlock.testsupport.RedisFaultProxy} sees them, so a fault can hit
 * exactly one of them for one key. Scripts are told apart by the shape of their argv (how many keys and arguments
 * they take), which holds for {@code EVALSHA} and its {@code EVAL} fallback alike and does not depend on the
 * scripts' digests.
 */
enum LockCommand {

    /** The bare first attempt: {@code SET key token NX PX ttl GET}. */
    BARE_ACQUIRE,
    /** acquire.lua: 4 keys, 6 arguments. */
    ACQUIRE_SCRIPT,
    /** release.lua: 4 keys, 3 arguments. */
    RELEASE_SCRIPT,
    /** cancel.lua (a waiter stops waiting): 4 keys, 2 arguments. */
    CANCEL_SCRIPT,
    /** fence.lua (the fencing token on demand): 2 keys, 2 arguments. */
    FENCE_SCRIPT,
    /** renew.lua: n keys, 2n arguments; matches a batch that renews the key among others. */
    RENEW_SCRIPT;

    private static final Set<String> SCRIPT_COMMANDS = Set.of("EVALSHA", "EVAL");

    /** This command on the lock key {@code redisKey}, e.g. {@code lock:{order:42}}. */
    RedisCommandMatcher on(String redisKey) {
        if (this == BARE_ACQUIRE) {
            return RedisCommandMatcher.named("SET").withArgument(1, redisKey);
        }
        return RedisCommandMatcher.anyCommand().matching(command -> is(command, redisKey));
    }

    /** Whether {@code command} is this command on {@code redisKey}. */
    boolean is(RedisCommand command, String redisKey) {
        if (this == BARE_ACQUIRE) {
            return command.name().equals("SET") && redisKey.equals(command.argument(1));
        }
        if (!SCRIPT_COMMANDS.contains(command.name())) {
            return false;
        }
        int keys;
        try {
            keys = Integer.parseInt(command.argument(2));
        }
        catch (NumberFormatException ex) {
            return false;
        }
        int arguments = command.argv().size() - 3 - keys;
        return switch (this) {
            case ACQUIRE_SCRIPT -> keys == 4 && arguments == 6 && redisKey.equals(command.argument(3));
            case RELEASE_SCRIPT -> keys == 4 && arguments == 3 && redisKey.equals(command.argument(3));
            case CANCEL_SCRIPT -> keys == 4 && arguments == 2 && redisKey.equals(command.argument(3));
            case FENCE_SCRIPT -> keys == 2 && arguments == 2 && redisKey.equals(command.argument(3));
            case RENEW_SCRIPT -> keys >= 1 && arguments == 2 * keys
                    && command.argv().subList(3, 3 + keys).contains(redisKey);
            default -> false;
        };
    }
}
