package io.github.distlock.redis;

import io.github.distlock.core.LockKey;

/**
 * How a lock name becomes a Redis key, shared by every Redis backend so that they all
 * agree on the wire.
 *
 * <p>
 * The stored key is {@code <prefix>{<name>}}: the braces are a Redis Cluster hash tag, so
 * the lock and its companion keys ({@code <key>:fence}, {@code <key>:queue}, ...) share
 * one slot and one script can touch them all. A name that itself contains a brace would
 * end the tag early (for {@code }x} the tag of {@code lock:{}x}} is empty, and then every
 * companion key hashes to a slot of its own), so such a name is percent-encoded
 * ({@code %} as {@code %25}, <code>{</code> as {@code %7B}, <code>}</code> as
 * {@code %7D}) and the key gets a trailing {@code %}: <code>a}b</code> is stored as
 * {@code lock:{a%7Db}%}. The trailing {@code %} keeps such a key apart from the key of a
 * name that is literally the encoded text ({@code a%7Db} is stored as
 * {@code lock:{a%7Db}}). Names without braces, nearly all of them, are stored as they
 * are, so any client following the plain {@code SET NX PX} pattern can share the lock.
 *
 * <pre>{@code
 * RedisKeyNaming.lockKey("lock:", "order:42").storeKey();   // "lock:{order:42}"
 * }</pre>
 */
public final class RedisKeyNaming {

    private RedisKeyNaming() {
    }

    /** Builds the stored key of {@code name} under {@code prefix}. */
    public static LockKey lockKey(String prefix, String name) {
        if (name.indexOf('{') < 0 && name.indexOf('}') < 0) {
            return new LockKey(name, prefix + '{' + name + '}');
        }
        StringBuilder encoded = new StringBuilder(name.length() + 16).append(prefix).append('{');
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            switch (c) {
                case '%' -> encoded.append("%25");
                case '{' -> encoded.append("%7B");
                case '}' -> encoded.append("%7D");
                default -> encoded.append(c);
            }
        }
        return new LockKey(name, encoded.append("}%").toString());
    }

}
