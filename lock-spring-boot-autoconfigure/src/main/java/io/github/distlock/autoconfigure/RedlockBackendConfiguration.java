package io.github.distlock.autoconfigure;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.redlock.LettuceRedlockNodes;
import io.github.distlock.redlock.RedlockBackend;
import io.github.distlock.redlock.RedlockReleaseHints;

/**
 * Redlock over the independent masters of {@code distributed-lock.redlock.nodes}, when
 * any are configured: then it backs every lock, and the single-Redis backends back off.
 * Each node gets a Lettuce client of its own (sharing one set of client resources), so
 * Lettuce must be on the classpath; {@code spring.data.redis.*} is not used for locks
 * then.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = { "io.lettuce.core.RedisClient", LockServiceRequirement.REDIS_BACKEND })
@ConditionalOnMissingBean(LockBackend.class)
@Conditional(RedlockBackendConfiguration.OnRedlockNodes.class)
class RedlockBackendConfiguration {

    private static final Log logger = LogFactory.getLog(RedlockBackendConfiguration.class);

    /** How long the startup waits for the nodes' first connections. */
    private static final Duration STARTUP_CONNECT_WAIT = Duration.ofSeconds(3);

    /** The Redlock backend, with a client per node. */
    @Bean(destroyMethod = "close")
    RedlockBackend lockBackend(DistributedLockProperties properties) {
        RedlockProperties redlock = properties.getRedlock();
        LettuceRedlockNodes nodes = LettuceRedlockNodes.connect(redlock.getNodes(), redlock.getNodeTimeout(),
                properties.getKeyPrefix(), properties.getDefaultTtl(), redlock.isRestartProtection(),
                redlock.durableAddresses());
        int count = nodes.names().size();
        if (count % 2 == 0) {
            logger.warn("Redlock runs on " + count + " nodes, an even number: a majority is " + (count / 2 + 1)
                    + ", so it tolerates " + (count / 2 - 1) + " failed node(s), no more than " + (count - 1)
                    + " nodes would. Add or remove a node in " + RedlockProperties.PREFIX + ".nodes.");
        }
        // Connecting takes longer than the node timeout allows one call, so the first
        // locks after a
        // start would fail for want of connections: give the nodes a moment (they connect
        // side by side).
        int connected = nodes.awaitConnected(STARTUP_CONNECT_WAIT);
        if (connected < count / 2 + 1) {
            logger.warn("Only " + connected + " of " + count + " Redlock nodes " + nodes.names() + " connected within "
                    + STARTUP_CONNECT_WAIT.toSeconds() + " s of startup; locks fail until a majority answers.");
        }
        logger.info("Locks are Redlocks over " + count + " independent masters " + nodes.names() + ", a majority of "
                + (count / 2 + 1) + " needed; " + connected + " connected");
        return nodes.redlock(redlock.getDriftFactor());
    }

    /**
     * Wakes this JVM's waiting threads when a release of their lock is announced on any
     * node; the subscriptions open on the first wait. Closed with the backend, not as a
     * bean of its own.
     */
    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    RedlockReleaseHints redlockReleaseHints(RedlockBackend lockBackend, LockWaiters lockWaiters,
            DistributedLockProperties properties) {
        return lockBackend.releaseHints()
            .waitersRetryEvery(properties.getRedlock().getRetryDelay())
            .deliverTo(lockWaiters);
    }

    /**
     * Matches when {@code distributed-lock.redlock.nodes} lists at least one node, in any
     * form Boot binds.
     */
    static class OnRedlockNodes extends SpringBootCondition {

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            boolean configured = Binder.get(context.getEnvironment())
                .bind(RedlockProperties.PREFIX + ".nodes", Bindable.listOf(String.class))
                .map(nodes -> !nodes.isEmpty())
                .orElse(false);
            return configured ? ConditionOutcome.match(RedlockProperties.PREFIX + ".nodes is set")
                    : ConditionOutcome.noMatch(RedlockProperties.PREFIX + ".nodes is not set");
        }

    }

}
