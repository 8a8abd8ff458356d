"""Training for sichuan_env (installed as ``sichuan_env.train``), one script per algorithm.

- ``sichuan_env.train.policy``: ``bc`` (behaviour cloning), ``ppo`` (masked PPO
  self-play, locally or on Ray), ``search_labels`` and ``search_distill``
  (distilling rollout search into a network);
- ``sichuan_env.train.belief``: the belief model's training loop, baselines and report;
- ``sichuan_env.train.data``: the opponent-modelling dataset and its generator.

Each script runs as ``python -m sichuan_env.train.<group>.<script> --help``; the
``train`` extra pins PyTorch to the CPU wheel (``torch>=2.2,<2.14``).
"""
