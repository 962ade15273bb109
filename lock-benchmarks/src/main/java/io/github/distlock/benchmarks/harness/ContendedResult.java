package io.github.distlock.benchmarks.harness;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.zip.DataFormatException;

import org.HdrHistogram.Histogram;

/**
 * One contended run of one implementation (scenario 2 or 5), as stored in
 * {@code harness.json}.
 *
 * @param implementation the {@code Implementation} name
 * @param mode {@code isolated} (a client per thread), {@code shared} (one client) or
 * {@code processes}
 * @param processes how many JVMs took part
 * @param threads contending threads in all
 * @param measuredSeconds the measurement window
 * @param acquisitions acquisitions inside the window
 * @param ownerSwitches acquisitions inside the window by another owner than the one
 * before
 * @param perThread acquisitions inside the window per thread (fairness)
 * @param waitP50Nanos median wait to acquire
 * @param waitP99Nanos 99th percentile wait
 * @param waitMaxNanos longest wait
 * @param totalAcquisitions all acquisitions, warm-up included
 * @param counterDelta how much the shared counter grew over the run
 * @param violations {@code |totalAcquisitions - counterDelta|}: lost updates, i.e. two
 * owners at once
 * @param timeouts attempts that ran out of wait time
 * @param errors what adapters threw, besides timeouts
 * @param waitHistogram the waits, HdrHistogram compressed and Base64-encoded, for merging
 * processes
 */
public record ContendedResult(String implementation, String mode, int processes, int threads, double measuredSeconds,
        long acquisitions, long ownerSwitches, long[] perThread, long waitP50Nanos, long waitP99Nanos,
        long waitMaxNanos, long totalAcquisitions, long counterDelta, long violations, long timeouts,
        List<String> errors, String waitHistogram) {

    /**
     * Summarises one run of {@link ContendedRun}.
     * @param implementation the implementation name
     * @param mode the mode
     * @param outcome what the threads observed
     * @param counterDelta growth of the shared counter
     * @return the result
     */
    public static ContendedResult of(String implementation, String mode, ContendedRun.Outcome outcome,
            long counterDelta) {
        long acquisitions = Arrays.stream(outcome.perThread).sum();
        return new ContendedResult(implementation, mode, 1, outcome.perThread.length, outcome.measured.toNanos() / 1e9,
                acquisitions, outcome.ownerSwitches, outcome.perThread.clone(), percentile(outcome.waits, 50),
                percentile(outcome.waits, 99), outcome.waits.getMaxValue(), outcome.totalAcquisitions, counterDelta,
                Math.abs(outcome.totalAcquisitions - counterDelta), outcome.timeouts, List.copyOf(outcome.errors),
                encode(outcome.waits));
    }

    /**
     * Merges the parts that several processes ran at the same time on the same key.
     * @param implementation the implementation name
     * @param parts one result per process, each with its own {@code counterDelta} ignored
     * @param counterDelta growth of the counter all processes shared
     * @return the combined result
     */
    public static ContendedResult merge(String implementation, List<ContendedResult> parts, long counterDelta) {
        Histogram waits = ContendedRun.newHistogram();
        List<Long> perThread = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        long acquisitions = 0;
        long switches = 0;
        long total = 0;
        long timeouts = 0;
        double seconds = 0;
        for (int i = 0; i < parts.size(); i++) {
            ContendedResult part = parts.get(i);
            waits.add(decode(part.waitHistogram));
            for (long count : part.perThread) {
                perThread.add(count);
            }
            for (String error : part.errors) {
                errors.add("process " + i + ": " + error);
            }
            acquisitions += part.acquisitions;
            switches += part.ownerSwitches;
            total += part.totalAcquisitions;
            timeouts += part.timeouts;
            seconds = Math.max(seconds, part.measuredSeconds);
        }
        return new ContendedResult(implementation, "processes", parts.size(), perThread.size(), seconds, acquisitions,
                switches, perThread.stream().mapToLong(Long::longValue).toArray(), percentile(waits, 50),
                percentile(waits, 99), waits.getMaxValue(), total, counterDelta, Math.abs(total - counterDelta),
                timeouts, errors, encode(waits));
    }

    /** Acquisitions per second inside the window. */
    public double acquisitionsPerSecond() {
        return measuredSeconds > 0 ? acquisitions / measuredSeconds : 0;
    }

    /** Owner switches per second inside the window. */
    public double switchesPerSecond() {
        return measuredSeconds > 0 ? ownerSwitches / measuredSeconds : 0;
    }

    /**
     * The least-served thread's acquisitions as a fraction of the fair share
     * (acquisitions / threads): 1 is perfectly fair, below 0.25 counts as starved.
     */
    public double minFairShare() {
        if (acquisitions == 0 || perThread.length == 0) {
            return 0;
        }
        long least = Arrays.stream(perThread).min().orElse(0);
        return least / ((double) acquisitions / perThread.length);
    }

    private static long percentile(Histogram histogram, double percentile) {
        return histogram.getTotalCount() == 0 ? 0 : histogram.getValueAtPercentile(percentile);
    }

    private static String encode(Histogram histogram) {
        ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
        int length = histogram.encodeIntoCompressedByteBuffer(buffer);
        return Base64.getEncoder().encodeToString(Arrays.copyOf(buffer.array(), length));
    }

    private static Histogram decode(String base64) {
        try {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
        }
        catch (DataFormatException ex) {
            throw new IllegalArgumentException("corrupt wait histogram", ex);
        }
    }
}
