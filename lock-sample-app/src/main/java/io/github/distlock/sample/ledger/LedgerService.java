package io.github.distlock.sample.ledger;

import java.time.Duration;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Service;

/**
 * Pays money out of accounts, locking each account on ZooKeeper while the stock next to
 * it ({@code StockService}) locks on Redis: one application, the store chosen per lock.
 *
 * <p>
 * Why two stores: a lost update of the stock miscounts a unit, which a stock-take finds
 * and fixes, and every sale pays for its lock, so the stock takes the fast lock, one
 * Redis round trip. A payout that runs twice sends money that does not come back. A
 * single Redis can lose a lock when its master fails over before a replica got the key,
 * and then two instances pay; ZooKeeper commits the lock through a majority of its
 * ensemble, so it survives the loss of any minority. Neither store protects a holder that
 * pauses past its lease, so the payout also carries the lock's fencing token (the lock
 * node's zxid on ZooKeeper) to the {@link FencedLedger}, which refuses a token smaller
 * than the last one it wrote.
 *
 * <p>
 * The lock is taken with {@link LockService} rather than
 * {@code @DistributedLock(backend = "zookeeper")} because the method needs the handle for
 * its token; {@code LockRequest.withBackend("zookeeper")} is the same choice of store.
 * The service exists only when {@code distributed-lock.zookeeper.connect-string} is set
 * (the sample sets it to its embedded ZooKeeper unless told otherwise).
 */
@Service
@ConditionalOnProperty(prefix = "distributed-lock.zookeeper", name = "connect-string")
public class LedgerService {

    /** The store that keeps the ledger's locks. */
    public static final String BACKEND = "zookeeper";

    /** The lock name in metrics and the Actuator; the key is per account. */
    public static final String LOCK_NAME = "ledger";

    private final LockService locks;

    private final FencedLedger ledger;

    private final Duration lockTtl;

    private final Duration lockWaitTime;

    private final Duration workDelay;

    /**
     * @param locks the application's one lock service, for every store
     * @param redis where the ledger's data lives
     * @param lockTtl the lease of an account's lock ({@code sample.ledger.lock-ttl}), at
     * most the ZooKeeper session timeout
     * @param lockWaitTime how long a payout waits for its account
     * ({@code sample.ledger.lock-wait-time})
     * @param workDelay how long the work between reading and writing the balance takes
     * ({@code sample.ledger.work-delay})
     */
    public LedgerService(LockService locks, StringRedisTemplate redis,
            @Value("${sample.ledger.lock-ttl:10s}") Duration lockTtl,
            @Value("${sample.ledger.lock-wait-time:5s}") Duration lockWaitTime,
            @Value("${sample.ledger.work-delay:2ms}") Duration workDelay) {
        this.locks = locks;
        this.ledger = new FencedLedger(redis);
        this.lockTtl = lockTtl;
        this.lockWaitTime = lockWaitTime;
        this.workDelay = workDelay;
    }

    /**
     * Pays {@code amount} out of {@code account} if its balance covers it, holding the
     * account's ZooKeeper lock from the read to the fenced write.
     * @return whether it paid, the balance left and the token it wrote with
     * @throws IllegalArgumentException if {@code amount} is not positive
     * @throws StaleFencingTokenException if the ledger refused the write because the lock
     * was lost and a newer holder wrote first; nothing was paid
     * @throws io.github.distlock.LockTimeoutException if another payout held the account
     * for longer than {@code sample.ledger.lock-wait-time}; nothing was paid
     */
    public Payout payout(String account, long amount) {
        if (amount <= 0) {
            throw new IllegalArgumentException("amount must be positive: " + amount);
        }
        try (LockHandle lock = locks.lock(lockOn(account))) {
            long token = lock.fencingToken();
            LedgerBalance current = ledger.read(account);
            if (current.balance() < amount) {
                return new Payout(account, false, amount, current.balance(), token);
            }
            // Stands for the slow part of a payout (the bank transfer): the window
            // in which a second holder would read the same balance.
            work();
            long balance = current.balance() - amount;
            if (!ledger.write(account, token, balance, current.paidOut() + amount)) {
                throw new StaleFencingTokenException(account, token);
            }
            return new Payout(account, true, amount, balance, token);
        }
    }

    /**
     * Opens {@code account} with {@code balance} and nothing paid out, under the same
     * lock as {@link #payout}, so it never interleaves with one.
     * @throws IllegalArgumentException if {@code balance} is negative
     */
    public LedgerBalance open(String account, long balance) {
        if (balance < 0) {
            throw new IllegalArgumentException("balance must not be negative: " + balance);
        }
        try (LockHandle lock = locks.lock(lockOn(account))) {
            long token = lock.fencingToken();
            if (!ledger.write(account, token, balance, 0)) {
                throw new StaleFencingTokenException(account, token);
            }
            return new LedgerBalance(account, balance, 0, token);
        }
    }

    /** The account as last written, read without the lock. */
    public LedgerBalance balance(String account) {
        return ledger.read(account);
    }

    private LockRequest lockOn(String account) {
        // Every call writes with the token, so it is asked for with the lock, never drawn
        // later.
        return LockRequest.of("ledger:" + account)
            .withBackend(BACKEND)
            .withName(LOCK_NAME)
            .withTtl(lockTtl)
            .withWaitTime(lockWaitTime)
            .withFencingToken();
    }

    private void work() {
        if (workDelay.isZero() || workDelay.isNegative()) {
            return;
        }
        try {
            Thread.sleep(workDelay.toMillis());
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted during a payout from the ledger; nothing was paid", e);
        }
    }

}
