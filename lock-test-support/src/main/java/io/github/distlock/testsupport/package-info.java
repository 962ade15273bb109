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
 * <b>Redis or Valkey.</b> The fixtures run {@code redis-server} by default. The system
 * property {@code distlock.test.server=valkey} (or the environment variable
 * {@code DISTLOCK_TEST_SERVER=valkey}) makes every fixture that is not handed a binary
 * run {@code valkey-server} instead, for a whole test run; Maven's surefire passes
 * {@code -D} properties on to the test JVMs: <pre>{@code
 * ./mvnw -B -pl lock-contract-tests -am verify -Ddistlock.test.server=valkey \
 *     -Dtest=StandaloneLettuceLockContractTest,ClusterLettuceLockContractTest -Dsurefire.failIfNoSpecifiedTests=false
 * }</pre> The executable comes from {@code valkey.server.bin} /
 * {@code VALKEY_SERVER_BIN}, else {@code valkey-server} on the {@code PATH} (for Redis:
 * {@code redis.server.bin} / {@code REDIS_SERVER_BIN}, the {@code PATH}, then the binary
 * bundled in embedded-redis); nothing falls back from Valkey to Redis. The log says which
 * binary was chosen and, once per binary, what it runs, by its own version
 * ("RedisTestServer runs Valkey 9.1.2 (redis_version 7.2.4 for compatibility)"). See
 * {@link io.github.distlock.testsupport.RedisServerBinary} and
 * {@link io.github.distlock.testsupport.ServerKind}; a test that needs Valkey whatever
 * the run's choice calls
 * {@link io.github.distlock.testsupport.RedisServerBinary#requireValkey()}.
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
