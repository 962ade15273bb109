package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.github.distlock.LockKeys;
import io.lettuce.core.cluster.SlotHash;

/**
 * The stored key of a lock name: readable and unchanged for names without braces, one
 * Cluster slot for the lock and all its companion keys whatever the name, and distinct
 * names never share a key.
 */
class RedisKeyNamingTest {

    private static final List<String> NAMES = List.of("order:42", "a}b", "{}x}", "}", "{", "x{y}z", "a%7Db", "a%7Db}",
            "%", "%25", "line1\nline2", "ключ", "🔒", "{order:42}");

    @Test
    void aNameWithoutBracesIsStoredAsItIsInsideTheHashTag() {
        assertThat(RedisKeyNaming.lockKey("lock:", "order:42").storeKey()).isEqualTo("lock:{order:42}");
        assertThat(RedisKeyNaming.lockKey("lock:", "a%7Db").storeKey()).isEqualTo("lock:{a%7Db}");
        assertThat(RedisKeyNaming.lockKey("lock:", "ключ").storeKey()).isEqualTo("lock:{ключ}");
    }

    @Test
    void aNameWithBracesIsPercentEncodedAndMarkedWithATrailingPercent() {
        assertThat(RedisKeyNaming.lockKey("lock:", "a}b").storeKey()).isEqualTo("lock:{a%7Db}%");
        assertThat(RedisKeyNaming.lockKey("lock:", "{}x}").storeKey()).isEqualTo("lock:{%7B%7Dx%7D}%");
        assertThat(RedisKeyNaming.lockKey("lock:", "100%{x}").storeKey()).isEqualTo("lock:{100%25%7Bx%7D}%");
    }

    @Test
    void everyCompanionKeyOfEveryNameSharesTheLocksSlot() {
        for (String name : NAMES) {
            String lock = RedisKeyNaming.lockKey("lock:", name).storeKey();
            int slot = SlotHash.getSlot(lock);
            for (String suffix : List.of(":fence", ":queue", ":waiting")) {
                assertThat(SlotHash.getSlot(lock + suffix)).as("%s%s", lock, suffix).isEqualTo(slot);
            }
        }
    }

    @Test
    void distinctNamesNeverShareAStoredKey() {
        Set<String> keys = new HashSet<>();
        for (String name : NAMES) {
            assertThat(keys.add(RedisKeyNaming.lockKey("lock:", name).storeKey())).as(name).isTrue();
        }
    }

    @Test
    void namesInMessagesHaveTheirControlCharactersEscaped() {
        assertThat(LockKeys.printable("a\nb\r\tc\\d\u0007")).isEqualTo("'a\\nb\\r\\tc\\\\d\\u0007'");
        assertThat(RedisKeyNaming.lockKey("lock:", "x\nFAKE LOG LINE").printableName()).doesNotContain("\n");
        assertThat(new io.github.distlock.LockTimeoutException("x\nFAKE", java.time.Duration.ZERO).getMessage())
            .doesNotContain("\n");
    }

}
