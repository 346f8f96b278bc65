"""From a user's model to kernels: profile it, rank its ops by Amdahl's law, extract problems, verify.

One job per module: models/layers (the bundled models), model_spec (MODEL -> a loaded model), capture
(torch.profiler -> a trace), attribute (trace -> time groups), mapping (group -> registry problem),
amdahl (the arithmetic and where k comes from), profile_run (the whole `ksuite profile`), render
(table, plot), extract (problem files), swap and verify (the model with our kernels in it).
"""
