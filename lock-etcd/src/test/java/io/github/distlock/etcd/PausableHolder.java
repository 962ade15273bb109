package io.github.distlock.etcd;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;

/**
 * The client JVM that {@link EtcdPausedClientTest} freezes with SIGSTOP: it takes a lock
 * with the watchdog on, says so on stdout, then answers commands from stdin. Every line
 * it prints for the test starts with {@code holder:}.
 *
 * <p>
 * Arguments: the endpoints (comma-separated), the lock name, the ttl in ms. Commands:
 * {@code write} prints the token a write would carry and whether the handle says it holds
 * the lock; {@code exit} releases and exits.
 */
public final class PausableHolder {

    private PausableHolder() {
    }

    public static void main(String[] args) throws Exception {
        List<String> endpoints = List.of(args[0].split(","));
        String name = args[1];
        Duration ttl = Duration.ofMillis(Long.parseLong(args[2]));
        try (EtcdFaultTest.Client client = new EtcdFaultTest.Client(
                EtcdLockBackend.connect(EtcdSettings.of(endpoints)))) {
            LockHandle held = client.locks
                .lock(LockRequest.of(name).withTtl(ttl).withWaitTime(Duration.ZERO).withWatchdog(true));
            long token = held.fencingToken();
            held.onLost(lost -> System.out.println("holder: LOST " + token));
            System.out.println("holder: HELD " + token);
            BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String command = commands.readLine(); command != null; command = commands.readLine()) {
                if (command.equals("write")) {
                    System.out.println("holder: WRITE " + token + " " + held.isHeld());
                }
                else if (command.equals("exit")) {
                    held.release();
                    break;
                }
            }
        }
        System.out.println("holder: EXIT");
    }

}
