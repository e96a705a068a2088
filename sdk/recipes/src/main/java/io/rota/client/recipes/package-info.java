/**
 * Coordination recipes built on the SDK's leases, transactions and watches: a fair {@link
 * io.rota.client.recipes.Lock} with fencing tokens, safe-until and lock-delay; {@link
 * io.rota.client.recipes.Election}; {@link io.rota.client.recipes.FenceGuard} and {@link
 * io.rota.client.recipes.JdbcFencing} for the protected resource; {@link io.rota.client.recipes.OnceRecord}
 * idempotency records; and {@link io.rota.client.recipes.SingletonJob}, a schedule that runs once
 * cluster-wide. See docs/locks.md and docs/jobs.md.
 */
package io.rota.client.recipes;
