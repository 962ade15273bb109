/**
 * Test fixtures that run <em>real</em> {@code redis-server} processes: a single node,
 * several independent masters (for Redlock), a replica of a master, a Sentinel-managed
 * group and a small Redis Cluster, together with fault injection (kill, pause, resume,
 * restart, a failover that loses chosen writes, a wall clock that jumps), a TCP proxy
 * that injects network faults per command, a keep-alive proxy that hides restarts and
 * switches of the server behind it, and a tiny RESP client for admin commands.
 *
 * <p>
 * Redis is never mocked in this project: lock semantics live in Lua scripts, expirations
 * and pub/sub, and only a real server shows whether they hold. Everything here is for
 * tests; other modules depend on this one in {@code test} scope only.
 *
 * <p>
 * Entry points: {@link io.github.distlock.testsupport.RedisTestServer},
 * {@link io.github.distlock.testsupport.RedisServerExtension},
 * {@link io.github.distlock.testsupport.RedisTestCluster},
 * {@link io.github.distlock.testsupport.RedisClusterExtension},
 * {@link io.github.distlock.testsupport.RedisTestSentinelGroup},
 * {@link io.github.distlock.testsupport.RedisSentinelExtension},
 * {@link io.github.distlock.testsupport.ReplicaFailover},
 * {@link io.github.distlock.testsupport.RedisFaultProxy} and
 * {@link io.github.distlock.testsupport.RedisKeepAliveProxy}.
 */
package io.github.distlock.testsupport;
