package io.github.distlock.integration;

import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.github.distlock.LockLostEvent;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * One application instance of {@link LeaderElectionProcessTest}, run as a JVM of its own:
 * Spring Integration's {@code LockRegistryLeaderInitiator} on the auto-configured
 * registry, and a leader that writes to a fenced resource (a Redis key that refuses a
 * token older than the last it took) every 100 ms. Everything it sees goes to standard
 * output, one event a line, for the test to read: {@code GRANTED id token},
 * {@code REVOKED id}, {@code LOST id}, {@code WRITE id token accepted|refused}, each with
 * the wall-clock time in ms first.
 *
 * <p>
 * Arguments: the instance's id, then {@code name=value} properties (the Redis address,
 * the ttl).
 */
public final class LeaderElectionApp {

    /** The resource: takes a write only with a token at least the last one taken. */
    static final RedisScript<Long> FENCED_WRITE = RedisScript.of("""
            local last = tonumber(redis.call('GET', KEYS[1]) or '0')
            if tonumber(ARGV[1]) < last then return 0 end
            redis.call('SET', KEYS[1], ARGV[1])
            redis.call('RPUSH', KEYS[2], ARGV[2] .. ' ' .. ARGV[1])
            return 1
            """, Long.class);

    static final String FENCE_KEY = "resource:fence";

    static final String WRITES_KEY = "resource:writes";

    private LeaderElectionApp() {
    }

    public static void main(String[] args) {
        System.setProperty("leader.id", args[0]);
        new SpringApplicationBuilder(Instance.class).web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .logStartupInfo(false)
            .properties(List.of(args).subList(1, args.length).toArray(String[]::new))
            .run();
        print("READY");
    }

    static synchronized void print(String event) {
        System.out.println(System.currentTimeMillis() + " " + event + " " + System.getProperty("leader.id"));
        System.out.flush();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class Instance {

        @Bean
        LockRegistryLeaderInitiator leaderInitiator(LockRegistry<?> lockRegistry) {
            return new LockRegistryLeaderInitiator(lockRegistry);
        }

        @Bean(destroyMethod = "stop")
        Leader leader(LockServiceLockRegistry registry, StringRedisTemplate redis) {
            return new Leader(registry, redis);
        }

    }

    /** What the application does as leader: fenced writes, and a line for each event. */
    static final class Leader {

        private final LockServiceLockRegistry registry;

        private final StringRedisTemplate redis;

        private final ScheduledExecutorService writer = Executors.newSingleThreadScheduledExecutor();

        private volatile @Nullable ScheduledFuture<?> writing;

        Leader(LockServiceLockRegistry registry, StringRedisTemplate redis) {
            this.registry = registry;
            this.redis = redis;
        }

        @EventListener
        void granted(OnGrantedEvent event) {
            // The recipe: the leader's fencing token goes with every write it makes.
            long token = this.registry.heldHandle(event.getRole()).orElseThrow().fencingToken();
            print("GRANTED " + token);
            this.writing = this.writer.scheduleWithFixedDelay(() -> write(token), 0, 100, TimeUnit.MILLISECONDS);
        }

        private void write(long token) {
            try {
                Long accepted = this.redis.execute(FENCED_WRITE, List.of(FENCE_KEY, WRITES_KEY), String.valueOf(token),
                        System.getProperty("leader.id"));
                print("WRITE " + token + " " + ((accepted != null && accepted == 1) ? "accepted" : "refused"));
            }
            catch (RuntimeException ex) {
                print("WRITE " + token + " failed");
            }
        }

        @EventListener
        void revoked(OnRevokedEvent event) {
            ScheduledFuture<?> current = this.writing;
            if (current != null) {
                current.cancel(false);
            }
            print("REVOKED");
        }

        @EventListener
        void lost(LockLostEvent event) {
            print("LOST");
        }

        void stop() {
            this.writer.shutdownNow();
        }

    }

}
