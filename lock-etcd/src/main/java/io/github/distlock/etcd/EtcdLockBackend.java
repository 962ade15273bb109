package io.github.distlock.etcd;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.net.ssl.SSLException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.FencingLockBackend;
import io.github.distlock.core.HandOverNotifications;
import io.github.distlock.core.InspectableLockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.core.LockWaiters;
import io.github.distlock.core.QueueingLockBackend;

/**
 * Locks in etcd, on jetcd: the lock for correctness, where two holders would corrupt
 * data. Every acquisition writes a key of its own, {@code <prefix>lock/<name>/<token>},
 * attached to a lease of its own; the holder is the key with the lowest create revision
 * in the lock's directory, and the others wait behind it in that order.
 *
 * <pre>{@code
 * EtcdLockBackend backend = EtcdLockBackend.connect(EtcdSettings.of("http://etcd-1:2379", "http://etcd-2:2379",
 *         "http://etcd-3:2379"));
 * LockWaiters waiters = new LockWaiters();
 * waiters.notificationsFrom(backend);
 * backend.deliverHandOversTo(waiters);
 * LockService locks = new DefaultLockService(backend, new LeaseWatchdog(backend, 1.0 / 3), defaults, waiters);
 * try (LockHandle lock = locks.lock("ledger:7", Duration.ofSeconds(10), Duration.ofSeconds(5))) {
 *     ledger.write(entry, lock.fencingToken());   // the key's create revision
 * }
 * }</pre>
 *
 * <ul>
 * <li><b>Lease.</b> A ttl maps to a lease of {@code ceil(ttl in seconds)}, at least
 * etcd's minimum of 2 s, so the store never holds a lock for less than the ttl the lock
 * service counts with; the watchdog renews it with one lease keep-alive. Each lease
 * carries one acquisition's key at a time; a release that deleted its key keeps the lease
 * for a later acquisition of this JVM ({@link SpareLeases}) instead of revoking it, which
 * saves two Raft writes per lock.</li>
 * <li><b>Fencing token.</b> The create revision of the acquisition's key: made by etcd,
 * strictly increasing across every key, client, leader change and restart.</li>
 * <li><b>Waiting.</b> A waiter's key is its place in line; one watch per lock directory
 * per JVM sees deletions there, and the waiter whose key became the lowest is woken
 * (first come, first served), never polling.</li>
 * <li><b>Release.</b> Deletes our own key in a transaction that compares it exists: never
 * anyone else's.</li>
 * </ul>
 *
 * <p>
 * Every call waits for etcd at most {@code distributed-lock.etcd.operation-timeout},
 * whatever the calling thread's interrupt flag, and throws {@link LockBackendException}
 * when it has no answer (except a waiter's re-check, which decided nothing and leaves the
 * waiter waiting); each is idempotent for its token, so the lock service's undo may run
 * it again.
 */
public final class EtcdLockBackend implements QueueingLockBackend, FencingLockBackend, InspectableLockBackend,
        HandOverNotifications, AutoCloseable {

    /**
     * etcd's shortest lease with its default election timeout (1 s): 1.5 elections,
     * rounded up.
     */
    public static final long MIN_LEASE_SECONDS = 2;

    private static final Logger logger = LoggerFactory.getLogger(EtcdLockBackend.class);

    /**
     * The first key of a directory by create revision, with the directory's key count.
     */
    private static final GetOption HEAD = GetOption.builder()
        .isPrefix(true)
        .withSortField(GetOption.SortTarget.CREATE)
        .withSortOrder(GetOption.SortOrder.ASCEND)
        .withLimit(1)
        .build();

    /** What each acquisition's key holds: who wrote it, for an operator; never read. */
    private static final ByteSequence HOLDER = bytes(ManagementFactory.getRuntimeMXBean().getName());

    private final Client client;

    private final boolean ownsClient;

    private final KV kv;

    private final Lease leases;

    private final Watch watch;

    private final EtcdKeyLayout layout;

    private final List<String> endpoints;

    private final Duration operationTimeout;

    /** This JVM's acquisitions that may have a key in etcd, by token. */
    private final Map<String, Acquisition> acquisitions = new ConcurrentHashMap<>();

    /**
     * Tokens of this JVM's acquisitions, by lock directory: a watch lives while there are
     * any.
     */
    private final Map<String, Set<String>> tokensByDirectory = new ConcurrentHashMap<>();

    private final Map<String, DirectoryWatch> watches = new ConcurrentHashMap<>();

    private final List<LockWaiters> deliveries = new CopyOnWriteArrayList<>();

    /** Leases of released acquisitions, for the next ones (see {@link SpareLeases}). */
    private final SpareLeases spares = new SpareLeases();

    private volatile boolean closed;

    /**
     * A backend on a client of the caller's, which the caller closes.
     * @param client the etcd client
     * @param settings the key prefix, operation timeout and endpoints (for messages)
     */
    public EtcdLockBackend(Client client, EtcdSettings settings) {
        this(client, settings, false);
    }

    private EtcdLockBackend(Client client, EtcdSettings settings, boolean ownsClient) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.kv = client.getKVClient();
        this.leases = client.getLeaseClient();
        this.watch = client.getWatchClient();
        this.layout = new EtcdKeyLayout(settings.keyPrefix());
        this.endpoints = settings.endpoints();
        this.operationTimeout = settings.operationTimeout();
    }

    /**
     * Connects to the cluster and checks that it answers, so that a wrong endpoint or a
     * cluster that is down fails the startup rather than the first lock.
     * @param settings where the cluster is and how long to wait for it
     * @return a backend that owns its client and closes it in {@link #close()}
     * @throws IllegalStateException naming {@code distributed-lock.etcd.endpoints}, the
     * endpoints and the fix, if the cluster does not answer within the connect timeout
     */
    public static EtcdLockBackend connect(EtcdSettings settings) {
        ClientBuilder builder = Client.builder()
            .endpoints(settings.endpoints().stream().map(String::trim).toArray(String[]::new))
            .connectTimeout(settings.connectTimeout());
        if (settings.user() != null && settings.password() != null) {
            builder.user(bytes(settings.user())).password(bytes(settings.password()));
        }
        if (settings.usesTls()) {
            builder.sslContext(tlsContext(settings));
        }
        EtcdLockBackend backend = new EtcdLockBackend(builder.build(), settings, true);
        try {
            backend.requireReachable(settings.connectTimeout());
            return backend;
        }
        catch (RuntimeException ex) {
            backend.close();
            throw ex;
        }
    }

    /**
     * The client's TLS: trusting the CA in {@code trustCertificates}, or the JVM's
     * default trust store; presenting the client certificate, if set.
     */
    private static SslContext tlsContext(EtcdSettings settings) {
        SslContextBuilder tls = GrpcSslContexts.forClient();
        Path trustCertificates = settings.trustCertificates();
        try {
            if (trustCertificates != null) {
                tls.trustManager(trustCertificates.toFile());
            }
        }
        catch (RuntimeException ex) {
            throw new IllegalArgumentException(EtcdSettings.PREFIX + ".trust-certificates=" + trustCertificates
                    + " could not be used for TLS: " + describe(ex) + ". Point it at a PEM file of CA certificates.",
                    ex);
        }
        Path clientCertificate = settings.clientCertificate();
        Path clientKey = settings.clientKey();
        try {
            if (clientCertificate != null && clientKey != null) {
                tls.keyManager(clientCertificate.toFile(), clientKey.toFile());
            }
            return tls.build();
        }
        catch (SSLException | RuntimeException ex) {
            throw new IllegalArgumentException(EtcdSettings.PREFIX + ".client-certificate=" + clientCertificate
                    + " and " + EtcdSettings.PREFIX + ".client-key=" + clientKey + " could not be used for TLS: "
                    + describe(ex)
                    + ". Point them at PEM files of the client's certificate and of its private key (unencrypted "
                    + "PKCS#8, 'BEGIN PRIVATE KEY').", ex);
        }
    }

    private void requireReachable(Duration timeout) {
        CompletableFuture<GetResponse> answer = kv.get(bytes(layout.root()),
                GetOption.builder().isPrefix(true).withCountOnly(true).build());
        try {
            answer.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while connecting to etcd at " + endpoints, ex);
        }
        catch (ExecutionException | TimeoutException ex) {
            answer.cancel(true);
            Throwable cause = ex instanceof ExecutionException ? ex.getCause() : ex;
            throw new IllegalStateException("etcd did not answer at " + EtcdSettings.PREFIX + ".endpoints=" + endpoints
                    + " within " + timeout + " (" + EtcdSettings.PREFIX + ".connect-timeout): " + describe(cause)
                    + ". Check that each endpoint is a member's client URL (port 2379 by default, not the peer port "
                    + "2380), that a majority of the members is up, with https:// that " + EtcdSettings.PREFIX
                    + ".trust-certificates names the CA that signed their certificates (and, for members that ask "
                    + "clients for a certificate, that " + EtcdSettings.PREFIX + ".client-certificate and "
                    + ".client-key are set), and, with authentication on, " + EtcdSettings.PREFIX
                    + ".user and .password.", cause);
        }
    }

    @Override
    public LockKey lockKey(String name) {
        return new LockKey(name, layout.directory(name));
    }

    /**
     * The ttl as an etcd lease: whole seconds, rounded up, at least
     * {@value #MIN_LEASE_SECONDS}, so the lease never ends before the ttl.
     */
    public static long leaseSeconds(long ttlMillis) {
        return Math.max(MIN_LEASE_SECONDS, (ttlMillis + 999) / 1000);
    }

    /**
     * {@code false}: a caller that will wait puts its key (its place in line) with its
     * first attempt. A plain attempt reads the directory first, to leave a taken lock
     * alone, which a caller that will queue anyway need not wait for.
     */
    @Override
    public boolean triesBeforeQueueing() {
        return false;
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        return attempt(key, token, ttlMillis, false, false);
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis, long queueMillis, boolean queued,
            boolean fencingToken) {
        if (!queued || queueMillis <= 0 || !acquisitions.containsKey(token)) {
            return attempt(key, token, ttlMillis, queueMillis > 0, fencingToken);
        }
        try {
            return attempt(key, token, ttlMillis, true, fencingToken);
        }
        catch (LockBackendException ex) {
            // A waiter's re-check writes nothing new (its key is there already), so one
            // that goes unanswered, in a leader election say, decided nothing: the waiter
            // waits on and checks again, rather than lose its wait to the election.
            logger.debug("A waiter's re-check of {} went unanswered; it waits on", key.printableName(), ex);
            return AcquireResult.notAcquired(0, 0);
        }
    }

    /**
     * Writes our key unless it is there (a retry, or a waiter's re-check), and reads the
     * directory's first key in the same transaction: ours first means the lock is ours.
     * Without {@code queue} a key that is not first is deleted again, so the attempt
     * leaves nothing behind. The fencing token, the key's create revision, is free to
     * read, but it is handed out only when asked for: a holder that asks later gets it
     * only while the key is still first ({@link #issueFencingToken}).
     */
    private AcquireResult attempt(LockKey key, String token, long ttlMillis, boolean queue, boolean fencingToken) {
        return attempt(key, token, ttlMillis, queue, fencingToken, true);
    }

    /**
     * @param spareAllowed whether a first call may put its key on a spare lease; the
     * second try after a spare lease turned out gone may not
     */
    private AcquireResult attempt(LockKey key, String token, long ttlMillis, boolean queue, boolean fencingToken,
            boolean spareAllowed) {
        long deadline = deadline();
        ByteSequence ours = acquisitionKey(key, token);
        // Without a queue, a lock that is taken is left alone: no key of ours appears in
        // its directory, not even for a moment (an operator or a waiter counting the
        // line would see it). Read before a lease is granted: a lease granted only to be
        // revoked again costs two Raft writes (a linearizable read, so never a stale
        // "taken").
        if (!queue) {
            KeyValue holder = first(await(kv.get(directory(key), HEAD), deadline, key, "acquire"));
            if (holder != null && !holder.getKey().equals(ours)) {
                forget(key, token);
                return AcquireResult.notAcquired(0, holder.getCreateRevision());
            }
        }
        // A waiter looking at its place again: its key was written by an earlier call.
        boolean recheck = queue && acquisitions.containsKey(token);
        Acquisition acquisition = acquisitionFor(key, token, ttlMillis, deadline, spareAllowed);
        TxnResponse txn;
        try {
            if (recheck) {
                // Reads only: a transaction that may put is a Raft proposal (a write
                // every member fsyncs) even when its comparison fails. A key of ours
                // that is gone reads as mine == null below, and the next attempt starts
                // over.
                txn = await(kv.txn().Then(Op.get(directory(key), HEAD), Op.get(ours, GetOption.DEFAULT)).commit(),
                        deadline, key, "acquire");
            }
            else {
                txn = await(kv.txn()
                    .If(new Cmp(ours, Cmp.Op.EQUAL, CmpTarget.version(0)))
                    .Then(Op.put(ours, HOLDER, PutOption.builder().withLeaseId(acquisition.leaseId).build()),
                            Op.get(directory(key), HEAD), Op.get(ours, GetOption.DEFAULT))
                    .Else(Op.get(directory(key), HEAD), Op.get(ours, GetOption.DEFAULT))
                    .commit(), deadline, key, "acquire");
            }
        }
        catch (LockBackendException ex) {
            if (isLeaseNotFound(ex)) {
                // Our lease ran out (a waiter that could not reach etcd for its whole
                // ttl): the next attempt starts over on a new lease, at the end of the
                // line.
                forget(key, token);
                if (acquisition.readying != null) {
                    // A spare lease that ran out after it came back: nothing was put.
                    return attempt(key, token, ttlMillis, queue, fencingToken, false);
                }
            }
            throw ex;
        }
        if (acquisition.readying != null && !spareKeptAlive(acquisition, deadline, key)) {
            // It ran out before the keep-alive reached it, taking the key just put on it
            // along: start over on a new lease.
            forget(key, token);
            return attempt(key, token, ttlMillis, queue, fencingToken, false);
        }
        boolean created = !recheck && txn.isSucceeded();
        KeyValue head = first(txn.getGetResponses().get(0));
        KeyValue mine = first(txn.getGetResponses().get(1));
        if (mine == null) {
            // Gone before a re-check (its lease ran out, or an operator deleted it); it
            // cannot be after a put. Read as taken, and leave nothing.
            forget(key, token);
            return AcquireResult.notAcquired(0, 0);
        }
        if (head != null && head.getKey().equals(ours)) {
            long validity = ttlMillis;
            if (!created) {
                // Ours from an earlier call: extend it, so the lease left is known.
                long leaseLeft = keepAlive(mine.getLease(), deadline, key);
                if (leaseLeft <= 0) {
                    forget(key, token);
                    return AcquireResult.notAcquired(0, mine.getCreateRevision());
                }
                validity = Math.min(ttlMillis, TimeUnit.SECONDS.toMillis(leaseLeft));
            }
            return AcquireResult.acquired(fencingToken ? mine.getCreateRevision() : 0, validity);
        }
        long holderRevision = head != null ? head.getCreateRevision() : 0;
        if (!queue) {
            deleteOwnKey(ours, deadline, key);
            forget(key, token);
            return AcquireResult.notAcquired(0, holderRevision);
        }
        if (!created) {
            // A waiter's re-check keeps its place: its lease runs while it waits.
            keepAlive(mine.getLease(), deadline, key);
        }
        // Below our own key's revision: a hand-over announced with it is newer than this
        // attempt (LockWaiters).
        return AcquireResult.notAcquired(0, mine.getCreateRevision() - 1);
    }

    @Override
    public boolean release(LockKey key, String token) {
        long deadline = deadline();
        ByteSequence ours = acquisitionKey(key, token);
        TxnResponse txn = await(kv.txn()
            .If(new Cmp(ours, Cmp.Op.GREATER, CmpTarget.version(0)))
            .Then(Op.get(directory(key), HEAD), Op.delete(ours, DeleteOption.DEFAULT))
            .commit(), deadline, key, "release");
        KeyValue head = txn.isSucceeded() ? first(txn.getGetResponses().get(0)) : null;
        forget(key, token, txn.isSucceeded());
        return head != null && head.getKey().equals(ours);
    }

    @Override
    public AcquireResult stopWaiting(LockKey key, String token, long ttlMillis) {
        long deadline = deadline();
        ByteSequence ours = acquisitionKey(key, token);
        TxnResponse txn = await(kv.txn()
            .If(new Cmp(ours, Cmp.Op.GREATER, CmpTarget.version(0)))
            .Then(Op.get(directory(key), HEAD), Op.get(ours, GetOption.DEFAULT))
            .commit(), deadline, key, "stop waiting");
        if (!txn.isSucceeded()) {
            forget(key, token);
            return AcquireResult.notAcquired(0, 0);
        }
        KeyValue head = first(txn.getGetResponses().get(0));
        KeyValue mine = first(txn.getGetResponses().get(1));
        if (mine != null && head != null && head.getKey().equals(ours)) {
            // Handed to us in the last moment: ours, and the caller uses or releases it.
            long leaseLeft = keepAlive(mine.getLease(), deadline, key);
            if (leaseLeft > 0) {
                return AcquireResult.acquired(mine.getCreateRevision(),
                        Math.min(ttlMillis, TimeUnit.SECONDS.toMillis(leaseLeft)));
            }
        }
        deleteOwnKey(ours, deadline, key);
        forget(key, token);
        return AcquireResult.notAcquired(0, mine != null ? mine.getCreateRevision() - 1 : 0);
    }

    /**
     * A hand-over our watch announced counts only if our key is still first with the
     * announced revision and its lease is alive: the keep-alive also restarts the lease,
     * so it lasts the ttl from now.
     */
    @Override
    public AcquireResult confirmHandOver(LockKey key, String token, long ttlMillis, long fencingToken) {
        long deadline = deadline();
        ByteSequence ours = acquisitionKey(key, token);
        Acquisition acquisition = acquisitions.get(token);
        CompletableFuture<GetResponse> headRead = kv.get(directory(key), HEAD);
        long leaseLeft = acquisition != null ? keepAlive(acquisition.leaseId, deadline, key) : 0;
        KeyValue head = first(await(headRead, deadline, key, "confirm a hand-over"));
        if (leaseLeft > 0 && head != null && head.getKey().equals(ours) && head.getCreateRevision() == fencingToken) {
            return AcquireResult.acquired(fencingToken, Math.min(ttlMillis, TimeUnit.SECONDS.toMillis(leaseLeft)));
        }
        return AcquireResult.notAcquired(0, fencingToken);
    }

    @Override
    public long issueFencingToken(LockKey key, String token, long ttlMillis) {
        KeyValue head = first(await(kv.get(directory(key), HEAD), deadline(), key, "read the fencing token"));
        return head != null && head.getKey().equals(acquisitionKey(key, token)) ? head.getCreateRevision() : 0;
    }

    /**
     * Reads each key and extends its lease, all at once: a key that is gone (deleted
     * behind the holder's back) or a lease that ran out is lost; no answer is a failure.
     */
    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        long deadline = deadline();
        List<CompletableFuture<RenewalOutcome>> answers = new ArrayList<>(renewals.size());
        for (LeaseRenewal renewal : renewals) {
            ByteSequence ours = acquisitionKey(renewal.key(), renewal.token());
            answers.add(kv.get(ours).thenCompose(read -> {
                KeyValue mine = first(read);
                if (mine == null) {
                    return CompletableFuture.completedFuture(RenewalOutcome.LOST);
                }
                return leases.keepAliveOnce(mine.getLease()).handle((alive, failure) -> {
                    if (failure != null) {
                        return isLeaseNotFound(failure) ? RenewalOutcome.LOST : RenewalOutcome.FAILED;
                    }
                    return alive.getTTL() > 0 ? RenewalOutcome.RENEWED : RenewalOutcome.LOST;
                });
            }).exceptionally(failure -> RenewalOutcome.FAILED));
        }
        for (int i = 0; i < answers.size(); i++) {
            RenewalOutcome outcome;
            try {
                outcome = await(answers.get(i), deadline, renewals.get(i).key(), "renew");
            }
            catch (LockBackendException ex) {
                outcome = RenewalOutcome.FAILED;
            }
            if (outcome == RenewalOutcome.LOST) {
                // Gone for good: nothing of it is left to track, even if its handle is
                // never released.
                forget(renewals.get(i).key(), renewals.get(i).token());
            }
            outcomes.outcome(i, outcome);
        }
    }

    @Override
    public LockState inspect(LockKey key) {
        long deadline = deadline();
        GetResponse directory = await(kv.get(directory(key), HEAD), deadline, key, "inspect");
        KeyValue head = first(directory);
        if (head == null) {
            return LockState.free(0, 0);
        }
        long ttl = await(leases.timeToLive(head.getLease(), LeaseOption.DEFAULT), deadline, key, "inspect").getTTL();
        return LockState.held(Math.max(0, TimeUnit.SECONDS.toMillis(ttl)), directory.getCount() - 1,
                head.getCreateRevision());
    }

    /**
     * Asks every endpoint for its status; one that answers without knowing a leader
     * cannot serve locks, and counts as unreachable. Locks need a majority.
     */
    @Override
    public Reachability ping() {
        List<CompletableFuture<NodeReachability>> answers = new ArrayList<>();
        for (String endpoint : endpoints) {
            long started = System.nanoTime();
            answers.add(client.getMaintenanceClient().statusMember(endpoint.trim()).handle((status, failure) -> {
                Duration latency = Duration.ofNanos(System.nanoTime() - started);
                if (failure != null) {
                    return new NodeReachability(endpoint, false, latency, describe(failure));
                }
                if (status.getLeader() == 0) {
                    return new NodeReachability(endpoint, false, latency, "the member knows no leader");
                }
                return new NodeReachability(endpoint, true, latency, null);
            }));
        }
        long deadline = deadline();
        List<NodeReachability> nodes = new ArrayList<>();
        for (int i = 0; i < answers.size(); i++) {
            try {
                nodes.add(answers.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                nodes.add(new NodeReachability(endpoints.get(i), false, operationTimeout, "interrupted"));
            }
            catch (ExecutionException | TimeoutException ex) {
                nodes.add(new NodeReachability(endpoints.get(i), false, operationTimeout,
                        "no answer within " + operationTimeout + " (" + EtcdSettings.PREFIX + ".operation-timeout)"));
            }
        }
        return new Reachability(nodes, endpoints.size() / 2 + 1);
    }

    // ------------------------------------------------------------------------------------------
    // wake-ups

    @Override
    public void deliverHandOversTo(LockWaiters waiters) {
        if (!deliveries.contains(waiters)) {
            deliveries.add(waiters);
        }
    }

    @Override
    public boolean startDelivery(LockKey key) {
        if (closed) {
            return false;
        }
        DirectoryWatch existing = watches.get(key.storeKey());
        if (existing != null) {
            return existing.created;
        }
        DirectoryWatch started = new DirectoryWatch(key.storeKey());
        DirectoryWatch raced = watches.putIfAbsent(key.storeKey(), started);
        if (raced != null) {
            return raced.created;
        }
        started.start();
        return started.created;
    }

    @Override
    public boolean isDelivering(LockKey key) {
        DirectoryWatch existing = watches.get(key.storeKey());
        return existing != null && existing.created;
    }

    /**
     * A key of the directory was deleted: reads who is first now, and if it is a waiter
     * of this JVM, wakes it. Runs on the client's event thread, so it blocks nothing.
     */
    private void announceHead(String directory) {
        Set<String> local = tokensByDirectory.get(directory);
        if (local == null || local.isEmpty() || deliveries.isEmpty()) {
            return;
        }
        kv.get(bytes(directory), HEAD).whenComplete((read, failure) -> {
            KeyValue head = failure == null ? first(read) : null;
            if (head == null) {
                return;
            }
            String token = EtcdKeyLayout.tokenOf(directory, head.getKey().toString(StandardCharsets.UTF_8));
            Set<String> tokens = tokensByDirectory.get(directory);
            if (tokens == null || !tokens.contains(token)) {
                return;
            }
            String waiterId = LockWaiters.waiterId(token);
            for (LockWaiters waiters : deliveries) {
                waiters.handedOver(waiterId, head.getCreateRevision(), token::equals);
            }
        });
    }

    /** Stops every watch and, if this backend opened it, closes the client. */
    @Override
    public void close() {
        // Best effort, before the client goes: a spare lease left behind runs out on its
        // own, with no key on it.
        spares.drain().forEach(this::revokeQuietly);
        closed = true;
        watches.values().forEach(DirectoryWatch::close);
        watches.clear();
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "etcd " + endpoints;
    }

    // ------------------------------------------------------------------------------------------
    // acquisitions, leases and calls

    /**
     * This JVM's record of the acquisition {@code token}, with a lease of its own from
     * its first call.
     */
    private Acquisition acquisitionFor(LockKey key, String token, long ttlMillis, long deadline, boolean spareAllowed) {
        Acquisition known = acquisitions.get(token);
        if (known != null) {
            return known;
        }
        long seconds = leaseSeconds(ttlMillis);
        Acquisition granted = spareAllowed ? spareLease(seconds) : null;
        if (granted == null) {
            granted = new Acquisition(await(leases.grant(seconds), deadline, key, "grant a lease").getID(), seconds,
                    null);
        }
        Acquisition raced = acquisitions.putIfAbsent(token, granted);
        if (raced != null) {
            spares.offer(granted.leaseId, seconds, this::revokeQuietly);
            return raced;
        }
        // In compute, so that a concurrent forget cannot drop the set this token joins.
        tokensByDirectory.compute(key.storeKey(), (directory, tokens) -> {
            Set<String> joined = tokens != null ? tokens : ConcurrentHashMap.newKeySet();
            joined.add(token);
            return joined;
        });
        return granted;
    }

    /**
     * A spare lease of {@code seconds}, its keep-alive sent now and read once the key is
     * put on it ({@link #spareKeptAlive}): the leader answers a keep-alive alone, without
     * a Raft write, but it is a round trip all the same, which need not come before the
     * put. {@code null} if there is none.
     */
    private @Nullable Acquisition spareLease(long seconds) {
        SpareLeases.Spare spare = spares.take(seconds, this::revokeQuietly);
        if (spare == null) {
            return null;
        }
        CompletableFuture<Long> keptAlive = leases.keepAliveOnce(spare.leaseId()).handle((alive, failure) -> {
            if (failure == null) {
                return alive.getTTL();
            }
            if (isLeaseNotFound(failure)) {
                return 0L;
            }
            throw new IllegalStateException(describe(failure), failure);
        });
        return new Acquisition(spare.leaseId(), seconds, keptAlive);
    }

    /**
     * Whether the spare lease of {@code acquisition} was still there when its keep-alive
     * came: then it lasts its whole length from before the attempt was sent, as a new
     * grant would. Read once, by the call that put the key.
     */
    private boolean spareKeptAlive(Acquisition acquisition, long deadline, LockKey key) {
        CompletableFuture<Long> keptAlive = Objects.requireNonNull(acquisition.readying);
        acquisition.readying = null;
        return await(keptAlive, deadline, key, "keep a lease alive") > 0;
    }

    /**
     * This JVM is done with acquisition {@code token}: its lease is revoked in the
     * background (it would run out anyway), and a directory with none of ours left stops
     * its watch.
     */
    private void forget(LockKey key, String token) {
        forget(key, token, false);
    }

    /**
     * {@link #forget(LockKey, String)}, but if {@code keyDeleted} (a release deleted the
     * acquisition's key just now, so nothing is on its lease), the lease is kept for a
     * later acquisition instead of revoked.
     */
    private void forget(LockKey key, String token, boolean keyDeleted) {
        Acquisition acquisition = acquisitions.remove(token);
        if (acquisition != null) {
            if (keyDeleted) {
                spares.offer(acquisition.leaseId, acquisition.leaseSeconds, this::revokeQuietly);
            }
            else {
                revokeQuietly(acquisition.leaseId);
            }
        }
        tokensByDirectory.computeIfPresent(key.storeKey(), (directory, tokens) -> {
            tokens.remove(token);
            if (!tokens.isEmpty()) {
                return tokens;
            }
            DirectoryWatch stopped = watches.remove(directory);
            if (stopped != null) {
                stopped.close();
            }
            return null;
        });
    }

    private void revokeQuietly(long leaseId) {
        if (!closed) {
            leases.revoke(leaseId).whenComplete((revoked, failure) -> {
                // Best effort: a lease we cannot revoke runs out on its own.
            });
        }
    }

    private void deleteOwnKey(ByteSequence ours, long deadline, LockKey key) {
        await(kv.txn()
            .If(new Cmp(ours, Cmp.Op.GREATER, CmpTarget.version(0)))
            .Then(Op.delete(ours, DeleteOption.DEFAULT))
            .commit(), deadline, key, "delete a key of ours");
    }

    /**
     * One keep-alive of {@code leaseId}: the seconds it has now, or 0 if it ran out (etcd
     * answers an unknown lease with a TTL of 0, jetcd may fail it instead).
     */
    private long keepAlive(long leaseId, long deadline, LockKey key) {
        CompletableFuture<Long> ttl = leases.keepAliveOnce(leaseId).handle((alive, failure) -> {
            if (failure == null) {
                return alive.getTTL();
            }
            if (isLeaseNotFound(failure)) {
                return 0L;
            }
            throw new IllegalStateException(describe(failure), failure);
        });
        return await(ttl, deadline, key, "keep a lease alive");
    }

    private static boolean isLeaseNotFound(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && message.contains("lease not found")) {
                return true;
            }
        }
        return false;
    }

    private long deadline() {
        return System.nanoTime() + operationTimeout.toNanos();
    }

    /**
     * The answer, waited for until {@code deadline} whatever the interrupt flag says
     * (which is left as found).
     * @throws LockBackendException if there is no answer in time or the call failed
     */
    private <T> T await(CompletableFuture<T> answer, long deadline, LockKey key, String what) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return answer.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                }
                catch (ExecutionException ex) {
                    throw new LockBackendException(key.name(),
                            "etcd failed to " + what + " lock " + key.printableName() + " at " + endpoints + ": "
                                    + describe(ex.getCause()) + ". Whether it took effect is "
                                    + "unknown; check that a majority of the members is up.",
                            ex.getCause());
                }
                catch (TimeoutException ex) {
                    throw new LockBackendException(key.name(),
                            "etcd did not answer a call to " + what + " lock " + key.printableName() + " within "
                                    + operationTimeout + " (" + EtcdSettings.PREFIX + ".operation-timeout) at "
                                    + endpoints + "; whether it took effect is unknown. A cluster without a "
                                    + "majority of its members, or in a leader election longer than that, "
                                    + "answers nothing.",
                            ex);
                }
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String describe(@Nullable Throwable failure) {
        if (failure == null) {
            return "no answer";
        }
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message != null ? ": " + message : "");
    }

    private ByteSequence acquisitionKey(LockKey key, String token) {
        return bytes(key.storeKey() + token);
    }

    private static ByteSequence directory(LockKey key) {
        return bytes(key.storeKey());
    }

    private static @Nullable KeyValue first(GetResponse response) {
        List<KeyValue> kvs = response.getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    /** One acquisition of this JVM: the lease its key is attached to, and its length. */
    private static final class Acquisition {

        final long leaseId;

        final long leaseSeconds;

        /**
         * The keep-alive of a spare lease, until the call that put the key on it read it;
         * {@code null} for a lease granted for this acquisition.
         */
        volatile @Nullable CompletableFuture<Long> readying;

        Acquisition(long leaseId, long leaseSeconds, @Nullable CompletableFuture<Long> readying) {
            this.leaseId = leaseId;
            this.leaseSeconds = leaseSeconds;
            this.readying = readying;
        }

    }

    /**
     * The watch of one lock directory: deletions only, from the moment etcd confirms it.
     */
    private final class DirectoryWatch implements Watch.Listener {

        private final String directory;

        /** etcd confirmed the watch: no deletion from now on is missed. */
        private volatile boolean created;

        private volatile Watch.@Nullable Watcher watcher;

        /** Closed: a watcher that starts after this is closed at once. */
        private volatile boolean stopped;

        DirectoryWatch(String directory) {
            this.directory = directory;
        }

        void start() {
            Watch.Watcher started = watch.watch(bytes(directory),
                    WatchOption.builder().isPrefix(true).withNoPut(true).withCreateNotify(true).build(), this);
            watcher = started;
            if (stopped) {
                // Closed while it was starting (the last lock of ours there went): no
                // leak.
                started.close();
            }
        }

        @Override
        public void onNext(WatchResponse response) {
            if (response.isCreatedNotify()) {
                created = true;
            }
            for (WatchEvent event : response.getEvents()) {
                if (event.getEventType() == WatchEvent.EventType.DELETE) {
                    announceHead(directory);
                    return;
                }
            }
        }

        @Override
        public void onError(Throwable failure) {
            // Waiters fall back to re-checking; the next wait starts a new watch.
            created = false;
            watches.remove(directory, this);
            if (!closed) {
                logger.debug("The etcd watch of {} failed; waiters re-check until a new one runs", directory, failure);
            }
            close();
        }

        @Override
        public void onCompleted() {
            created = false;
            watches.remove(directory, this);
        }

        void close() {
            stopped = true;
            created = false;
            Watch.Watcher current = watcher;
            if (current != null) {
                current.close();
            }
        }

    }

}
