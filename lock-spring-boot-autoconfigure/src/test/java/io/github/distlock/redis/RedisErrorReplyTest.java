package io.github.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * How the server's reply is found in the drivers' exception chains (as the real servers
 * in {@link RedisAuthenticationErrorTest} produce them) and read, including the wordings
 * of Redis versions that the test servers do not run.
 */
class RedisErrorReplyTest {

    private static final String WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled.";

    @Test
    void theReplyIsFoundBehindLettucesConnectFailureAndSpringsTranslation() {
        Throwable failure = new RedisSystemException("Unable to connect", new RedisConnectionException(
                "Unable to connect to 127.0.0.1/<unresolved>:6379", new RedisCommandExecutionException(WRONGPASS)));

        assertThat(RedisErrorReply.in(failure)).contains(new RedisErrorReply(WRONGPASS));
    }

    @Test
    void theReplyIsFoundBehindJedissPoolAndSpringsTranslation() {
        Throwable failure = new RedisConnectionFailureException("Cannot get Jedis connection",
                new JedisConnectionException("Could not get a resource from the pool",
                        new JedisAccessControlException(WRONGPASS)));

        assertThat(RedisErrorReply.in(failure)).contains(new RedisErrorReply(WRONGPASS));
    }

    @Test
    void aFailureWithoutAServerReplyIsDescribedByItsCauses() {
        Throwable failure = new RedisConnectionException("Unable to connect to 127.0.0.1/<unresolved>:6379",
                new ConnectException("Connection refused"));

        assertThat(RedisErrorReply.in(failure)).isEmpty();
        assertThat(RedisErrorReply.describe(failure, "spring.data.redis.password"))
            .isEqualTo("Unable to connect to 127.0.0.1/<unresolved>:6379: Connection refused");
    }

    @Test
    void aCommandNamedInsideAScriptReplyIsTakenFromTheReplyAsNewerRedisVersionsWriteIt() {
        RedisErrorReply reply = new RedisErrorReply("NOPERM User locker has no permissions to run the 'pexpire' "
                + "command script: 0000000000000000000000000000000000000000, on @user_script:8.");

        assertThat(reply.deniedCommands()).containsExactly("pexpire");
        assertThat(reply.explain("spring.data.redis.password")).contains("may not run 'pexpire'")
            .contains("ACL SETUSER <user> +pexpire");
    }

    @Test
    void aCommandRefusedInsideOurScriptIsReadFromTheLineTheReplyPointsAt() {
        String renew = new String(LockScripts.RENEW.sha1Bytes(), StandardCharsets.US_ASCII);
        RedisErrorReply reply = new RedisErrorReply("ERR The user executing the script can't run this command or "
                + "subcommand script: " + renew + ", on @user_script:8.");

        assertThat(reply.deniedCommands()).containsExactly("pexpire");
        assertThat(reply.explain("spring.data.redis.password")).contains("(in renew.lua, line 8)");
    }

    @Test
    void aReplyThatIsNotAboutCredentialsOrPermissionsIsQuotedAsItIs() {
        Throwable failure = new InvalidDataAccessApiUsageException("x",
                new JedisAccessControlException("ERR unknown command 'FOO'"));

        assertThat(RedisErrorReply.describe(failure, "spring.data.redis.password"))
            .isEqualTo("ERR unknown command 'FOO'");
    }

}
