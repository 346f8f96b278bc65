"""Machine-code reading: compile a candidate for a GPU this machine lacks and read what the code says.

offline_compile.py (Triton) and cuda_offline.py (CUDA C++) make cubins without a device; sass.py reads
registers, spills and load widths from them, occupancy.py turns resources into blocks per SM, and
kernel_inspect.py puts these together for one candidate.
"""
