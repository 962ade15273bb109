package io.github.distlock.redis;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

import io.github.distlock.core.LockKey;

/**
 * The sharded hand-over channels of a Redis Cluster: one per hash slot,
 * {@code <prefix>released:{<tag>}}, where {@code <tag>} is the smallest non-negative
 * decimal number whose CRC16 slot is that slot. So the channel of a lock hashes to the
 * lock's own slot: release.lua may {@code SPUBLISH} to it (a script may only touch its
 * keys' slot), the message stays on the shard that owns the lock, and a JVM subscribes
 * once per slot it waits on, however many keys that slot holds.
 *
 * <p>
 * For example, with the default prefix, the lock {@code lock:{order:42}} (slot 8691)
 * publishes its hand-overs on {@code lock:released:{633}}: 633 is the first of 0, 1, 2,
 * ... with {@code CLUSTER KEYSLOT} 8691. Any client can compute the same table.
 */
public sealed class ShardedHandOverChannels permits ShardedReleaseChannels {

    /** Hash slots of every Redis Cluster. */
    static final int SLOTS = ClusterSlotHashUtil.SLOT_COUNT;

    /**
     * The tag of each slot, found once for all prefixes: about 180,000 CRC16s of short
     * strings.
     */
    private static volatile String[] tags;

    private final String prefix;

    /**
     * @param keyPrefix the lock key prefix, for example {@code lock:}; it holds no braces
     */
    public ShardedHandOverChannels(String keyPrefix) {
        if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
            // Validated by the properties too; a tag in the prefix would put every
            // channel in one slot.
            throw new IllegalArgumentException(
                    "A key prefix with braces has no sharded release channels: " + keyPrefix);
        }
        this.prefix = keyPrefix + "released:{";
    }

    /** The hash slot of a lock key, as Redis computes it. */
    public static int slotOf(LockKey key) {
        return ClusterSlotHashUtil.calculateSlot(key.storeKey());
    }

    /**
     * The sharded hand-over channel of the lock {@code key}: it hashes to the key's slot.
     */
    public String channelFor(LockKey key) {
        return channelOf(slotOf(key));
    }

    /** The sharded hand-over channel of {@code slot}. */
    public String channelOf(int slot) {
        return prefix + tags()[slot] + '}';
    }

    /** The slot of one of our channels, or -1 if {@code channel} is not one. */
    int slotOfChannel(String channel) {
        if (!channel.startsWith(prefix) || !channel.endsWith("}")) {
            return -1;
        }
        int slot = ClusterSlotHashUtil.calculateSlot(channel);
        return channel.equals(channelOf(slot)) ? slot : -1;
    }

    private static String[] tags() {
        String[] table = tags;
        if (table == null) {
            synchronized (ShardedHandOverChannels.class) {
                table = tags;
                if (table == null) {
                    table = computeTags();
                    tags = table;
                }
            }
        }
        return table;
    }

    private static String[] computeTags() {
        String[] table = new String[SLOTS];
        int missing = SLOTS;
        for (long n = 0; missing > 0; n++) {
            String tag = Long.toString(n);
            int slot = ClusterSlotHashUtil.calculateSlot(tag);
            if (table[slot] == null) {
                table[slot] = tag;
                missing--;
            }
        }
        return table;
    }

}
