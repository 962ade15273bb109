package io.github.distlock.redlock;

/** Told of each node's vote in a {@link Ballot} as it comes in. */
@FunctionalInterface
interface VoteListener<T> {

    /**
     * @param late whether the vote came after the outcome was decided without it
     */
    void answered(int node, Vote<T> vote, boolean late);

}
