package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.distlock.DistributedLock;
import io.github.distlock.InvalidLockKeyException;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.aop.LockTestContexts.LockProbe;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * {@code keys = {...}} locks all of a call's keys or none: in sorted order, so opposite
 * transfers cannot deadlock; releasing what it took when one key cannot be had; locking a
 * repeated key once.
 */
class DistributedLockMultipleKeysTest {

    private static final int TRANSFERS_PER_DIRECTION = 500;

    private static final int OPENING_BALANCE = 10_000;

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private ApplicationContextRunner runner() {
        return LockTestContexts.runner(redis.server()).withBean(AccountService.class);
    }

    @Test
    void oppositeTransfersOnTwoThreadsNeitherDeadlockNorLoseAnUpdate() {
        runner().run(context -> {
            AccountService accounts = context.getBean(AccountService.class);
            StringRedisTemplate redisTemplate = context.getBean(StringRedisTemplate.class);
            redisTemplate.opsForValue().set("balance:alice", String.valueOf(OPENING_BALANCE));
            redisTemplate.opsForValue().set("balance:bob", String.valueOf(OPENING_BALANCE));

            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                CountDownLatch start = new CountDownLatch(1);
                List<Future<?>> workers = new ArrayList<>();
                workers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < TRANSFERS_PER_DIRECTION; i++) {
                        accounts.transfer("alice", "bob", 3);
                    }
                    return null;
                }));
                workers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < TRANSFERS_PER_DIRECTION; i++) {
                        accounts.transfer("bob", "alice", 2);
                    }
                    return null;
                }));
                start.countDown();
                // A deadlock would surface as a LockTimeoutException after the 10 s wait;
                // nothing may fail.
                for (Future<?> worker : workers) {
                    worker.get(60, TimeUnit.SECONDS);
                }
            }
            finally {
                pool.shutdownNow();
            }

            int alice = Integer.parseInt(redisTemplate.opsForValue().get("balance:alice"));
            int bob = Integer.parseInt(redisTemplate.opsForValue().get("balance:bob"));
            assertThat(alice + bob).isEqualTo(2 * OPENING_BALANCE);
            assertThat(alice).isEqualTo(OPENING_BALANCE - TRANSFERS_PER_DIRECTION * 3 + TRANSFERS_PER_DIRECTION * 2);
            assertThat(bob).isEqualTo(OPENING_BALANCE + TRANSFERS_PER_DIRECTION * 3 - TRANSFERS_PER_DIRECTION * 2);
            assertThat(context.getBean(LockProbe.class).heldLocks()).isEmpty();
        });
    }

    @Test
    void whenOneKeyIsHeldElsewhereTheCallFailsAndReleasesTheKeyItHadTaken() {
        runner().run(context -> {
            AccountService accounts = context.getBean(AccountService.class);
            LockService lockService = context.getBean(LockService.class);
            LockProbe probe = context.getBean(LockProbe.class);
            // 'account:bob' sorts after 'account:alice', so the call takes alice first
            // and then fails on bob.
            LockHandle other = lockService.lock(LockRequest.of("account:bob").withWaitTime(Duration.ZERO));
            try {
                redis.server().resetStats();
                assertThatThrownBy(() -> accounts.quickTransfer("alice", "bob"))
                    .isInstanceOf(LockTimeoutException.class)
                    .satisfies(ex -> assertThat(((LockTimeoutException) ex).getKey()).isEqualTo("account:bob"));

                assertThat(accounts.quickTransfers).isZero();
                assertThat(probe.heldLocks()).containsExactly("lock:{account:bob}");
                // alice acquired, bob tried once (waitTime 0s), alice released.
                assertThat(LockTestContexts.lockRoundTrips(redis.server())).isEqualTo(3);
                assertThat(lockService.tryLock("account:alice", null, Duration.ZERO))
                    .hasValueSatisfying(LockHandle::release);
            }
            finally {
                other.release();
            }
        });
    }

    @Test
    void oneKeyLongerThanTheMaximumFailsTheCallNamingItsExpressionBeforeAnyKeyIsTaken() {
        runner().withPropertyValues("distributed-lock.max-key-length=20").run(context -> {
            AccountService accounts = context.getBean(AccountService.class);
            redis.server().resetStats();

            assertThatThrownBy(() -> accounts.quickTransfer("alice", "b".repeat(13)))
                .isInstanceOf(InvalidLockKeyException.class)
                .hasMessageStartingWith("@DistributedLock key \"'account:' + #to\" of ")
                .hasMessageContaining(
                        "evaluated to a key 21 characters long, longer than " + "distributed-lock.max-key-length (20)");
            assertThat(LockTestContexts.lockRoundTrips(redis.server())).isZero();
            accounts.quickTransfer("alice", "b".repeat(12));
        });
    }

    @Test
    void argumentOrderDoesNotMatterBecauseKeysAreTakenSorted() {
        runner().run(context -> {
            AccountService accounts = context.getBean(AccountService.class);
            LockService lockService = context.getBean(LockService.class);
            // alice held elsewhere: bob -> alice still tries alice first, so it fails
            // without taking bob.
            LockHandle other = lockService.lock(LockRequest.of("account:alice").withWaitTime(Duration.ZERO));
            try {
                redis.server().resetStats();
                assertThatThrownBy(() -> accounts.quickTransfer("bob", "alice"))
                    .isInstanceOf(LockTimeoutException.class);

                assertThat(LockTestContexts.lockRoundTrips(redis.server()))
                    .as("one failed acquire of alice, nothing else")
                    .isEqualTo(1);
            }
            finally {
                other.release();
            }
        });
    }

    @Test
    void aKeyGivenTwiceIsLockedOnce() {
        runner().run(context -> {
            AccountService accounts = context.getBean(AccountService.class);
            accounts.locksSeen("warm-up", "up");
            redis.server().resetStats();

            // With waitTime 0s, locking the key a second time would fail the call.
            assertThat(accounts.locksSeen("alice", "alice")).containsExactly("lock:{account:alice}");

            assertThat(LockTestContexts.lockRoundTrips(redis.server())).isEqualTo(2);
        });
    }

    @Test
    void severalKeysJoinAKeyTheThreadAlreadyHoldsAndTakeOnlyTheOthers() {
        runner().run(context -> {
            AccountService accounts = context.getBean(AccountService.class);

            List<List<String>> seen = accounts.auditThenTransfer("alice", "bob");

            assertThat(seen.get(0)).as("inside the transfer")
                .containsExactly("lock:{account:alice}", "lock:{account:bob}");
            assertThat(seen.get(1)).as("back in the audit").containsExactly("lock:{account:alice}");
            assertThat(context.getBean(LockProbe.class).heldLocks()).isEmpty();
        });
    }

    static class AccountService {

        private final StringRedisTemplate redis;

        private final LockProbe probe;

        private final ObjectProvider<AccountService> self;

        volatile int quickTransfers;

        AccountService(StringRedisTemplate redis, LockProbe probe, ObjectProvider<AccountService> self) {
            this.redis = redis;
            this.probe = probe;
            this.self = self;
        }

        /**
         * Reads both balances, then writes both: a read-modify-write that only the locks
         * make safe.
         */
        @DistributedLock(keys = { "'account:' + #from", "'account:' + #to" }, waitTime = "10s")
        public void transfer(String from, String to, int amount) {
            int fromBalance = Integer.parseInt(redis.opsForValue().get("balance:" + from));
            int toBalance = Integer.parseInt(redis.opsForValue().get("balance:" + to));
            redis.opsForValue().set("balance:" + from, String.valueOf(fromBalance - amount));
            redis.opsForValue().set("balance:" + to, String.valueOf(toBalance + amount));
        }

        @DistributedLock(keys = { "'account:' + #from", "'account:' + #to" }, waitTime = "0s")
        public void quickTransfer(String from, String to) {
            quickTransfers++;
        }

        @DistributedLock(keys = { "'account:' + #from", "'account:' + #to" }, waitTime = "0s")
        public List<String> locksSeen(String from, String to) {
            return probe.heldLocks();
        }

        @DistributedLock(key = "'account:' + #from", waitTime = "0s")
        public List<List<String>> auditThenTransfer(String from, String to) {
            List<List<String>> seen = new ArrayList<>();
            seen.add(self.getObject().locksSeen(from, to));
            seen.add(probe.heldLocks());
            return seen;
        }

    }

}
