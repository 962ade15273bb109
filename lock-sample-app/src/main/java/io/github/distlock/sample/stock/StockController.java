package io.github.distlock.sample.stock;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * The inventory endpoints.
 *
 * <pre>
 * PUT  /stock/{sku}?quantity=100       sets the stock and zeroes the sales counter
 * GET  /stock/{sku}                    the stock and sales
 * POST /stock/{sku}/deduct             sells one unit under a distributed lock
 * POST /stock/{sku}/deduct-unguarded   sells one unit without it (oversells under load)
 * </pre>
 *
 * <p>
 * A sale answers 200 with the {@link Deduction}; an empty stock answers 422, each with a
 * {@link ProblemDetail} body. Lock failures need no code here: the starter answers a lock
 * that stays busy with 409 and an unreachable Redis with 503, also as problem details.
 */
@RestController
@RequestMapping("/stock/{sku}")
public class StockController {

    private final StockService stock;

    /**
     * @param stock the service that does the Redis work
     */
    public StockController(StockService stock) {
        this.stock = stock;
    }

    /** The current stock and sales of {@code sku}. */
    @GetMapping
    public StockLevel level(@PathVariable String sku) {
        return stock.level(sku);
    }

    /** Sets the stock of {@code sku} to {@code quantity} and zeroes its sales. */
    @PutMapping
    public StockLevel reset(@PathVariable String sku, @RequestParam long quantity) {
        if (quantity < 0) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "quantity must not be negative");
        }
        return stock.reset(sku, quantity);
    }

    /** Sells one unit under the lock {@code stock:<sku>}. */
    @PostMapping("/deduct")
    public ResponseEntity<?> deduct(@PathVariable String sku) {
        return answer(stock.deduct(sku));
    }

    /**
     * Sells one unit without any lock; compare with {@link #deduct(String)} under load.
     */
    @PostMapping("/deduct-unguarded")
    public ResponseEntity<?> deductUnguarded(@PathVariable String sku) {
        return answer(stock.deductUnguarded(sku));
    }

    private static ResponseEntity<?> answer(Deduction deduction) {
        if (deduction.deducted()) {
            return ResponseEntity.ok(deduction);
        }
        // 422 rather than 409: a client should not retry a sold-out SKU, while 409 (lock
        // busy) is worth a retry.
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.UNPROCESSABLE_ENTITY,
                "SKU '" + deduction.sku() + "' is out of stock.");
        problem.setTitle("Out of stock");
        problem.setProperty("sku", deduction.sku());
        return ResponseEntity.of(problem).build();
    }

}
