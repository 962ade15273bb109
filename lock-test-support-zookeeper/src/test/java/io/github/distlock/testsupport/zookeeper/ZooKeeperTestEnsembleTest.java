package io.github.distlock.testsupport.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The ensemble fixture against itself: three real processes that elect a leader, keep
 * serving with one member killed or paused, and take a restarted member back.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZooKeeperTestEnsembleTest {

    private ZooKeeperTestEnsemble ensemble;

    @BeforeAll
    void start() {
        ensemble = ZooKeeperTestEnsemble.start();
    }

    @AfterAll
    void stop() {
        if (ensemble != null) {
            ensemble.close();
        }
    }

    @Test
    void threeSeparateProcessesServeOneLeaderAndTwoFollowers() throws Exception {
        assertThat(ensemble.members()).hasSize(3);
        assertThat(ensemble.members().stream().map(ZooKeeperTestEnsemble.Member::pid).distinct())
            .as("one process per member")
            .hasSize(3)
            .doesNotContain(-1L, ProcessHandle.current().pid());
        assertThat(ensemble.members().stream().filter(member -> "leader".equals(member.mode()))).hasSize(1);
        assertThat(ensemble.followers()).hasSize(2)
            .allSatisfy(member -> assertThat(member.mode()).isEqualTo("follower"));

        try (ZooKeeper client = connect(ensemble.members().get(0).address())) {
            client.create("/written-on-member-1", "x".getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT);
        }
        try (ZooKeeper client = connect(ensemble.members().get(2).address())) {
            client.sync("/", (rc, path, ctx) -> {
            }, null);
            assertThat(new String(client.getData("/written-on-member-1", false, null), StandardCharsets.UTF_8))
                .as("replicated to member 3")
                .isEqualTo("x");
        }
    }

    @Test
    void aKilledLeaderIsReplacedAndComesBackAsAFollowerWhenRestarted() throws Exception {
        ZooKeeperTestEnsemble.Member leader = ensemble.leader();

        leader.kill();

        assertThat(leader.isRunning()).isFalse();
        ZooKeeperTestEnsemble.Member next = ensemble.awaitLeader(Duration.ofSeconds(60));
        assertThat(next).isNotSameAs(leader);
        try (ZooKeeper client = connect(ensemble.connectString())) {
            assertThat(client.exists("/", false)).as("two of three still serve").isNotNull();
        }

        leader.restart();
        ensemble.awaitServing(Duration.ofSeconds(60));
        assertThat(leader.mode()).isEqualTo("follower");
    }

    @Test
    void aPausedMemberAnswersNothingUntilResumed() {
        ZooKeeperTestEnsemble.Member follower = ensemble.followers().get(0);

        follower.pause();

        assertThat(follower.isPaused()).isTrue();
        assertThat(follower.fourLetterWord("ruok")).as("a stopped process answers nothing").isNull();
        follower.resume();
        await().atMost(Duration.ofSeconds(60)).until(() -> "follower".equals(follower.mode()));
    }

    private static ZooKeeper connect(String connectString) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper client = new ZooKeeper(connectString, 10_000, event -> {
            if (event.getState() == KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        assertThat(connected.await(30, TimeUnit.SECONDS)).as("connected to %s", connectString).isTrue();
        return client;
    }

}
