"""`ksuite optimize`: propose -> check -> time against the best -> keep or discard -> log, until a stopping
rule fires. Proposers: tunable search (no network), an OpenAI-compatible LLM, an external coding agent."""
