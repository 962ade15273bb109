package io.github.distlock.aspectj.woven;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.aspectj.Gate;

/**
 * A service whose locked methods a Spring proxy cannot guard: one is reached through
 * {@code this}, one is final. Its package is woven by the agent (META-INF/aop.xml), so
 * AspectJ locks them. A call that cannot have its lock at once fails with
 * {@code LockTimeoutException}.
 *
 * <p>
 * The gate is static: in proxy mode a final method runs on the CGLIB proxy instance
 * itself, whose fields were never initialised.
 */
public class WovenOrderService {

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

    /**
     * Calls a private locked method, which AspectJ reaches but the starter refuses to
     * lock silently.
     */
    public boolean audit(String id) {
        return hidden(id);
    }

    @DistributedLock(key = "'audit:' + #id", waitTime = "0s")
    private boolean hidden(String id) {
        gate.pass();
        return true;
    }

    /**
     * Skips when another owner holds the lock; what it does when Redis is down is left to
     * the configuration.
     */
    @DistributedLock(key = "'report'", waitTime = "0s", onBusy = FailureAction.SKIP)
    public final String report() {
        gate.pass();
        return "ran";
    }

}
