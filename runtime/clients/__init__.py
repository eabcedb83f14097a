"""Who is asking and how much they may: the rate limiter, signed bots (Web Bot Auth) and their
nonces, the shared Redis store and counters, Netlify's signed proxy."""
