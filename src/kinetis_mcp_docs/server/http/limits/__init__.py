"""What the route allows a client: the DNS-rebinding guard, the bearer token, the rate
limit (its keys, its count in memory or in Redis), and the memory a worker gives bodies."""
