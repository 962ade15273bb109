package io.github.distlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * The one set of rules for a ttl and a wait time, as a {@link LockService} call applies
 * them: the same rules the annotation and the properties are checked with at startup.
 */
class LockDurationsTest {

    @Test
    void ttlFromOneMillisecondTo36500DaysIsValidAndIsPassedOnInWholeMilliseconds() {
        assertThat(LockDurations.requireValidTtl("k", Duration.ofMillis(1))).isEqualTo(1);
        assertThat(LockDurations.requireValidTtl("k", Duration.ofSeconds(30))).isEqualTo(30_000);
        assertThat(LockDurations.requireValidTtl("k", Duration.ofDays(36_500)))
            .isEqualTo(Duration.ofDays(36_500).toMillis());
        // A remainder below a millisecond is dropped: the lease in this JVM errs on the
        // short side.
        assertThat(LockDurations.requireValidTtl("k", Duration.ofNanos(1_999_999))).isEqualTo(1);
    }

    @Test
    void subMillisecondTtlIsRejectedNamingTheLockTheValueAndTheMinimum() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> LockDurations.requireValidTtl("order:42", Duration.ofNanos(1)))
            .withMessageContaining("lock 'order:42'")
            .withMessageContaining("(1ns)")
            .withMessageContaining("shorter than 1ms")
            .withMessageContaining("from 1ms to 36500d");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> LockDurations.requireValidTtl("k", Duration.ofNanos(500_000)))
            .withMessageContaining("(500us)");
    }

    @Test
    void ttlLongerThanTheLeaseClockCanTimeIsRejected() {
        // 300 years: ttlMillis * 1_000_000 would overflow, and the handle would report
        // isHeld() == false at once.
        assertThatIllegalArgumentException()
            .isThrownBy(() -> LockDurations.requireValidTtl("order:42", Duration.ofDays(300 * 365)))
            .withMessageContaining("(109500d)")
            .withMessageContaining("longer than 36500d");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> LockDurations.requireValidTtl("k", Duration.ofDays(36_500).plusNanos(1)));
    }

    @Test
    void zeroAndNegativeTtlsAreRejected() {
        assertThatIllegalArgumentException().isThrownBy(() -> LockDurations.requireValidTtl("k", Duration.ZERO))
            .withMessageContaining("ttl")
            .withMessageContaining("not positive");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> LockDurations.requireValidTtl("k", Duration.ofSeconds(-5)))
            .withMessageContaining("(-5s)");
    }

    @Test
    void waitTimeFromZeroTo36500DaysIsValid() {
        assertThat(LockDurations.requireValidWaitTime("k", Duration.ZERO)).isZero();
        assertThat(LockDurations.requireValidWaitTime("k", Duration.ofDays(36_500))).hasDays(36_500);
    }

    @Test
    void negativeOrUntimeableWaitTimeIsRejectedNamingTheLockAndTheFix() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> LockDurations.requireValidWaitTime("order:42", Duration.ofSeconds(-1)))
            .withMessageContaining("lock 'order:42'")
            .withMessageContaining("must not be negative")
            .withMessageContaining("Duration.ZERO to try once");
        // Beyond 292 years, Duration.toNanos() throws an ArithmeticException deep inside
        // the wait.
        assertThatIllegalArgumentException()
            .isThrownBy(() -> LockDurations.requireValidWaitTime("k", Duration.ofDays(300 * 365)))
            .withMessageContaining("longer than 36500d");
    }

    @Test
    void problemsAreNullForValidValues() {
        assertThat(LockDurations.ttlProblem(Duration.ofSeconds(30))).isNull();
        assertThat(LockDurations.waitTimeProblem(Duration.ZERO)).isNull();
    }

    @Test
    void durationsAreDescribedInTheLargestExactUnit() {
        assertThat(LockDurations.describe(Duration.ofNanos(1))).isEqualTo("1ns");
        assertThat(LockDurations.describe(Duration.ofNanos(500_000))).isEqualTo("500us");
        assertThat(LockDurations.describe(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(LockDurations.describe(Duration.ofSeconds(30))).isEqualTo("30s");
        assertThat(LockDurations.describe(Duration.ofMinutes(5))).isEqualTo("5m");
        assertThat(LockDurations.describe(Duration.ofHours(2))).isEqualTo("2h");
        assertThat(LockDurations.describe(Duration.ofDays(36_500))).isEqualTo("36500d");
        assertThat(LockDurations.describe(Duration.ZERO)).isEqualTo("0s");
        assertThat(LockDurations.describe(Duration.ofSeconds(-5))).isEqualTo("-5s");
        assertThat(LockDurations.describe(null)).isEqualTo("null");
    }

}
