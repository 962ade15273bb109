package io.github.distlock.testsupport;

/**
 * Run in a child JVM by {@link RedisTestServerLifecycleTest}: starts a server, pauses it
 * (the hardest case for cleanup), prints its pid and exits without closing it, leaving
 * the cleanup to the shutdown hook.
 */
public final class ForgottenServerMain {

    static final String PID_PREFIX = "redis-pid=";

    private ForgottenServerMain() {
    }

    /**
     * Entry point.
     * @param args ignored
     */
    public static void main(String[] args) {
        RedisTestServer server = RedisTestServer.start();
        server.pause();
        System.out.println(PID_PREFIX + server.pid());
        System.out.flush();
    }

}
