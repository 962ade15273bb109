package io.github.distlock.sample.ledger;

/**
 * What the ledger holds for one account.
 *
 * @param account the account
 * @param balance what is left to pay out
 * @param paidOut the total paid out since the account was opened
 * @param fence the fencing token of the last write; every later write must carry a larger
 * one
 */
public record LedgerBalance(String account, long balance, long paidOut, long fence) {
}
