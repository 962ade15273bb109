package io.github.distlock.redis;

/**
 * The product and version a server reports in {@code INFO server}: Valkey's own version
 * from {@code valkey_version}, never the {@code redis_version:7.2.4} it reports for
 * compatibility.
 *
 * <pre>{@code
 * ServerVersion.of(info).toString()   // "Valkey 9.1.2", "Redis 7.0.15"
 * }</pre>
 *
 * @param product {@code Redis} or {@code Valkey}
 * @param version the product's own version, or {@code unknown}
 */
record ServerVersion(String product, String version) {

    private static final String REDIS = "Redis";

    private static final String VALKEY = "Valkey";

    /**
     * The first Redis major version with sharded pub/sub; every Valkey release has it
     * (Valkey began at 7.2).
     */
    private static final int REDIS_SHARDED_SINCE_MAJOR = 7;

    /**
     * Reads an {@code INFO server} reply.
     * @param info the reply's text
     * @return the server's product and own version
     */
    static ServerVersion of(String info) {
        String valkey = field(info, "valkey_version");
        if (valkey != null) {
            return new ServerVersion(VALKEY, valkey);
        }
        String redis = field(info, "redis_version");
        return new ServerVersion(REDIS, redis != null ? redis : "unknown");
    }

    /** Whether this is Redis (or a server that reports itself only as such). */
    boolean isRedis() {
        return REDIS.equals(product);
    }

    /**
     * Whether a server of this version has {@code SPUBLISH}, for when the server cannot
     * be asked: every Valkey, Redis from 7.0.
     */
    boolean hasShardedPubSub() {
        return !isRedis() || major() >= REDIS_SHARDED_SINCE_MAJOR;
    }

    private int major() {
        int dot = version.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
        }
        catch (NumberFormatException ex) {
            return 0;
        }
    }

    private static String field(String info, String name) {
        String prefix = name + ":";
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
        return null;
    }

    /** {@code Valkey 9.1.2}, as log lines name the server. */
    @Override
    public String toString() {
        return product + " " + version;
    }
}
