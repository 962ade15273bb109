package io.github.distlock.aspectj.proxied;

import io.github.distlock.DistributedLock;
import io.github.distlock.aspectj.Gate;

/**
 * A service whose locked methods a Spring proxy cannot guard: one is reached through
 * {@code this}, one is final. Its package is not woven: the proxy-mode contrast to the
 * woven twin. A call that cannot have its lock at once fails with
 * {@code LockTimeoutException}.
 *
 * <p>
 * The gate is static: in proxy mode a final method runs on the CGLIB proxy instance
 * itself, whose fields were never initialised.
 */
public class ProxiedOrderService {

    public static volatile Gate gate = new Gate();

    @DistributedLock(key = "'order:' + #id", waitTime = "0s")
    public boolean place(String id) {
        gate.pass();
        return true;
    }

    /** Calls the locked method through {@code this}, not through the bean. */
    public boolean placeFromInside(String id) {
        return this.place(id);
    }

    @DistributedLock(key = "'final:' + #id", waitTime = "0s")
    public final boolean ship(String id) {
        gate.pass();
        return true;
    }

}
