"""GPU MODE adapter: load a problem folder, evaluate with the leaderboard's protocol, package, lint, send."""
