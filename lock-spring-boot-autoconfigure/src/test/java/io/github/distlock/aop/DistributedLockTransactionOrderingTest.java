package io.github.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Isolation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.github.distlock.DistributedLock;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * The default aspect order takes the lock outside {@code @Transactional}, so it is
 * released only after the commit and a read-modify-write in SQL loses no update across
 * two instances sharing one database. Moving the lock inside the transaction (by
 * {@code distributed-lock.aspect-order}) lets the next holder read before the previous
 * commit, which loses updates: the order is what makes the difference.
 */
class DistributedLockTransactionOrderingTest {

    private static final int THREADS_PER_INSTANCE = 4;

    private static final int CALLS_PER_THREAD = 3;

    private static final int TOTAL_CALLS = 2 * THREADS_PER_INSTANCE * CALLS_PER_THREAD;

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    /**
     * Two instances: two contexts, each with its own connection pool to one in-memory
     * database of this JVM.
     */
    private ApplicationContextRunner instance(String database) {
        return LockTestContexts.runner(redis.server())
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.DATA_SOURCE,
                    BootAutoConfigurations.DATA_SOURCE_TRANSACTION_MANAGER, BootAutoConfigurations.TRANSACTION,
                    BootAutoConfigurations.JDBC_TEMPLATE))
            .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1")
            .withBean(AccountService.class);
    }

    @Test
    void defaultOrderWrapsTheTransactionSoNoUpdateIsLost() {
        ApplicationContextRunner instance = instance("lockdb-" + UUID.randomUUID());
        instance.run(first -> instance.run(second -> {
            AccountService one = first.getBean(AccountService.class);
            AccountService two = second.getBean(AccountService.class);
            assertThat(indexOf(one, DistributedLockAdvisor.class))
                .isLessThan(indexOf(one, BeanFactoryTransactionAttributeSourceAdvisor.class));

            JdbcTemplate jdbc = first.getBean(JdbcTemplate.class);
            createAccount(jdbc);
            depositConcurrently(one, two);

            assertThat(balance(jdbc)).isEqualTo(TOTAL_CALLS);
        }));
    }

    @Test
    void lockInsideTheTransactionLetsTheNextHolderReadBeforeTheCommitAndLosesUpdates() {
        ApplicationContextRunner instance = instance("lockdb-" + UUID.randomUUID())
            .withUserConfiguration(OuterTransactionConfiguration.class)
            .withPropertyValues("distributed-lock.aspect-order=100");
        instance.run(first -> instance.run(second -> {
            AccountService one = first.getBean(AccountService.class);
            AccountService two = second.getBean(AccountService.class);
            assertThat(indexOf(one, DistributedLockAdvisor.class))
                .isGreaterThan(indexOf(one, BeanFactoryTransactionAttributeSourceAdvisor.class));

            JdbcTemplate jdbc = first.getBean(JdbcTemplate.class);
            createAccount(jdbc);
            depositConcurrently(one, two);

            assertThat(balance(jdbc)).isLessThan(TOTAL_CALLS);
        }));
    }

    private static int indexOf(Object proxy, Class<? extends Advisor> type) {
        List<Advisor> advisors = Arrays.asList(((Advised) proxy).getAdvisors());
        int index = advisors.stream().map(Object::getClass).toList().indexOf(type);
        assertThat(index).as("%s among %s", type.getSimpleName(), advisors).isNotNegative();
        return index;
    }

    private static void createAccount(JdbcTemplate jdbc) {
        jdbc.execute("CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)");
        jdbc.update("INSERT INTO account (id, balance) VALUES (1, 0)");
    }

    private static int balance(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SELECT balance FROM account WHERE id = 1", Integer.class);
    }

    private static void depositConcurrently(AccountService first, AccountService second) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2 * THREADS_PER_INSTANCE);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> workers = new ArrayList<>();
            for (AccountService service : List.of(first, second)) {
                for (int t = 0; t < THREADS_PER_INSTANCE; t++) {
                    workers.add(pool.submit(() -> {
                        start.await();
                        for (int i = 0; i < CALLS_PER_THREAD; i++) {
                            service.deposit();
                        }
                        return null;
                    }));
                }
            }
            start.countDown();
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        }
        finally {
            pool.shutdownNow();
        }
    }

    /**
     * Puts the transaction outside everything (order 0), so that aspect-order 100 runs
     * the lock inside it.
     */
    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(order = 0, proxyTargetClass = true)
    static class OuterTransactionConfiguration {

    }

    static class AccountService {

        /**
         * Between the end of the method and the commit: where a lock taken inside the
         * transaction is already gone.
         */
        private static final Duration PAUSE_BEFORE_COMMIT = Duration.ofMillis(40);

        private final JdbcTemplate jdbc;

        AccountService(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        /**
         * Read, then write value + 1 (not an atomic balance = balance + 1), so a stale
         * read loses an update.
         */
        @DistributedLock(key = "'account:1'", waitTime = "30s")
        @Transactional(isolation = Isolation.READ_COMMITTED)
        public void deposit() {
            int balance = jdbc.queryForObject("SELECT balance FROM account WHERE id = 1", Integer.class);
            jdbc.update("UPDATE account SET balance = ? WHERE id = 1", balance + 1);
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void beforeCommit(boolean readOnly) {
                    LockSupport.parkNanos(PAUSE_BEFORE_COMMIT.toNanos());
                }
            });
        }

    }

}
