package io.github.distlock.sample.demo;

/**
 * The size of an {@link OversellDemo} run.
 *
 * @param requests deductions per run, spread evenly over the application instances
 * @param initialStock the stock each run starts from
 * @param threadsPerInstance concurrent request threads in each application instance, like
 * a servlet container's worker pool
 */
public record DemoSettings(int requests, long initialStock, int threadsPerInstance) {

    /** 300 requests against a stock of 100, 16 threads per instance. */
    public static DemoSettings defaults() {
        return new DemoSettings(300, 100, 16);
    }

    /** Rejects sizes that make no demo. */
    public DemoSettings {
        if (requests <= 0 || initialStock < 0 || threadsPerInstance <= 0) {
            throw new IllegalArgumentException("requests and threadsPerInstance must be positive and initialStock "
                    + "not negative: " + requests + ", " + initialStock + ", " + threadsPerInstance);
        }
    }
}
