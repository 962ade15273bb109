package io.github.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.distlock.contract.ContractStore;
import io.github.distlock.testsupport.EtcdTestCluster;

/**
 * A 3-member etcd cluster of real processes as the contract's store: every application
 * instance gets its own {@link EtcdLockBackend} bean connected to it, and the side door
 * is a plain jetcd client reading the lock directories ({@link EtcdKeyLayout}).
 */
final class EtcdContractStore implements ContractStore {

    /**
     * The cluster of the running contract class, for the configuration class the
     * instances are built from; a test JVM runs one contract class at a time.
     */
    private static volatile EtcdTestCluster current;

    private final EtcdTestCluster cluster;

    private final Client client;

    private final EtcdKeyLayout layout = new EtcdKeyLayout(EtcdSettings.DEFAULT_KEY_PREFIX);

    private EtcdContractStore(EtcdTestCluster cluster) {
        this.cluster = cluster;
        this.client = Client.builder().endpoints(cluster.endpoints().toArray(String[]::new)).build();
        current = cluster;
    }

    static EtcdContractStore start() {
        return new EtcdContractStore(EtcdTestCluster.start());
    }

    /** The cluster, for a test of its faults. */
    EtcdTestCluster cluster() {
        return cluster;
    }

    /** The settings an application instance connects with. */
    static EtcdSettings settings(EtcdTestCluster cluster) {
        return EtcdSettings.of(cluster.endpoints());
    }

    @Override
    public List<String> applicationProperties() {
        return List.of();
    }

    @Override
    public Class<?>[] applicationSources() {
        return new Class<?>[] { EtcdBackend.class };
    }

    @Override
    public boolean isHeld(String name) {
        return directory(name).getCount() > 0;
    }

    @Override
    public long leaseLeftMillis(String name) {
        GetResponse directory = directory(name);
        if (directory.getKvs().isEmpty()) {
            return -2;
        }
        long ttl = get(client.getLeaseClient().timeToLive(holder(directory).getLease(), LeaseOption.DEFAULT)).getTTL();
        return ttl < 0 ? -2 : TimeUnit.SECONDS.toMillis(ttl);
    }

    @Override
    public void takeAway(String name) {
        GetResponse directory = directory(name);
        assertThat(directory.getKvs()).as("%s is held", name).isNotEmpty();
        long deleted = get(client.getKVClient().delete(holder(directory).getKey())).getDeleted();
        assertThat(deleted).as("deleted the holder's key of %s", name).isEqualTo(1);
    }

    @Override
    public long queueLength(String name) {
        return Math.max(0, directory(name).getCount() - 1);
    }

    @Override
    public Set<String> leftovers(String name) {
        return get(client.getKVClient().get(bytes(layout.directory(name)), GetOption.builder().isPrefix(true).build()))
            .getKvs()
            .stream()
            .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
            .collect(Collectors.toSet());
    }

    /**
     * The fencing token is the key's create revision: etcd's own, there is no counter to
     * drop.
     */
    @Override
    public void evictFencingCounter(String name) {
        assertThat(isHeld(name)).as("%s is free", name).isFalse();
    }

    @Override
    public void reset() {
        for (int i = 0; i < cluster.size(); i++) {
            if (cluster.isPaused(i)) {
                cluster.resume(i);
            }
            if (!cluster.isRunning(i)) {
                cluster.restart(i);
            }
        }
        get(client.getKVClient()
            .delete(bytes(EtcdSettings.DEFAULT_KEY_PREFIX), DeleteOption.builder().isPrefix(true).build()));
    }

    @Override
    public void close() {
        current = null;
        client.close();
        cluster.close();
    }

    @Override
    public String toString() {
        return cluster.toString();
    }

    private GetResponse directory(String name) {
        return get(client.getKVClient()
            .get(bytes(layout.directory(name)),
                    GetOption.builder()
                        .isPrefix(true)
                        .withSortField(GetOption.SortTarget.CREATE)
                        .withSortOrder(GetOption.SortOrder.ASCEND)
                        .withLimit(1)
                        .build()));
    }

    private static KeyValue holder(GetResponse directory) {
        return directory.getKvs().get(0);
    }

    private static <T> T get(CompletableFuture<T> answer) {
        try {
            return answer.get(20, TimeUnit.SECONDS);
        }
        catch (Exception ex) {
            throw new IllegalStateException("the side door's etcd call failed", ex);
        }
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    /** Each application instance's backend, on the running cluster. */
    @Configuration(proxyBeanMethods = false)
    public static class EtcdBackend {

        @Bean
        EtcdLockBackend lockBackend() {
            EtcdTestCluster cluster = current;
            if (cluster == null) {
                throw new IllegalStateException("No EtcdContractStore was started");
            }
            return EtcdLockBackend.connect(settings(cluster));
        }

    }

}
