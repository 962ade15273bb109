package io.github.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.github.distlock.LockHandle;
import io.github.distlock.testsupport.zookeeper.ZooKeeperTestEnsemble;

/**
 * What the ZooKeeper backend writes while callers wait, seen on a real ensemble through a
 * client of the test's own: the nodes of the lock's line, in sequence order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZooKeeperLockBackendTest {

    private static final Duration SESSION = Duration.ofSeconds(10);

    private ZooKeeperTestEnsemble ensemble;

    private CuratorFramework raw;

    private final ExecutorService threads = Executors.newCachedThreadPool();

    private final List<ZooKeeperFaultTest.Instance> instances = new ArrayList<>();

    @BeforeAll
    void start() {
        ensemble = ZooKeeperTestEnsemble.start();
        raw = CuratorFrameworkFactory.newClient(ensemble.connectString(), new RetryOneTime(100));
        raw.start();
    }

    @AfterAll
    void stop() {
        threads.shutdownNow();
        raw.close();
        ensemble.close();
    }

    @AfterEach
    void closeInstances() {
        instances.forEach(ZooKeeperFaultTest.Instance::close);
        instances.clear();
    }

    /**
     * A caller that will wait joins the line with its first attempt: one node, right
     * after the holder's. Trying first without queueing, as on Redis, created a node and
     * deleted it again, two writes the ensemble had to agree on, before queueing with a
     * second node (the sequence numbers would show the gap).
     */
    @Test
    void aCallerThatWillWaitQueuesWithItsFirstAttempt() throws Exception {
        ZooKeeperFaultTest.Instance holder = instance();
        ZooKeeperFaultTest.Instance waiter = instance();
        LockHandle held = holder.service.lock("queued:1", SESSION, Duration.ZERO);
        Future<LockHandle> waiting = threads
            .submit(() -> waiter.service.lock("queued:1", SESSION, Duration.ofSeconds(60)));
        await().atMost(Duration.ofSeconds(30)).until(() -> line("queued:1").size() == 2);

        List<String> line = line("queued:1");

        assertThat(sequence(line.get(1))).as("the waiter's node, in " + line).isEqualTo(sequence(line.get(0)) + 1);
        held.release();
        LockHandle handedOver = waiting.get(30, TimeUnit.SECONDS);
        assertThat(handedOver.isHeld()).isTrue();
        assertThat(line("queued:1")).hasSize(1);
        handedOver.release();
    }

    /**
     * Three in line: the first hand-over's confirming write on the new holder's node
     * fires the watch of the waiter behind it, which sets that watch again and keeps its
     * place; the next release (a delete) still reaches it, in line order.
     */
    @Test
    void aWaiterBehindAHandOverKeepsItsPlaceAndGetsTheLockNext() throws Exception {
        ZooKeeperFaultTest.Instance first = instance();
        ZooKeeperFaultTest.Instance second = instance();
        ZooKeeperFaultTest.Instance third = instance();
        LockHandle held = first.service.lock("line:1", SESSION, Duration.ZERO);
        Future<LockHandle> secondWaits = threads
            .submit(() -> second.service.lock("line:1", SESSION, Duration.ofSeconds(60)));
        await().atMost(Duration.ofSeconds(30)).until(() -> line("line:1").size() == 2);
        Future<LockHandle> thirdWaits = threads
            .submit(() -> third.service.lock("line:1", SESSION, Duration.ofSeconds(60)));
        await().atMost(Duration.ofSeconds(30)).until(() -> line("line:1").size() == 3);

        held.release();
        LockHandle secondHolds = secondWaits.get(30, TimeUnit.SECONDS);
        String secondsNode = line("line:1").get(0);
        long written = raw.checkExists().forPath("/distributed-lock/line:1/" + secondsNode).getVersion();
        assertThat(written).as("the hand-over was confirmed by a write on the new holder's node").isPositive();
        assertThat(thirdWaits).as("the third waits on").isNotDone();
        long secondsToken = secondHolds.fencingToken();

        assertThat(secondHolds.release()).isTrue();
        LockHandle thirdHolds = thirdWaits.get(30, TimeUnit.SECONDS);
        assertThat(thirdHolds.isHeld()).isTrue();
        assertThat(thirdHolds.fencingToken()).isGreaterThan(secondsToken);
        thirdHolds.release();
    }

    private ZooKeeperFaultTest.Instance instance() {
        ZooKeeperFaultTest.Instance instance = new ZooKeeperFaultTest.Instance(
                ZooKeeperLockSettings.of(ensemble.connectString())
                    .withSessionTimeout(SESSION)
                    .withOperationTimeout(Duration.ofSeconds(3)));
        instances.add(instance);
        return instance;
    }

    /** The children of the lock's node, in sequence order. */
    private List<String> line(String name) throws Exception {
        List<String> children = new ArrayList<>(raw.getChildren().forPath("/distributed-lock/" + name));
        children.sort((left, right) -> Long.compare(sequence(left), sequence(right)));
        return children;
    }

    private static long sequence(String node) {
        return Long.parseLong(node.substring(node.lastIndexOf('-') + 1));
    }

}
