package io.github.distlock.sample.ledger;

/**
 * The outcome of one payout.
 *
 * @param account the account
 * @param paid whether the amount was paid; {@code false} means the balance was too low
 * @param amount the amount asked for
 * @param balance the balance this payout wrote (or read, if it paid nothing)
 * @param fencingToken the token of the lock this payout held, the ledger's fence after a
 * payment
 */
public record Payout(String account, boolean paid, long amount, long balance, long fencingToken) {
}
