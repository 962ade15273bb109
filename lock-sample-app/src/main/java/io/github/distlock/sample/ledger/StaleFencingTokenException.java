package io.github.distlock.sample.ledger;

/**
 * The ledger refused a write because a newer lock holder has written since: this caller's
 * lock was lost before its write, and its payment was not made.
 */
public class StaleFencingTokenException extends RuntimeException {

    private final String account;

    private final long fencingToken;

    /**
     * @param account the account whose write was refused
     * @param fencingToken the refused token
     */
    public StaleFencingTokenException(String account, long fencingToken) {
        super("The ledger refused the write to account '" + account + "' with fencing token " + fencingToken
                + ": a newer lock holder has written since, so this caller's lock was lost before its write. "
                + "Nothing was paid; retry the payout.");
        this.account = account;
        this.fencingToken = fencingToken;
    }

    /** The account whose write was refused. */
    public String account() {
        return account;
    }

    /** The refused token. */
    public long fencingToken() {
        return fencingToken;
    }

}
