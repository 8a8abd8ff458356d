"""The Gymnasium env ``SichuanMahjong-v0``: one learner seat against agents, and its batched twin.

- ``env``: ``SingleSeatEnv``, the env ``gymnasium.make("SichuanMahjong-v0")`` builds;
- ``vector``: ``SingleSeatVectorEnv``, N such envs stepped in one numba call
  (``gymnasium.make_vec("SichuanMahjong-v0", num_envs=N)``), with its kernels in ``kernels``;
- ``args`` (the argument checks) and ``core`` (settings, spaces, seats, frames): what both share.

Nothing is imported here, so ``sichuan_env.agents.gym.kernels`` loads without gymnasium's envs.
"""
