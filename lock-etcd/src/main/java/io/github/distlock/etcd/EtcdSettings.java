package io.github.distlock.etcd;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * How {@link EtcdLockBackend#connect(EtcdSettings)} reaches an etcd cluster, with the
 * property each field stands for under {@code distributed-lock.etcd}. Every value is
 * checked here, so a wrong one fails at startup with a message naming the property, the
 * value and the fix.
 *
 * <pre>{@code
 * EtcdSettings settings = EtcdSettings.of("http://10.0.0.1:2379", "http://10.0.0.2:2379", "http://10.0.0.3:2379")
 *     .withOperationTimeout(Duration.ofSeconds(3));
 * try (EtcdLockBackend backend = EtcdLockBackend.connect(settings)) {
 *     ...
 * }
 * }</pre>
 *
 * @param endpoints {@code distributed-lock.etcd.endpoints}: the client URLs of the
 * members, {@code http://host:port} (or {@code https://}); at least one, and all of a
 * cluster's members for failover
 * @param keyPrefix {@code distributed-lock.etcd.key-prefix}: what every key starts with;
 * locks live under {@code <key-prefix>lock/}
 * @param operationTimeout {@code distributed-lock.etcd.operation-timeout}: the longest
 * any lock call waits for etcd; a leader election must fit in it for calls to ride one
 * out
 * @param connectTimeout {@code distributed-lock.etcd.connect-timeout}: how long the
 * startup check waits for the cluster to answer
 * @param user {@code distributed-lock.etcd.user}, with etcd authentication on; or
 * {@code null}
 * @param password {@code distributed-lock.etcd.password}, with {@code user}; or
 * {@code null}
 * @param trustCertificates {@code distributed-lock.etcd.trust-certificates}: a PEM file
 * of the certificates (a CA) that {@code https://} endpoints are trusted by; or
 * {@code null} for the JVM's default trust store
 * @param clientCertificate {@code distributed-lock.etcd.client-certificate}: a PEM file
 * of this client's certificate (chain), for members that ask clients for one
 * ({@code --client-cert-auth}); or {@code null}
 * @param clientKey {@code distributed-lock.etcd.client-key}: the PEM file of that
 * certificate's private key, unencrypted PKCS#8; set with {@code clientCertificate}
 */
public record EtcdSettings(List<String> endpoints, String keyPrefix, Duration operationTimeout, Duration connectTimeout,
        @Nullable String user, @Nullable String password, @Nullable Path trustCertificates,
        @Nullable Path clientCertificate, @Nullable Path clientKey) {

    /** The property prefix the names in messages start with. */
    public static final String PREFIX = "distributed-lock.etcd";

    /** The default key prefix: locks live under {@code distlock/lock/}. */
    public static final String DEFAULT_KEY_PREFIX = "distlock/";

    /** The default operation timeout. */
    public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(3);

    /** The default connect timeout. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /**
     * @throws IllegalArgumentException naming the property, the bad value and the fix
     */
    public EtcdSettings {
        Objects.requireNonNull(endpoints, PREFIX + ".endpoints");
        endpoints = List.copyOf(endpoints);
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException(PREFIX + ".endpoints is empty. Set it to the client URLs of the etcd "
                    + "members, comma-separated, e.g. " + PREFIX
                    + ".endpoints=http://etcd-1:2379,http://etcd-2:2379,http://etcd-3:2379");
        }
        for (String endpoint : endpoints) {
            requireValidEndpoint(endpoint);
        }
        Objects.requireNonNull(keyPrefix, PREFIX + ".key-prefix");
        if (keyPrefix.isEmpty() || keyPrefix.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException(PREFIX + ".key-prefix='" + keyPrefix.replace("\n", "\\n") + "' is "
                    + "empty or has control characters. Use a printable prefix ending in '/', such as the default '"
                    + DEFAULT_KEY_PREFIX + "'.");
        }
        requirePositive("operation-timeout", operationTimeout);
        requirePositive("connect-timeout", connectTimeout);
        long secure = endpoints.stream().filter(endpoint -> endpoint.trim().startsWith("https://")).count();
        if (secure != 0 && secure != endpoints.size()) {
            throw new IllegalArgumentException(PREFIX + ".endpoints=" + endpoints + " mixes http:// and https://. "
                    + "Use https:// for every member if the cluster serves clients over TLS, http:// otherwise.");
        }
        if (trustCertificates != null && !Files.isReadable(trustCertificates)) {
            throw new IllegalArgumentException(PREFIX + ".trust-certificates=" + trustCertificates + " is not a "
                    + "readable file. Point it at the PEM file of the CA that signed the members' certificates, or "
                    + "leave it unset to trust the JVM's default certificates.");
        }
        if ((clientCertificate == null) != (clientKey == null)) {
            throw new IllegalArgumentException(
                    PREFIX + ".client-certificate and " + PREFIX + ".client-key go together, " + "but only "
                            + (clientCertificate == null ? "client-key" : "client-certificate") + " is set. Set "
                            + "both for members that ask clients for a certificate, or neither.");
        }
        requireReadable("client-certificate", clientCertificate, "the PEM file of this client's certificate");
        requireReadable("client-key", clientKey, "the PEM file of the client certificate's private key (PKCS#8)");
        if (clientCertificate != null && secure == 0) {
            throw new IllegalArgumentException(PREFIX + ".client-certificate is set, but " + PREFIX + ".endpoints="
                    + endpoints + " are http://. A client certificate needs TLS: use the members' https:// client "
                    + "URLs, or leave client-certificate and client-key unset.");
        }
        if ((user == null) != (password == null)) {
            throw new IllegalArgumentException(PREFIX + ".user and " + PREFIX + ".password go together, but only "
                    + (user == null ? "password" : "user") + " is set. Set both for etcd authentication, or neither.");
        }
    }

    /** Settings with the defaults for everything but the endpoints. */
    public static EtcdSettings of(String... endpoints) {
        return of(List.of(endpoints));
    }

    /** Settings with the defaults for everything but the endpoints. */
    public static EtcdSettings of(List<String> endpoints) {
        return new EtcdSettings(endpoints, DEFAULT_KEY_PREFIX, DEFAULT_OPERATION_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, null,
                null, null, null, null);
    }

    /** These settings with another key prefix. */
    public EtcdSettings withKeyPrefix(String keyPrefix) {
        return new EtcdSettings(endpoints, keyPrefix, operationTimeout, connectTimeout, user, password,
                trustCertificates, clientCertificate, clientKey);
    }

    /** These settings with another operation timeout. */
    public EtcdSettings withOperationTimeout(Duration operationTimeout) {
        return new EtcdSettings(endpoints, keyPrefix, operationTimeout, connectTimeout, user, password,
                trustCertificates, clientCertificate, clientKey);
    }

    /** These settings with another connect timeout. */
    public EtcdSettings withConnectTimeout(Duration connectTimeout) {
        return new EtcdSettings(endpoints, keyPrefix, operationTimeout, connectTimeout, user, password,
                trustCertificates, clientCertificate, clientKey);
    }

    /**
     * These settings trusting the CA in {@code pemFile} for {@code https://} endpoints.
     */
    public EtcdSettings withTrustCertificates(Path pemFile) {
        return new EtcdSettings(endpoints, keyPrefix, operationTimeout, connectTimeout, user, password, pemFile,
                clientCertificate, clientKey);
    }

    /**
     * These settings presenting a client certificate, for members started with
     * {@code --client-cert-auth}.
     * @param certificate a PEM file of the client's certificate (chain)
     * @param key a PEM file of its private key, unencrypted PKCS#8
     */
    public EtcdSettings withClientCertificate(Path certificate, Path key) {
        return new EtcdSettings(endpoints, keyPrefix, operationTimeout, connectTimeout, user, password,
                trustCertificates, certificate, key);
    }

    /** Whether the endpoints are {@code https://}. */
    public boolean usesTls() {
        return endpoints.get(0).trim().startsWith("https://");
    }

    /** These settings with etcd authentication. */
    public EtcdSettings withCredentials(String user, String password) {
        return new EtcdSettings(endpoints, keyPrefix, operationTimeout, connectTimeout, user, password,
                trustCertificates, clientCertificate, clientKey);
    }

    private static void requireValidEndpoint(String endpoint) {
        String fix = " Write each endpoint as a member's client URL with scheme, host and port, e.g. "
                + "http://etcd-1:2379 (https:// with TLS), and separate several with commas.";
        if (endpoint == null || endpoint.isBlank()) {
            throw new IllegalArgumentException(PREFIX + ".endpoints has an empty entry." + fix);
        }
        URI uri;
        try {
            uri = new URI(endpoint.trim());
        }
        catch (URISyntaxException ex) {
            throw new IllegalArgumentException(
                    PREFIX + ".endpoints has '" + endpoint + "', which is not a URL (" + ex.getReason() + ")." + fix);
        }
        String scheme = uri.getScheme();
        if (scheme == null || !(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null
                || uri.getPort() < 1) {
            throw new IllegalArgumentException(PREFIX + ".endpoints has '" + endpoint
                    + "', which is not an http:// or https:// URL with a host and a port." + fix);
        }
    }

    private static void requireReadable(String name, @Nullable Path file, String what) {
        if (file != null && !Files.isReadable(file)) {
            throw new IllegalArgumentException(
                    PREFIX + "." + name + "=" + file + " is not a readable file. Point it at " + what + ".");
        }
    }

    private static void requirePositive(String name, Duration value) {
        Objects.requireNonNull(value, PREFIX + "." + name);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(
                    PREFIX + "." + name + "=" + value + " must be positive, such as 3s or 500ms.");
        }
    }

    @Override
    public String toString() {
        // Never the password.
        return "EtcdSettings[endpoints=" + endpoints + ", keyPrefix=" + keyPrefix + ", operationTimeout="
                + operationTimeout + ", connectTimeout=" + connectTimeout + ", user=" + user + ", trustCertificates="
                + trustCertificates + ", clientCertificate=" + clientCertificate + "]";
    }

}
