package io.github.distlock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import io.github.distlock.contract.ContractApplication;
import io.github.distlock.contract.LockKeyspace;
import io.github.distlock.contract.RedisContractStore;
import io.github.distlock.contract.StandaloneRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.handler.AbstractReplyProducingMessageHandler;
import org.springframework.integration.handler.advice.LockRequestHandlerAdvice;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.messaging.Message;

/**
 * Spring Integration's {@code LockRequestHandlerAdvice} (a handler that runs one message
 * per key at a time) with this registry as its {@code LockRegistry}, nothing else
 * changed: two application instances on one real Redis handle messages of the same few
 * keys at once, and no two handlers of one key ever overlap, across the instances.
 */
class LockRequestHandlerAdviceOnTheRegistryTest {

    private static final int MESSAGES = 160;

    private static final int KEYS = 4;

    private static RedisContractStore store;

    private static ContractApplication first;

    private static ContractApplication second;

    private static AnnotationConfigApplicationContext integration;

    @BeforeAll
    static void start() {
        store = new RedisContractStore(StandaloneRedis.start(), LockKeyspace.SINGLE_REDIS);
        first = ContractApplication.start(store.applicationProperties(), Registry.class);
        second = ContractApplication.start(store.applicationProperties(), Registry.class);
        integration = new AnnotationConfigApplicationContext(IntegrationInfrastructure.class);
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable closeable : new AutoCloseable[] { integration, first, second, store }) {
            if (closeable != null) {
                try {
                    closeable.close();
                }
                catch (Exception ex) {
                    // the next one still closes
                }
            }
        }
    }

    @Test
    void twoInstancesNeverHandleTwoMessagesOfOneKeyAtOnce() throws Exception {
        Handling handling = new Handling();
        List<AbstractReplyProducingMessageHandler> instances = List.of(handler(first, handling),
                handler(second, handling));

        ExecutorService senders = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                Message<Integer> message = MessageBuilder.withPayload(i)
                    .setHeader("account", "account-" + i % KEYS)
                    .build();
                // Each key's messages alternate between the two instances.
                AbstractReplyProducingMessageHandler instance = instances.get((i / KEYS) % 2);
                sent.add(senders.submit(() -> instance.handleMessage(message)));
            }
            for (Future<?> future : sent) {
                future.get();
            }
        }
        finally {
            senders.shutdown();
        }

        assertThat(handling.overlaps.get()).as("two handlers of one key at once").isZero();
        assertThat(handling.handled.get()).as("every message handled, none discarded").isEqualTo(MESSAGES);
        assertThat(handling.mostInside.get()).as("several keys were handled at once: the lock is per key")
            .isGreaterThan(1);
        for (int key = 0; key < KEYS; key++) {
            assertThat(store.isHeld("account-" + key)).as("nothing left held").isFalse();
        }
    }

    private static AbstractReplyProducingMessageHandler handler(ContractApplication instance, Handling handling) {
        LockRequestHandlerAdvice advice = new LockRequestHandlerAdvice(instance.bean(LockServiceLockRegistry.class),
                (Function<Message<?>, Object>) (message) -> message.getHeaders().get("account"));
        advice.setWaitLockDuration(Duration.ofSeconds(30));
        advice.setBeanFactory(integration.getBeanFactory());
        advice.afterPropertiesSet();
        AbstractReplyProducingMessageHandler handler = new AbstractReplyProducingMessageHandler() {

            @Override
            protected Object handleRequestMessage(Message<?> message) {
                handling.handle((String) message.getHeaders().get("account"));
                return null;
            }

        };
        handler.setRequiresReply(false);
        handler.setAdviceChain(List.of(advice));
        handler.setBeanFactory(integration.getBeanFactory());
        handler.afterPropertiesSet();
        return handler;
    }

    /** Counts, per key, the handlers inside at once. */
    static final class Handling {

        final Map<String, AtomicInteger> insidePerKey = new ConcurrentHashMap<>();

        final AtomicInteger inside = new AtomicInteger();

        final AtomicInteger mostInside = new AtomicInteger();

        final AtomicInteger overlaps = new AtomicInteger();

        final AtomicInteger handled = new AtomicInteger();

        void handle(String key) {
            AtomicInteger ofKey = this.insidePerKey.computeIfAbsent(key, (name) -> new AtomicInteger());
            if (ofKey.incrementAndGet() > 1) {
                this.overlaps.incrementAndGet();
            }
            this.mostInside.accumulateAndGet(this.inside.incrementAndGet(), Math::max);
            try {
                Thread.sleep(5);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            finally {
                this.inside.decrementAndGet();
                ofKey.decrementAndGet();
                this.handled.incrementAndGet();
            }
        }

    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(LockRegistryAutoConfiguration.class)
    static class Registry {

    }

    /**
     * What Spring Integration's components need around them (evaluation context,
     * conversion).
     */
    @Configuration(proxyBeanMethods = false)
    @EnableIntegration
    static class IntegrationInfrastructure {

    }

}
