"""The whole-table value network ``V``: self-play data (``data``) and its fit (``fit``)."""
