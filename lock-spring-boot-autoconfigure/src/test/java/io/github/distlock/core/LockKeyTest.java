package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.github.distlock.LockKeys;
import io.lettuce.core.cluster.SlotHash;

/**
 * The stored key of a lock name: readable and unchanged for names without braces, one Cluster slot
 * for the lock and all its companion keys whatever the name, and distinct names never share a key.
 */
class LockKeyTest {

    private static final List<String> NAMES = List.of("order:42", "a}b", "{}x}", "}", "{", "x{y}z", "a%7Db", "a%7Db}",
            "%", "%25", "line1\nline2", "ключ", "🔒", "{order:42}");

    @Test
    void aNameWithoutBracesIsStoredAsItIsInsideTheHashTag() {
        assertThat(LockKey.of("lock:", "order:42").redisKey()).isEqualTo("lock:{order:42}");
        assertThat(LockKey.of("lock:", "a%7Db").redisKey()).isEqualTo("lock:{a%7Db}");
        assertThat(LockKey.of("lock:", "ключ").redisKey()).isEqualTo("lock:{ключ}");
    }

    @Test
    void aNameWithBracesIsPercentEncodedAndMarkedWithATrailingPercent() {
        assertThat(LockKey.of("lock:", "a}b").redisKey()).isEqualTo("lock:{a%7Db}%");
        assertThat(LockKey.of("lock:", "{}x}").redisKey()).isEqualTo("lock:{%7B%7Dx%7D}%");
        assertThat(LockKey.of("lock:", "100%{x}").redisKey()).isEqualTo("lock:{100%25%7Bx%7D}%");
    }

    @Test
    void everyCompanionKeyOfEveryNameSharesTheLocksSlot() {
        for (String name : NAMES) {
            String lock = LockKey.of("lock:", name).redisKey();
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
            assertThat(keys.add(LockKey.of("lock:", name).redisKey())).as(name).isTrue();
        }
    }

    @Test
    void namesInMessagesHaveTheirControlCharactersEscaped() {
        assertThat(LockKeys.printable("a\nb\r\tc\\d\u0007")).isEqualTo("'a\\nb\\r\\tc\\\\d\\u0007'");
        assertThat(LockKey.of("lock:", "x\nFAKE LOG LINE").printableName()).doesNotContain("\n");
        assertThat(new io.github.distlock.LockTimeoutException("x\nFAKE", java.time.Duration.ZERO).getMessage())
                .doesNotContain("\n");
    }
}
