package io.github.distlock.contract;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisTestServer;

/** A single {@code redis-server} on a free port; a fault proxy can sit in front of it. */
public final class StandaloneRedis implements ContractRedis {

    private final RedisTestServer server;

    private StandaloneRedis(RedisTestServer server) {
        this.server = server;
    }

    /** Starts a server, closed with this object. */
    public static StandaloneRedis start() {
        return new StandaloneRedis(RedisTestServer.start());
    }

    /** The server, for tests of a subclass that need more than the contract does. */
    public RedisTestServer server() {
        return server;
    }

    @Override
    public List<String> springProperties() {
        return hostAndPort(server.host(), server.port());
    }

    @Override
    public Object command(String key, String... command) {
        return server.command(command);
    }

    @Override
    public Set<String> keys(String pattern) {
        return new TreeSet<>(server.scan(pattern));
    }

    @Override
    public void reset() {
        server.resume();
        server.flushAll();
    }

    @Override
    public RedisFaultProxy startFaultProxy() {
        return RedisFaultProxy.start(server);
    }

    @Override
    public List<String> springPropertiesThrough(RedisFaultProxy proxy) {
        return hostAndPort(proxy.host(), proxy.port());
    }

    private static List<String> hostAndPort(String host, int port) {
        return List.of("spring.data.redis.host=" + host, "spring.data.redis.port=" + port);
    }

    @Override
    public void close() {
        server.close();
    }

    @Override
    public String toString() {
        return "standalone " + server;
    }

}
