"""What a run records, step by step, at every level: the operation, its arguments, each side's
result and observation, the wall time, and — where a simulation shows it — the ground truth. The
observation shapes live here too (`controller_view`, `ground_truth`): the target contract and
the checkers read them, the oracle produces them."""
