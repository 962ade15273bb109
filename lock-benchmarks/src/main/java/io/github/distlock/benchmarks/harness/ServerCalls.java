package io.github.distlock.benchmarks.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.distlock.benchmarks.adapter.ConsensusImplementation.Store;
import io.github.distlock.benchmarks.adapter.ConsensusServers;
import io.github.distlock.benchmarks.adapter.ConsensusTarget;

/**
 * What the servers themselves counted, read before and after a measurement so that the
 * difference says which calls one cycle cost: etcd's Prometheus counters (Raft proposals
 * committed, gRPC calls handled per method) and ZooKeeper's {@code mntr} (proposals,
 * reads and writes per top-level node). Summed over the members; a proposal is committed
 * on every member, so {@code writes} is divided by the member count.
 */
final class ServerCalls {

    /** Cluster-wide writes (Raft or Zab proposals). */
    static final String WRITES = "writes";

    /** Reads served (etcd: Range calls; ZooKeeper: reads). */
    static final String READS = "reads";

    private static final Pattern GRPC = Pattern
        .compile("^grpc_server_handled_total\\{[^}]*grpc_method=\"([A-Za-z]+)\"[^}]*\\} ([0-9.e+]+)$");

    private static final Pattern PROPOSALS = Pattern.compile("^etcd_server_proposals_committed_total ([0-9.e+]+)$");

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private ServerCalls() {
    }

    /**
     * The counters of {@code store} now.
     * @param store etcd or ZooKeeper
     * @param target the servers
     * @return counter name to value
     */
    static Map<String, Double> read(Store store, ConsensusTarget target) {
        return store == Store.ETCD ? etcd(target) : zooKeeper(target);
    }

    /**
     * @param before counters before
     * @param after counters after
     * @param per what to divide by (cycles, acquisitions)
     * @return each counter that grew, per unit, rounded to 2 decimals
     */
    static Map<String, Double> perUnit(Map<String, Double> before, Map<String, Double> after, long per) {
        Map<String, Double> grown = new TreeMap<>();
        after.forEach((name, value) -> {
            double delta = value - before.getOrDefault(name, 0.0);
            if (delta > 0 && per > 0) {
                grown.put(name, Math.round(delta / per * 100) / 100.0);
            }
        });
        return grown;
    }

    private static Map<String, Double> etcd(ConsensusTarget target) {
        Map<String, Double> counters = new TreeMap<>();
        for (String endpoint : target.etcdEndpoints()) {
            String metrics;
            try {
                metrics = HTTP
                    .send(HttpRequest.newBuilder(URI.create(endpoint + "/metrics"))
                        .timeout(Duration.ofSeconds(5))
                        .build(), HttpResponse.BodyHandlers.ofString())
                    .body();
            }
            catch (IOException ex) {
                throw new UncheckedIOException("cannot read " + endpoint + "/metrics", ex);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while reading etcd's metrics", ex);
            }
            for (String line : metrics.split("\n")) {
                Matcher grpc = GRPC.matcher(line);
                if (grpc.matches()) {
                    counters.merge(grpc.group(1), Double.parseDouble(grpc.group(2)), Double::sum);
                }
                Matcher proposals = PROPOSALS.matcher(line);
                if (proposals.matches()) {
                    counters.merge(WRITES, Double.parseDouble(proposals.group(1)) / ConsensusServers.MEMBERS,
                            Double::sum);
                }
            }
        }
        if (counters.containsKey("Range")) {
            counters.put(READS, counters.get("Range"));
        }
        return counters;
    }

    private static Map<String, Double> zooKeeper(ConsensusTarget target) {
        Map<String, Double> counters = new TreeMap<>();
        for (String member : target.zooKeeperConnectString().split(",")) {
            int colon = member.lastIndexOf(':');
            String reply;
            try (Socket socket = new Socket(member.substring(0, colon),
                    Integer.parseInt(member.substring(colon + 1)))) {
                socket.setSoTimeout(5000);
                OutputStream out = socket.getOutputStream();
                out.write("mntr".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = socket.getInputStream();
                reply = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            catch (IOException ex) {
                throw new UncheckedIOException("cannot ask " + member + " for mntr", ex);
            }
            for (String line : reply.split("\n")) {
                String[] pair = line.split("\t");
                if (pair.length != 2) {
                    continue;
                }
                String name = pair[0];
                String counter = name.equals("zk_proposal_count") ? WRITES
                        : name.startsWith("zk_cnt_") && name.endsWith("_read_per_namespace") ? READS
                                : name.equals("zk_cnt_node_changed_watch_count") ? "dataWatchesFired"
                                        : name.equals("zk_cnt_node_deleted_watch_count") ? "deleteWatchesFired" : null;
                if (counter != null) {
                    try {
                        counters.merge(counter, Double.parseDouble(pair[1]), Double::sum);
                    }
                    catch (NumberFormatException ex) {
                        // Not a number (a version string): not a counter.
                    }
                }
            }
        }
        return counters;
    }

}
