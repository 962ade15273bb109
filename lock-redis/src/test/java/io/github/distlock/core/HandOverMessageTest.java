package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;

/**
 * A hand-over message on the release channel is a hint, never proof of ownership: a
 * waiter never reports a lock held while Redis holds someone else's token, whatever is
 * published, and the messages never reveal a holder's token (a capability: whoever knows
 * it can release the lock).
 */
class HandOverMessageTest {

    private static final String LOCK = "lock:{handover}";

    private static final String QUEUE = LOCK + ":queue";

    private static final String CHANNEL = "lock:released";

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private RedisTestServer redis;

    private LockServiceConnection holder;

    private LockServiceConnection waiter;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        holder = new LockServiceConnection(redis);
        waiter = new LockServiceConnection(redis);
        await().atMost(Duration.ofSeconds(10)).until(waiter.subscriber::startListening);
    }

    @AfterEach
    void disconnect() throws Exception {
        holder.close();
        waiter.close();
    }

    @Test
    void aPublishedHandOverDoesNotMakeAWaiterTheOwnerWhileAnotherHoldsTheLock() throws Exception {
        LockHandle held = holder.service.lock(LockRequest.of("handover")
            .withTtl(Duration.ofSeconds(30))
            .withWaitTime(Duration.ZERO)
            .withFencingToken());
        CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture.supplyAsync(() -> waiter.service
            .tryLock(LockRequest.of("handover").withTtl(Duration.ofSeconds(30)).withWaitTime(Duration.ofSeconds(20))));
        await().atMost(Duration.ofSeconds(20)).until(() -> (Long) redis.command("ZCARD", QUEUE) == 1);
        String waiterToken = (String) ((List<?>) redis.command("ZRANGE", QUEUE, "0", "0")).get(0);
        long fence = held.fencingToken();

        // What a client allowed to PUBLISH could send: the waiter's token with a large
        // fencing token
        // (the channel's earlier format), the same with a made-up proof, and a correctly
        // proven but
        // stale hand-over (its fencing token is not above what the waiter's attempt saw).
        publish(waiterToken + ":" + (fence + 1_000_000));
        publish(sha1Hex(waiterToken) + ":" + (fence + 1_000_000) + ":" + "0".repeat(40));
        publish(sha1Hex(waiterToken) + ":" + fence + ":" + sha1Hex(waiterToken + ":" + fence));

        await().during(Duration.ofMillis(700)).atMost(Duration.ofSeconds(20)).until(() -> !waiting.isDone());
        assertThat(redis.get(LOCK)).isNotEqualTo(waiterToken);

        assertThat(held.release()).isTrue();
        Optional<LockHandle> acquired = waiting.get(10, TimeUnit.SECONDS);
        assertThat(acquired).isPresent();
        assertThat(acquired.get().isHeld()).isTrue();
        assertThat(redis.get(LOCK)).isEqualTo(waiterToken);
        assertThat(acquired.get().fencingToken()).isGreaterThan(fence);
        acquired.get().release();
    }

    @Test
    void handOverMessagesNeverCarryTheWaitersToken() throws Exception {
        List<String> messages = new CopyOnWriteArrayList<>();
        try (RespConnection spy = RespConnection.open(redis.host(), redis.port(), Duration.ofSeconds(30))) {
            spy.command("SUBSCRIBE", CHANNEL);
            Thread reader = new Thread(() -> {
                try {
                    while (true) {
                        List<?> push = (List<?>) spy.readReply();
                        messages.add(String.valueOf(push.get(2)));
                    }
                }
                catch (Exception ex) {
                    // closed
                }
            });
            reader.setDaemon(true);
            reader.start();

            LockHandle held = holder.service.lock("handover", Duration.ofSeconds(30), Duration.ZERO);
            CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture
                .supplyAsync(() -> waiter.service.tryLock("handover", Duration.ofSeconds(30), Duration.ofSeconds(20)));
            await().atMost(Duration.ofSeconds(20)).until(() -> (Long) redis.command("ZCARD", QUEUE) == 1);
            held.release();
            LockHandle acquired = waiting.get(10, TimeUnit.SECONDS).orElseThrow();
            String waiterToken = redis.get(LOCK);

            await().atMost(Duration.ofSeconds(20)).until(() -> !messages.isEmpty());
            assertThat(messages).noneMatch(message -> message.contains(waiterToken));
            acquired.release();
        }
    }

    private void publish(String message) {
        redis.command("PUBLISH", CHANNEL, message);
    }

    private static String sha1Hex(String text) throws Exception {
        return HexFormat.of()
            .formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

}
