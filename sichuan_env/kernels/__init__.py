"""Numba kernels over count vectors: tables, win shapes, waits, shanten, fan.

Kernels take arrays and integers only and trust their input; the validated
Python API is ``sichuan_env.hand`` and ``sichuan_env.rules``.
"""
