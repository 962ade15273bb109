package io.github.distlock.redis;

import java.lang.reflect.Method;
import java.util.stream.Collectors;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.util.ReflectionUtils;

/**
 * What the health check calls the Redis a connection factory goes to: {@code host:port}
 * for a standalone node, {@code Sentinel master 'mymaster'} for a Sentinel-managed one. A
 * Cluster's masters are named one by one, as the health check finds them; the Cluster's
 * own name (its seed nodes) shows only when it cannot be asked for them.
 */
final class DeploymentName {

    /** For a factory whose settings cannot be read. */
    static final String UNKNOWN = "redis";

    private DeploymentName() {
    }

    /**
     * The name of the deployment {@code factory} connects to. Read by method name:
     * Lettuce's and Jedis's factories both have these getters but share no type, and
     * either driver may be absent.
     */
    static String of(RedisConnectionFactory factory) {
        if (invoke(factory, "getSentinelConfiguration") instanceof RedisSentinelConfiguration sentinel
                && sentinel.getMaster() != null) {
            return "Sentinel master '" + sentinel.getMaster().getName() + "'";
        }
        if (invoke(factory, "getClusterConfiguration") instanceof RedisClusterConfiguration cluster) {
            // Named so only when the Cluster cannot be asked for its masters at all.
            return "Redis Cluster " + cluster.getClusterNodes()
                .stream()
                .map(node -> node.getHost() + ":" + node.getPort())
                .collect(Collectors.joining(","));
        }
        if (invoke(factory, "getStandaloneConfiguration") instanceof RedisStandaloneConfiguration standalone) {
            return standalone.getHostName() + ":" + standalone.getPort();
        }
        return UNKNOWN;
    }

    private static Object invoke(Object target, String getter) {
        Method method = ReflectionUtils.findMethod(target.getClass(), getter);
        if (method == null || method.getParameterCount() != 0) {
            return null;
        }
        try {
            return method.invoke(target);
        }
        catch (ReflectiveOperationException | RuntimeException ex) {
            return null;
        }
    }

}
