package io.github.distlock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
import org.springframework.integration.aggregator.AggregatingMessageHandler;
import org.springframework.integration.aggregator.DefaultAggregatingMessageGroupProcessor;
import org.springframework.integration.channel.QueueChannel;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.store.MessageGroupStore;
import org.springframework.integration.store.SimpleMessageStore;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.messaging.Message;

/**
 * Spring Integration's aggregator with this registry as its {@code LockRegistry}, and
 * nothing else changed: two application instances (two registries on one real Redis)
 * aggregate the same groups from one shared message store, the members of each group
 * arriving at both at once. Every group is released exactly once, whole.
 */
class AggregatorOnTheRegistryTest {

    private static final int GROUPS = 30;

    private static final int GROUP_SIZE = 4;

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
    @SuppressWarnings("unchecked")
    void twoInstancesSharingAMessageStoreReleaseEachGroupOnceAndWhole() throws Exception {
        SimpleMessageStore messages = new SimpleMessageStore();
        QueueChannel released = new QueueChannel();
        List<AggregatingMessageHandler> instances = List.of(aggregator(first, messages, released),
                aggregator(second, messages, released));

        ExecutorService senders = Executors.newFixedThreadPool(GROUP_SIZE);
        try {
            for (int group = 0; group < GROUPS; group++) {
                List<Future<?>> sent = new ArrayList<>();
                for (int member = 1; member <= GROUP_SIZE; member++) {
                    Message<Integer> message = MessageBuilder.withPayload(member)
                        .setCorrelationId("group-" + group)
                        .setSequenceNumber(member)
                        .setSequenceSize(GROUP_SIZE)
                        .build();
                    AggregatingMessageHandler instance = instances.get(member % 2);
                    sent.add(senders.submit(() -> instance.handleMessage(message)));
                }
                for (Future<?> future : sent) {
                    future.get();
                }
            }
        }
        finally {
            senders.shutdown();
        }

        List<Message<?>> groups = released.clear();
        assertThat(groups).as("one release per group").hasSize(GROUPS);
        for (Message<?> group : groups) {
            assertThat((List<Object>) group.getPayload()).as("the whole group, each member once")
                .containsExactlyInAnyOrder(1, 2, 3, 4);
        }
        assertThat(groups.stream().map((group) -> group.getHeaders().get("correlationId")).distinct()).hasSize(GROUPS);
    }

    private static AggregatingMessageHandler aggregator(ContractApplication instance, MessageGroupStore messages,
            QueueChannel released) {
        AggregatingMessageHandler aggregator = new AggregatingMessageHandler(
                new DefaultAggregatingMessageGroupProcessor(), messages);
        aggregator.setLockRegistry(instance.bean(LockServiceLockRegistry.class));
        aggregator.setOutputChannel(released);
        aggregator.setBeanFactory(integration.getBeanFactory());
        aggregator.afterPropertiesSet();
        return aggregator;
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
