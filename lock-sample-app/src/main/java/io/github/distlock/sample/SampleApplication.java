package io.github.distlock.sample;

import io.github.distlock.sample.demo.DemoCommand;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * An inventory service whose stock deduction is a non-atomic read-modify-write in Redis:
 * exactly the code that oversells when several instances run behind a load balancer, and
 * that {@code @DistributedLock} makes safe. Beside it, a ledger whose payouts lock each
 * account on ZooKeeper with a fencing token ({@code io.github.distlock.sample.ledger}):
 * the stock's locks stay on Redis, the default store, and the ledger's choose ZooKeeper.
 *
 * <p>
 * Two ways to run it:
 * <ul>
 * <li>without arguments: a web application on port 8080 with {@code /stock/{sku}}
 * endpoints, using the Redis at {@code spring.data.redis.*} (localhost:6379 by default)
 * or, if none answers there, an embedded redis-server; and {@code /ledger/{account}}
 * endpoints, using the ZooKeeper at {@code distributed-lock.zookeeper.connect-string} or,
 * if it is not set, an embedded ZooKeeper;</li>
 * <li>with {@code --demo}: runs the four demos of {@link DemoCommand} (oversell, hot
 * item, paused holder, failover), each printing a table, and exits; {@code --demo=<name>}
 * runs one.</li>
 * </ul>
 */
@SpringBootApplication
public class SampleApplication {

    /**
     * Starts the web application, or the demo when the arguments contain {@code --demo}.
     * @param args command-line arguments; Spring Boot properties such as
     * {@code --spring.data.redis.port=6380} are honoured in both modes
     */
    public static void main(String[] args) {
        if (DemoCommand.requested(args)) {
            // The demos build their own application instances; exit explicitly so the
            // status reaches the shell.
            System.exit(DemoCommand.run(args, System.out));
        }
        SpringApplication.run(SampleApplication.class, args);
    }

}
