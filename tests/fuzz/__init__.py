"""Differential testing of Triton programs (README, "Differential testing").

generator.py  random valid @triton.jit programs (typed statements; valid by construction)
run.py        one program in the reference (Triton's interpreter) and every configuration;
              the tolerances
reference.py  what the interpreter lacks to be the reference (libdevice, fp8/bf16 rounding)
reduce.py     delta debugging over statements; standalone reproducers
worker.py     the process that runs programs in one configuration
__main__.py   `python3 -m tests.fuzz`: long runs
findings/     reduced reproducers of the bugs found (each prints what differs)
"""
