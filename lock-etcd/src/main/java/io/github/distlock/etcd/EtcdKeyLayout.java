package io.github.distlock.etcd;

import java.util.Objects;

/**
 * Where the etcd backend keeps a lock: one directory per lock name, one key per
 * acquisition in it.
 *
 * <pre>{@code
 * EtcdKeyLayout layout = new EtcdKeyLayout("distlock/");
 * layout.directory("order:42");                  // distlock/lock/order:42/
 * layout.acquisitionKey("order:42", "9f86d0...");   // distlock/lock/order:42/9f86d0...
 * }</pre>
 *
 * The name stays readable, so {@code etcdctl get --prefix distlock/lock/order:42/} finds
 * a lock; only {@code /} and {@code %} are escaped ({@code %2F}, {@code %25}), so that
 * the directory of {@code a} never contains the keys of {@code a/b}.
 */
public final class EtcdKeyLayout {

    private final String prefix;

    /**
     * @param keyPrefix what every key starts with
     * ({@code distributed-lock.etcd.key-prefix})
     */
    public EtcdKeyLayout(String keyPrefix) {
        this.prefix = Objects.requireNonNull(keyPrefix, "keyPrefix") + "lock/";
    }

    /**
     * The directory of lock {@code name}: every acquisition's key starts with it, and
     * nothing else's does.
     */
    public String directory(String name) {
        return prefix + escape(name) + "/";
    }

    /** The key of one acquisition (its token) of lock {@code name}. */
    public String acquisitionKey(String name, String token) {
        return directory(name) + token;
    }

    /** The directory every lock's directory is in. */
    public String root() {
        return prefix;
    }

    /**
     * The token of the acquisition stored at {@code key}, a key under {@code directory}.
     */
    static String tokenOf(String directory, String key) {
        return key.substring(directory.length());
    }

    private static String escape(String name) {
        if (name.indexOf('/') < 0 && name.indexOf('%') < 0) {
            return name;
        }
        return name.replace("%", "%25").replace("/", "%2F");
    }

}
