package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.github.distlock.core.LockKey;
import io.lettuce.core.cluster.SlotHash;

/**
 * The sharded release channels: one per hash slot, each in its own slot, so release.lua
 * may {@code SPUBLISH} to the lock's channel from inside a script. Slots are checked with
 * Lettuce's {@link SlotHash}, not with the CRC16 the channels were computed with.
 */
class ShardedHandOverChannelsTest {

    private final ShardedHandOverChannels channels = new ShardedHandOverChannels("lock:");

    @Test
    void everySlotHasADistinctChannelThatHashesToThatSlot() {
        Set<String> seen = new HashSet<>();
        for (int slot = 0; slot < ShardedHandOverChannels.SLOTS; slot++) {
            String channel = channels.channelOf(slot);
            assertThat(SlotHash.getSlot(channel)).as(channel).isEqualTo(slot);
            assertThat(channel).startsWith("lock:released:{").endsWith("}");
            seen.add(channel);
        }
        assertThat(seen).hasSize(16_384);
    }

    @Test
    void aLocksChannelIsInTheLocksSlotWhateverItsName() {
        for (String name : List.of("order:42", "a}b", "{}x}", "}", "{", "x{y}z", "ключ", "🔒", "")) {
            LockKey key = RedisKeyNaming.lockKey("lock:", name);
            assertThat(SlotHash.getSlot(channels.channelFor(key))).as(name).isEqualTo(SlotHash.getSlot(key.storeKey()));
        }
    }

    /**
     * The wire format, as the guide states it: other clients compute the same channel.
     */
    @Test
    void theChannelOfOrder42IsFixed() {
        assertThat(channels.channelFor(RedisKeyNaming.lockKey("lock:", "order:42"))).isEqualTo("lock:released:{633}");
        assertThat(SlotHash.getSlot("lock:{order:42}")).isEqualTo(8691);
    }

    @Test
    void theTagIsTheSmallestDecimalNumberInTheSlot() {
        int slot = SlotHash.getSlot("0");
        assertThat(channels.channelOf(slot)).isEqualTo("lock:released:{0}");
        String channel = channels.channelOf(SlotHash.getSlot("order:42"));
        long tag = Long.parseLong(channel.substring("lock:released:{".length(), channel.length() - 1));
        for (long smaller = 0; smaller < tag; smaller++) {
            assertThat(SlotHash.getSlot(Long.toString(smaller))).isNotEqualTo(SlotHash.getSlot("order:42"));
        }
    }

    @Test
    void aChannelIsMappedBackToItsSlotAndForeignChannelsAreNot() {
        int slot = SlotHash.getSlot("lock:{order:42}");
        assertThat(channels.slotOfChannel(channels.channelOf(slot))).isEqualTo(slot);
        assertThat(channels.slotOfChannel("lock:released")).isEqualTo(-1);
        assertThat(channels.slotOfChannel("lock:released:{order:42}")).isEqualTo(-1);
        assertThat(new ShardedHandOverChannels("other:").slotOfChannel(channels.channelOf(slot))).isEqualTo(-1);
    }

    @Test
    void aPrefixWithBracesIsRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> new ShardedHandOverChannels("lock:{x}"))
            .withMessageContaining("lock:{x}");
    }

}
