"""Training scripts for sichuan_env, one file per algorithm (CleanRL style).

No training script ships yet: the environments (``sichuan_env.env``,
``sichuan_env.envs.vector.VectorEnv``) and baseline agents are ready for one;
the ``train`` extra pins PyTorch to the local CPU wheel (``torch>=2.2,<2.14``).
"""
