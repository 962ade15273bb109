package io.github.distlock.testsupport;

import java.util.Locale;

/**
 * Which server a test run's fixtures start: Redis, or Valkey, which speaks the same
 * protocol and reports its own version apart from the Redis version it claims for
 * compatibility.
 *
 * <pre>{@code
 * ./mvnw -B -pl lock-contract-tests -am verify -Ddistlock.test.server=valkey -Dtest=StandaloneLettuceLockContractTest
 * }</pre>
 *
 * @see RedisServerBinary#server()
 */
public enum ServerKind {

    /** {@code redis-server}; its version is INFO's {@code redis_version}. */
    REDIS("redis", "Redis", "redis-server", "redis_version"),

    /**
     * {@code valkey-server}; its version is INFO's {@code valkey_version}
     * ({@code redis_version} says 7.2.4).
     */
    VALKEY("valkey", "Valkey", "valkey-server", "valkey_version");

    private final String id;

    private final String displayName;

    private final String executable;

    private final String versionField;

    ServerKind(String id, String displayName, String executable, String versionField) {
        this.id = id;
        this.displayName = displayName;
        this.executable = executable;
        this.versionField = versionField;
    }

    /**
     * The value that selects it in {@value RedisServerBinary#SERVER_PROPERTY}.
     * @return {@code redis} or {@code valkey}
     */
    public String id() {
        return id;
    }

    /**
     * The product's name, as log lines show it.
     * @return {@code Redis} or {@code Valkey}
     */
    public String displayName() {
        return displayName;
    }

    /**
     * The executable's file name, looked up on the {@code PATH}.
     * @return {@code redis-server} or {@code valkey-server}
     */
    public String executable() {
        return executable;
    }

    /**
     * The {@code INFO server} field that holds the product's own version.
     * @return {@code redis_version} or {@code valkey_version}
     */
    public String versionField() {
        return versionField;
    }

    /**
     * Which server wrote an {@code INFO server} reply: Valkey adds
     * {@code valkey_version}, Redis has none.
     * @param infoServer the text of {@code INFO server}
     * @return the server kind
     */
    public static ServerKind of(String infoServer) {
        return RedisTestServer.parseInfoField(infoServer, VALKEY.versionField) != null ? VALKEY : REDIS;
    }

    /**
     * The product and its own version from an {@code INFO server} reply.
     * @param infoServer the text of {@code INFO server}
     * @return e.g. {@code Valkey 9.1.2} or {@code Redis 7.0.15}
     */
    public static String describe(String infoServer) {
        ServerKind kind = of(infoServer);
        String version = RedisTestServer.parseInfoField(infoServer, kind.versionField);
        return kind.displayName + " " + (version != null ? version : "(version unknown)");
    }

    /**
     * Parses a {@value RedisServerBinary#SERVER_PROPERTY} value.
     * @param value {@code redis} or {@code valkey}, in any case
     * @param source where the value came from, for the error message
     * @return the server kind
     * @throws IllegalStateException for any other value
     */
    static ServerKind parse(String value, String source) {
        String wanted = value.trim().toLowerCase(Locale.ROOT);
        for (ServerKind kind : values()) {
            if (kind.id.equals(wanted)) {
                return kind;
            }
        }
        throw new IllegalStateException(
                source + " is '" + value + "', but must be 'redis' or 'valkey' (or unset, " + "for redis)");
    }

}
