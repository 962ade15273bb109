package io.github.distlock.sample.ledger;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * The ledger endpoints, whose locks live in ZooKeeper ({@link LedgerService}).
 *
 * <pre>
 * PUT  /ledger/{account}?balance=100        opens the account with a balance
 * GET  /ledger/{account}                    the balance, the total paid out and the fence
 * POST /ledger/{account}/payout?amount=10   pays out under the account's ZooKeeper lock
 * </pre>
 *
 * <p>
 * A payout answers 200 with the {@link Payout}; a balance too low answers 422, and a
 * write the ledger refused for a stale fencing token 409, each with a
 * {@link ProblemDetail} body. A lock that stays busy (409) or a store that cannot be
 * reached (503) is answered by the starter.
 */
@RestController
@RequestMapping("/ledger/{account}")
@ConditionalOnProperty(prefix = "distributed-lock.zookeeper", name = "connect-string")
public class LedgerController {

    private final LedgerService ledger;

    /**
     * @param ledger the service that locks and writes
     */
    public LedgerController(LedgerService ledger) {
        this.ledger = ledger;
    }

    /** The account as last written. */
    @GetMapping
    public LedgerBalance balance(@PathVariable String account) {
        return ledger.balance(account);
    }

    /** Opens {@code account} with {@code balance} and nothing paid out. */
    @PutMapping
    public LedgerBalance open(@PathVariable String account, @RequestParam long balance) {
        if (balance < 0) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "balance must not be negative");
        }
        return ledger.open(account, balance);
    }

    /** Pays {@code amount} out of {@code account} under its ZooKeeper lock. */
    @PostMapping("/payout")
    public ResponseEntity<?> payout(@PathVariable String account, @RequestParam long amount) {
        if (amount <= 0) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "amount must be positive");
        }
        Payout payout = ledger.payout(account, amount);
        if (payout.paid()) {
            return ResponseEntity.ok(payout);
        }
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.UNPROCESSABLE_ENTITY,
                "Account '" + account + "' has " + payout.balance() + " left, less than " + amount + ".");
        problem.setTitle("Insufficient funds");
        problem.setProperty("account", account);
        return ResponseEntity.of(problem).build();
    }

    /**
     * A write the ledger refused: this payout's lock was lost and a newer holder wrote
     * first. Nothing was paid, so the client may retry.
     */
    @ExceptionHandler(StaleFencingTokenException.class)
    public ProblemDetail staleFencingToken(StaleFencingTokenException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, e.getMessage());
        problem.setTitle("Stale fencing token");
        problem.setProperty("account", e.account());
        problem.setProperty("fencingToken", e.fencingToken());
        return problem;
    }

}
