package io.github.distlock.sample.ledger;

import java.util.List;
import java.util.Map;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The resource the ledger lock protects, and the one that checks its fencing token: one
 * Redis hash per account, {@code ledger:<account>}, with the fields {@code balance},
 * {@code paidOut} and {@code fence}. A write carries the writer's token and lands only if
 * it is larger than {@code fence} (a Lua script, so the check and the write are one
 * step), the way a database row would be guarded with
 * {@code UPDATE ... WHERE fence < :token}.
 *
 * <p>
 * It sits in Redis only to keep the sample to one data store; the lock that guards it
 * lives in ZooKeeper ({@link LedgerService}).
 */
public final class FencedLedger {

    private static final RedisScript<Long> FENCED_WRITE = RedisScript
        .of(new ClassPathResource("io/github/distlock/sample/ledger/fenced-write.lua"), Long.class);

    private final StringRedisTemplate redis;

    /**
     * @param redis plain string commands, so that the hash is readable with redis-cli
     */
    public FencedLedger(StringRedisTemplate redis) {
        this.redis = redis;
    }

    /** The account as last written; all zero for an account never opened. */
    public LedgerBalance read(String account) {
        Map<Object, Object> fields = redis.opsForHash().entries(key(account));
        return new LedgerBalance(account, number(fields.get("balance")), number(fields.get("paidOut")),
                number(fields.get("fence")));
    }

    /**
     * Writes the account's balance and total paid out, if {@code fencingToken} is larger
     * than the token of the last write.
     * @return {@code true} if written; {@code false} if refused because a writer with a
     * token at least as large has written, in which case nothing changed
     */
    public boolean write(String account, long fencingToken, long balance, long paidOut) {
        Long written = redis.execute(FENCED_WRITE, List.of(key(account)), Long.toString(fencingToken), "balance",
                Long.toString(balance), "paidOut", Long.toString(paidOut));
        return written != null && written == 1L;
    }

    static String key(String account) {
        return "ledger:" + account;
    }

    private static long number(Object value) {
        return value == null ? 0 : Long.parseLong((String) value);
    }

}
