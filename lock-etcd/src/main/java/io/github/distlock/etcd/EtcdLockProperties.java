package io.github.distlock.etcd;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The etcd store's settings, {@code distributed-lock.etcd.*}, as
 * {@link EtcdLockAutoConfiguration} binds them:
 *
 * <pre>{@code
 * distributed-lock.etcd.endpoints=http://etcd-1:2379,http://etcd-2:2379,http://etcd-3:2379
 * distributed-lock.etcd.operation-timeout=3s
 * }</pre>
 *
 * Checked by {@link EtcdSettings}, which names the property of any bad value.
 */
@ConfigurationProperties(EtcdSettings.PREFIX)
public class EtcdLockProperties {

    // Literal defaults (EtcdSettings' own, as EtcdSettingsTest checks), because the
    // configuration processor shows a field's default in the IDE metadata and the
    // configuration reference only when it is written out here.

    /**
     * The client URLs of the etcd members, http://host:port or https://host:port,
     * separated by commas: all of a cluster's members, for failover. Setting it enables
     * the etcd backend.
     */
    private List<String> endpoints = new ArrayList<>();

    /**
     * What every key starts with: the lock order:42 lives under
     * {key-prefix}lock/order:42/.
     */
    private String keyPrefix = "distlock/";

    /**
     * The longest a lock call waits for etcd, a positive duration; a leader election
     * should fit in it.
     */
    private Duration operationTimeout = Duration.ofSeconds(3);

    /**
     * How long the startup waits for the cluster to answer before it fails, a positive
     * duration.
     */
    private Duration connectTimeout = Duration.ofSeconds(10);

    /** The etcd user, with authentication on; set with password. */
    private @Nullable String user;

    /** The etcd user's password; set with user. */
    private @Nullable String password;

    /**
     * A PEM file of the CA that signed the members' certificates, for https:// endpoints;
     * unset, the JVM's default trust store.
     */
    private @Nullable String trustCertificates;

    /**
     * A PEM file of this client's certificate, for members that ask clients for one
     * (etcd's --client-cert-auth); set with client-key.
     */
    private @Nullable String clientCertificate;

    /**
     * The PEM file of the client certificate's private key, unencrypted PKCS#8; set with
     * client-certificate.
     */
    private @Nullable String clientKey;

    /** These properties as settings, checked. */
    public EtcdSettings toSettings() {
        return new EtcdSettings(endpoints, keyPrefix, operationTimeout, connectTimeout, user, password,
                path(trustCertificates), path(clientCertificate), path(clientKey));
    }

    private static @Nullable Path path(@Nullable String file) {
        return (file != null) ? Path.of(file) : null;
    }

    public List<String> getEndpoints() {
        return endpoints;
    }

    public void setEndpoints(List<String> endpoints) {
        this.endpoints = endpoints;
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    public Duration getOperationTimeout() {
        return operationTimeout;
    }

    public void setOperationTimeout(Duration operationTimeout) {
        this.operationTimeout = operationTimeout;
    }

    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    public @Nullable String getUser() {
        return user;
    }

    public void setUser(@Nullable String user) {
        this.user = user;
    }

    public @Nullable String getTrustCertificates() {
        return trustCertificates;
    }

    public void setTrustCertificates(@Nullable String trustCertificates) {
        this.trustCertificates = trustCertificates;
    }

    public @Nullable String getClientCertificate() {
        return clientCertificate;
    }

    public void setClientCertificate(@Nullable String clientCertificate) {
        this.clientCertificate = clientCertificate;
    }

    public @Nullable String getClientKey() {
        return clientKey;
    }

    public void setClientKey(@Nullable String clientKey) {
        this.clientKey = clientKey;
    }

    public @Nullable String getPassword() {
        return password;
    }

    public void setPassword(@Nullable String password) {
        this.password = password;
    }

}
