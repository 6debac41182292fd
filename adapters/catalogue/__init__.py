"""Every target by name: the `--adapter` specs and the factories behind them."""
